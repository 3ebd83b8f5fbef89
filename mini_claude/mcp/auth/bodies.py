"""Bounded reads of authorization-server answers (metadata, registration, token replies): the body is streamed
and the read stops at `MAX_AUTH_BODY_BYTES`, so a hostile or broken server cannot make us buffer without limit."""

from __future__ import annotations

import httpx

from mini_claude.errors import BodyTooLargeError

__all__ = ["MAX_AUTH_BODY_BYTES", "read_capped"]

MAX_AUTH_BODY_BYTES = 1024 * 1024


async def read_capped(response: httpx.Response, what: str, server: str | None,
                      limit: int = MAX_AUTH_BODY_BYTES) -> bytes:
    """The body of a streamed `response` (opened with `client.stream(...)` or `send(stream=True)`), at most
    `limit` bytes; more raises BodyTooLargeError naming `what`. The response is closed on error."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        await response.aclose()
        raise BodyTooLargeError(f"the {what} is larger than {limit // 1024} KiB; refusing to read it", server=server)
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            await response.aclose()
            raise BodyTooLargeError(f"the {what} is larger than {limit // 1024} KiB; refusing to read it",
                                    server=server)
        chunks.append(chunk)
    return b"".join(chunks)
