"""The session's checks on a tool call an MCP Apps view makes: exactly the model's path for an MCP tool — the
PreToolUse hooks (their decision weighed by the gate, their changed input checked and run), the permission gate
(deny / ask / allow rules and the mode; an "ask" goes to the front end's question, and is refused where nobody can
answer), and the PostToolUse hooks after a call that succeeded. The service (mcp/apps/service.py) has already
checked that the tool is on the view's own server and that its visibility includes "app"; a tool switched off
(`disabledMcpTools`) is refused here. The gate sees the tool as its adapter, under its qualified name
(`mcp__server__tool`), whether or not the model is offered it. Each call a view ran, or the gate refused, is one
line through `report` (the terminal's neutralising path; the API's log).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from mini_claude.agent.hook_points import HookPoints
from mini_claude.agent.tool_calls import Gate
from mini_claude.mcp.apps.service import ViewCallAdmission
from mini_claude.mcp.protocol import CallToolResult
from mini_claude.mcp.server_state import McpToolEntry
from mini_claude.tools.mcp_tool import McpToolAdapters

__all__ = ["SessionViewGate"]


class SessionViewGate:
    """`ViewCallGate` over the session's gate, hooks and MCP tool adapters."""

    def __init__(self, gate: Gate, hooks: HookPoints | None, adapters: McpToolAdapters,
                 report: Callable[[str], None] | None = None) -> None:
        self.gate = gate
        self.hooks = hooks
        self.adapters = adapters
        self.report = report  # one line per call a view ran or was refused (the terminal's, the API's log)

    async def admit(self, entry: McpToolEntry, arguments: dict[str, Any]) -> ViewCallAdmission:
        if self.adapters.switches.is_off(entry.server, entry.tool.name):
            return ViewCallAdmission(False, f"{entry.qualified_name} is switched off (disabledMcpTools)")
        tool = self.adapters.adapter(entry)
        call_id = f"toolu_view_{uuid.uuid4().hex[:20]}"
        permission = None
        if self.hooks is not None:
            before = await self.hooks.pre_tool_use(tool.name, arguments, call_id, server=entry.server)
            permission = before.permission
            if before.updated_input is not None:
                arguments = before.updated_input
        decision = await self.gate.check(tool, arguments, hook=permission, tool_use_id=call_id, view=entry.server)
        if not decision.allowed:
            self._report(f"a view of MCP server {_one_line(entry.server)} was refused {_one_line(entry.tool.name)}: "
                         f"{_one_line(decision.reason)}")
            return ViewCallAdmission(False, decision.reason or f"{tool.name} was not allowed", call_id=call_id)
        run_with = decision.updated_input if decision.updated_input is not None else arguments
        return ViewCallAdmission(True, arguments=run_with, call_id=call_id)

    async def after(self, entry: McpToolEntry, admission: ViewCallAdmission, result: CallToolResult) -> None:
        self._report(f"a view of MCP server {_one_line(entry.server)} ran {_one_line(entry.tool.name)}"
                     + (" (it returned an error)" if result.is_error else ""))
        if self.hooks is None or result.is_error:
            return
        text = "\n".join(block["text"] for block in result.content
                         if block.get("type") == "text" and isinstance(block.get("text"), str))
        await self.hooks.post_tool_use(entry.qualified_name, admission.arguments or {}, admission.call_id,
                                       result.content, text, server=entry.server)

    def _report(self, line: str) -> None:
        if self.report is not None:
            self.report(line)


def _one_line(text: str) -> str:
    """A server's or a repository's text (a server name is any `.mcp.json` key) kept on the report's one line:
    a line break shown as `\\n`, so it cannot print a line of its own (the report's door neutralises the rest)."""
    return text.replace("\r", "\\r").replace("\n", "\\n")
