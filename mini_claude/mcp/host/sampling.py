"""Sampling: a server's `sampling/createMessage` answered by the agent's own model, under the user's policy.

Per server the config says `"sampling": "ask" | "allow" | "deny"` (default `ask`). `ask` shows the user the
request (server, system prompt, messages, `maxTokens`, tools) and offers once / always for this server / deny;
with nobody to ask (`-p`, scripts) `ask` means deny. A project-scope config (`.mcp.json`, `.claude/settings.json`)
cannot say `allow`: a repository does not get to spend the user's model without asking (it is `ask` there). Denied
requests get the spec's user-rejected error (code -1). At most `RATE_LIMIT` requests per server per
`RATE_WINDOW_S` seconds are answered; later ones are refused with a reason.

The request → model conversion honours `systemPrompt`, `maxTokens`, `temperature`, `stopSequences`, text and
image content, and tool use inside sampling (2025-11-25: `tools`, `toolChoice`, `tool_use` / `tool_result`
blocks). `modelPreferences` is best effort: the agent's model answers whatever it hints (the hints are logged).
`includeContext` is not offered (the `sampling.context` capability is not declared), so it is read as `none`.

An MCP Apps view's `sampling/createMessage` (mcp/apps/bridge.py) comes through `create_message(server, params,
view=...)` with its server's name: the same policy, `always`, rate limit, checks and model; only the question
says it comes from the server's view. `policy(server)` tells the view's host whether to offer sampling at all.
"""

from __future__ import annotations

import collections
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from mini_claude.errors import JsonRpcError, McpError
from mini_claude.mcp.host.ui import HostUI, SamplingChoice, SamplingRequest
from mini_claude.mcp.protocol import is_number
from mini_claude.models.base import GenerationOptions, Model, ToolSpec

__all__ = ["RATE_LIMIT", "RATE_WINDOW_S", "USER_REJECTED", "SamplingService", "sampling_capability"]

log = logging.getLogger(__name__)

RATE_LIMIT = 10
RATE_WINDOW_S = 60.0
USER_REJECTED = -1  # the spec's code for "User rejected sampling request"
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
MAX_TOKENS_CAP = 32_000  # what one sampling request may ask of the agent's model, whatever it says
_STOP_REASONS = {"end_turn": "endTurn", "max_tokens": "maxTokens", "stop_sequence": "stopSequence",
                 "tool_use": "toolUse"}
_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


def sampling_capability() -> dict[str, Any]:
    """What `initialize` declares under `sampling`: tool use inside sampling (2025-11-25); no `context`."""
    return {"tools": {}}


class SamplingService:
    """Answers every server's sampling requests with `model()` (the session's model, read at each request).

        service = SamplingService(lambda: agent.model, ui, policies={"everything": "allow"})
        client.set_request_handler("sampling/createMessage", service.handler("everything"),
                                   capability=sampling_capability())
    """

    def __init__(self, model: Callable[[], Model | None], ui: HostUI, *, policies: Mapping[str, str] | None = None,
                 rate_limit: int = RATE_LIMIT, rate_window_s: float = RATE_WINDOW_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._model = model
        self.ui = ui
        self.policies = dict(policies or {})
        self.rate_limit = rate_limit
        self.rate_window_s = rate_window_s
        self._clock = clock
        self._always: set[str] = set()
        self._recent: dict[str, collections.deque[float]] = {}

    def handler(self, server: str) -> Callable[[Any], Any]:
        async def handle(params: Any) -> dict[str, Any]:
            return await self.create_message(server, params)
        return handle

    def policy(self, server: str) -> str:
        """`ask`, `allow` or `deny`: what this session does with `server`'s sampling requests."""
        return self.policies.get(server, "ask")

    async def create_message(self, server: str, params: Any, *, view: str = "") -> dict[str, Any]:
        """The `CreateMessageResult` for one request, or JsonRpcError (refused, malformed, the model failed).
        `view`: the request comes from the server's MCP Apps view of that tool (shown in the question), not from
        the server's connection; everything else is the server's own."""
        if not isinstance(params, dict):
            raise JsonRpcError(INVALID_PARAMS, "sampling/createMessage params must be an object")
        request = _read_request(server, params, view)
        policy = self.policy(server)
        if policy == "deny":
            raise JsonRpcError(USER_REJECTED, "User rejected sampling request (sampling is denied for this server)")
        self._check_rate(server)
        if policy != "allow" and server not in self._always:
            choice = await self.ui.approve_sampling(request)
            if choice is SamplingChoice.DENY:
                raise JsonRpcError(USER_REJECTED, "User rejected sampling request")
            if choice is SamplingChoice.ALWAYS:
                self._always.add(server)
        model = self._model()
        if model is None:
            raise JsonRpcError(INTERNAL_ERROR, "no model is configured to answer sampling requests")
        hints = params.get("modelPreferences")
        if hints:
            log.debug("%s: sampling model preferences %.300r (answered by %s)", server, hints, model.name)
        messages = [_to_model_message(m, i) for i, m in enumerate(params["messages"])]
        tools, use_tools = _tools(params)
        options = GenerationOptions(
            max_tokens=min(request.max_tokens, MAX_TOKENS_CAP),
            temperature=float(params["temperature"]) if is_number(params.get("temperature")) else None,
            stop_sequences=tuple(s for s in params.get("stopSequences") or () if isinstance(s, str)))
        try:
            turn = await model.complete(system=request.system_prompt, messages=messages,
                                        tools=tools if use_tools else [], options=options)
        except McpError:
            raise
        except Exception as exc:  # the model's own error, in words (ModelError and friends carry them)
            raise JsonRpcError(INTERNAL_ERROR, f"the model could not answer: {exc}") from None
        return _to_result(turn.content, turn.stop_reason, model.name)

    def _check_rate(self, server: str) -> None:
        now = self._clock()
        recent = self._recent.setdefault(server, collections.deque())
        while recent and now - recent[0] >= self.rate_window_s:
            recent.popleft()
        if len(recent) >= self.rate_limit:
            raise JsonRpcError(USER_REJECTED, f"too many sampling requests: at most {self.rate_limit} per "
                                              f"{self.rate_window_s:g} s from one server")
        recent.append(now)


# ---- the request ---------------------------------------------------------------------------------------------


def _read_request(server: str, params: dict[str, Any], view: str = "") -> SamplingRequest:
    messages = params.get("messages")
    if not isinstance(messages, list) or not messages:
        raise JsonRpcError(INVALID_PARAMS, "sampling/createMessage: messages must be a non-empty list")
    max_tokens = params.get("maxTokens")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens <= 0:
        raise JsonRpcError(INVALID_PARAMS, "sampling/createMessage: maxTokens must be a positive integer")
    system = params.get("systemPrompt")
    tools = params.get("tools")
    names = [t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)] \
        if isinstance(tools, list) else []
    return SamplingRequest(server=server, system_prompt=system if isinstance(system, str) else "",
                           messages=messages, max_tokens=max_tokens, tools=names, view=view)


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, dict):
        return [content]
    if isinstance(content, list) and all(isinstance(b, dict) for b in content):
        return content
    raise JsonRpcError(INVALID_PARAMS, "sampling/createMessage: content must be an object or a list of objects")


