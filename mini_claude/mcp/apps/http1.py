"""The little HTTP/1.1 the loopback view server speaks (loopback.py): read one request head, answer once and close.

No keep-alive, no chunked bodies, no header folding: a request head is the request line plus `Name: value` lines
(names lower-cased; a second `Host`, `Origin` or `Content-Length` is a 400), the target must be origin-form (`/…`).
Every answer carries `Cache-Control: no-store`, `Referrer-Policy: no-referrer`, `X-Content-Type-Options: nosniff`
and `Connection: close`; `Content-Length` except on 204. `Reject(status)` is how a handler refuses a request.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

__all__ = ["REASONS", "WRITE_TIMEOUT_S", "Reject", "head_bytes", "parse_head", "respond"]

WRITE_TIMEOUT_S = 10.0
REASONS = {200: "OK", 204: "No Content", 400: "Bad Request", 403: "Forbidden", 404: "Not Found",
           405: "Method Not Allowed", 409: "Conflict", 411: "Length Required", 413: "Content Too Large",
           429: "Too Many Requests", 431: "Request Header Fields Too Large"}


class Reject(Exception):
    """An HTTP error answer (`status`), raised while reading a request and answered by the server's one handler."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def parse_head(head: bytes) -> tuple[str, str, dict[str, str]]:
    """(method, target, headers) of a request head ending in a blank line; `Reject(400)` when malformed."""
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1.") or not parts[1].startswith("/"):
        raise Reject(400)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        name = name.strip().lower()
        if not sep or not name or (name in headers and name in ("host", "origin", "content-length")):
            raise Reject(400)
        headers[name] = value.strip()
    return parts[0], parts[1], headers


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
