"""What `mini-claude mcp list`, `get` and `tools` print (text, or `--json`), and what they look at besides the
servers' answers: the tools the tool reader withheld for their shape (its log records, `WithheldTools`) and those a
session would withhold because their definition changed since accepted (a read-only look at the pins: `pins_for`).
Server text goes through `clean`."""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mini_claude.cli.terminal.render import clean, json_text
from mini_claude.cli.terminal.status import list_row, startup_note, state_record, withheld_note
from mini_claude.mcp.protocol import WITHHELD_LOG_KEY, WithheldTool

if TYPE_CHECKING:
    from mini_claude.mcp.manager import McpManager, ServerState
    from mini_claude.mcp.pinning import PinStore

__all__ = ["WithheldTools", "pins_for", "print_get", "print_list", "print_tools", "with_pin_changes"]


def pins_for(command: str, env: Mapping[str, str], project: Path) -> PinStore:
    """The pins of a session in `project`. `accept` pins; every other command only looks, to show and call what a
    session would (a changed definition withheld) without pinning what it sees first."""
    from mini_claude.mcp.pinning import PinStore

    return PinStore.default(env, record=command == "accept", project=project)


def with_pin_changes(found: Mapping[str, Mapping[str, WithheldTool]],
                      manager: McpManager) -> dict[str, dict[str, WithheldTool]]:
    """The tools withheld for their shape (the tool reader's log records) and those whose definition changed
    since the user accepted it (the pins), by server and name."""
    merged = {server: dict(tools) for server, tools in found.items()}
    for state in manager.states.values():
        for change in state.withheld:
            merged.setdefault(state.name, {})[change.name] = WithheldTool(
                state.name, change.name, f"changed since accepted (mini-claude mcp accept {state.name})")
    return merged


