"""The error tree. Every error mini-claude raises on purpose is a `MiniClaudeError`.

    MiniClaudeError
     ├─ ConfigError            a settings / .mcp.json problem: carries file, key path and message
     │   └─ FrontmatterError   a YAML front matter block (SKILL.md, commands, agents) is missing or malformed
     ├─ ModelError             the model API failed (no key, HTTP status, connection): carries status
     ├─ PermissionDeniedError  the permission gate said no: carries the rule or flag that would allow it
     ├─ ToolError              a built-in tool could not do what was asked (message goes to the model)
     └─ McpError               anything from the MCP stack; `server` names the server
         ├─ TransportError     the connection broke or could not be made (a foreign error's reason in the text)
         │   ├─ ServerExitedError   the process ended: exit code + stderr tail
         │   ├─ SpawnError          the server's process could not be started; names the config key to change
         │   ├─ StreamLostError     an HTTP response stream ended before the reply to one request arrived
         │   ├─ MessageOverflowError   a message over the size cap answers no request we can name: connection closed
         │   └─ HttpStatusError     the server answered with an HTTP error: status, body excerpt, WWW-Authenticate
         │       └─ HttpSessionExpiredError   HTTP 404 for our session id: a new session is needed
         ├─ MessageTooLargeError   a message from the server is over the size cap: limit + size; fails one request
         ├─ McpTimeoutError    a request got no answer in time: method + seconds
         ├─ JsonRpcError       the peer answered with a JSON-RPC error object: code, message, data
         ├─ AuthError          authorization failed (bad metadata, refused grant, `iss` mismatch, ...)
         │   ├─ AuthRequiredError   the server needs an interactive login (`mini-claude mcp login NAME`)
         │   ├─ TokenEndpointError  the token endpoint refused a grant: OAuth `error` code, HTTP status
         │   └─ BodyTooLargeError   an authorization answer's body is over the cap (the rest is never read)
         ├─ SkillVerificationError  an MCP-served skill failed its size / digest / front matter check
         ├─ AppsError          the MCP Apps host (a server's `ui://` view shown in a browser) could not do something
         │   └─ ViewRefusedError   a view's request was refused: reason + the JSON-RPC code the view gets
         └─ ProtocolError      the peer broke the protocol (bad handshake, unsupported version, bad result)
             └─ InvalidToolHeadersError  a tool's `x-mcp-header` annotations break SEP-2243's rules

Private exceptions used for control flow inside one module (never raised past it) are not part of the tree.

Foreign exceptions (OSError, httpx errors) are translated at the edge that meets them; nothing in mini-claude
classifies errors by matching message strings. `str(err)` is always one readable line for users.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AppsError",
    "AuthError",
    "AuthRequiredError",
    "BodyTooLargeError",
    "ConfigError",
    "FrontmatterError",
    "HttpSessionExpiredError",
    "HttpStatusError",
    "InvalidToolHeadersError",
    "JsonRpcError",
    "McpError",
    "McpTimeoutError",
    "MessageOverflowError",
    "MessageTooLargeError",
    "MiniClaudeError",
    "ModelError",
    "PermissionDeniedError",
    "ProtocolError",
    "ServerExitedError",
    "SkillVerificationError",
    "SpawnError",
    "StreamLostError",
    "TokenEndpointError",
    "ToolError",
    "TransportError",
    "ViewRefusedError",
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


class FrontmatterError(ConfigError):
    """The text has no front matter block, or its YAML is malformed or not a mapping. One readable line."""


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


class SpawnError(TransportError):
    """A stdio server's process could not be started (command not found or not executable, bad `cwd`, bad `env`).
    The message already names the config key to change (`command`, `cwd`, `args`, `env`)."""


class StreamLostError(TransportError):
    """An HTTP response stream ended (closed, broke, could not be resumed) before the reply to one request arrived.

    A transport delivers it for that request only (see `transports.base.RequestFailed`); the connection may still be
    usable for other requests. It is never a JSON-RPC error: a server cannot make one by sending an error object."""


class MessageTooLargeError(McpError):
    """A message from the server (a stdio line, an HTTP body, an SSE event) is larger than the cap
    (`MINI_CLAUDE_MCP_MAX_MESSAGE_BYTES`); the rest of it is never read. Fails the one request it answers; the
    connection goes on, so it is not a TransportError. `size_bytes` is the whole size when `complete`, else how much
    had arrived when the reader gave up."""

    def __init__(self, message: str, *, server: str | None = None, limit_bytes: int, size_bytes: int,
                 complete: bool) -> None:
        self.limit_bytes = limit_bytes
        self.size_bytes = size_bytes
        self.complete = complete
        super().__init__(message, server=server)


class MessageOverflowError(TransportError):
    """A message over the size cap from which no request (id) could be read: the transport cannot tell whom it
    answers, so it closes the connection (every pending request fails with this error, and the server is shown
    failed with it). Carries `limit_bytes` and `size_bytes` (as much as had arrived)."""

    def __init__(self, message: str, *, server: str | None = None, limit_bytes: int, size_bytes: int) -> None:
        self.limit_bytes = limit_bytes
        self.size_bytes = size_bytes
        super().__init__(message, server=server)


class HttpStatusError(TransportError):
    """The server answered with an HTTP error. Carries `status`, `body_excerpt` and (for 401) `www_authenticate`.

    `not_processed` is True only on the error a transport's `send()` raised for the very message whose own POST the
    server answered with this 4xx status (it refused that request, so it did not run it), or when `send()` posted
    nothing because the session had already expired. It is False on every error that reached a request any
    other way — above all the one that ended the connection and so failed every other pending request (whose
    POSTs were accepted and may have run). Only a `not_processed` error makes re-sending a request safe.
    """

    def __init__(self, message: str, *, server: str | None = None, status: int, body_excerpt: str = "",
                 www_authenticate: str | None = None, not_processed: bool = False) -> None:
        self.status = status
        self.body_excerpt = body_excerpt
        self.www_authenticate = www_authenticate
        self.not_processed = not_processed
        super().__init__(message, server=server)

    def for_this_request(self) -> HttpStatusError:
        """A copy marked `not_processed` (for `send()` to raise; the original may be shared through the inbox)."""
        copy = type(self)(self.message, server=self.server, status=self.status, body_excerpt=self.body_excerpt,
                          www_authenticate=self.www_authenticate, not_processed=True)
        copy.args = self.args
        return copy


class HttpSessionExpiredError(HttpStatusError):
    """HTTP 404 for our `Mcp-Session-Id`: the server forgot the session; a new `initialize` is needed.

    See `HttpStatusError.not_processed`: True only for the request whose own POST got the 404 (or that was not
    sent because the session had already expired); the error failing the other pending requests has it False."""


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


class AppsError(McpError):
    """The MCP Apps host could not do something for a view (fetch its `ui://` resource, serve it, answer it)."""


class ViewRefusedError(AppsError):
    """A view's request was refused (a tool it may not call, a link not opened, a limit reached). `code` is the
    JSON-RPC error code the view's answer carries; `reason` the readable text it gets."""

    def __init__(self, reason: str, *, code: int = -32000, server: str | None = None) -> None:
        self.code = code
        self.reason = reason
        super().__init__(reason, server=server)


