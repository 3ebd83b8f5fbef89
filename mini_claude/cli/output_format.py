"""`-p --output-format text|json|stream-json`, with Claude Code's shapes, and the exit codes of `-p`.

`json` prints one object when the run ends: `type` "result", `subtype`, `is_error`, `duration_ms`,
`duration_api_ms`, `num_turns`, `result`, `stop_reason`, `session_id`, `total_cost_usd`, `usage` (`input_tokens`,
`output_tokens`, `cache_read_input_tokens`, `cache_creation_input_tokens`), `modelUsage` (per model id:
`inputTokens`, `outputTokens`, `cacheReadInputTokens`, `cacheCreationInputTokens`, `costUSD`; sub-agents' models
too), `permission_denials` (`tool_name`, `tool_use_id`, `tool_input`), `terminal_reason`, `uuid`. As in Claude
Code 2.1.328 (its binary run offline on the mock model):

    ending                         subtype                 is_error  terminal_reason   also
    answered (a call denied too)   success                 false     completed         api_error_status: null
    --max-turns reached            error_max_turns         true      max_turns         errors: [why]
    cut at max_tokens              success                 true      api_error         api_error: "max_output_tokens"
    the model API failed           success                 true      api_error         api_error_status: HTTP status
    --max-budget-usd reached       error_max_budget_usd    true      budget_exhausted  errors: [why]
    any other error                error_during_execution  true      (none)            errors: [why]

(An error subtype keeps `result` too: the last text, or the error. Claude Code 2.1.197 says `terminal_reason`
"completed" for the two API rows and has no `api_error`; and where its answer is cut it first asks the model to go
on, up to three times.) Claude Code prints more of its own
(`ttft_ms`, `fast_mode_state`, `subagent_stats`, …); `modelUsage` has no `contextWindow` / `maxOutputTokens` /
`webSearchRequests` yet (the model layer does not tell them).

`stream-json` prints one object a line as the run goes: the init line first (stream_init.py), then, as Claude
Code does, one `{"type": "assistant", "message": {...}}` per content block of each assistant turn (the blocks of
one turn share the message `id`: ours, the API's is not kept) and one `{"type": "user", ...}` per tool result
(the prompt itself is not repeated), each with `parent_tool_use_id`, `session_id`, `uuid`, `timestamp`; and the
same result object last.

`text` prints the answer through `render.clean` (control, bidi and invisible characters shown as escapes, newlines
and tabs kept); the JSON formats keep the exact text, those characters escaped as `\\uXXXX` (`render.json_text`).
"""

from __future__ import annotations

import sys
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import IO, Any

from mini_claude.agent.loop import RunOutcome
from mini_claude.cli.terminal.exit_codes import (
    EXIT_DENIED,
    EXIT_ERROR,
    EXIT_MAX_TURNS,
    EXIT_OK,
    EXIT_TRUNCATED,
)
from mini_claude.cli.terminal.render import clean, json_text
from mini_claude.models.base import Model, Usage
from mini_claude.models.pricing import ListPriced, cost_usd, model_usage

__all__ = ["OUTPUT_FORMATS", "ResultWriter", "RunError", "exit_code", "run_subtype"]

OUTPUT_FORMATS = ("text", "json", "stream-json")
# how a run that answered ended (RunOutcome.stop), in Claude Code's `terminal_reason` words
_TERMINAL = {"max_turns": "max_turns", "max_tokens": "api_error", "hook_stopped": "hook_stopped"}
# the last model reply's stop reason where RunOutcome.stop names why the loop stopped instead: its last reply had
# called tools (as Claude Code reports); a prompt a hook blocked had no reply
_STOP_REASON: dict[str, str | None] = {"max_turns": "tool_use", "hook_stopped": "tool_use", "hook_blocked": None}


@dataclass(frozen=True)
class RunError:
    """A run that ended in an error instead of an answer: its message and how the result object names it
    (`subtype` "success" with `is_error` for a failed model request, as Claude Code does)."""

    message: str
    subtype: str = "error_during_execution"
    terminal_reason: str | None = None
    api_status: int | None = None


def run_subtype(outcome: RunOutcome | None) -> str:
    if outcome is None:
        return "error_during_execution"
    return "error_max_turns" if outcome.stop == "max_turns" else "success"


