"""`query`: one exchange with a fresh session — the Python API's one-call entry point.

    async for message in query(prompt="What is 2 + 2?", options=Options(cwd=".")):
        if isinstance(message, ResultMessage):
            print(message.result)

A string prompt is one turn: the messages end with its ResultMessage. An async iterable of user messages
(`{"type": "user", "message": {"role": "user", "content": ...}}`) is a turn each, in order: the messages end with the
last one's ResultMessage once the iterable is exhausted. The session is closed when the iteration ends, is broken
off, or fails.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

from mini_claude.api.client import INPUT_ENDED, Client
from mini_claude.api.options import Options
from mini_claude.api.types import Message, ResultMessage

__all__ = ["query"]


async def query(*, prompt: str | AsyncIterable[dict[str, Any]], options: Options | None = None
                ) -> AsyncIterator[Message]:
    client = Client(options)
    client._shows_views = False  # one exchange: the session ends with it, so no MCP Apps view would live
    try:
        await client.connect()
        if isinstance(prompt, str):
            await client.query(prompt)
            async for message in client.receive_response():
                yield message
            return
        fed = _Counted(prompt)
        await client.query(fed)
        results = 0
        async for message in client.receive_with_markers():
            if message is not INPUT_ENDED:
                yield message
                results += isinstance(message, ResultMessage)
            if fed.done and results >= fed.count:
                return
    finally:
        await client.disconnect()


class _Counted:
    """The program's input stream, passed on as it comes, counting its messages and knowing when it ended."""

    def __init__(self, stream: AsyncIterable[dict[str, Any]]) -> None:
        self._stream = stream
        self.count = 0
        self.done = False

    async def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        async for record in self._stream:
            self.count += 1
            yield record
        self.done = True
