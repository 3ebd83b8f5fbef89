"""Writing to a stdio server's stdin: one message as one JSON line, with flow control.

When the pipe's buffer is full (`pause_writing` from asyncio) a writer waits until it drains (`resume_writing`),
the pipe is lost, or the connection ends (`wake`). A message that holds lone surrogates is written with them
escaped, so the line stays valid UTF-8.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
from collections.abc import Callable
from typing import Any

__all__ = ["StdinWriter"]

_json_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
_json_encode_ascii = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode


class StdinWriter:
    """The child's stdin (`pipe`, once attached); `paused` while its buffer is full, `lost` once it broke."""

    def __init__(self) -> None:
        self.pipe: asyncio.WriteTransport | None = None
        self.paused = False
        self.lost = False
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()

    async def write(self, message: dict[str, Any], loop: Callable[[], asyncio.AbstractEventLoop]) -> bool:
        """Write `message` as one line (`pipe` must be attached); when the buffer is full, wait until it drains or
        `wake()`. True when it waited (the caller checks then whether the connection is still there)."""
        pipe = self.pipe
        assert pipe is not None
        try:
            data = (_json_encode(message) + "\n").encode()
        except UnicodeEncodeError:  # lone surrogates: escape them so the line stays valid UTF-8
            data = (_json_encode_ascii(message) + "\n").encode()
        pipe.write(data)
        if not self.paused:
            return False
        waiter = loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        finally:
            with contextlib.suppress(ValueError):
                self._waiters.remove(waiter)
        return True

    def pause(self) -> None:
        self.paused = True

    def resume(self) -> None:
        self.paused = False
        self.wake()

    def on_lost(self) -> None:
        self.lost = True
        self.paused = False
        self.wake()

    def wake(self) -> None:
        """Release every waiting writer."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
