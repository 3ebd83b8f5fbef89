"""`AppsService`: the MCP Apps host's session side, wired to the MCP manager, the web side and a front end.

It declares the extension to every server (`setup`, a client-setup hook beside `McpHost.setup`); when the model
calls a tool that has a `ui://` view (`begin`, from the tool adapter) it fetches the view's resource from the same
server with `resources/read` in the background (the turn never waits for it), puts it on the web side's page
(starting the loopback server on the first view), opens the browser once per session and tells the front end the
URL; and it answers each view through its `AppBridge`, asking the session for what needs it: a view's tool call
goes through the `ViewCallGate` (the permission gate and the PreToolUse/PostToolUse hooks, injected by the session
layer so this package never imports the agent), a `ui/message` and a link through the `AppsFront`, a sampling
request through the `ViewSampler` (the host's SamplingService: the view's server's own policy, question and limit),
a file to save checked and written by outside.py after the front end's yes; what it needs of the session is
declared in ports.py. A failure to show a view costs the view only (a warning and a note), never the tool call.
`aclose` sends `ui/resource-teardown` to every live view (each waited for at most 2 s) and stops the web side:
nothing outlives the session.

    apps = AppsService(AppsSettings.from_settings(settings), servers=manager, logs=host.logs,
                       sampling=host.sampling)
    manager = McpManager(..., client_setup=lambda cfg, c: (host.setup(cfg, c), apps.setup(cfg, c)))
    apps.front, apps.gate = my_front, my_gate     # before the first view
    call = apps.begin(server, mcp_tool, qualified, args)   # None: no view (or Apps off)
    call.finish(result)  /  call.cancel("interrupted")
    blocks = apps.take_model_context()            # once, with the next user message
    await apps.aclose()
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import re
import secrets
from collections.abc import Coroutine, Mapping
from pathlib import Path
from typing import Any

from mini_claude.errors import ViewRefusedError
from mini_claude.mcp.apps import outside
from mini_claude.mcp.apps.bridge import AppBridge
from mini_claude.mcp.apps.channel import EXTENSION_ID, MIME_TYPE, ViewChannel
from mini_claude.mcp.apps.ports import (
    AppsFront,
    NoFront,
    ServerLog,
    ViewCallAdmission,
    ViewCallGate,
    ViewNotice,
    ViewSampler,
    ViewServers,
)
from mini_claude.mcp.apps.settings import AppsSettings, declined_note
from mini_claude.mcp.apps.views import ModelContext, View
from mini_claude.mcp.apps.web_side import LoopbackWeb, WebSide
from mini_claude.mcp.config_entry import ServerConfig
from mini_claude.mcp.host.sampling import sampling_capability
from mini_claude.mcp.protocol import CallToolResult, McpTool
from mini_claude.paths import user_home

__all__ = ["MAX_VIEWS", "AppsFront", "AppsService", "AppsSettings", "NoFront", "ViewCall", "ViewCallAdmission",
           "ViewCallGate", "ViewNotice", "ViewSampler", "ViewServers"]

log = logging.getLogger(__name__)

MAX_VIEWS = 32  # live views per session; a new one past this tears the oldest down
_ONE_QUESTION = "a question of this view already waits for the user"
_CONTEXT_TAG = re.compile(r"<(\s*/?\s*mcp-app-context)", re.IGNORECASE)


class ViewCall:
    """The tool call a view shows: its end goes to the view (held until the view is initialized)."""

    def __init__(self, bridge: AppBridge) -> None:
        self.bridge = bridge
        self.view = bridge.view

    def finish(self, result: CallToolResult) -> None:
        self.bridge.push(self.view.finish(dict(result.raw)))

    def fail(self, text: str) -> None:
        """The call ended in an error the server did not send as a result: the view gets it as an error result."""
        self.bridge.push(self.view.finish({"content": [{"type": "text", "text": text}], "isError": True}))

    def cancel(self, reason: str) -> None:
        self.bridge.push(self.view.cancel(reason))


class AppsService:
    """One session's MCP Apps host (see the module docstring)."""

    def __init__(self, settings: AppsSettings, *, servers: ViewServers, logs: ServerLog | None = None,
                 web: WebSide | None = None, env: Mapping[str, str] | None = None,
                 sampling: ViewSampler | None = None, home: Path | None = None) -> None:
        self.settings = settings
        self.home = home  # where `Downloads` is; None: the real home (the process's HOME, never the session's env)
        self.servers = servers
        self.logs = logs
        self.web: WebSide = web if web is not None else LoopbackWeb()
        self.env = env
        self.sampling = sampling  # None: views are not offered sampling
        self.front: AppsFront = NoFront()
        self.gate: ViewCallGate | None = None  # None: a view's tool calls are refused
        self._channel: ViewChannel | None = None
        self._start_lock = asyncio.Lock()
        self._bridges: dict[str, AppBridge] = {}  # live views, oldest first
        self._closing: dict[str, AppBridge] = {}  # views being torn down (their answer to the teardown still comes)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._evicting: set[asyncio.Task[Any]] = set()  # teardowns of views past MAX_VIEWS
        self._browser_opened = False
        self._closed = False
        self._theme = "dark"  # until the page says which colour scheme the browser uses
        self._told_declined: set[str] = set()  # servers whose views' unapproved origins the user was told of
        self._asking: set[str] = set()  # views with a question (a link, a download) waiting for the user
        self._repository_servers: set[str] = set()  # servers a repository configured: the user's grants skip them

    # ---- the MCP side --------------------------------------------------------------------------------------------
    def setup(self, cfg: Any, client: Any) -> None:
        """Before a client connects: declare the extension (only sessions that can show views build a service)."""
        if isinstance(cfg, ServerConfig):  # a repository's .mcp.json may name its server like one of yours
            if cfg.scope == "project":
                self._repository_servers.add(cfg.name)
            else:
                self._repository_servers.discard(cfg.name)
        if self.settings.enabled:
            client.declare_extension(EXTENSION_ID, {"mimeTypes": [MIME_TYPE]})

    def begin(self, server: str, tool: McpTool, qualified: str, arguments: dict[str, Any]) -> ViewCall | None:
        """The model calls `tool`: its view, shown in the background; None when it has none or Apps is off."""
        uri = tool.ui_resource_uri
        if uri is None or not self.settings.enabled or self._closed:
            return None
        view = View(view_id=secrets.token_hex(8), server=server, tool=tool, qualified=qualified,
                    arguments=dict(arguments))
        bridge = AppBridge(view, self, lambda message: self._send(view.view_id, message), theme=self._theme,
                           env=self.env)
        self._bridges[view.view_id] = bridge
        while len(self._bridges) > MAX_VIEWS:  # the oldest goes (its frame leaves the page before this one comes)
            oldest = next(iter(self._bridges.values()))
            self._forget(oldest.view.view_id)
            self._evicting.add(self._spawn(self._tear_down(oldest, "too many views open")))
        self._spawn(self._show(bridge, uri))
        return ViewCall(bridge)

    @property
    def views(self) -> list[View]:
        return [bridge.view for bridge in self._bridges.values()]

    def take_model_context(self) -> list[dict[str, Any]]:
        """What views asked the model to know since the last user message, as text blocks (each slot once)."""
        blocks: list[dict[str, Any]] = []
        for bridge in self._bridges.values():
            view, context = bridge.view, bridge.view.context
            if context is None:
                continue
            bridge.view.context = None
            parts = [block["text"] for block in context.content
                     if block.get("type") == "text" and isinstance(block.get("text"), str)]
            if context.structured is not None:
                parts.append(json.dumps(context.structured, ensure_ascii=False, default=str))
            if parts:  # neither the view's text nor its server's tool name can close the block
                head = _CONTEXT_TAG.sub(r"&lt;\1", f"server={view.server!r} tool={view.tool.name!r}")
                body = "\n".join(_CONTEXT_TAG.sub(r"&lt;\1", part) for part in parts)
                blocks.append({"type": "text", "text": f"<mcp-app-context {head.replace('>', '&gt;')}>\n"
                                                       f"{body}\n</mcp-app-context>"})
        return blocks

    async def aclose(self) -> None:
        """Tear every live view down (a request each, ≤ 2 s) and stop the web side."""
        self._closed = True
        bridges = list(self._bridges.values())
        self._bridges.clear()
        await asyncio.gather(*(self._tear_down(bridge, "the session ended") for bridge in bridges),
                             return_exceptions=True)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._channel is not None:
            channel, self._channel = self._channel, None
            try:
                await channel.close()
            except Exception:
                log.exception("closing the MCP Apps web side")

    # ---- showing a view ------------------------------------------------------------------------------------------
    async def _show(self, bridge: AppBridge, uri: str) -> None:
        view = bridge.view
        try:
            client = await self.servers.connected_client(view.server)
            contents = await client.read_resource(uri)
            mine = view.server not in self._repository_servers  # a grant names a server of the user's own files
            page = self.web.page(view, uri, contents, self.settings.approved_for(view.server) if mine else (),
                                 self.settings.permissions_for(view.server) if mine else ())
            channel = await self._ensure_channel()
            if self._evicting:
                await asyncio.gather(*self._evicting, return_exceptions=True)
            if view.view_id not in self._bridges:  # gone meanwhile (evicted, or the session is ending)
                return
            view.url = channel.add_view(page)
        except Exception as exc:  # whatever went wrong costs this view only, never the tool call or the turn
            self._forget(view.view_id)
            log.warning("MCP Apps: the view of %s/%s could not be shown: %s", view.server, view.tool.name, exc)
            self.front.note(f"MCP server {view.server!r}: the view of {view.tool.name} could not be shown: {exc}")
            return
        opened = False
        if not self._browser_opened and self.settings.open_browser != "never":
            self._browser_opened = True
            opened = await asyncio.to_thread(  # the page's URL holds the session's token: kept off `ps`
                functools.partial(self.web.open_browser, view.url, self.settings.open_browser, private=True))
        self.front.view_shown(ViewNotice(url=view.url, server=view.server, tool=view.tool.name,
                                         view_id=view.view_id, opened=opened))
        declined = (view.declined_domains, view.declined_permissions)
        if any(declined) and view.server not in self._told_declined:  # once a server: what it may not have
            self._told_declined.add(view.server)
            self.front.note(declined_note(view.server, view.tool.name, *declined,
                                          repository=view.server in self._repository_servers))

    async def _ensure_channel(self) -> ViewChannel:
        async with self._start_lock:
            if self._channel is None:
                channel = self.web.channel(self._inbox, self)
                await channel.start()
                self._channel = channel
            return self._channel

    def _send(self, view_id: str, message: dict[str, Any]) -> None:
        if self._channel is not None:
            self._channel.send(view_id, message)

    # ---- PageEvents: what the page says of itself ----------------------------------------------------------------
    def theme_changed(self, theme: str) -> None:
        """The page's colour scheme: every view's `hostContext.theme` from now on (live ones are told)."""
        self._theme = theme
        for bridge in self._bridges.values():
            bridge.set_theme(theme)

    def mode_changed(self, view_id: str, mode: str) -> None:
        bridge = self._bridges.get(view_id)
        if bridge is not None:
            bridge.page_set_mode(mode)

    async def _inbox(self, view_id: str, message: dict[str, Any]) -> None:
        """The web side's delivery of one message from a view. `ui/initialize`, notifications and answers are
        handled in order; other requests run beside them (a tool call waiting on a permission question must not
        hold the view's `ping` or its answer to our teardown)."""
        bridge = self._bridges.get(view_id) or self._closing.get(view_id)  # a closing view still answers
        if bridge is None:
            return
        if "id" in message and message.get("method") not in (None, "ui/initialize"):
            self._spawn(bridge.handle(message))
        else:
            await bridge.handle(message)

    # ---- BridgeHost: what views ask of the session ---------------------------------------------------------------
    async def call_tool(self, view: View, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        entry = next((e for e in self.servers.tools() if e.server == view.server and e.tool.name == name), None)
        if entry is None:
            raise ViewRefusedError(f"server {view.server!r} has no tool {name!r} (a view may call only its own "
                                   "server's tools)")
        if "app" not in entry.tool.visibility:
            raise ViewRefusedError(f"tool {name!r} is not for views (its visibility is "
                                   f"{', '.join(entry.tool.visibility) or 'empty'})")
        if self.gate is None:
            raise ViewRefusedError("this session does not run tool calls from views")
        admission = await self.gate.admit(entry, arguments)
        if not admission.allowed:
            raise ViewRefusedError(admission.reason or f"{entry.qualified_name} was not allowed")
        run_with = admission.arguments if admission.arguments is not None else arguments
        result = await self.servers.call_tool(view.server, name, run_with)
        await self.gate.after(entry, admission, result)
        return dict(result.raw)

    async def read_resource(self, view: View, uri: str) -> dict[str, Any]:
        client = await self.servers.connected_client(view.server)
        return {"contents": await client.read_resource(uri)}

    def log(self, view: View, params: dict[str, Any]) -> None:
        if self.logs is not None:
            self.logs.record(view.server, params)

    async def message(self, view: View, text: str) -> None:
        await self.front.user_message(view, text)

    def update_context(self, view: View, context: ModelContext) -> None:
        view.context = context  # the last one wins

    async def open_link(self, view: View, url: str) -> None:
        url = outside.checked_link(url)  # what the user is asked about is what opens (outside.py)
        if not await self._confirm(view, f"The view of {view.server}/{view.tool.name} asks to open {url}. Open it?"):
            raise ViewRefusedError("the user did not open the link")
        if not await asyncio.to_thread(self.web.open_browser, url, "auto"):
            self.front.note(f"the view of {view.server}/{view.tool.name} asked to open {url} (no browser here)")

    async def download_file(self, view: View, params: dict[str, Any]) -> dict[str, Any]:
        if view.view_id in self._asking:  # before reading anything: a flood costs the view, not the server
            raise ViewRefusedError(_ONE_QUESTION)
        client = await self.servers.connected_client(view.server)  # a linked file: from its own server only
        files = await outside.files_to_save(params, client.read_resource)
        folder = outside.download_folder(self.home or user_home())  # the real home's (os.environ), links resolved
        asked_about = outside.folder_identity(folder)
        who = f"The view of {view.server}/{view.tool.name}"
        if not await self._confirm(view, outside.download_question(who, files, folder)):
            return {"isError": True}
        try:
            saved = await asyncio.to_thread(outside.save_files, files, folder, same_as=asked_about)
        except ViewRefusedError as exc:  # the user said yes: they hear why it did not happen
            self.front.note(f"{who}: {exc.reason}")
            raise
        self.front.note(f"{who} saved {', '.join(str(path) for path in saved)}")
        return {}

    async def _confirm(self, view: View, question: str) -> bool:
        """The front end's y/n, at most one waiting per view: a view that asks again before the user answered is
        refused at once (a page cannot queue questions faster than the user can say no to them)."""
        if view.view_id in self._asking:
            raise ViewRefusedError(_ONE_QUESTION)
        self._asking.add(view.view_id)
        try:
            return await self.front.confirm(question, server=view.server)
        finally:
            self._asking.discard(view.view_id)

    def sampling_capability(self, view: View) -> dict[str, Any] | None:
        if self.sampling is None or self.sampling.policy(view.server) == "deny":
            return None
        return sampling_capability()

    async def sample(self, view: View, params: dict[str, Any]) -> dict[str, Any]:
        """Asked exactly as the view's server's own request would be; only the question names the view."""
        if self.sampling is None:
            raise ViewRefusedError("this session does not answer sampling requests from views")
        return await self.sampling.create_message(view.server, params, view=view.tool.name)

    def teardown_requested(self, view: View) -> None:
        bridge = self._forget(view.view_id)
        if bridge is not None:
            self._spawn(self._tear_down(bridge, "the view asked to close"))

    def show_mode(self, view: View, mode: str) -> None:
        if self._channel is not None:
            self._channel.set_mode(view.view_id, mode)

    # ---- inside --------------------------------------------------------------------------------------------------
    def _forget(self, view_id: str) -> AppBridge | None:
        return self._bridges.pop(view_id, None)

    async def _tear_down(self, bridge: AppBridge, reason: str) -> None:
        view_id = bridge.view.view_id
        self._closing[view_id] = bridge
        try:
            await bridge.teardown(reason)
        finally:
            self._closing.pop(view_id, None)
            if self._channel is not None:
                self._channel.remove_view(view_id)

    def _spawn(self, work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        self._evicting.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("MCP Apps task failed", exc_info=task.exception())
