"""The little HTTP/1.1 the loopback view server speaks (loopback.py): read one request head, answer once and close.

No keep-alive, no chunked bodies, no header folding: a request head is the request line plus `Name: value` lines
(names lower-cased; a second `Host`, `Origin` or `Content-Length` is a 400), the target must be origin-form (`/…`).
Every answer carries `Cache-Control: no-store`, `Referrer-Policy: no-referrer`, `X-Content-Type-Options: nosniff`
and `Connection: close`; `Content-Length` except on 204. `Reject(status)` is how a handler refuses a request.
`event_stream` serves one `text/event-stream` response until its source says it is over or the client goes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable

from mini_claude.net.http_head import HeadError, parse_request_head

__all__ = ["KEEPALIVE_S", "REASONS", "WRITE_TIMEOUT_S", "Reject", "event_stream", "head_bytes", "parse_head",
           "respond"]

WRITE_TIMEOUT_S = 10.0
KEEPALIVE_S = 15.0
REASONS = {200: "OK", 204: "No Content", 400: "Bad Request", 403: "Forbidden", 404: "Not Found",
           405: "Method Not Allowed", 409: "Conflict", 411: "Length Required", 413: "Content Too Large",
           429: "Too Many Requests", 431: "Request Header Fields Too Large"}


class Reject(Exception):
    """An HTTP error answer (`status`), raised while reading a request and answered by the server's one handler."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def parse_head(head: bytes) -> tuple[str, str, dict[str, str]]:
    """(method, target, headers) of a request head ending in a blank line; `Reject(400)` when malformed
    (net/http_head.py: origin-form target, strict header lines)."""
    try:
        request = parse_request_head(head, single=("host", "origin", "content-length"))
    except HeadError:
        raise Reject(400) from None
    return request.method, request.target, request.headers


def head_bytes(status: int, headers: Iterable[tuple[str, str]]) -> bytes:
    """A response head: the status line, the common headers, then `headers` (values already checked)."""
    lines = [f"HTTP/1.1 {status} {REASONS[status]}", "Cache-Control: no-store", "Referrer-Policy: no-referrer",
             "X-Content-Type-Options: nosniff", "Connection: close", *(f"{k}: {v}" for k, v in headers)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def respond(writer: asyncio.StreamWriter, status: int, body: bytes = b"",
                  headers: Iterable[tuple[str, str]] = ()) -> None:
    """Write one whole answer and wait (bounded) until it is sent."""
    length = [] if status == 204 else [("Content-Length", str(len(body)))]
    writer.write(head_bytes(status, [*headers, *length]) + body)
    await asyncio.wait_for(writer.drain(), WRITE_TIMEOUT_S)


async def event_stream(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, wake: asyncio.Event,
                       next_batch: Callable[[], list[str] | None]) -> None:
    """Answer with `text/event-stream` and write each item of `next_batch()` as one `data:` event (items are JSON
    text: one line each), calling it again whenever `wake` is set; a comment every `KEEPALIVE_S` when idle. Ends
    when `next_batch()` returns None or the client closes the connection (which also sets `wake`)."""
    writer.write(head_bytes(200, [("Content-Type", "text/event-stream; charset=utf-8")]))
    client_gone = asyncio.create_task(_until_eof(reader, wake))
    try:
        while not client_gone.done():
            wake.clear()
            batch = next_batch()
            if batch is None:
                return
            if batch:
                writer.write("".join(f"data: {item}\n\n" for item in batch).encode("utf-8"))
                await asyncio.wait_for(writer.drain(), WRITE_TIMEOUT_S)
                continue
            try:
                await asyncio.wait_for(wake.wait(), KEEPALIVE_S)
            except TimeoutError:
                writer.write(b": keepalive\n\n")
                await asyncio.wait_for(writer.drain(), WRITE_TIMEOUT_S)
    finally:
        client_gone.cancel()


async def _until_eof(reader: asyncio.StreamReader, wake: asyncio.Event) -> None:
    """Returns (and sets `wake`) when the client closes its side: a reload or a closed tab."""
    with contextlib.suppress(OSError):
        while await reader.read(1024):
            pass
    wake.set()
