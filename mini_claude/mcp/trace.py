"""`--mcp-trace FILE`: every JSON-RPC message, both ways, one JSON line each, timestamped, secrets redacted.

One hook, at one layer: each `JsonRpcSession` takes the tracer active when it is created (`active()`) and hands it
every message it sends and every message its transport delivers, so stdio, Streamable HTTP and SSE are traced
alike, the era probe and server→client requests included. Transport-level data (HTTP headers, OAuth tokens,
process environments) never reaches this layer, so it is never written. A line:

    {"ts": "2026-12-05T20:41:07.123Z", "server": "fs", "dir": "send", "message": {"jsonrpc": "2.0", ...}}

`dir` is "send" (to the server) or "recv" (from it); an MCP Apps view's messages (mcp/apps/bridge.py) are lines
under its server with `dir` "view-recv" (the view posted it) or "view-send" (sent to the view). Redaction (`redact_message`): the value of every key that
names a secret (token, password, secret, authorization, cookie, api key…) becomes "***", and every string passes
through `logredact.redact_text` (URL userinfo and query values, `Bearer`/`Basic` credentials) and
`secrets.mask` (every value the session knows to be secret: the agent's credentials, a server's OAuth token or
header value, secret-looking variables — wherever it appears, under any key). The file is created
0600 and appended to; a write that fails stops the trace with one warning, never the session.

    with tracing(Path("trace.jsonl")):
        asyncio.run(main())        # every session created inside is traced
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from mini_claude.errors import ConfigError
from mini_claude.logredact import MASK, redact_text
from mini_claude.secrets import mask

__all__ = ["McpTrace", "MessageTap", "active", "redact_message", "tapping", "tracing"]

log = logging.getLogger(__name__)

MAX_TRACE_STRING = 100_000  # longer strings are cut (a 50 MB result would make a trace unreadable)
_SECRET_KEY = re.compile(r"token|secret|passw|authoriz|cookie|api[_-]?key|credential|private[_-]?key|assertion",
                         re.IGNORECASE)
_NOT_SECRET_KEY = re.compile(r"(progresstoken|cursor|tokens|token_?count|max_?tokens)$", re.IGNORECASE)



class MessageTap(Protocol):
    """What a JSON-RPC session hands each message to: `direction` is "send" or "recv"."""

    def record(self, server: str | None, direction: str, message: Any) -> None: ...


_active: MessageTap | None = None


def redact_message(value: Any, *, depth: int = 0) -> Any:
    """A copy of a JSON value safe to write: secret-named keys masked, URLs and auth schemes redacted in strings,
    long strings cut, nesting past 64 levels summarised."""
    if depth > 64:
        return "[nested deeper than 64 levels]"
    if isinstance(value, dict):
        return {key: MASK if isinstance(key, str) and _is_secret_key(key) and item is not None
                else redact_message(item, depth=depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        return [redact_message(item, depth=depth + 1) for item in value]
    if isinstance(value, str):
        text = mask(redact_text(value))  # and every value the session knows to be secret (mini_claude.secrets)
        if len(text) > MAX_TRACE_STRING:
            text = f"{text[:MAX_TRACE_STRING]}… [{len(text) - MAX_TRACE_STRING} more characters]"
        return text
    return value


def _is_secret_key(key: str) -> bool:
    return bool(_SECRET_KEY.search(key)) and not _NOT_SECRET_KEY.search(key)


class McpTrace:
    """An open trace file. `record` never raises: the first failed write closes the trace with a warning."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)

    def record(self, server: str | None, direction: str, message: Any) -> None:
        if self._fd is None:
            return
        now = time.time()
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"
        line = json.dumps({"ts": stamp, "server": server, "dir": direction, "message": redact_message(message)},
                          ensure_ascii=False, default=repr)
        try:
            os.write(self._fd, (line + "\n").encode("utf-8", "replace"))
        except OSError as exc:
            log.warning("--mcp-trace %s: cannot write (%s); tracing stops", self.path, exc)
            self.close()

    def close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None


def active() -> MessageTap | None:
    """The tap new JSON-RPC sessions hand their messages to (None: none)."""
    return _active


class _Both:
    def __init__(self, first: MessageTap, then: MessageTap) -> None:
        self.first, self.then = first, then

    def record(self, server: str | None, direction: str, message: Any) -> None:
        self.first.record(server, direction, message)
        self.then.record(server, direction, message)


@contextlib.contextmanager
def tapping(tap: MessageTap) -> Iterator[MessageTap]:
    """Hand every message of the JSON-RPC sessions created inside the block to `tap` too (`mcp doctor` times the
    first reply this way); a trace already active keeps receiving them."""
    global _active
    previous = _active
    _active = tap if previous is None else _Both(previous, tap)
    try:
        yield tap
    finally:
        _active = previous


@contextlib.contextmanager
def tracing(path: Path) -> Iterator[McpTrace]:
    """Trace every JSON-RPC session created inside the block to `path` (created 0600, appended to). Raises
    ConfigError when the file cannot be opened."""
    global _active
    try:
        trace = McpTrace(path)
    except OSError as exc:
        raise ConfigError(f"cannot open {path}: {exc.strerror or exc}", key="--mcp-trace") from exc
    previous = _active
    _active = trace if previous is None else _Both(previous, trace)
    try:
        yield trace
    finally:
        _active = previous
        trace.close()
