"""The MCP tool adapter: one server tool (a manager's `McpToolEntry`), seen by the agent exactly like a built-in
`Tool`. Calls go back through the manager, which routes them to the server (reconnecting a lost remote one).

With the session's `McpHost`, every call reports progress to its UI (a progress token is always sent, so progress
keeps a long call alive), a tool that requires tasks is called as a task, and a -32042 "URL elicitation required"
error shows the user the URL and tells the model what the user did."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from mini_claude.errors import JsonRpcError, McpError
from mini_claude.mcp.content import convert_result
from mini_claude.mcp.host import McpHost
from mini_claude.mcp.host.elicit import URL_ELICITATION_REQUIRED
from mini_claude.mcp.host.tasks import TaskRunner
from mini_claude.mcp.manager import McpManager, McpToolEntry, ToolRunner
from mini_claude.mcp.protocol import McpTool, tool_max_timeout_s
from mini_claude.mcp.schema import sanitize_input_schema
from mini_claude.mcp.tool_switches import ToolSwitches
from mini_claude.tools.base import ToolContext, ToolResult

if TYPE_CHECKING:
    from mini_claude.mcp.apps.service import AppsService, ViewCall

__all__ = ["MAX_DESCRIPTION_CHARS", "McpToolAdapter", "McpToolAdapters", "PreparedSchemas", "cut_description"]

MAX_DESCRIPTION_CHARS = 2048
_DEFINITION_FRAME_CHARS = len(json.dumps({"name": "", "description": "", "input_schema": 0})) - 5  # keys, '""' x2, 0


# one encoder for every measurement (json.dumps with options builds a new one per call: a fleet makes thousands)
_encode = json.JSONEncoder(ensure_ascii=False).encode
_encode_text = json.encoder.encode_basestring  # a str as JSON, as the encoder above writes it


def cut_description(text: str) -> str:
    """A tool description as the model gets it: past 2 KB, cut with a note (the full text stays in the server's
    listing: `mini-claude mcp tools SERVER`)."""
    if len(text) <= MAX_DESCRIPTION_CHARS:
        return text
    return f"{text[:MAX_DESCRIPTION_CHARS]} […] (description cut at {MAX_DESCRIPTION_CHARS:,} of {len(text):,} characters)"


class PreparedSchemas:
    """Each listed tool's input schema as the model gets it, and that schema's JSON length, made once per tool
    definition (keyed by the listed `McpTool` object, which a server's new listing replaces), so an adapter made
    again for the same definition (its qualified name moved) does not sanitize and measure it again."""

    def __init__(self) -> None:
        self._by_tool: dict[int, tuple[McpTool, dict[str, Any], int]] = {}

    def get(self, tool: McpTool) -> tuple[dict[str, Any], int]:
        found = self._by_tool.get(id(tool))
        if found is None or found[0] is not tool:
            schema = sanitize_input_schema(tool.input_schema)
            found = self._by_tool[id(tool)] = (tool, schema, len(_encode(schema)))
        return found[1], found[2]

    def keep_only(self, tools: Iterable[McpTool]) -> None:
        """Forget the definitions no longer listed (the cache holds each listed tool, so ids stay unique)."""
        live = {id(tool) for tool in tools}
        self._by_tool = {key: value for key, value in self._by_tool.items() if key in live}


class McpToolAdapter:
    """Routes a call on the entry's qualified name back to (server, raw tool name) through the manager."""

    def __init__(self, manager: McpManager, entry: McpToolEntry, host: McpHost | None = None,
                 schemas: PreparedSchemas | None = None, apps: AppsService | None = None) -> None:
        tool = entry.tool
        self.manager = manager
        self.host = host
        self.apps = apps  # MCP Apps: a tool with a `ui://` view shows it (in the background) as it is called
        self.entry = entry
        self.server = entry.server
        self.mcp_tool = tool
        self.name = entry.qualified_name
        description = tool.description or tool.title or f"Tool {tool.name} of MCP server {entry.server}."
        self.description = cut_description(description)
        self.input_schema, schema_chars = (schemas or PreparedSchemas()).get(tool)
        # the definition's JSON length as a request carries it: {"name": …, "description": …, "input_schema": …}
        self.definition_chars = (len(_encode_text(self.name)) + len(_encode_text(self.description)) + schema_chars
                                 + _DEFINITION_FRAME_CHARS)
        self.read_only = tool.read_only_hint

    input_is_servers = True  # ServerTool: the server checks its own input

    def servers_reached(self, args: Mapping[str, Any]) -> tuple[str, ...]:
        return (self.server,)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        runner: ToolRunner | None = None
        if self.mcp_tool.task_support == "required":
            runner = TaskRunner(on_status=self._task_status, result_timeout_s=tool_max_timeout_s(self.manager.env))
        view: ViewCall | None = None
        if self.apps is not None:
            view = self.apps.begin(self.server, self.mcp_tool, self.name, args)
        try:
            result = await self.manager.call_tool(self.server, self.mcp_tool.name, args, on_progress=self._progress,
                                                  runner=runner)
        except asyncio.CancelledError:
            if view is not None:
                view.cancel("the tool call was interrupted")
            raise
        except JsonRpcError as exc:
            if view is not None:
                view.fail(str(exc))
            if exc.code != URL_ELICITATION_REQUIRED or self.host is None:
                return ToolResult.error(str(exc))
            lines = await self.host.elicitation.url_elicitations(self.server, exc)
            return ToolResult.error("\n".join([str(exc), *lines, "Call the tool again once the user says they are "
                                               "done in the browser."]))
        except McpError as exc:
            if view is not None:
                view.fail(str(exc))
            return ToolResult.error(str(exc))
        if view is not None:
            view.finish(result)
        # the session's environment (the real process environment; never a project .env), like every other setting
        max_tokens = _env_int(self.manager.env, "MAX_MCP_OUTPUT_TOKENS")
        converted = convert_result(result, spill_dir=ctx.spill_dir, stem=self.name, max_output_tokens=max_tokens)
        blocks = list(converted.blocks)
        for warning in converted.warnings:
            blocks.append({"type": "text", "text": f"[note: {warning}]"})
        return ToolResult(blocks, is_error=converted.is_error)

    def _progress(self, progress: float, total: float | None, message: str | None) -> None:
        if self.host is not None:
            self.host.ui.progress(self.name, progress, total, message)

    def _task_status(self, tool: str, status: str, message: str | None) -> None:
        if self.host is not None:
            self.host.ui.notice(self.server, f"{tool}: task {status}{': ' + message if message else ''}")


class McpToolAdapters:
    """The adapters for a manager's current tool entries, rebuilt only when the manager's list changes (it hands
    out the same list object until a server's state or tools change), so each turn does not re-sanitize schemas.
    Each entry's adapter is made once (the manager hands out the same entry while a server's tools are unchanged),
    as its server comes up (`server_ready`), so a fleet's thousand tools are not all wrapped on the way to the first
    model request.

        adapters = McpToolAdapters(manager)
        tools = adapters()          # list[McpToolAdapter], one per ready server tool
    """

    def __init__(self, manager: McpManager, host: McpHost | None = None,
                 switches: ToolSwitches | None = None, apps: AppsService | None = None) -> None:
        self.manager = manager
        self.host = host
        self.apps = apps
        self.switches = switches if switches is not None else ToolSwitches()  # tools switched off: never offered
        self._switches_version = self.switches.version
        self._entries: list[McpToolEntry] | None = None
        self._adapters: list[McpToolAdapter] = []
        self._by_entry: dict[int, tuple[McpToolEntry, McpToolAdapter]] = {}
        self.schemas = PreparedSchemas()

    def server_ready(self, server: str) -> None:
        """Wrap a server's tools as it becomes ready (the manager's change callback), while others start."""
        for entry in self.manager.server_tools(server):
            self._adapter(entry)

    def _adapter(self, entry: McpToolEntry) -> McpToolAdapter:
        found = self._by_entry.get(id(entry))
        if found is None or found[0] is not entry:
            found = self._by_entry[id(entry)] = (entry, McpToolAdapter(self.manager, entry, self.host, self.schemas,
                                                                       self.apps))
        return found[1]

    def adapter(self, entry: McpToolEntry) -> McpToolAdapter:
        """The adapter of any listed entry, offered to the model or not (an MCP Apps view's app-only tool is
        checked by the permission gate as this adapter, under its qualified name)."""
        return self._adapter(entry)

    def switched_off(self, qualified_name: str) -> str | None:
        """Why a tool the model named is not offered, when a `disabledMcpTools` entry switched it off; else None."""
        if not self.switches:
            return None
        for entry in self.manager.tools():
            if entry.qualified_name == qualified_name and self.switches.is_off(entry.server, entry.tool.name):
                return (f"MCP tool {entry.tool.name!r} of server {entry.server!r} is switched off for this project "
                        f"(disabledMcpTools; `/mcp enable {entry.server}/{entry.tool.name}` switches it on)")
        return None

    def switched_off_by_server(self) -> dict[str, list[McpToolAdapter]]:
        """Per server, the adapters of its listed tools that are switched off (what `mcp list` and `/context` say
        the switches save)."""
        found: dict[str, list[McpToolAdapter]] = {}
        if self.switches:
            for entry in self.manager.tools():
                if self.switches.is_off(entry.server, entry.tool.name):
                    found.setdefault(entry.server, []).append(self._adapter(entry))
        return found

    def _tasks_supported(self, server: str) -> bool:
        state = self.manager.states.get(server)
        client = state.client if state is not None else None
        return client is not None and _tasks_supported_by(client.server_capabilities)

    def __call__(self) -> list[McpToolAdapter]:
        entries = self.manager.tools()
        if entries is not self._entries or self.switches.version != self._switches_version:
            # a tool that must be called as a task is offered only by a server that takes task-augmented
            # tools/call (the spec forbids sending `task` otherwise): the host could not serve it. An MCP Apps
            # tool whose `_meta.ui.visibility` leaves out "model" is for the server's own view, never the model;
            # a tool the user switched off (`disabledMcpTools`) is never sent either.
            switches = self.switches
            self._adapters = [self._adapter(entry) for entry in entries if entry.tool.model_visible
                              and (entry.tool.task_support != "required" or self._tasks_supported(entry.server))
                              and not switches.is_off(entry.server, entry.tool.name)]
            self._entries = entries
            self._switches_version = switches.version
            live = {id(entry) for entry in entries}  # the cache holds each listed entry, so ids stay unique
            self._by_entry = {key: value for key, value in self._by_entry.items() if key in live}
            self.schemas.keep_only(entry.tool for entry in entries)
        return self._adapters


def _tasks_supported_by(capabilities: Mapping[str, Any]) -> bool:
    tasks = capabilities.get("tasks")
    requests = tasks.get("requests") if isinstance(tasks, dict) else None
    tools = requests.get("tools") if isinstance(requests, dict) else None
    return isinstance(tools, dict) and isinstance(tools.get("call"), dict)


def _env_int(env: Mapping[str, str], name: str) -> int | None:
    try:
        value = int(env.get(name, ""))
    except ValueError:
        return None
    return value if value > 0 else None