def _to_model_message(message: Any, index: int) -> dict[str, Any]:
    """One MCP sampling message → the Anthropic-format message the Model protocol takes."""
    if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
        raise JsonRpcError(INVALID_PARAMS, f"sampling/createMessage: messages[{index}] needs a role of "
                                           "user or assistant")
    return {"role": message["role"], "content": [_to_model_block(b, index) for b in _blocks(message.get("content"))]}


def _to_model_block(block: dict[str, Any], index: int) -> dict[str, Any]:
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return {"type": "text", "text": block["text"] or " "}
    if kind == "image" and block.get("mimeType") in _IMAGE_TYPES and isinstance(block.get("data"), str):
        return {"type": "image", "source": {"type": "base64", "media_type": block["mimeType"], "data": block["data"]}}
    if kind == "tool_use" and isinstance(block.get("id"), str) and isinstance(block.get("name"), str):
        arguments = block.get("input")
        return {"type": "tool_use", "id": block["id"], "name": block["name"],
                "input": arguments if isinstance(arguments, dict) else {}}
    if kind == "tool_result" and isinstance(block.get("toolUseId"), str):
        inner = [_to_model_block(b, index) for b in _blocks(block.get("content") or [])]
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": block["toolUseId"],
                                  "content": [b for b in inner if b["type"] in ("text", "image")]}
        if block.get("isError") is True:
            result["is_error"] = True
        return result
    raise JsonRpcError(INVALID_PARAMS, f"sampling/createMessage: messages[{index}]: content of type "
                                       f"{str(kind)[:40]!r} is not supported (text, image, tool_use, tool_result)")


def _tools(params: dict[str, Any]) -> tuple[list[ToolSpec], bool]:
    raw = params.get("tools")
    if not isinstance(raw, list):
        return [], False
    specs = [ToolSpec(t["name"], str(t["description"]) if isinstance(t.get("description"), str) else "",
                      t["inputSchema"] if isinstance(t.get("inputSchema"), dict) else {"type": "object"})
             for t in raw if isinstance(t, dict) and isinstance(t.get("name"), str)]
    choice = params.get("toolChoice")
    mode = choice.get("mode") if isinstance(choice, dict) else None
    return specs, mode != "none"


def _to_result(content: list[dict[str, Any]], stop_reason: str | None, model: str) -> dict[str, Any]:
    """The model's answer as a `CreateMessageResult`."""
    blocks: list[dict[str, Any]] = []
    for block in content:
        if block.get("type") == "text":
            blocks.append({"type": "text", "text": block.get("text", "")})
        elif block.get("type") == "tool_use":
            blocks.append({"type": "tool_use", "id": block.get("id", ""), "name": block.get("name", ""),
                           "input": block.get("input") or {}})
    if not blocks:
        blocks = [{"type": "text", "text": ""}]
    return {"role": "assistant", "content": blocks[0] if len(blocks) == 1 else blocks, "model": model,
            "stopReason": _STOP_REASONS.get(stop_reason or "end_turn", stop_reason or "endTurn")}
