"""The error tree. Every error mini-claude raises on purpose is a `MiniClaudeError`.

    MiniClaudeError
     ├─ ConfigError            a settings / .mcp.json problem: carries file, key path and message
     ├─ ModelError             the model API failed (no key, HTTP status, connection): carries status
     ├─ PermissionDeniedError  the permission gate said no: carries the rule or flag that would allow it
     ├─ ToolError              a built-in tool could not do what was asked (message goes to the model)
     └─ McpError               anything from the MCP stack; `server` names the server
         ├─ TransportError     the connection broke or could not be made
         │   └─ ServerExitedError   the process ended: exit code + stderr tail
         ├─ McpTimeoutError    a request got no answer in time: method + seconds
         ├─ JsonRpcError       the peer answered with a JSON-RPC error object: code, message, data
         ├─ AuthError          authorization failed (bad metadata, refused grant, `iss` mismatch, ...)
         │   └─ AuthRequiredError  the server needs an interactive login (`mini-claude mcp login NAME`)
         └─ ProtocolError      the peer broke the protocol (bad handshake, unsupported version, bad result)

Foreign exceptions (OSError, httpx errors) are translated at the edge that meets them; nothing in mini-claude
classifies errors by matching message strings. `str(err)` is always one readable line for users.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AuthError",
    "AuthRequiredError",
    "ConfigError",
    "JsonRpcError",
    "McpError",
    "McpTimeoutError",
    "MiniClaudeError",
    "ModelError",
    "PermissionDeniedError",
    "ProtocolError",
    "ServerExitedError",
    "ToolError",
    "TransportError",
]


class MiniClaudeError(Exception):
    """Root of every error mini-claude raises on purpose."""


class ConfigError(MiniClaudeError):
    """A configuration problem. Renders as `file: key.path: message`."""

    def __init__(self, message: str, *, file: str | None = None, key: str | None = None) -> None:
        self.file = file
        self.key = key
        self.message = message
        parts = [p for p in (file, key) if p]
        super().__init__(": ".join([*parts, message]))


class ModelError(MiniClaudeError):
    """The model API failed. `status` is the HTTP status when there was one."""

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False) -> None:
        self.status = status
        self.retryable = retryable
        super().__init__(message)


class PermissionDeniedError(MiniClaudeError):
    """The permission gate refused a tool call."""


class ToolError(MiniClaudeError):
    """A tool failed in a way the model should read and can react to."""


class McpError(MiniClaudeError):
    """Root of the MCP stack's errors. `server` is the server's configured name, when known."""

    def __init__(self, message: str, *, server: str | None = None) -> None:
        self.server = server
        self.message = message
        super().__init__(f"MCP server {server!r}: {message}" if server else message)


class TransportError(McpError):
    """The connection to a server broke or could not be made."""


class ServerExitedError(TransportError):
    """A stdio server's process ended. Carries its exit code and the tail of its stderr."""

    def __init__(
        self, message: str, *, server: str | None = None, exit_code: int | None = None, stderr_tail: str = ""
    ) -> None:
        self.exit_code = exit_code
        self.stderr_tail = stderr_tail
        detail = message
        if exit_code is not None:
            detail += f" (exit code {exit_code})"
        tail = stderr_tail.strip().splitlines()[-1:] if stderr_tail.strip() else []
        if tail:
            detail += f"; stderr: {tail[0][:300]}"
        super().__init__(detail, server=server)


class McpTimeoutError(McpError):
    """A request got no answer in time."""

    def __init__(self, method: str, seconds: float, *, server: str | None = None) -> None:
        self.method = method
        self.seconds = seconds
        super().__init__(f"{method} timed out after {seconds:g}s", server=server)


class JsonRpcError(McpError):
    """The peer answered a request with a JSON-RPC error object."""

    def __init__(self, code: int, message: str, data: Any = None, *, server: str | None = None) -> None:
        self.code = code
        self.rpc_message = message
        self.data = data
        super().__init__(f"{message} (JSON-RPC error {code})", server=server)


class ProtocolError(McpError):
    """The peer broke the protocol: a bad handshake, an unsupported version, a malformed result."""


class AuthError(McpError):
    """Authorization with a remote server failed: bad or mismatched metadata, a refused grant, an `iss` that does
    not match, a token endpoint error. The message says what went wrong and what to change."""


class AuthRequiredError(AuthError):
    """The server needs a login by the user that cannot happen now (no usable token, no interactive authorizer).
    The manager shows the server as `needs-auth`; `mini-claude mcp login NAME` does the login."""