class WithheldTools(logging.Filter):
    """Collects the tools the tool reader withholds (their warning records carry a `WithheldTool`), by server and
    tool name, so `mcp list` / `mcp tools` show each with its reason rather than as a bare log line."""

    def __init__(self) -> None:
        super().__init__()
        self.found: dict[str, dict[str, WithheldTool]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        item = getattr(record, WITHHELD_LOG_KEY, None)
        if not isinstance(item, WithheldTool):
            return True
        self.found.setdefault(item.server, {})[item.name] = item
        return False


def print_list(manager: McpManager, as_json: bool, found: Mapping[str, Mapping[str, WithheldTool]]) -> None:
    """`mcp list`: a row per server. The text row's summary already names the tools withheld for a changed
    definition (ServerState.summary), so it adds only those withheld for their shape; `--json` lists both."""
    from mini_claude.agent.compaction import context_tokens
    from mini_claude.cli.mcp.toggles import switches_here
    from mini_claude.mcp.tool_switches import server_off_note
    from mini_claude.paths import user_home
    from mini_claude.tools.mcp_tool import McpToolAdapters
    from mini_claude.tools.tool_search import DeferredTools, budget_note, definition_tokens, off_note

    states = list(manager.states.values())
    # what a session started here would send: the same setting, window and tools as `mini-claude` itself (by the
    # local estimate: near the threshold a session may ask the API's count-tokens endpoint, which this does not),
    # without the tools `disabledMcpTools` switches off (each row says what that saves)
    adapters = McpToolAdapters(manager, switches=switches_here(Path.cwd(), user_home(manager.env)))
    budgets = DeferredTools(adapters, setting=manager.env.get("MINI_CLAUDE_TOOL_SEARCH", "auto"),
                            context_tokens=context_tokens(manager.env)).budget()
    off = adapters.switched_off_by_server()
    server_off = _servers_off(manager)
    if as_json:
        withheld = with_pin_changes(found, manager)
        print(json_text([{**state_record(s, list(withheld.get(s.name, {}).values()), budgets.get(s.name)),
                           **_instructions_record(manager, s.name),
                           **({"tools_off": [a.mcp_tool.name for a in off[s.name]],
                               "tokens_saved": definition_tokens(off[s.name])} if s.name in off else {}),
                           **({"tokens_saved": server_off[s.name]} if server_off.get(s.name) is not None else {})}
                          for s in states], indent=2))
        return
    if not states:
        print("No MCP servers configured. Add one with: mini-claude mcp add NAME -- COMMAND [ARGS…]")
        return
    width = max(len(s.name) for s in states)
    for s in states:
        note = " · ".join(n for n in (budget_note(budgets.get(s.name)), off_note(off.get(s.name, [])),
                                      server_off_note(server_off[s.name]) if s.name in server_off else "") if n)
        print(clean(list_row(s, width, list(found.get(s.name, {}).values()), note)))
        if manager.pins.withheld_instructions(s.name) is not None:
            print(clean(f"  {' ' * width}{instructions_note(s.name)}"))


def _servers_off(manager: McpManager) -> dict[str, int | None]:
    """Each server switched off (disabled) → what its tools cost as last listed (None: never listed)."""
    from mini_claude.cli.mcp.live_switch import server_off_tokens
    from mini_claude.mcp.manager import ServerStatus

    return {s.name: server_off_tokens(manager, s) for s in manager.states.values()
            if s.status is ServerStatus.DISABLED}


def instructions_note(server: str) -> str:
    """The line `mcp list` / `mcp get` add for a server whose instructions are withheld."""
    return (f"its instructions changed since accepted: withheld from the system prompt (mini-claude mcp accept "
            f"{server})")


def _instructions_record(manager: McpManager, server: str) -> dict[str, Any]:
    """`"instructions_withheld": true` in the `--json` forms, only when they are."""
    return {"instructions_withheld": True} if manager.pins.withheld_instructions(server) is not None else {}


def print_get(state: ServerState, as_json: bool, withheld: Mapping[str, WithheldTool],
              manager: McpManager | None = None) -> None:
    from mini_claude.mcp.config_edit import mask_secrets

    info = {**state_record(state, list(withheld.values())),
            **(_instructions_record(manager, state.name) if manager is not None else {})}
    info["config"] = mask_secrets(dict(state.config.raw))
    info["tool_names"] = [t.name for t in state.tools]
    if as_json:
        print(json_text(info, indent=2))
        return
    print(clean(f"{state.name}  ({state.config.type}, from {state.config.source})"))
    detail = " · ".join(part for part in (state.summary(), startup_note(state)) if part)
    print(clean(f"  status: {state.status.label}" + (f" — {detail}" if detail else "")))
    for line in json_text(info["config"], indent=2).splitlines():
        print("  " + clean(line))
    if state.tools:
        print("  tools: " + clean(", ".join(info["tool_names"])))
    if info.get("instructions_withheld"):
        print("  " + clean(instructions_note(state.name)))


def print_tools(manager: McpManager, state: ServerState, as_json: bool,
                 withheld: Mapping[str, WithheldTool]) -> None:
    from mini_claude.cli.mcp.toggles import switches_here
    from mini_claude.paths import user_home

    table = manager.name_table()
    switches = switches_here(Path.cwd(), user_home(manager.env))  # `disabledMcpTools`: listed, marked off
    rows: list[dict[str, Any]] = [
        {"name": t.name, "qualified_name": table.qualified(state.name, t.name), "description": t.description or "",
         "input_schema": t.input_schema, "read_only": t.read_only_hint,
         **({"switched_off": True} if switches.is_off(state.name, t.name) else {})} for t in state.tools]
    note = withheld_note(list(withheld.values()))
    if as_json:
        print(json_text(rows, indent=2))
        if note:
            sys.stderr.write(clean(f"mini-claude mcp: {state.name}: {note}") + "\n")
        return
    for row in rows:
        first = (row["description"].strip().splitlines() or [""])[0]
        off = "  (switched off: disabledMcpTools)" if row.get("switched_off") else ""
        print(clean(f"{row['qualified_name']}  {first[:100]}{off}"))
    if note:
        print(clean(note))
