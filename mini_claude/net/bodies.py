"""Reading an HTTP response body up to a cap: what a server sends can never make us hold more than we asked for."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

__all__ = ["read_capped"]


async def read_capped(response: httpx.Response, limit: int) -> tuple[bytes, int | None]:
    """(the body, None) when it is at most `limit` bytes; else (its first `limit` bytes, the bytes read when reading
    stopped). Raises httpx.HTTPError."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            return b"".join(chunks)[:limit], size
    return b"".join(chunks), None
