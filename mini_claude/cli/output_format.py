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

`stream-json` prints one object a line as the run goes: the init line first (session/init_record.py), then, as Claude
Code does, one `{"type": "assistant", "message": {...}}` per content block of each assistant turn (the blocks of
one turn share the message `id`: ours, the API's is not kept) and one `{"type": "user", ...}` per tool result
(the prompt itself is not repeated), each with `parent_tool_use_id`, `session_id`, `uuid`, `timestamp`; a
`{"type": "system", "subtype": "api_retry", ...}` line before each wait to send a failed model request again
(session/records.py `retry_record`); and the same result object last.

`text` prints the answer through `render.clean` (control, bidi and invisible characters shown as escapes, newlines
and tabs kept); the JSON formats keep the exact text, those characters escaped as `\\uXXXX` (`render.json_text`).
"""

from __future__ import annotations

import sys
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
from mini_claude.models.pricing import ListPriced
from mini_claude.session.records import RunError, Transcript, run_subtype

__all__ = ["OUTPUT_FORMATS", "ResultWriter", "RunError", "exit_code", "run_subtype"]

OUTPUT_FORMATS = ("text", "json", "stream-json")
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
    """Writes a `-p` run in one output format to `out` (stdout); the records are session/records.py's."""

    def __init__(self, fmt: str, *, session_id: str, model: str, out: IO[str] | None = None,
                 priced: ListPriced | None = None) -> None:
        self.format = fmt
        self.transcript = Transcript(session_id=session_id, model=model, priced=priced)
        self.out = out or sys.stdout

    def begin(self) -> None:
        """A new turn starts (stream-json input: one result object per turn, each timed on its own)."""
        self.transcript.begin()

    def init(self, record: dict[str, Any]) -> None:
        """stream-json: the `system/init` line (session.init_record.init_record)."""
        if self.format == "stream-json":
            self._line(record)

    def skip(self, history: list[dict[str, Any]]) -> None:
        """What `history` holds now is not written (a resumed conversation: Claude Code does not repeat it)."""
        self.transcript.skip(history)

    def messages(self, history: list[dict[str, Any]]) -> None:
        """stream-json: every message added to the history since the last call, one content block a line."""
        if self.format == "stream-json":
            self.records(self.transcript.new_records(history))

    def records(self, records: list[dict[str, Any]]) -> None:
        """stream-json: these records, a line each (other formats write only the result)."""
        if self.format == "stream-json":
            for record in records:
                self._line(record)

    def result(self, outcome: RunOutcome | None, *, error: RunError | None = None,
               structured_output: Any = None) -> None:
        if self.format == "text":
            if structured_output is not None:  # --json-schema: the answer in its shape, as one JSON line
                self.out.write(json_text(structured_output) + "\n")
                self.out.flush()
            elif outcome is not None:
                # the model's text through the terminal's one door: escapes, C1 and bidi controls shown, not obeyed
                self.out.write(clean(outcome.text, visible=True).rstrip("\n") + "\n")
                self.out.flush()
            return
        record = self.transcript.result_record(outcome, error=error, structured_output=structured_output)
        if self.format == "json":
            self.out.write(json_text(record) + "\n")
        else:
            self._line(record)
        self.out.flush()

    def _line(self, record: dict[str, Any]) -> None:
        self.out.write(json_text(record) + "\n")
        self.out.flush()
