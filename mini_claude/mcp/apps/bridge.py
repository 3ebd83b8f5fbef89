"""The host half of one view's JSON-RPC (MCP Apps, spec 2026-01-26 and the shipped SDK): what the host answers to
each message a view posts, and the one request the host makes of a view (`ui/resource-teardown`).

`AppBridge.handle(message)` takes one message from the view (through the web side's `ViewInbox`); its answers and
notifications go out through `send`. What needs the session (calling a tool, reading a resource, a user message, a
link, the server log) is asked of a `BridgeHost` (the `AppsService`), which refuses by raising `ViewRefusedError`;
the refusal reaches the view as a JSON-RPC error with the reason, never as a crash. A request the bridge does not
know gets -32601. Where the stable spec and the SDK differ (`ui/message` content as one block or an array,
`tool-cancelled`'s optional reason) both are accepted; what the bridge sends is what SDK-built views expect.

Sampling: a view's `sampling/createMessage` (the SDK's `createSamplingMessage`; not in the stable spec's list)
is asked of the host, which answers it exactly as a request from the view's own server's connection under that
server's sampling policy (mcp/host/sampling.py: the same question to the user, marked as coming from the view,
the same rate limit shared with the server, the same checks, model and result); a refusal or a failure reaches the
view as a JSON-RPC error with the reason. `hostCapabilities.sampling` is advertised only when the host offers it
for the view's server (its policy is not `deny`). Elicitation: the Apps protocol has no view → host method for it
(neither the 2026-01-26 spec nor the SDK's types); a view asks its user through its own HTML, and an
`elicitation/create` from a view gets -32601 like every other method the bridge does not know.

With `--mcp-trace`, every message the view posts and every one sent to it is a trace line under its server, `dir`
"view-recv" / "view-send" (mcp/trace.py), so a view's `tools/call` reads next to the server call it caused.

    bridge = AppBridge(view, host, send=lambda m: channel.send(view.view_id, m))
    await bridge.handle({"jsonrpc": "2.0", "id": 1, "method": "ui/initialize", "params": {...}})
    bridge.push(view.finish(result))        # tool-result, held until the view is initialized
    await bridge.teardown("session ended")  # a request; waits at most 2 s for the view's answer
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from mini_claude import __version__
from mini_claude.errors import JsonRpcError, McpError, ViewRefusedError
from mini_claude.mcp.apps.channel import DISPLAY_MODES, PROTOCOL_VERSION
from mini_claude.mcp.apps.views import ModelContext, View, ViewPhase, notification
from mini_claude.mcp.trace import active as active_trace

__all__ = ["MAX_MESSAGE_CHARS", "MAX_USER_TEXT_CHARS", "AppBridge", "BridgeHost", "host_context"]

log = logging.getLogger(__name__)

MAX_MESSAGE_CHARS = 1_000_000  # one message from a view, as JSON
MAX_USER_TEXT_CHARS = 16_000  # a `ui/message`'s text, and a view's model context
TEARDOWN_TIMEOUT_S = 2.0
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REFUSED = -32000


class BridgeHost(Protocol):
    """What a view's requests need from the session. Each method raises ViewRefusedError to refuse."""

    async def call_tool(self, view: View, name: str, arguments: dict[str, Any]) -> dict[str, Any]: ...

    async def read_resource(self, view: View, uri: str) -> dict[str, Any]: ...

    def log(self, view: View, params: dict[str, Any]) -> None: ...

    async def message(self, view: View, text: str) -> None: ...

    def update_context(self, view: View, context: ModelContext) -> None: ...

    async def open_link(self, view: View, url: str) -> None: ...

    def sampling_capability(self, view: View) -> dict[str, Any] | None: ...  # None: sampling is not offered

    async def sample(self, view: View, params: dict[str, Any]) -> dict[str, Any]: ...  # JsonRpcError to refuse

    def teardown_requested(self, view: View) -> None: ...

    def show_mode(self, view: View, mode: str) -> None: ...  # put the view inline or full screen on the page

    async def download_file(self, view: View, params: dict[str, Any]) -> dict[str, Any]: ...  # asked first


