"""A session's conversation as the records `--output-format stream-json` prints and the Python API yields: Claude
Code's shapes, built once here for both front ends (cli/output_format.py prints them; mini_claude/api types them).

`Transcript` turns what the agent's history gained since it last looked into records — one `assistant` record per
content block of each assistant turn (the blocks of one turn share the message `id`: ours, the API's is not kept),
one `user` record per tool result (the prompt itself is the caller's, not repeated) — and a run's end into the
`result` record (its keys and subtypes: cli/output_format.py's docstring). `RunError` names a run that ended in an
error; `run_error` maps our errors onto Claude Code's subtypes. `instrument` hooks a session's agent so each model
request first flushes the new records, checks the budget, and is timed (`duration_api_ms`), and each retry of a
failed request is a `system`/`api_retry` record as it happens (`retry_record`: Claude Code 2.1.328's shape —
`attempt` of `max_retries`, `retry_delay_ms`, `error_status` (null without an HTTP answer) and `error`, its category:
"overloaded", "rate_limit", "server_error", "authentication_failed" or "unknown").
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from mini_claude.errors import MiniClaudeError, ModelError

if TYPE_CHECKING:
    from mini_claude.agent.loop import Agent, RunOutcome
    from mini_claude.models.base import Model, RetryNotice, Usage
    from mini_claude.models.pricing import ListPriced

__all__ = ["BudgetReached", "RunError", "Transcript", "instrument", "run_error", "run_subtype"]

# how a run that answered ended (RunOutcome.stop), in Claude Code's `terminal_reason` words
_TERMINAL = {"max_turns": "max_turns", "max_tokens": "api_error", "hook_stopped": "hook_stopped",
             "permission_interrupt": "aborted_tools"}
# the last model reply's stop reason where RunOutcome.stop names why the loop stopped instead: its last reply had
# called tools (as Claude Code reports); a prompt a hook blocked had no reply
_STOP_REASON: dict[str, str | None] = {"max_turns": "tool_use", "hook_stopped": "tool_use", "hook_blocked": None,
                                       "permission_interrupt": "tool_use"}


@dataclass(frozen=True)
class RunError:
    """A run that ended in an error instead of an answer: its message and how the result object names it
    (`subtype` "success" with `is_error` for a failed model request, as Claude Code does)."""

    message: str
    subtype: str = "error_during_execution"
    terminal_reason: str | None = None
    api_status: int | None = None


class BudgetReached(MiniClaudeError):
    """The session's budget (`--max-budget-usd`, the API's `max_budget_usd`) is spent: the run stops before the
    next model request."""


def run_error(exc: MiniClaudeError) -> RunError:
    """How the result record names a run that failed with `exc` (Claude Code's subtypes)."""
    if isinstance(exc, BudgetReached):
        return RunError(str(exc), "error_max_budget_usd", "budget_exhausted")
    if isinstance(exc, ModelError):  # Claude Code: a "success" result that is an error, with the HTTP status
        return RunError(str(exc), "success", "api_error", exc.status)
    return RunError(str(exc))


def run_subtype(outcome: RunOutcome | None) -> str:
    if outcome is None:
        return "error_during_execution"
    return "error_max_turns" if outcome.stop == "max_turns" else "success"


class Transcript:
    """The records of one session's conversation, as its history grows. `model`: the model id the records name;
    `priced`: the backend, whose price depends on where it is served (models/pricing.py)."""

    def __init__(self, *, session_id: str, model: str, priced: ListPriced | None = None) -> None:
        self.session_id = session_id
        self.model = model
        self.priced: str | ListPriced = priced or model
        self.started = time.monotonic()
        self.api_s = 0.0  # time spent in model requests this turn
        self._last: dict[str, Any] | None = None  # the history's last message when the transcript last looked

    def begin(self) -> None:
        """A new turn starts: its result record is timed on its own."""
        self.started = time.monotonic()
        self.api_s = 0.0

    def skip(self, history: list[dict[str, Any]]) -> None:
        """What `history` holds now is not recorded (a resumed conversation: Claude Code does not repeat it)."""
        self._last = history[-1] if history else None

    def new_records(self, history: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The records of every message added to `history` since the last look, one content block each."""
        records: list[dict[str, Any]] = []
        for message in history[self._new(history):]:
            if message["role"] == "assistant":
                message_id = f"msg_{uuid.uuid4().hex[:24]}"  # one id for the turn's blocks, as the API's would be
                for block in message["content"] or [None]:
                    records.append(self.message_record("assistant", {
                        "id": message_id, "type": "message", "role": "assistant", "model": self.model,
                        "content": [block] if block is not None else [], "stop_reason": None,
                        "stop_sequence": None}))
                continue
            for block in message["content"]:  # the prompt (and text beside results) is the caller's: not repeated
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    records.append(self.message_record("user", {"role": "user", "content": [block]}))
        self.skip(history)
        return records

    def message_record(self, kind: str, message: dict[str, Any], *, parent_tool_use_id: str | None = None
                       ) -> dict[str, Any]:
        stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        return {"type": kind, "message": message, "parent_tool_use_id": parent_tool_use_id,
                "session_id": self.session_id, "uuid": str(uuid.uuid4()), "timestamp": stamp}

    def retry_record(self, notice: RetryNotice) -> dict[str, Any]:
        """The `system`/`api_retry` record of a request about to be retried (Claude Code's shape and categories)."""
        return {"type": "system", "subtype": "api_retry", "attempt": notice.attempt,
                "max_retries": notice.max_retries, "retry_delay_ms": round(notice.delay_s * 1000),
                "error_status": notice.status, "error": _retry_category(notice.status),
                "session_id": self.session_id, "uuid": str(uuid.uuid4())}

    def _new(self, history: list[dict[str, Any]]) -> int:
        """Where the messages added since the last look start: after the message that was last then, found by
        identity, as a compaction may have shortened what came before it. Not found (a failed turn was taken back):
        nothing is new."""
        if self._last is None:
            return 0
        return next((i + 1 for i in range(len(history) - 1, -1, -1) if history[i] is self._last), len(history))

    def result_record(self, outcome: RunOutcome | None, *, error: RunError | None = None,
                      structured_output: Any = None) -> dict[str, Any]:
        """The `result` record of a turn that ended with `outcome` (None: it failed with `error`)."""
        from mini_claude.models.pricing import model_usage

        usage = outcome.usage if outcome is not None else None
        if error is not None:
            kind, failed, terminal = error.subtype, True, error.terminal_reason
        else:
            kind = run_subtype(outcome)
            stop = outcome.stop if outcome is not None else ""
            failed, terminal = kind != "success" or stop == "max_tokens", _TERMINAL.get(stop, "completed")
        record: dict[str, Any] = {"type": "result", "subtype": kind, "is_error": failed}
        if kind == "success":
            record["api_error_status"] = error.api_status if error is not None else None
        record |= {
            "duration_ms": round((time.monotonic() - self.started) * 1000),
            "duration_api_ms": round(self.api_s * 1000),
            "num_turns": outcome.turns + outcome.subagent_turns if outcome is not None else 0,  # sub-agents' too
            "result": outcome.text if outcome is not None else (error.message if error is not None else ""),
            "stop_reason": _STOP_REASON.get(outcome.stop, outcome.stop) if outcome is not None else None,
            "session_id": self.session_id,
            "total_cost_usd": round(self.cost(outcome), 6) if outcome is not None else 0.0,
            "usage": {"input_tokens": usage.input_tokens if usage else 0,
                      "output_tokens": usage.output_tokens if usage else 0,
                      "cache_read_input_tokens": usage.cache_read_tokens if usage else 0,
                      "cache_creation_input_tokens": usage.cache_write_tokens if usage else 0},
            "modelUsage": model_usage(self._spent(outcome)) if outcome is not None else {},
            "permission_denials": outcome.denials if outcome is not None else [],
        }
        if terminal is not None:
            record["terminal_reason"] = terminal
        if outcome is not None and outcome.stop == "max_tokens":
            record["api_error"] = "max_output_tokens"
        if kind != "success":
            record["errors"] = [error.message if error is not None else _why(outcome)]
        if structured_output is not None:
            record["structured_output"] = structured_output
        record["uuid"] = str(uuid.uuid4())
        return record

    def _spent(self, outcome: RunOutcome) -> list[tuple[str | ListPriced | Model, Usage]]:
        """Each model request's model and usage: the run's own, then its sub-agents'."""
        return [(self.priced, outcome.usage), *outcome.subagent_usage]

    def cost(self, outcome: RunOutcome) -> float:
        """The run's cost, its sub-agents' requests included, each at its own model's price (`usage` in the result
        is the main agent's alone, as in Claude Code)."""
        from mini_claude.models.pricing import cost_usd

        return sum(cost_usd(_priced(model), usage) for model, usage in self._spent(outcome))


def instrument(agent: Agent, transcript: Transcript, on_records: Callable[[list[dict[str, Any]]], None], *,
               budget_usd: float | None = None, budget_name: str = "max_budget_usd") -> None:
    """Before each of `agent`'s model requests: the records added since (to `on_records`), the budget check (raises
    BudgetReached naming the option `budget_name`); and time each request into `transcript.api_s`."""
    from mini_claude.models.pricing import ListPriced, cost_usd

    settle = agent.before_request

    async def before_request() -> None:
        records = transcript.new_records(agent.history)
        if records:
            on_records(records)
        spent = cost_usd(agent.model if isinstance(agent.model, ListPriced) else agent.model.name, agent.usage)
        if budget_usd is not None and spent >= budget_usd:
            raise BudgetReached(f"stopped: the run's estimated cost ${spent:.6f} reached {budget_name} "
                                f"{budget_usd:g}")
        if settle is not None:
            await settle()

    agent.before_request = before_request
    model = agent.model
    complete = model.complete

    async def timed(**kwargs: Any) -> Any:
        began = time.monotonic()
        heard = kwargs.get("on_retry")

        def on_retry(notice: RetryNotice) -> None:  # each retry is a record too, as it happens
            on_records([transcript.retry_record(notice)])
            if heard is not None:
                heard(notice)

        try:
            return await complete(**{**kwargs, "on_retry": on_retry})
        finally:
            transcript.api_s += time.monotonic() - began

    model.complete = timed  # type: ignore[method-assign]


def _priced(model: str | ListPriced | Model) -> str | ListPriced:
    from mini_claude.models.pricing import ListPriced

    return model if isinstance(model, (str, ListPriced)) else model.name


def _retry_category(status: int | None) -> str:
    """Claude Code's word for why a request is retried: by its HTTP status ("unknown" without one)."""
    if status == 529:
        return "overloaded"
    if status == 429:
        return "rate_limit"
    if status in (401, 403):
        return "authentication_failed"
    return "server_error" if status is not None and status >= 408 else "unknown"


def _why(outcome: RunOutcome | None) -> str:
    if outcome is not None and outcome.stop == "max_turns":
        return f"stopped after the maximum number of turns ({outcome.turns})"
    return "the run failed"
