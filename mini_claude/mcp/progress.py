"""Progress tokens of one client's calls: which caller's callback a `notifications/progress` feeds, and which
pending request's deadline it pushes back.

A token is tied to the JSON-RPC id its call will get (`session.next_request_id()` read with no await before the
request is issued, and read again before each retry, which gets a new id), so each progress notification pushes
that request's deadline back (`session.touch`). A token is forgotten when its call ends or is abandoned; progress
for an unknown token, or without a numeric `progress`, is logged and dropped; a failing callback is logged.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mini_claude.mcp.jsonrpc import JsonRpcSession
from mini_claude.mcp.protocol import is_number

__all__ = ["ProgressCallback", "ProgressTokens"]

# the client's logger: records keep the name they had before this part was split out of client.py
log = logging.getLogger("mini_claude.mcp.client")

ProgressCallback = Callable[[float, float | None, str | None], None]


@dataclass
class _Progress:
    """A progress token in use: the caller's callback and the request id whose deadline progress pushes."""

    callback: ProgressCallback
    request_id: int


class ProgressTokens:
    """The progress tokens in use on one session (`name`: the server, for log lines)."""

    def __init__(self, session: JsonRpcSession, name: str) -> None:
        self.name = name
        self._session = session
        self._entries: dict[str | int, _Progress] = {}
        self._tokens = itertools.count(1)

    def issue(self, callback: ProgressCallback) -> str:
        """A new token for the next request, feeding `callback(progress, total, message)`."""
        token = f"mini-claude-{next(self._tokens)}"
        self._entries[token] = _Progress(callback, self._session.next_request_id())
        return token

    def release(self, token: str) -> None:
        """The call ended: forget its token."""
        self._entries.pop(token, None)

    def bind(self, params: Any) -> None:
        """Point a progress token at the id the next request gets (a retry gets a new id). No await follows."""
        meta = params.get("_meta") if isinstance(params, dict) else None
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        entry = self._entries.get(token) if isinstance(token, str | int) else None
        if entry is not None:
            entry.request_id = self._session.next_request_id()

    def forget_request(self, request_id: int) -> None:
        """A request was abandoned: forget the tokens tied to it."""
        for token, entry in list(self._entries.items()):
            if entry.request_id == request_id:
                del self._entries[token]

    def clear(self) -> None:
        self._entries.clear()

    def on_progress(self, params: Any) -> None:
        """A `notifications/progress`: push its request's deadline back and call its callback."""
        if not isinstance(params, dict):
            return
        token = params.get("progressToken")
        entry = self._entries.get(token) if isinstance(token, str | int) else None
        if entry is None:
            log.debug("%s: progress for unknown token %.50r", self.name, token)
            return
        progress = params.get("progress")
        if not is_number(progress):
            log.debug("%s: progress notification without a numeric progress: %.200r", self.name, params)
            return
        total = params.get("total")
        message = params.get("message")
        self._session.touch(entry.request_id)  # work is happening: push the deadline back
        try:
            entry.callback(float(progress), float(total) if is_number(total) else None,
                           message if isinstance(message, str) else None)
        except Exception:
            log.exception("%s: progress callback failed", self.name)