def host_context(view: View, *, theme: str = "dark", env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The `hostContext` a view gets in its `ui/initialize` result."""
    env = os.environ if env is None else env
    return {"theme": theme, "displayMode": view.display_mode, "availableDisplayModes": list(DISPLAY_MODES),
            "locale": _locale(env), "timeZone": _time_zone(env), "platform": "desktop",
            "toolInfo": {"tool": view.tool.raw}}


class AppBridge:
    """Answers one view; `send` delivers a message to it (the channel queues while no page is connected)."""

    def __init__(self, view: View, host: BridgeHost, send: Callable[[dict[str, Any]], None], *,
                 theme: str = "dark", env: Mapping[str, str] | None = None) -> None:
        self.view = view
        self.host = host
        self._tap = active_trace()
        self._deliver = send
        self._theme = theme
        self._told: dict[str, str] | None = None  # theme and displayMode as last told (None: not initialized)
        self._kept_inline = False  # the page took it out of full screen: its own requests for it are declined
        self._env = env
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}

    def _send(self, message: dict[str, Any]) -> None:
        if self._tap is not None:
            self._tap.record(self.view.server, "view-send", message)
        self._deliver(message)

    # ---- from the host -------------------------------------------------------------------------------------------
    def push(self, messages: list[dict[str, Any]]) -> None:
        """Send notifications the view's state produced (views.View: tool-input, tool-result, tool-cancelled)."""
        for message in messages:
            self._send(message)

    def set_theme(self, theme: str) -> None:
        """The page's colour scheme changed: a live view hears `ui/notifications/host-context-changed`; one still
        loading gets it in its `ui/initialize` result, or on `initialized` if it was answered with the old one."""
        self._theme = theme
        self._tell_changes()

    def set_display_mode(self, mode: str) -> None:
        """The view is now shown inline or full screen (the user's button on the page, or its own request): told
        like a change of theme."""
        if mode in DISPLAY_MODES:
            self.view.display_mode = mode
            self._tell_changes()

    def page_set_mode(self, mode: str) -> None:
        """The page says the view is now `mode` (the user's button or Esc, or another view took the screen). Once
        the page took it out of full screen, the view's own requests for full screen are declined until the page
        puts it back (a view cannot undo the user's "Exit full screen" the moment it hears of it)."""
        if mode == "inline" and self.view.display_mode == "fullscreen":
            self._kept_inline = True
        elif mode == "fullscreen":
            self._kept_inline = False
        self.set_display_mode(mode)

    def _tell_changes(self) -> None:
        """`host-context-changed` with what changed since the view was last told, once it is live."""
        if self.view.phase is not ViewPhase.LIVE or self._told is None:
            return
        now = {"theme": self._theme, "displayMode": self.view.display_mode}
        changed = {key: value for key, value in now.items() if self._told.get(key) != value}
        if changed:
            self._told.update(changed)
            self._send(notification("ui/notifications/host-context-changed", changed))

    async def teardown(self, reason: str, timeout_s: float = TEARDOWN_TIMEOUT_S) -> bool:
        """`ui/resource-teardown` (a request), waiting at most `timeout_s` for the answer; the view is torn down
        whatever it says. True when it answered in time."""
        view = self.view
        answered = False
        if view.live:
            request_id = next(self._ids)
            future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            self._pending[request_id] = future
            try:
                self._send({"jsonrpc": "2.0", "id": request_id, "method": "ui/resource-teardown",
                            "params": {"reason": reason}})
                await asyncio.wait_for(future, timeout_s)
                answered = True
            except TimeoutError:
                log.info("view %s did not answer ui/resource-teardown within %.1f s", view.view_id, timeout_s)
            finally:
                self._pending.pop(request_id, None)
        view.tear_down()
        for pending in self._pending.values():
            if not pending.done():
                pending.cancel()
        return answered

    # ---- from the view -------------------------------------------------------------------------------------------
    async def handle(self, message: dict[str, Any]) -> None:
        """One message the view posted: a request (answered), a notification, or an answer to our request."""
        view = self.view
        if self._tap is not None:
            self._tap.record(view.server, "view-recv", message)
        if view.phase is ViewPhase.TORN_DOWN:
            return
        method = message.get("method")
        request_id = message.get("id")
        if not isinstance(method, str):
            self._answer_received(message)
            return
        is_request = "id" in message and isinstance(request_id, (str, int)) and not isinstance(request_id, bool)
        if is_request and not view.rate.take():
            self._error(request_id, REFUSED, "too many requests from this view; slow down")
            return
        if _size(message) > MAX_MESSAGE_CHARS:
            if is_request:
                self._error(request_id, INVALID_PARAMS, f"message over {MAX_MESSAGE_CHARS:,} characters")
            return
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        if not is_request:
            self._notified(method, params)
            return
        try:
            result = await self._request(method, params)
        except ViewRefusedError as exc:
            self._error(request_id, exc.code, exc.reason)
        except JsonRpcError as exc:  # the server's own refusal, passed on as it came
            self._error(request_id, exc.code, exc.rpc_message)
        except McpError as exc:
            self._error(request_id, INTERNAL_ERROR, str(exc))
        except Exception as exc:  # a bug answers this request with an error; the session goes on
            log.exception("view %s: %s failed", view.view_id, method)
            self._error(request_id, INTERNAL_ERROR, f"internal error: {type(exc).__name__}")
        else:
            self._answer(request_id, result)

    async def _request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        view, host = self.view, self.host
        if method == "ui/initialize":
            view.on_initialize()
            return self._initialize_result(params)
        if method == "ping":
            return {}
        if method == "tools/call":
            name, arguments = params.get("name"), params.get("arguments", {})
            if not isinstance(name, str) or not name:
                raise ViewRefusedError("tools/call needs a tool name", code=INVALID_PARAMS)
            if not isinstance(arguments, dict):
                raise ViewRefusedError("tools/call arguments must be an object", code=INVALID_PARAMS)
            return await host.call_tool(view, name, arguments)
        if method == "resources/read":
            uri = params.get("uri")
            if not isinstance(uri, str) or not uri:
                raise ViewRefusedError("resources/read needs a uri", code=INVALID_PARAMS)
            return await host.read_resource(view, uri)
        if method == "ui/message":
            await host.message(view, _user_text(params))
            return {}
        if method == "ui/update-model-context":
            host.update_context(view, _model_context(params))
            return {}
        if method == "ui/open-link":
            url = params.get("url")
            if not isinstance(url, str) or not url:
                raise ViewRefusedError("ui/open-link needs a url", code=INVALID_PARAMS)
            await host.open_link(view, url)
            return {}
        if method == "sampling/createMessage":
            return await host.sample(view, params)
        if method == "ui/download-file":
            return await host.download_file(view, params)
        if method == "ui/request-display-mode":  # inline or full screen; any other mode: stays as it is
            mode = params.get("mode")
            kept = mode == "fullscreen" and self._kept_inline  # the user left full screen: only the page puts it back
            if mode in DISPLAY_MODES and mode != view.display_mode and not kept:
                host.show_mode(view, mode)
                self.set_display_mode(mode)
            return {"mode": view.display_mode}
        raise ViewRefusedError(f"method not found: {method}", code=METHOD_NOT_FOUND)

    def _notified(self, method: str, params: dict[str, Any]) -> None:
        view = self.view
        if method == "ui/notifications/initialized":
            self.push(view.on_initialized())
            self._tell_changes()  # what changed between its initialize result and now
        elif method == "notifications/message":
            self.host.log(view, params)
        elif method == "ui/notifications/request-teardown":
            self.host.teardown_requested(view)
        elif method == "ui/notifications/size-changed":
            pass  # the page sizes the frame itself
        else:
            log.debug("view %s: notification %s ignored", view.view_id, method)

    def _answer_received(self, message: dict[str, Any]) -> None:
        request_id = message.get("id")
        future = self._pending.get(request_id) if isinstance(request_id, int) else None
        if future is not None and not future.done():
            future.set_result(message.get("result", message.get("error")))

    def _initialize_result(self, params: dict[str, Any]) -> dict[str, Any]:
        view = self.view
        asked = params.get("protocolVersion")
        capabilities: dict[str, Any] = {
            "openLinks": {}, "downloadFile": {}, "serverTools": {}, "serverResources": {}, "logging": {},
            "message": {"text": {}}, "updateModelContext": {"text": {}, "structuredContent": {}},
            "sandbox": {"csp": {k: list(v) for k, v in view.granted_csp.items()},
                        "permissions": dict(view.permissions)},
        }
        sampling = self.host.sampling_capability(view)
        if sampling is not None:
            capabilities["sampling"] = sampling
        return {"protocolVersion": asked if asked == PROTOCOL_VERSION else PROTOCOL_VERSION,
                "hostInfo": {"name": "mini-claude", "version": __version__},
                "hostCapabilities": capabilities,
                "hostContext": self._host_context()}

    def _host_context(self) -> dict[str, Any]:
        self._told = {"theme": self._theme, "displayMode": self.view.display_mode}
        return host_context(self.view, theme=self._theme, env=self._env)

    def _answer(self, request_id: Any, result: dict[str, Any]) -> None:
        if self.view.phase is not ViewPhase.TORN_DOWN:  # torn down while the request ran: nobody to answer
            self._send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def _error(self, request_id: Any, code: int, text: str) -> None:
        if self.view.phase is not ViewPhase.TORN_DOWN:
            self._send({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": text}})


def _user_text(params: dict[str, Any]) -> str:
    """A `ui/message`'s text: content as one block ([S]) or a list of blocks ([T]); text blocks only, bounded."""
    role = params.get("role", "user")
    if role != "user":
        raise ViewRefusedError(f"ui/message role must be \"user\", not {role!r:.40}", code=INVALID_PARAMS)
    content = params.get("content")
    blocks = content if isinstance(content, list) else [content]
    texts: list[str] = []
    for block in blocks:
        if not isinstance(block, dict) or block.get("type") != "text" or not isinstance(block.get("text"), str):
            raise ViewRefusedError("ui/message: only text content is taken", code=INVALID_PARAMS)
        texts.append(block["text"])
    text = "\n".join(texts).strip()
    if not text:
        raise ViewRefusedError("ui/message: the message is empty", code=INVALID_PARAMS)
    if len(text) > MAX_USER_TEXT_CHARS:
        raise ViewRefusedError(f"ui/message: over {MAX_USER_TEXT_CHARS:,} characters", code=INVALID_PARAMS)
    return text


def _model_context(params: dict[str, Any]) -> ModelContext:
    content = params.get("content", [])
    if not isinstance(content, list) or not all(isinstance(block, dict) for block in content):
        raise ViewRefusedError("ui/update-model-context: content must be a list of blocks", code=INVALID_PARAMS)
    context = ModelContext(content=tuple(content), structured=params.get("structuredContent"))
    if _size({"c": content, "s": context.structured}) > MAX_USER_TEXT_CHARS:
        raise ViewRefusedError(f"ui/update-model-context: over {MAX_USER_TEXT_CHARS:,} characters",
                               code=INVALID_PARAMS)
    return context


def _size(value: Any) -> int:
    try:
        return len(json.dumps(value, ensure_ascii=False, default=str))
    except (TypeError, ValueError, RecursionError):
        return MAX_MESSAGE_CHARS + 1


def _locale(env: Mapping[str, str]) -> str:
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        raw = env.get(name, "").split(".")[0].split("@")[0]
        if raw and raw not in ("C", "POSIX"):
            return raw.replace("_", "-")
    return "en-US"


def _time_zone(env: Mapping[str, str]) -> str:
    tz = env.get("TZ", "").lstrip(":")
    if tz and "/" in tz and not tz.startswith("/"):
        return tz
    try:
        target = os.path.realpath("/etc/localtime")
    except OSError:
        return "UTC"
    marker = "/zoneinfo/"
    zone = target.split(marker, 1)[1] if marker in target else "UTC"
    return "UTC" if zone in ("Etc/UTC", "UCT", "Etc/UCT", "Zulu") else zone
