"""`-p --output-format text|json|stream-json`, with Claude Code's shapes, and the exit codes of `-p`.

`json` prints one object when the run ends: `type` "result", `subtype` ("success", "error_max_turns",
"error_max_tokens", "error_during_execution"), `is_error`, `duration_ms`, `duration_api_ms`, `num_turns`,
`result`, `stop_reason`, `session_id`, `total_cost_usd`, `usage` (`input_tokens`, `output_tokens`,
`cache_read_input_tokens`, `cache_creation_input_tokens`), `permission_denials`, `uuid`. `stream-json` prints one
object a line as the run goes: `{"type": "system", "subtype": "init", ...}` first, then each assistant message
and each message of tool results as it is added (`{"type": "assistant" | "user", "message": {...},
"parent_tool_use_id": null, "session_id", "uuid"}`; the prompt itself is not repeated), and the same result object
last. These are the keys Claude Code 2.1.197 prints, checked against its binary run offline on the mock model
(it prints a few more of its own: `modelUsage`, `ttft_ms`, …).

`text` prints the answer through `render.clean` (control, bidi and invisible characters shown as escapes, newlines
and tabs kept); the JSON formats keep the exact text, those characters escaped as `\\uXXXX` (`render.json_text`).
"""

from __future__ import annotations

import sys
import time
import uuid
from typing import IO, Any

from mini_claude.agent.loop import RunOutcome
from mini_claude.cli.exit_codes import EXIT_DENIED, EXIT_ERROR, EXIT_MAX_TURNS, EXIT_OK, EXIT_TRUNCATED
from mini_claude.cli.render import clean, json_text
from mini_claude.models.pricing import ListPriced, cost_usd, model_usage

__all__ = ["OUTPUT_FORMATS", "ResultWriter", "exit_code", "run_subtype"]

OUTPUT_FORMATS = ("text", "json", "stream-json")


def run_subtype(outcome: RunOutcome | None) -> str:
    if outcome is None:
        return "error_during_execution"
    return {"max_turns": "error_max_turns", "max_tokens": "error_max_tokens"}.get(outcome.stop, "success")


def exit_code(outcome: RunOutcome | None) -> int:
    """0 answered; 1 an error (the model API, a server, …); 3 stopped at --max-turns; 4 the answer was cut at the
    output token limit; 5 answered, but the permission gate refused a call on the way."""
    if outcome is None:
        return EXIT_ERROR
    if outcome.stop == "max_turns":
        return EXIT_MAX_TURNS
    if outcome.stop == "max_tokens":
        return EXIT_TRUNCATED
    if outcome.denials:
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
        self._sent = 0  # how many history messages stream-json has written

    def begin(self) -> None:
        """A new turn starts (stream-json input: one result object per turn, each timed on its own)."""
        self.started = time.monotonic()
        self.api_s = 0.0

    def init(self, tools: list[str], servers: list[dict[str, str]], cwd: str, permission_mode: str) -> None:
        if self.format == "stream-json":
            self._line({"type": "system", "subtype": "init", "session_id": self.session_id, "cwd": cwd,
                        "model": self.model, "tools": tools, "mcp_servers": servers,
                        "permissionMode": permission_mode, "uuid": str(uuid.uuid4())})

    def messages(self, history: list[dict[str, Any]]) -> None:
        """stream-json: every message added to the history since the last call."""
        if self.format != "stream-json":
            return
        for message in history[self._sent:]:
            if message["role"] == "user" and not any(
                    isinstance(b, dict) and b.get("type") == "tool_result" for b in message["content"]):
                continue  # the prompt: the caller has it
            self._line({"type": message["role"], "message": message, "parent_tool_use_id": None,
                        "session_id": self.session_id, "uuid": str(uuid.uuid4())})
        self._sent = len(history)

    def result(self, outcome: RunOutcome | None, *, error: str | None = None, subtype: str | None = None) -> None:
        if self.format == "text":
            if outcome is not None:
                # the model's text through the terminal's one door: escapes, C1 and bidi controls shown, not obeyed
                self.out.write(clean(outcome.text, visible=True).rstrip("\n") + "\n")
                self.out.flush()
            return
        usage = outcome.usage if outcome is not None else None
        kind = run_subtype(outcome) if error is None else (subtype or "error_during_execution")
        record: dict[str, Any] = {
            "type": "result", "subtype": kind, "is_error": kind != "success",
            "duration_ms": round((time.monotonic() - self.started) * 1000),
            "duration_api_ms": round(self.api_s * 1000),
            "num_turns": outcome.turns + outcome.subagent_turns if outcome is not None else 0,  # sub-agents' too
            "result": outcome.text if outcome is not None else (error or ""),
            "stop_reason": outcome.stop if outcome is not None else None,
            "session_id": self.session_id,
            "total_cost_usd": round(self._cost(outcome), 6) if outcome is not None else 0.0,
            "usage": {"input_tokens": usage.input_tokens if usage else 0,
                      "output_tokens": usage.output_tokens if usage else 0,
                      "cache_read_input_tokens": usage.cache_read_tokens if usage else 0,
                      "cache_creation_input_tokens": usage.cache_write_tokens if usage else 0},
            "modelUsage": model_usage([(self.priced, outcome.usage), *outcome.subagent_usage]) if outcome else {},
            "permission_denials": outcome.denials if outcome is not None else [],
            "uuid": str(uuid.uuid4()),
        }
        if self.format == "json":
            self.out.write(json_text(record) + "\n")
        else:
            self._line(record)
        self.out.flush()

    def _cost(self, outcome: RunOutcome) -> float:
        """The run's cost, its sub-agents' requests included, each at its own model's price (`usage` in the result
        is the main agent's alone, as in Claude Code)."""
        return cost_usd(self.priced, outcome.usage) + sum(
            cost_usd(model if isinstance(model, ListPriced) else model.name, usage)
            for model, usage in outcome.subagent_usage)

    def _line(self, record: dict[str, Any]) -> None:
        self.out.write(json_text(record) + "\n")
        self.out.flush()
