"""MCP servers and single MCP tools switched off by settings: the `disabledMcpTools` and `disabledMcpServers`
keys (ours; Claude Code has neither in its settings files).

`disabledMcpServers` lists server names of any scope (user, local, project, --mcp-config): a server listed in any
settings file is not started. (Claude Code's `disabledMcpjsonServers` does the same for `.mcp.json` servers only;
both are honoured.)

The key holds a list of `SERVER/TOOL` entries (`SERVER/*` switches off every tool of a server). It is read from
the user's `~/.claude/settings.json`, the project's `.claude/settings.json` and the local
`.claude/settings.local.json`, and the lists are joined: an entry in any of them switches the tool off, so a
repository can only take tools away, never give one back (no trust is needed for that).

A switched-off tool never reaches the model: `McpToolAdapters` leaves it out of the tools list (and so out of
ToolSearch's index), and a call that names it anyway finds no tool. `ToolSwitches` is the session's live copy:
`/mcp disable SERVER/TOOL` changes it, and the next request's tool list follows.

`last_listed_tools` gives a server that is off its tools as they were last listed (the pinned definitions,
mcp/pinning.py), so what it would cost if it were on can be measured (cli/mcp/live_switch.py `server_off_tokens`).
A server never listed: unknown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from mini_claude.mcp.pinning import PinKey, PinStore
from mini_claude.mcp.protocol import McpTool

__all__ = ["DISABLED_SERVERS_KEY", "DISABLED_TOOLS_KEY", "JSON_SERVERS_KEY", "ToolSwitches", "disabled_tools",
           "last_listed_tools", "parse_tool_entry", "server_off_note", "switched_off_servers"]

DISABLED_TOOLS_KEY = "disabledMcpTools"
DISABLED_SERVERS_KEY = "disabledMcpServers"
JSON_SERVERS_KEY = "disabledMcpjsonServers"  # Claude Code's, for .mcp.json servers


def switched_off_servers(files: Iterable[Mapping[str, Any]]) -> list[str]:
    """The server names the `disabledMcpServers` lists of the settings `files` (raw dicts) name, joined."""
    found: list[str] = []
    for raw in files:
        value = raw.get(DISABLED_SERVERS_KEY)
        for item in value if isinstance(value, list) else ():
            if isinstance(item, str) and item and item not in found:
                found.append(item)
    return found


def parse_tool_entry(text: str) -> tuple[str, str]:
    """`SERVER/TOOL` → (server, tool); `SERVER/*` → (server, "*"). ValueError for anything else. A tool's name may
    hold `/` (a server chooses it): `srv/a/b` is tool `a/b`. (A server's name may hold one too: `ToolSwitches`
    matches the whole `SERVER/TOOL` text, so `evil/x/y` switches off tool `y` of a server `evil/x` as well.)"""
    server, sep, tool = text.strip().partition("/")
    if not sep or not server or not tool:
        raise ValueError(f"{text!r} is not SERVER/TOOL (or SERVER/* for all of a server's tools)")
    return server, tool


def disabled_tools(files: Iterable[Mapping[str, Any]]) -> list[str]:
    """The well-formed `disabledMcpTools` entries of the settings `files` (raw dicts), joined, each once."""
    found: list[str] = []
    for raw in files:
        value = raw.get(DISABLED_TOOLS_KEY)
        if not isinstance(value, list):
            continue
        for item in value:
            if isinstance(item, str):
                try:
                    server, tool = parse_tool_entry(item)
                except ValueError:
                    continue
                entry = f"{server}/{tool}"
                if entry not in found:
                    found.append(entry)
    return found


class ToolSwitches:
    """Which MCP tools are off for this session. `version` grows with every change (the tool list's cache key)."""

    def __init__(self, entries: Iterable[str] = ()) -> None:
        # the `SERVER/TOOL` texts: matched whole, so a `/` in a server's or a tool's name never makes an entry
        # miss the tool it names (it can only cover one more, the same text read the other way)
        self._off: set[str] = set()
        self.version = 0
        for entry in entries:
            self.switch(entry, on=False)

    def switch(self, entry: str, *, on: bool) -> bool:
        """Switch `SERVER/TOOL` (or `SERVER/*`) on or off; returns whether anything changed."""
        server, tool = parse_tool_entry(entry)
        key = f"{server}/{tool}"
        if (key in self._off) != on:
            return False
        if on:
            self._off.discard(key)
        else:
            self._off.add(key)
        self.version += 1
        return True

    def is_off(self, server: str, tool: str) -> bool:
        return f"{server}/{tool}" in self._off or f"{server}/*" in self._off

    def entries(self) -> list[str]:
        return sorted(self._off)

    def __bool__(self) -> bool:
        return bool(self._off)


def last_listed_tools(store: PinStore | None, key: PinKey) -> list[McpTool] | None:
    """The server's tools as they were last listed (their pinned definitions, for the server's current config);
    None when they are not known (never listed, pins not kept, or one too large to have been stored)."""
    if store is None:
        return None
    entry = store.files.load(key)
    pins = entry.get("tools") if isinstance(entry, dict) and entry.get("fingerprint") == key.fingerprint else None
    if not isinstance(pins, dict) or not pins:
        return None
    tools: list[McpTool] = []
    for name, pin in pins.items():
        definition = pin.get("definition") if isinstance(pin, dict) else None
        if not isinstance(definition, dict):
            return None  # too large to have been stored: a sum would say less than it costs
        schema, output, notes = (definition.get(k) for k in ("inputSchema", "outputSchema", "annotations"))
        title, description = definition.get("title"), definition.get("description")
        tools.append(McpTool(name=str(name), title=title if isinstance(title, str) else None,
                             description=description if isinstance(description, str) else None,
                             input_schema=schema if isinstance(schema, dict) else {},
                             output_schema=output if isinstance(output, dict) else None,
                             annotations=notes if isinstance(notes, dict) else {}, raw=dict(definition)))
    return tools


def server_off_note(tokens: int | None) -> str:
    """`server off (saves ~2.9k tokens, as last listed)` for a server switched off, or without the saving when its
    tools were never listed."""
    if tokens is None:
        return "server off"
    size = f"~{tokens}" if tokens < 1000 else f"~{tokens / 1000:.1f}k"
    return f"server off (saves {size} tokens, as last listed)"
