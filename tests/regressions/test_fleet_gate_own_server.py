"""The gate judges an MCP call by the server its tool was made for, not by whoever holds the name at check time
(helper S's attack on the incremental catalogue): server `a` lists a tool named like server `a__b`'s `c`, takes the
name (it sorts first) between the model's answer and the check, and `mcp__a`'s allow rule used to let through a call
that still goes to `a__b`, which a rule denies."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mini_claude.mcp.naming import qualify_tool_name
from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.tools.base import ToolContext, ToolResult

HASHED = qualify_tool_name("a__b", "c")  # "mcp__a__b__c_<hash>": what the model called


class RoutedTool:
    """An MCP tool adapter as the gate sees one: its name, and the server it calls."""

    name = HASHED
    description = "c of a__b"
    input_schema: dict[str, Any] = {"type": "object"}  # noqa: RUF012
    read_only = False
    input_is_servers = True

    def servers_reached(self, args: Mapping[str, Any]) -> tuple[str, ...]:
        return ("a__b",)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise AssertionError("never run here")


async def test_the_rules_of_the_server_the_call_goes_to_apply(tmp_path: Path) -> None:
    rules = RuleSet.from_strings(allow=("mcp__a",), deny=("mcp__a__b",))
    # the catalogue now says the name is `a`'s (a's tool named CROSS came up and sorts first)
    gate = PermissionGate(PermissionMode.DEFAULT, rules, ask=None, cwd=tmp_path, server_of=lambda name: "a")
    decision = await gate.check(RoutedTool(), {})  # type: ignore[arg-type]
    assert not decision.allowed and "mcp__a__b" in decision.reason


async def test_a_hook_is_told_the_server_the_call_goes_to(tmp_path: Path) -> None:
    import json

    from mini_claude.hooks import Hooks, HookSession
    from mini_claude.permissions.rules import CLAUDE_TOOL_NAMES
    from mini_claude.settings import SettingsHook

    seen = tmp_path / "pre.json"
    session = HookSession(cwd=tmp_path, home=tmp_path, env={"PATH": "/usr/bin:/bin"}, session_id=lambda: "s1",
                          transcript_path=lambda: "", permission_mode=lambda: "default",
                          tool_names=CLAUDE_TOOL_NAMES, server_of=lambda name: "a")  # the name's holder now
    hooks = Hooks([SettingsHook("PreToolUse", "", f"cat > {seen}", None, "~/.claude/settings.json", "k")], session)
    await hooks.pre_tool_use(HASHED, {}, "toolu_1", server="a__b")
    assert json.loads(seen.read_text())["mcp_server"] == "a__b"
