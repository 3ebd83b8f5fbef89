"""`Inbox`: the queue between an HTTP transport's stream readers and its one `receive()` caller.

Readers `put()` decoded messages; the connection ends once with `end(error)`, after which `receive()` drains
what is queued and then raises that error, every time, at once. It also keeps the last few non-JSON items the
peer sent (`note()`, `diagnostics()`). Shared by the Streamable HTTP and legacy SSE transports (stdio reads its
pipe directly).
"""

from __future__ import annotations

import asyncio
import collections
from typing import Any

from mini_claude.errors import TransportError

__all__ = ["NOISE_ITEMS", "Inbox"]

NOISE_ITEMS = 20
NOISE_ITEM_CHARS = 500


class Inbox:
    """Decoded messages waiting for `receive()`, and the error that ended the connection (None while open)."""

    def __init__(self) -> None:
        self.error: TransportError | None = None
        self._items: collections.deque[Any] = collections.deque()
        self._waiter: asyncio.Future[None] | None = None
        self._noise: collections.deque[str] = collections.deque(maxlen=NOISE_ITEMS)

    def put(self, message: Any) -> None:
        """Queue one message (dropped once the connection has ended: nobody will act on it)."""
        if self.error is None:
            self._items.append(message)
            self._wake()

    def end(self, error: TransportError) -> None:
        """End the connection with `error` (the first call wins); wakes a waiting `receive()`."""
        if self.error is None:
            self.error = error
        self._wake()

    def clear(self) -> None:
        self._items.clear()

    def note(self, text: str) -> None:
        """Keep one piece of non-JSON output (on one line, bounded) for `diagnostics()`."""
        self._noise.append(" ".join(text.split())[:NOISE_ITEM_CHARS])

    def diagnostics(self) -> str:
        return "\n".join(self._noise)

    async def receive(self) -> Any:
        """The next queued message; raises the ending error once the queue is empty and the connection is over."""
        while True:
            if self._items:
                return self._items.popleft()
            if self.error is not None:
                raise self.error.with_traceback(None)
            if self._waiter is not None:
                raise RuntimeError("receive() is already waiting on this transport")
            waiter = self._waiter = asyncio.get_running_loop().create_future()
            try:
                await waiter
            finally:
                self._waiter = None

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
