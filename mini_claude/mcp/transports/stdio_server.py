"""`serve_stdio`: one MCP server session (a `MessagePeer`, e.g. `McpServerCore`) served over this process's stdin
and stdout — the server side of the stdio transport.

* Framing: one JSON-RPC message per line. A line longer than `max_line` bytes (default: the client side's cap,
  `limits.max_message_bytes()`: `MINI_CLAUDE_MCP_MAX_MESSAGE_BYTES`) is never stored: it is skipped up to
  its newline and answered with an `Invalid Request` error (id null), and the connection goes on.
* A line that is not JSON, or is nested too deeply to decode, gets a `Parse error` reply (id null); blank lines
  are skipped.
* stdout carries the protocol alone: the file descriptor is duplicated for our writes and `sys.stdout` is pointed
  at stderr, so a stray `print` in a tool or a library cannot corrupt the stream. Logs go to stderr.
* End of input ends the session cleanly: `session.close()` cancels running calls (their tools reap their
  children), then the function returns.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from typing import Any, BinaryIO

from mini_claude.mcp.transports.inprocess import MessagePeer
from mini_claude.mcp.transports.limits import max_message_bytes

__all__ = ["serve_stdio"]

log = logging.getLogger(__name__)

_CHUNK = 64 * 1024


class _StdoutLink:
    """The `PeerLink` of the session: each message one line on the protocol stream."""

    def __init__(self, out: BinaryIO) -> None:
        self._out = out
        self.ended = asyncio.Event()
        self.reason = ""

    def push(self, message: dict[str, Any]) -> None:
        if self.ended.is_set():
            return
        try:
            self._out.write(json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
            self._out.flush()
        except (BrokenPipeError, OSError, ValueError):  # the client is gone
            self.end("the client closed its end of the pipe")

    def end(self, reason: str) -> None:
        self.reason = reason
        self.ended.set()


def _protocol_stdout() -> BinaryIO:
    """A private handle on fd 1 for the protocol; `sys.stdout` (and fd 1 for children) then goes to stderr."""
    fd = os.dup(sys.stdout.fileno())
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # a child's or a print's output can no longer reach the client
    sys.stdout = sys.stderr
    return os.fdopen(fd, "wb", buffering=0)


async def serve_stdio(peer: MessagePeer, *, max_line: int | None = None, stdin: BinaryIO | None = None,
                      stdout: BinaryIO | None = None) -> None:
    """Serve one session of `peer` until stdin ends (or the peer ends the connection)."""
    max_line = max_line if max_line is not None else max_message_bytes()
    out = stdout if stdout is not None else _protocol_stdout()
    source = stdin if stdin is not None else sys.stdin.buffer
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_CHUNK * 2)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), source)
    link = _StdoutLink(out)
    session = await peer.open_session(link)
    parts: list[bytes] = []
    size = 0
    skipping = False
    ended = asyncio.ensure_future(link.ended.wait())
    try:
        while not link.ended.is_set():
            read = asyncio.ensure_future(reader.read(_CHUNK))
            await asyncio.wait({read, ended}, return_when=asyncio.FIRST_COMPLETED)
            if not read.done():
                read.cancel()
                break
            data = read.result()
            if not data:
                break
            while data:
                cut = data.find(b"\n")
                piece, data = (data, b"") if cut < 0 else (data[:cut], data[cut + 1:])
                if not skipping:
                    parts.append(piece)
                    size += len(piece)
                    if size > max_line:
                        skipping, parts, size = True, [], 0
                if cut < 0:
                    break
                if skipping:
                    skipping = False
                    log.warning("skipped an incoming message longer than %d bytes", max_line)
                    link.push(_error(-32600, f"message longer than {max_line} bytes"))
                    continue
                line, parts, size = b"".join(parts), [], 0
                await _deliver(session, link, line)
    finally:
        ended.cancel()
        await session.close()
        try:
            out.flush()
        except (OSError, ValueError):
            pass


async def _deliver(session: Any, link: _StdoutLink, line: bytes) -> None:
    text = line.decode("utf-8", errors="replace").strip().lstrip("\ufeff")
    if not text:
        return
    try:
        message = json.loads(text)
    except ValueError:
        link.push(_error(-32700, "Parse error: the line is not JSON"))
        return
    except RecursionError:  # nested deeper than the decoder's stack: refused, never the server's end
        link.push(_error(-32700, "Parse error: the line is nested too deeply"))
        return
    if not isinstance(message, dict):
        link.push(_error(-32600, "Invalid Request: a message must be a JSON object (batches are not supported)"))
        return
    await session.deliver(message)


def _error(code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
