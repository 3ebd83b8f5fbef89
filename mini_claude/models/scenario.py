"""The mock model's scenario files: loading, validation with clear errors, and rendering a turn for a request.

A scenario is a JSON object `{"turns": [TURN, ...]}`; each request to the mock consumes the next turn.

    {"content": [{"type": "thinking", "thinking": "...", "signature": "..."},   (signature optional: generated)
                 {"type": "redacted_thinking", "data": "..."},
                 {"type": "text", "text": "..."},
                 {"type": "tool_use", "name": "Read", "input": {"file_path": "x"}}],
     "stop_reason": "end_turn",                  (optional; default tool_use when the turn calls a tool;
                                                  "max_tokens" on a turn ending in a tool call streams only
                                                  the first half of its input, as a cut reply does)
     "expect_tool_result_contains": "...",       (optional: answer HTTP 500 unless the last tool_result has it)
     "delay_ms": 1500}                           (optional: think that long before answering; at most 60000)
    {"error": {"status": 429, "message": "slow down", "headers": {"retry-after": "0"}, "type": "rate_limit_error"}}

A turn may also hold the API's server-side web search blocks, as the API answers a request carrying the
`web_search_20250305` tool: `{"type": "server_tool_use", "input": {"query": "..."}}` (name `web_search` by default)
and `{"type": "web_search_tool_result", "content": [{"title": "...", "url": "..."}]}` (or `{"error_code": "..."}`);
ids are generated and each result is tied to the server_tool_use before it.

Text (and string values inside a tool_use `input`) may contain `{{last_tool_result}}` and
`{{last_tool_result_is_error}}`, replaced by the text / error flag (`true`/`false`) of the last tool_result in
the request being answered, so a scripted answer can quote what a tool really returned. Thinking blocks stream as
`thinking_delta` / `signature_delta` events; while the tool loop they belong to goes on, a request must send them
back unchanged or it gets HTTP 400, as from the real API. Every Messages answer's usage has
`cache_read_input_tokens` and `cache_creation_input_tokens` computed from the request's `cache_control` breakpoints
(mock_memory.py says how), so tests can see caching pay. A top-level
`"context_limit_tokens"` makes over-long requests fail as a real model's would (HTTP 400 "prompt is too long"); a
request whose system prompt is `SUMMARY_SYSTEM_PROMPT` (the agent compacting its history) is answered with a short
summary without using a turn. `POST /v1/messages/count_tokens` answers `{"input_tokens": N}` with N the
request's JSON characters divided by the top-level `"chars_per_token"` (default 4, the agent's own local estimate;
a smaller number stands for a tokenizer that counts more than the estimate). A top-level
`"description"` and a per-turn `"comment"` are allowed and ignored. Problems raise `ConfigError` naming the file
and the key, e.g. `demo.json: turns[2].content[0].type: must be "text", "tool_use", "thinking" or
"redacted_thinking"`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mini_claude.errors import ConfigError

__all__ = [
    "LAST_TOOL_RESULT",
    "LAST_TOOL_RESULT_IS_ERROR",
    "SERVER_BLOCK_TYPES",
    "Scenario",
    "ScenarioError",
    "ScenarioTurn",
    "ToolResultSeen",
    "load_scenario",
    "parse_scenario",
    "render_content",
]

LAST_TOOL_RESULT = "{{last_tool_result}}"
LAST_TOOL_RESULT_IS_ERROR = "{{last_tool_result_is_error}}"

_TURN_KEYS = frozenset({"content", "error", "stop_reason", "expect_tool_result_contains", "delay_ms", "comment"})
_ERROR_KEYS = frozenset({"status", "message", "headers", "type"})
_TOP_KEYS = frozenset({"turns", "description", "context_limit_tokens", "chars_per_token"})
_ERROR_TYPE_BY_STATUS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


@dataclass(frozen=True)
class ScenarioError:
    """A scripted HTTP error answer."""

    status: int
    message: str
    headers: dict[str, str] = field(default_factory=dict)
    type: str = "api_error"


@dataclass(frozen=True)
class ScenarioTurn:
    """One scripted answer: content blocks (with `input`, no ids yet) or an error."""

    content: tuple[dict[str, Any], ...] = ()
    stop_reason: str | None = None
    error: ScenarioError | None = None
    expect_tool_result_contains: str | None = None
    delay_ms: int = 0

    @property
    def effective_stop_reason(self) -> str:
        if self.stop_reason:
            return self.stop_reason
        return "tool_use" if any(b["type"] == "tool_use" for b in self.content) else "end_turn"


@dataclass(frozen=True)
class Scenario:
    turns: tuple[ScenarioTurn, ...]
    source: str = "<scenario>"
    # like a real model's context window: a request estimated larger (JSON characters / 4) gets HTTP 400
    # "prompt is too long" without using a turn
    context_limit_tokens: int | None = None
    chars_per_token: float = 4.0  # what /v1/messages/count_tokens divides a request's JSON characters by


@dataclass(frozen=True)
class ToolResultSeen:
    """The last tool result found in a request."""

    text: str
    is_error: bool


def load_scenario(path: Path | str) -> Scenario:
    """Read and validate a scenario file. Raises ConfigError (file + key + problem) on any mistake."""
    file = str(path)
    try:
        raw = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("no such file", file=file) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read: {exc}", file=file) from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", file=file) from None
    return parse_scenario(data, source=file)


def parse_scenario(data: Any, *, source: str = "<scenario>") -> Scenario:
    """Validate already-decoded scenario JSON."""

    def fail(key: str | None, message: str) -> ConfigError:
        return ConfigError(message, file=source, key=key)

    if not isinstance(data, dict):
        raise fail(None, 'must be a JSON object like {"turns": [...]}')
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise fail(unknown[0], 'unknown key (expected "turns")')
    turns = data.get("turns")
    if not isinstance(turns, list):
        raise fail("turns", "missing or not a list")
    limit = data.get("context_limit_tokens")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0):
        raise fail("context_limit_tokens", "must be a positive integer")
    per_token = data.get("chars_per_token", 4.0)
    if isinstance(per_token, bool) or not isinstance(per_token, int | float) or per_token <= 0:
        raise fail("chars_per_token", "must be a positive number")
    return Scenario(tuple(_parse_turn(t, f"turns[{i}]", fail) for i, t in enumerate(turns)), source, limit,
                    float(per_token))


def _parse_turn(turn: Any, key: str, fail: Any) -> ScenarioTurn:
    if not isinstance(turn, dict):
        raise fail(key, "must be an object with \"content\" or \"error\"")
    unknown = sorted(set(turn) - _TURN_KEYS)
    if unknown:
        raise fail(f"{key}.{unknown[0]}", "unknown key (expected content, error, stop_reason, "
                                          "expect_tool_result_contains, delay_ms or comment)")
    if ("content" in turn) == ("error" in turn):
        raise fail(key, "needs exactly one of \"content\" or \"error\"")
    delay = turn.get("delay_ms", 0)
    if not isinstance(delay, int) or isinstance(delay, bool) or not 0 <= delay <= 60_000:
        raise fail(f"{key}.delay_ms", "must be a whole number of milliseconds from 0 to 60000")
    expect = turn.get("expect_tool_result_contains")
    if expect is not None and not isinstance(expect, str):
        raise fail(f"{key}.expect_tool_result_contains", "must be a string")
    if "error" in turn:
        if "stop_reason" in turn:
            raise fail(f"{key}.stop_reason", "an error turn has no stop_reason")
        return ScenarioTurn(error=_parse_error(turn["error"], f"{key}.error", fail),
                            expect_tool_result_contains=expect)
    stop = turn.get("stop_reason")
    if stop is not None and (not isinstance(stop, str) or not stop):
        raise fail(f"{key}.stop_reason", "must be a non-empty string")
    content = turn["content"]
    if not isinstance(content, list):
        raise fail(f"{key}.content", "must be a list of blocks")
    blocks = tuple(_parse_block(b, f"{key}.content[{i}]", fail) for i, b in enumerate(content))
    return ScenarioTurn(content=blocks, stop_reason=stop, expect_tool_result_contains=expect, delay_ms=delay)


def _parse_block(block: Any, key: str, fail: Any) -> dict[str, Any]:
    if not isinstance(block, dict):
        raise fail(key, "must be an object")
    kind = block.get("type")
    if kind == "text":
        if not isinstance(block.get("text"), str):
            raise fail(f"{key}.text", "missing or not a string")
        extra = sorted(set(block) - {"type", "text"})
        if extra:
            raise fail(f"{key}.{extra[0]}", "unknown key in a text block")
        return {"type": "text", "text": block["text"]}
    if kind == "tool_use":
        name = block.get("name")
        if not isinstance(name, str) or not name:
            raise fail(f"{key}.name", "missing or not a non-empty string")
        tool_input = block.get("input", {})
        if not isinstance(tool_input, dict):
            raise fail(f"{key}.input", "must be a JSON object")
        extra = sorted(set(block) - {"type", "name", "input"})
        if extra:
            raise fail(f"{key}.{extra[0]}", "unknown key in a tool_use block (ids are generated)")
        return {"type": "tool_use", "name": name, "input": tool_input}
    if kind == "thinking":
        return {"type": "thinking", "thinking": _string(block, "thinking", key, fail),
                "signature": _string(block, "signature", key, fail, optional=True), **_only(block, key, fail,
                                                                                             "thinking", "signature")}
    if kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": _string(block, "data", key, fail), **_only(block, key, fail,
                                                                                               "data")}
    if kind in SERVER_BLOCK_TYPES:
        return _parse_server_block(block, key, fail)
    raise fail(f"{key}.type", 'must be "text", "tool_use", "thinking", "redacted_thinking", "server_tool_use" or '
                              '"web_search_tool_result"')


def _string(block: dict[str, Any], name: str, key: str, fail: Any, *, optional: bool = False) -> str:
    value = block.get(name, "" if optional else None)
    if not isinstance(value, str):
        raise fail(f"{key}.{name}", "missing or not a string")
    return value


def _only(block: dict[str, Any], key: str, fail: Any, *names: str) -> dict[str, Any]:
    """Nothing to add ({}); ConfigError for a key other than `type` and `names`."""
    extra = sorted(set(block) - {"type", *names})
    if extra:
        raise fail(f"{key}.{extra[0]}", f"unknown key in a {block['type']} block")
    return {}


# ---- server tool blocks (the API's web search) ---------------------------------------------------------------

SERVER_BLOCK_TYPES = frozenset({"server_tool_use", "web_search_tool_result"})
_RESULT_KEYS = frozenset({"title", "url", "page_age", "encrypted_content"})


def _parse_server_block(block: dict[str, Any], key: str, fail: Any) -> dict[str, Any]:
    """A `server_tool_use` (the search the API ran) or a `web_search_tool_result` (its results: a list of
    {title, url[, page_age, encrypted_content]}, or {"error_code": "..."}). Ids are generated, and a result is tied
    to the server_tool_use before it."""
    if block["type"] == "server_tool_use":
        extra = sorted(set(block) - {"type", "name", "input"})
        if extra:
            raise fail(f"{key}.{extra[0]}", "unknown key in a server_tool_use block (ids are generated)")
        name = block.get("name", "web_search")
        if not isinstance(name, str) or not name:
            raise fail(f"{key}.name", "must be a non-empty string")
        tool_input = block.get("input", {})
        if not isinstance(tool_input, dict):
            raise fail(f"{key}.input", "must be a JSON object")
        return {"type": "server_tool_use", "name": name, "input": tool_input}
    extra = sorted(set(block) - {"type", "content"})
    if extra:
        raise fail(f"{key}.{extra[0]}", "unknown key in a web_search_tool_result block (ids are generated)")
    content = block.get("content")
    if isinstance(content, dict):
        code = content.get("error_code")
        if set(content) != {"error_code"} or not isinstance(code, str) or not code:
            raise fail(f"{key}.content", 'an error result is {"error_code": "..."}')
        return {"type": "web_search_tool_result",
                "content": {"type": "web_search_tool_result_error", "error_code": code}}
    if not isinstance(content, list):
        raise fail(f"{key}.content", 'must be a list of results or {"error_code": "..."}')
    results = []
    for i, item in enumerate(content):
        where = f"{key}.content[{i}]"
        if not isinstance(item, dict):
            raise fail(where, "must be an object with title and url")
        extra = sorted(set(item) - _RESULT_KEYS)
        if extra:
            raise fail(f"{where}.{extra[0]}", "unknown key (expected title, url, page_age or encrypted_content)")
        for field_name in ("title", "url"):
            if not isinstance(item.get(field_name), str):
                raise fail(f"{where}.{field_name}", "missing or not a string")
        results.append({"type": "web_search_result", "title": item["title"], "url": item["url"],
                        "encrypted_content": str(item.get("encrypted_content", "mock-encrypted-content")),
                        "page_age": item.get("page_age")})
    return {"type": "web_search_tool_result", "content": results}


def _parse_error(error: Any, key: str, fail: Any) -> ScenarioError:
    if not isinstance(error, dict):
        raise fail(key, "must be an object with a status")
    unknown = sorted(set(error) - _ERROR_KEYS)
    if unknown:
        raise fail(f"{key}.{unknown[0]}", "unknown key (expected status, message, headers or type)")
    status = error.get("status")
    if isinstance(status, bool) or not isinstance(status, int) or not 400 <= status <= 599:
        raise fail(f"{key}.status", "must be an HTTP error status from 400 to 599")
    message = error.get("message", f"mock error {status}")
    if not isinstance(message, str):
        raise fail(f"{key}.message", "must be a string")
    headers_raw = error.get("headers", {})
    if not isinstance(headers_raw, dict):
        raise fail(f"{key}.headers", "must be an object of header: value")
    headers: dict[str, str] = {}
    for name, value in headers_raw.items():
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise fail(f"{key}.headers.{name}", "must be a string or a number")
        headers[str(name).lower()] = str(value)
    default_type = _ERROR_TYPE_BY_STATUS.get(status, "api_error")
    kind = error.get("type", default_type)
    if not isinstance(kind, str) or not kind:
        raise fail(f"{key}.type", "must be a non-empty string")
    return ScenarioError(status=status, message=message, headers=headers, type=kind)


def render_content(turn: ScenarioTurn, seen: ToolResultSeen | None) -> list[dict[str, Any]]:
    """The turn's blocks with placeholders filled in from the request's last tool result (deep copies)."""
    values = {
        LAST_TOOL_RESULT: seen.text if seen is not None else "",
        LAST_TOOL_RESULT_IS_ERROR: ("true" if seen.is_error else "false") if seen is not None else "false",
    }
    return [_substitute(copy.deepcopy(block), values) for block in turn.content]


def _substitute(value: Any, values: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        for placeholder, text in values.items():
            value = value.replace(placeholder, text)
        return value
    if isinstance(value, list):
        return [_substitute(v, values) for v in value]
    if isinstance(value, dict):
        return {k: (v if k == "type" else _substitute(v, values)) for k, v in value.items()}
    return value