class ProtocolError(McpError):
    """The peer broke the protocol: a bad handshake, an unsupported version, a malformed result."""


class InvalidToolHeadersError(ProtocolError):
    """A tool's `x-mcp-header` annotations break SEP-2243's rules; the message says which and why."""


class SkillVerificationError(McpError):
    """A skill was refused: a file failed its size / digest / front matter check, or the entry cannot be
    verified. `skill` is the skill's name, `uri` the file (or entry) concerned."""

    def __init__(self, message: str, *, server: str | None = None, skill: str | None = None,
                 uri: str | None = None) -> None:
        self.skill = skill
        self.uri = uri
        super().__init__(message, server=server)


class AuthError(McpError):
    """Authorization with a remote server failed: bad or mismatched metadata, a refused grant, an `iss` that does
    not match, a token endpoint error. The message says what went wrong and what to change."""


class AuthRequiredError(AuthError):
    """The server needs a login by the user that cannot happen now (no usable token, no interactive authorizer).
    The manager shows the server as `needs-auth`; `mini-claude mcp login NAME` does the login."""


class TokenEndpointError(AuthError):
    """The token endpoint refused a grant or answered something unusable. `error` is the OAuth error code
    (`invalid_grant`, `invalid_client`, ...) when the endpoint sent one; `status` the HTTP status if any."""

    def __init__(
        self, message: str, *, server: str | None = None, error: str | None = None, status: int | None = None
    ) -> None:
        self.error = error
        self.status = status
        super().__init__(message, server=server)


class BodyTooLargeError(AuthError):
    """An authorization answer's body is over the cap (the rest is never read)."""
