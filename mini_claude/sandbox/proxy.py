"""The agent's HTTP/HTTPS proxy for sandboxed commands: admits only `sandbox.network.allowedDomains`.

It listens on a unix socket (bound into each sandbox, where forwarder.py serves it on 127.0.0.1) or, for tests and
`httpProxyPort`, on a loopback TCP port. Two request forms:

- `CONNECT host:port HTTP/1.1` (HTTPS and anything tunnelled): the host is checked, the upstream connection made,
  `200 Connection established` sent, then bytes are carried both ways untouched;
- `GET http://host[:port]/path HTTP/1.1` (plain HTTP): the host is checked, the request line rewritten to its path,
  `Proxy-*` headers dropped and `Connection: close` set (so a kept-alive connection cannot move to another host),
  then the exchange is carried as is.

A refused host gets `403` with one line naming the setting; a host that cannot be reached gets `502`. A domain
entry `example.com` admits that host only; `*.example.com` admits its subdomains (not the bare domain). Every wait
has a timeout; the server closes with the session.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

__all__ = ["DomainProxy", "domain_allowed"]

HEADER_TIMEOUT_S = 30.0
CONNECT_TIMEOUT_S = 15.0
_MAX_HEADER_BYTES = 64 * 1024
_CHUNK = 64 * 1024


def domain_allowed(host: str, allowed: Sequence[str]) -> bool:
    """Whether `host` is admitted by the `allowedDomains` entries (case-insensitive, a trailing dot ignored)."""
    host = host.strip().lower().rstrip(".")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    for entry in allowed:
        entry = entry.strip().lower().rstrip(".")
        if entry.startswith("*."):
            if host.endswith(entry[1:]) and host != entry[2:]:
                return True
        elif host == entry:
            return True
    return False


class DomainProxy:
    """One session's proxy. `start_unix(path)` or `start_tcp()`; `close()`; `refused` counts refusals."""

    def __init__(self, allowed: Sequence[str]) -> None:
        self.allowed = tuple(allowed)
        self.refused: list[str] = []  # hosts refused, in order (for the explanation and tests)
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start_unix(self, path: Path) -> None:
        self._server = await asyncio.start_unix_server(self._handle, path=str(path))

    async def start_tcp(self, port: int = 0) -> int:
        self._server = await asyncio.start_server(self._handle, host="127.0.0.1", port=port)
        return int(self._server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2.0)
            self._server = None
        for task in list(self._tasks):
            task.cancel()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            await self._serve(reader, writer)
        except (TimeoutError, OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            if task is not None:
                self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEADER_TIMEOUT_S)
        if len(head) > _MAX_HEADER_BYTES:
            await _reply(writer, 431, "request header too large")
            return
        request_line, _, rest = head.decode("latin-1").partition("\r\n")
        parts = request_line.split()
        if len(parts) != 3:
            await _reply(writer, 400, "bad request")
            return
        method, target, version = parts
        if method.upper() == "CONNECT":
            host, _, port_text = target.rpartition(":")
            port = int(port_text) if port_text.isdigit() else 443
        else:
            url = urlsplit(target)
            if url.scheme.lower() != "http" or not url.hostname:
                await _reply(writer, 400, "only absolute http:// URLs and CONNECT are proxied")
                return
            host, port = url.hostname, url.port or 80
        if not domain_allowed(host, self.allowed):
            self.refused.append(host)
            await _reply(writer, 403, f"the sandbox refused {host}: not in sandbox.network.allowedDomains")
            return
        try:
            up_reader, up_writer = await asyncio.wait_for(asyncio.open_connection(host.strip("[]"), port),
                                                          CONNECT_TIMEOUT_S)
        except (TimeoutError, OSError) as exc:
            await _reply(writer, 502, f"could not reach {host}:{port}: {exc}")
            return
        try:
            if method.upper() == "CONNECT":
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
                await writer.drain()
            else:
                path = urlsplit(target)._replace(scheme="", netloc="").geturl() or "/"
                up_writer.write(_rewritten(method, path, version, rest).encode("latin-1"))
            await _splice(reader, writer, up_reader, up_writer)
        finally:
            up_writer.close()


def _rewritten(method: str, path: str, version: str, rest: str) -> str:
    """A plain-HTTP request for the origin server: its path only, no proxy headers, one request per connection."""
    headers = [line for line in rest.split("\r\n") if line
               and not line.lower().startswith(("proxy-", "connection:", "keep-alive:"))]
    return "\r\n".join([f"{method} {path} {version}", *headers, "Connection: close", "", ""])


async def _splice(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, up_reader: asyncio.StreamReader,
                  up_writer: asyncio.StreamWriter) -> None:
    async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        try:
            while data := await src.read(_CHUNK):
                dst.write(data)
                await dst.drain()
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                if dst.can_write_eof():
                    dst.write_eof()

    await asyncio.gather(pump(reader, up_writer), pump(up_reader, writer))


async def _reply(writer: asyncio.StreamWriter, status: int, text: str) -> None:
    reason = {400: "Bad Request", 403: "Forbidden", 431: "Request Header Fields Too Large",
              502: "Bad Gateway"}.get(status, "Error")
    body = f"{text}\n".encode()
    writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
                 f"Connection: close\r\n\r\n".encode() + body)
    with contextlib.suppress(OSError):
        await writer.drain()
