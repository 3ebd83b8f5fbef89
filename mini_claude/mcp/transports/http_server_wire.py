"""Writing HTTP responses for the Streamable HTTP server (http_server.py): plain replies, JSON-RPC replies, and SSE
streams (`pump` writes one `OutStream` as events until its final reply, the client's going, or a time limit; a
keep-alive comment every `KEEPALIVE_S` notices a client that went away). Every response ends its connection.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping
from typing import Any

from mini_claude.mcp.transports.http_server_sessions import OutStream

__all__ = ["CALL_TIMEOUT_S", "KEEPALIVE_S", "WRITE_TIMEOUT_S", "event", "pump", "reply", "reply_json", "rpc_error",
           "start_sse", "write"]

log = logging.getLogger(__name__)

KEEPALIVE_S = 15.0
CALL_TIMEOUT_S = 3600.0
WRITE_TIMEOUT_S = 30.0

_REASONS = {200: "OK", 202: "Accepted", 400: "Bad Request", 403: "Forbidden", 404: "Not Found",
            405: "Method Not Allowed", 406: "Not Acceptable", 409: "Conflict", 411: "Length Required",
            413: "Content Too Large", 415: "Unsupported Media Type", 421: "Misdirected Request",
            431: "Request Header Fields Too Large", 503: "Service Unavailable", 504: "Gateway Timeout"}


async def pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, stream: OutStream, *,
               limit_s: float | None = CALL_TIMEOUT_S) -> None:
    """Write the stream's messages as SSE events until its final reply, the client's going, or the time limit."""
    gone = asyncio.ensure_future(reader.read(1))  # b"" (or an error) once the client closed its end
    ended = asyncio.ensure_future(stream.ended.wait())  # the session ended (DELETE, shutdown)
    loop = asyncio.get_running_loop()
    deadline = None if limit_s is None else loop.time() + limit_s
    try:
        while not stream.closed:
            wait_s = KEEPALIVE_S if deadline is None else min(KEEPALIVE_S, deadline - loop.time())
            if wait_s <= 0:
                log.warning("mcp serve: request %r got no reply in %gs; its stream is closed", stream.request_id,
                            limit_s)
                return
            got = asyncio.ensure_future(stream.queue.get())
            done, _ = await asyncio.wait({got, gone, ended}, timeout=wait_s, return_when=asyncio.FIRST_COMPLETED)
            if got not in done:
                got.cancel()
                if gone in done or ended in done:
                    return
                await write(writer, b": keep-alive\n\n")
                continue
            message = got.result()
            await event(writer, message)
            if stream.is_final(message):
                return
    finally:
        gone.cancel()
        ended.cancel()


async def write(writer: asyncio.StreamWriter, data: bytes) -> None:
    writer.write(data)
    await asyncio.wait_for(writer.drain(), WRITE_TIMEOUT_S)


async def event(writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
    data = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    await write(writer, f"event: message\ndata: {data}\n\n".encode())


async def start_sse(writer: asyncio.StreamWriter, extra: Mapping[str, str]) -> None:
    await write(writer, _head(200, {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", **extra}))


def _head(status: int, headers: Mapping[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}", "Connection: close", *(
        f"{name}: {value}" for name, value in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def _send(writer: asyncio.StreamWriter, status: int, body: bytes, content_type: str,
                extra: Mapping[str, str] | None = None) -> None:
    headers = {"Content-Type": content_type, "Content-Length": str(len(body)), **(extra or {})}
    await write(writer, _head(status, headers) + body)


async def reply(writer: asyncio.StreamWriter, status: int, text: str,
                extra: Mapping[str, str] | None = None) -> None:
    await _send(writer, status, (text + "\n").encode() if text else b"", "text/plain; charset=utf-8", extra)


async def reply_json(writer: asyncio.StreamWriter, status: int, message: dict[str, Any],
                     extra: Mapping[str, str] | None = None) -> None:
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()
    await _send(writer, status, body, "application/json", extra)


async def rpc_error(writer: asyncio.StreamWriter, status: int, request_id: Any, code: int, text: str) -> None:
    await reply_json(writer, status, {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": text}})
