"""`ToolCallContext`: what a tool handler may do while it runs, besides returning its result — report progress, log,
ask the user (elicitation), ask the client's model (sampling), notice it was cancelled.

A handler gets it as its optional second argument: `async def handler(args, ctx)`. Each method is a message to the
client of the connection the call came on; those that wait for an answer are bounded by `timeout_s`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from mini_claude.errors import McpError, ProtocolError
from mini_claude.mcp.protocol import LOG_LEVELS

__all__ = ["DEFAULT_CLIENT_REQUEST_TIMEOUT_S", "ToolCallContext"]

# elicitation and sampling usually wait for a person: as long as a tool call may go without progress by default
DEFAULT_CLIENT_REQUEST_TIMEOUT_S = 600.0

Notify = Callable[[str, dict[str, Any]], None]
Request = Callable[[str, dict[str, Any] | None, float], Awaitable[Any]]


class ToolCallContext:
    """One running `tools/call`: which tool, its progress token, its cancellation, and the way back to the client.

    `cancelled` is set when the client cancels the call (the handler's task is cancelled too, so an `await`
    inside the handler raises CancelledError; a handler that must clean up catches it, or polls the event between
    pieces of synchronous work).
    """

    def __init__(self, *, server: str, tool: str, request_id: Any, progress_token: str | int | None,
                 client_capabilities: Mapping[str, Any], notify: Notify, request: Request,
                 log_allowed: Callable[[str], bool]) -> None:
        self.server = server
        self.tool = tool
        self.request_id = request_id
        self.progress_token = progress_token
        self.client_capabilities = client_capabilities
        self.cancelled = asyncio.Event()
        self._notify = notify
        self._request = request
        self._log_allowed = log_allowed

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """`notifications/progress` for this call; nothing when the client asked for none (no progress token)."""
        if self.progress_token is None:
            return
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        self._notify("notifications/progress", params)

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """`notifications/message` at `level` (one of `LOG_LEVELS`), unless below the level the client set."""
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r} (use one of {', '.join(LOG_LEVELS)})")
        if not self._log_allowed(level):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        self._notify("notifications/message", params)

    async def elicit(self, message: str, requested_schema: Mapping[str, Any], *,
                     timeout_s: float = DEFAULT_CLIENT_REQUEST_TIMEOUT_S) -> dict[str, Any]:
        """Ask the user to fill a form (`elicitation/create`, form mode). Returns the client's answer:
        `{"action": "accept", "content": {...}}`, `{"action": "decline"}` or `{"action": "cancel"}`."""
        self._require("elicitation")
        params = {"mode": "form", "message": message, "requestedSchema": dict(requested_schema)}
        return await self._object("elicitation/create", params, timeout_s)

    async def elicit_url(self, message: str, url: str, elicitation_id: str, *,
                         timeout_s: float = DEFAULT_CLIENT_REQUEST_TIMEOUT_S) -> dict[str, Any]:
        """Ask the user to open `url` (`elicitation/create`, URL mode; the client must declare `url` support).
        Returns `{"action": "accept" | "decline" | "cancel"}`; the server tells the client when the work at the URL
        is done with `notify("notifications/elicitation/complete", {"elicitationId": ...})`."""
        self._require("elicitation")
        declared = self.client_capabilities.get("elicitation")
        if not isinstance(declared, Mapping) or "url" not in declared:
            raise McpError("the client did not declare URL-mode elicitation", server=self.server)
        params = {"mode": "url", "message": message, "url": url, "elicitationId": elicitation_id}
        return await self._object("elicitation/create", params, timeout_s)

    async def sample(self, messages: str | Sequence[Mapping[str, Any]], max_tokens: int, *,
                     system_prompt: str | None = None, temperature: float | None = None,
                     stop_sequences: Sequence[str] | None = None, model_preferences: Mapping[str, Any] | None = None,
                     include_context: str | None = None, metadata: Mapping[str, Any] | None = None,
                     timeout_s: float = DEFAULT_CLIENT_REQUEST_TIMEOUT_S) -> dict[str, Any]:
        """Ask the client's model for one message (`sampling/createMessage`). `messages` are MCP sampling messages
        (`{"role", "content"}`), or one string sent as the user's text. Returns the client's result
        (`{"role", "content", "model", "stopReason"}`)."""
        self._require("sampling")
        if isinstance(messages, str):
            messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
        params: dict[str, Any] = {"messages": [dict(m) for m in messages], "maxTokens": max_tokens}
        optional = {"systemPrompt": system_prompt, "temperature": temperature,
                    "stopSequences": list(stop_sequences) if stop_sequences is not None else None,
                    "modelPreferences": dict(model_preferences) if model_preferences is not None else None,
                    "includeContext": include_context, "metadata": dict(metadata) if metadata is not None else None}
        params.update({key: value for key, value in optional.items() if value is not None})
        return await self._object("sampling/createMessage", params, timeout_s)

    async def request(self, method: str, params: dict[str, Any] | None = None, *,
                      timeout_s: float = DEFAULT_CLIENT_REQUEST_TIMEOUT_S) -> Any:
        """Any other server → client request (`roots/list`, ...); its result as the client sent it."""
        return await self._request(method, params, timeout_s)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Any other notification to the client."""
        self._notify(method, params or {})

    def _require(self, capability: str) -> None:
        if capability not in self.client_capabilities:
            raise McpError(f"the client did not declare the {capability!r} capability", server=self.server)

    async def _object(self, method: str, params: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        result = await self._request(method, params, timeout_s)
        if not isinstance(result, dict):
            raise ProtocolError(f"{method}: the client's result is not an object", server=self.server)
        return result
