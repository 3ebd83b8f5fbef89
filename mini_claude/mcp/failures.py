"""Why a server is down, in words that say what to change; and which call failures mean the connection is gone.

The manager turns every exception met while starting, calling or reconnecting a server into a status and one
line of text here. A stdio server that hangs or dies at startup is shown with the last thing it said (its
transport's `diagnostics()`: the stderr tail), since that is usually the real cause ("waiting for database…").
Errors are told apart by type, never by their text.
"""

from __future__ import annotations

import logging

from mini_claude.errors import (
    AuthRequiredError,
    HttpSessionExpiredError,
    HttpStatusError,
    JsonRpcError,
    McpError,
    McpTimeoutError,
    ServerExitedError,
    SpawnError,
    TransportError,
)
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.config import ServerConfig
from mini_claude.mcp.server_state import NEEDS_LOGIN_TEXT, ServerStatus
from mini_claude.mcp.transports.base import SupportsSessionId

__all__ = [
    "MAX_OUTPUT_TAIL_CHARS",
    "failure_reason",
    "is_connection_loss",
    "lost_reason",
    "needs_login_text",
    "output_tail",
    "session_refused",
    "start_failure",
]

log = logging.getLogger(__name__)

MAX_OUTPUT_TAIL_CHARS = 300  # of the server's last output line, in a status line (as ServerExitedError cuts it)


def output_tail(diagnostics: str) -> str:
    """The last non-blank line of a transport's `diagnostics()`, cut to MAX_OUTPUT_TAIL_CHARS ("" if none)."""
    lines = [line.strip() for line in diagnostics.splitlines() if line.strip()]
    return lines[-1][:MAX_OUTPUT_TAIL_CHARS] if lines else ""


def _heard(diagnostics: str, stderr: str) -> str:
    """"; stderr: <last line>" when the server wrote to its stderr, else "; output: <last line>" of whatever else
    it printed (non-JSON stdout, an HTTP body), else ""."""
    tail = output_tail(stderr)
    if tail:
        return f"; stderr: {tail}"
    tail = output_tail(diagnostics)
    return f"; output: {tail}" if tail else ""


def start_failure(exc: Exception, cfg: ServerConfig, timeout_s: float, diagnostics: str = "", stderr: str = ""
                  ) -> tuple[ServerStatus, str]:
    """The status and reason for a server that could not connect. `diagnostics` is its transport's
    `diagnostics()` at the time and `stderr` the stderr tail alone (a stdio server's), shown when the error does
    not carry them: stderr first, since that is where a server says why it waits or dies."""
    if isinstance(exc, TimeoutError):
        return ServerStatus.FAILED, (f"did not start within {timeout_s:g}s{_heard(diagnostics, stderr)} (raise "
                                     f"MCP_TIMEOUT, in ms, or check `{cfg.command or cfg.url}` in {cfg.source})")
    if isinstance(exc, AuthRequiredError):
        return ServerStatus.NEEDS_AUTH, needs_login_text(exc, cfg)
    if isinstance(exc, McpTimeoutError):
        return ServerStatus.FAILED, (f"{exc.message}{_heard(diagnostics, stderr)} (raise MCP_TIMEOUT, in ms, or "
                                     f"check the server in {cfg.source})")
    if isinstance(exc, McpError):
        return ServerStatus.FAILED, failure_reason(exc, cfg, diagnostics)
    # one server's surprise must cost that server only
    log.debug("server %s failed to start", cfg.name, exc_info=exc)
    return ServerStatus.FAILED, f"failed to start: {exc!r}"


def failure_reason(exc: McpError, cfg: ServerConfig, diagnostics: str = "") -> str:
    """A failure reason without the "MCP server 'x':" prefix (the status line already names the server).
    A process that exited with nothing on stderr is shown with what else it printed (`diagnostics`), if any."""
    text = exc.message
    if isinstance(exc, ServerExitedError):
        text = str(exc).removeprefix(f"MCP server {cfg.name!r}: ")
        tail = output_tail(diagnostics)
        if tail and not exc.stderr_tail.strip():
            text += f"; output: {tail}"
    if isinstance(exc, TransportError) and cfg.type == "stdio" and not isinstance(exc, SpawnError):
        # a spawn error names the key to change itself; any other stdio failure points at the entry
        text += f" (check mcpServers.{cfg.name} in {cfg.source})"
    return text


def needs_login_text(exc: AuthRequiredError, cfg: ServerConfig) -> str:
    return exc.message.strip() or NEEDS_LOGIN_TEXT.format(name=cfg.name)


def lost_reason(exc: McpError) -> str:
    return exc.rpc_message if isinstance(exc, JsonRpcError) else exc.message


def is_connection_loss(exc: McpError) -> bool:
    """True when a call failed because the connection is gone (not because the server answered with an error)."""
    if isinstance(exc, HttpSessionExpiredError):
        return True
    if isinstance(exc, HttpStatusError):
        return False  # the server answered (4xx/5xx): it is there; this call failed
    return isinstance(exc, TransportError)  # StreamLostError among them: a response stream cut before the answer


def session_refused(exc: McpError, client: McpClient) -> bool:
    """True when the server refused *this very request* because it no longer knows our session: HTTP 404 (the
    spec), or HTTP 400 to a request that carried a session id (what the TypeScript SDK's servers, server-everything
    among them, answer for an unknown session). Only an error the transport marked `not_processed` (the answer to
    this request's own POST) counts: the same 404 reaching other pending requests through the ended connection says
    nothing about whether the server ran them, so those are never re-sent. A 400 that was a genuinely bad request
    fails again on the new session and is raised then."""
    if not (isinstance(exc, HttpStatusError) and exc.not_processed):
        return False
    return isinstance(exc, HttpSessionExpiredError) or (
        exc.status == 400 and isinstance(client.transport, SupportsSessionId) and client.transport.session_id is not None)