def exit_code(outcome: RunOutcome | None, *, detailed: bool = False) -> int:
    """0 answered (a denied call included); 1 an error, stopped at --max-turns, or the answer cut at the output
    token limit. `detailed` (--detailed-exit-codes): 3 --max-turns, 4 cut, 5 answered but a call was denied."""
    if outcome is None:
        return EXIT_ERROR
    if outcome.stop == "max_turns":
        return EXIT_MAX_TURNS if detailed else EXIT_ERROR
    if outcome.stop == "max_tokens":
        return EXIT_TRUNCATED if detailed else EXIT_ERROR
    if outcome.denials and detailed:
        return EXIT_DENIED
    return EXIT_OK


class ResultWriter:
    """Writes a `-p` run in one output format to `out` (stdout)."""

    def __init__(self, fmt: str, *, session_id: str, model: str, out: IO[str] | None = None,
                 priced: ListPriced | None = None) -> None:
        self.format = fmt
        self.session_id = session_id
        self.model = model
        self.priced: str | ListPriced = priced or model  # the backend: its price depends on where it is served
        self.out = out or sys.stdout
        self.started = time.monotonic()
        self.api_s = 0.0
        self._last: dict[str, Any] | None = None  # the history's last message when stream-json last looked

    def begin(self) -> None:
        """A new turn starts (stream-json input: one result object per turn, each timed on its own)."""
        self.started = time.monotonic()
        self.api_s = 0.0

    def init(self, record: dict[str, Any]) -> None:
        """stream-json: the `system/init` line (stream_init.init_record)."""
        if self.format == "stream-json":
            self._line(record)

    def skip(self, history: list[dict[str, Any]]) -> None:
        """What `history` holds now is not written (a resumed conversation: Claude Code does not repeat it)."""
        self._last = history[-1] if history else None

    def messages(self, history: list[dict[str, Any]]) -> None:
        """stream-json: every message added to the history since the last call, one content block a line."""
        if self.format != "stream-json":
            return
        for message in history[self._new(history):]:
            if message["role"] == "assistant":
                message_id = f"msg_{uuid.uuid4().hex[:24]}"  # one id for the turn's blocks, as the API's would be
                for block in message["content"] or [None]:
                    self._message("assistant", {
                        "id": message_id, "type": "message", "role": "assistant", "model": self.model,
                        "content": [block] if block is not None else [], "stop_reason": None, "stop_sequence": None})
                continue
            for block in message["content"]:  # the prompt (and text beside results) is the caller's: not repeated
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    self._message("user", {"role": "user", "content": [block]})
        self.skip(history)

    def _new(self, history: list[dict[str, Any]]) -> int:
        """Where the messages added since the last look start: after the message that was last then, found by
        identity, as a compaction may have shortened what came before it. Not found (a failed turn was taken back):
        nothing is new."""
        if self._last is None:
            return 0
        return next((i + 1 for i in range(len(history) - 1, -1, -1) if history[i] is self._last), len(history))

    def result(self, outcome: RunOutcome | None, *, error: RunError | None = None) -> None:
        if self.format == "text":
            if outcome is not None:
                # the model's text through the terminal's one door: escapes, C1 and bidi controls shown, not obeyed
                self.out.write(clean(outcome.text, visible=True).rstrip("\n") + "\n")
                self.out.flush()
            return
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
            "total_cost_usd": round(self._cost(outcome), 6) if outcome is not None else 0.0,
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
        record["uuid"] = str(uuid.uuid4())
        if self.format == "json":
            self.out.write(json_text(record) + "\n")
        else:
            self._line(record)
        self.out.flush()

    def _spent(self, outcome: RunOutcome) -> list[tuple[str | ListPriced | Model, Usage]]:
        """Each model request's model and usage: the run's own, then its sub-agents'."""
        return [(self.priced, outcome.usage), *outcome.subagent_usage]

    def _cost(self, outcome: RunOutcome) -> float:
        """The run's cost, its sub-agents' requests included, each at its own model's price (`usage` in the result
        is the main agent's alone, as in Claude Code)."""
        return sum(cost_usd(_priced(model), usage) for model, usage in self._spent(outcome))

    def _message(self, kind: str, message: dict[str, Any]) -> None:
        stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        self._line({"type": kind, "message": message, "parent_tool_use_id": None, "session_id": self.session_id,
                    "uuid": str(uuid.uuid4()), "timestamp": stamp})

    def _line(self, record: dict[str, Any]) -> None:
        self.out.write(json_text(record) + "\n")
        self.out.flush()


def _priced(model: str | ListPriced | Model) -> str | ListPriced:
    return model if isinstance(model, (str, ListPriced)) else model.name


def _why(outcome: RunOutcome | None) -> str:
    if outcome is not None and outcome.stop == "max_turns":
        return f"stopped after the maximum number of turns ({outcome.turns})"
    return "the run failed"
