"""The one place that turns an httpx (or OS) exception into our words, keeping its reason.

httpx's own message often says little ("All connection attempts failed"); the reason is further down the cause
chain (a `ConnectionRefusedError`, a `socket.gaierror`, a certificate error). `describe_http_error()` reads it by
exception type, never by matching message text, and names the host and, for a timeout, the phase that timed out:

    cannot connect to 127.0.0.1:8123 (connection refused)
    timed out connecting to example.com (ConnectTimeout)

The MCP transports wrap it in a TransportError (`http_error()`); OAuth puts it in its AuthError messages.
httpx is only imported when an exception is described (it is loaded already then), so importing this module
stays cheap on the stdio path.
"""

from __future__ import annotations

import os
import socket
import ssl

from mini_claude.errors import TransportError

__all__ = ["describe_http_error", "http_error", "network_reason"]

_MAX_REASON_CHARS = 200


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return " ".join(text.splitlines()[0].split())[:_MAX_REASON_CHARS] if text else ""


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc` and its causes, outermost first (each exception once: a chain may loop)."""
    found: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not seen for seen in found):
        found.append(current)
        current = current.__cause__ or current.__context__
    return found


def network_reason(exc: BaseException) -> str:
    """A short reason for a failed connection, from the innermost OS-level error of the cause chain ("connection
    refused", "unknown host", "certificate verify failed: ..."); the outermost message when there is none."""
    chain = _chain(exc)
    for current in reversed(chain):  # the innermost error is the most precise
        if isinstance(current, ssl.SSLCertVerificationError):
            return f"TLS certificate not accepted: {current.verify_message or _one_line(current)}"
        if isinstance(current, ssl.SSLError):
            return f"TLS error: {current.reason or _one_line(current)}"
        if isinstance(current, socket.gaierror):
            return "unknown host"
        if isinstance(current, ConnectionRefusedError):
            return "connection refused"
        if isinstance(current, ConnectionResetError):
            return "connection reset by the peer"
        if isinstance(current, OSError) and current.errno is not None and current.errno > 0:
            return os.strerror(current.errno).lower()
    for current in chain:
        # a LookupError deep in a library (anyio's "pop from an empty deque" behind EndOfStream) is not a reason
        text = "" if isinstance(current, LookupError) and current is not exc else _one_line(current)
        if text:
            return text
    return type(exc).__name__


def _host(exc: BaseException) -> str | None:
    """`host[:port]` of the request an httpx error belongs to, when it knows one."""
    try:
        url = exc.request.url  # type: ignore[attr-defined]  # httpx.RequestError; raises when none was set
    except (AttributeError, RuntimeError):
        return None
    host = url.host
    if not isinstance(host, str) or not host:
        return None
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    return host if url.port is None else f"{host}:{url.port}"


def describe_http_error(exc: BaseException) -> str:
    """One line saying what failed and why (see the module docstring); never contains a URL's query or a header."""
    import httpx

    host = _host(exc)
    at = f" {host}" if host else ""
    if isinstance(exc, httpx.TimeoutException):
        phases = ((httpx.ConnectTimeout, "connecting to"), (httpx.WriteTimeout, "sending to"),
                  (httpx.ReadTimeout, "waiting for an answer from"),
                  (httpx.PoolTimeout, "waiting for a free connection to"))
        phase = next((text for kind, text in phases if isinstance(exc, kind)), None)
        if phase is None or host is None:
            return f"timed out ({type(exc).__name__})"
        return f"timed out {phase}{at} ({type(exc).__name__})"
    if isinstance(exc, httpx.ConnectError):
        return f"cannot connect{' to' + at if host else ''} ({network_reason(exc)})"
    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
        return f"connection dropped by the server{' at' + at if host else ''} ({network_reason(exc)})"
    if isinstance(exc, httpx.TooManyRedirects):
        return "too many redirects"
    if isinstance(exc, httpx.InvalidURL | httpx.UnsupportedProtocol):
        return f"invalid URL ({_one_line(exc) or type(exc).__name__})"
    if isinstance(exc, TimeoutError):
        return "timed out"
    if isinstance(exc, OSError):
        return network_reason(exc)
    return f"{type(exc).__name__}: {_one_line(exc) or 'no details'}"


def http_error(exc: BaseException, what: str, server: str | None) -> TransportError:
    """A TransportError for a failed exchange with an MCP server: `what` (e.g. "POST tools/call"), then
    `describe_http_error(exc)`, then a hint at the config key to check when the cause is likely there."""
    import httpx

    text = f"{what}: {describe_http_error(exc)}"
    if isinstance(exc, httpx.ConnectError):
        text += "; is the server running and the URL right?"
    elif isinstance(exc, httpx.InvalidURL | httpx.UnsupportedProtocol):
        text += "; check the server's `url`"
    return TransportError(text, server=server)
