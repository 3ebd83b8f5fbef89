"""`mini-claude mcp disable|enable NAME -s user|project|local`: switch a server off or on in one settings file —
Claude Code's `disabledMcpjsonServers` for a `.mcp.json` server, our `disabledMcpServers` for any other (a listed
server is not started; session/start.py `resolve_approvals`).

`mini-claude mcp disable|enable SERVER/TOOL [-s user|project|local]`: switch one MCP tool (or `SERVER/*`, all
of a server's tools) off or on in one settings file's `disabledMcpTools` list (mcp/tool_switches.py says what the
key means). The default scope is `local` (`.claude/settings.local.json`), as for `mcp add`. The file is written
through settings_rules (atomic; a repository's file that is a symlink is refused, never followed).

Enabling says what still holds the tool off (exit 1): an entry in another scope's file, or `SERVER/*`."""

from __future__ import annotations

import sys
from pathlib import Path

from mini_claude.cli.terminal.render import clean
from mini_claude.jsonfile import read_json_object
from mini_claude.mcp.tool_switches import (
    DISABLED_SERVERS_KEY,
    DISABLED_TOOLS_KEY,
    ToolSwitches,
    disabled_tools,
    parse_tool_entry,
    switched_off_servers,
)
from mini_claude.settings_rules import SCOPES, SettingsFile, settings_file, switch_list_item

__all__ = ["files_holding", "switch_server", "switch_tool", "switches_here"]


def switch_tool(entry: str, *, enabled: bool, scope: str | None, cwd: Path, home: Path) -> int:
    """Write the switch; 0 when the tool is now as asked, 1 when enabling left it off elsewhere, 3 on bad input."""
    try:
        server, tool = parse_tool_entry(entry)
    except ValueError as exc:
        _say(f"mini-claude mcp: {exc}", err=True)
        return 3
    entry = f"{server}/{tool}"
    file = settings_file(scope or "local", cwd=cwd, home=home)
    changed = switch_list_item(file, DISABLED_TOOLS_KEY, entry, present=not enabled)
    what = f"all tools of MCP server {server!r}" if tool == "*" else f"MCP tool {tool!r} of server {server!r}"
    if not enabled:
        note = "" if changed else " (it was already listed)"
        _say(f"Disabled {what} in {file.display}{note}: the model is not offered it")
        return 0
    holding = files_holding(server, tool, cwd=cwd, home=home)
    if holding:
        _say(f"{what[0].upper()}{what[1:]} stays off: {'; '.join(holding)} (remove it there, or "
             f"`mini-claude mcp enable {entry} -s SCOPE`)")
        return 1
    _say(f"Enabled {what} in {file.display}" + ("" if changed else " (it was not switched off there)"))
    return 0


def files_holding(server: str, tool: str, *, cwd: Path, home: Path) -> list[str]:
    """Which scope files still switch the tool off, e.g. `.claude/settings.json lists github/*`."""
    found: list[str] = []
    for scope in SCOPES:
        file: SettingsFile = settings_file(scope, cwd=cwd, home=home)
        raw = read_json_object(file.path, file.display, []) or {}
        for listed in disabled_tools([raw]):
            if listed in (f"{server}/{tool}", f"{server}/*"):
                found.append(f"{file.display} lists {listed}")
    return found


_JSON_SERVERS_KEY = "disabledMcpjsonServers"  # Claude Code's, for .mcp.json servers


def switch_server(name: str, *, enabled: bool, scope: str, cwd: Path, home: Path,
                  env: dict[str, str]) -> int:
    """`mcp disable|enable NAME -s SCOPE`; 0 when done, 1 when enabling left the server off in another file."""
    from mini_claude.mcp.config import load_mcp_config

    file = settings_file(scope, cwd=cwd, home=home)
    if not enabled:
        cfg = load_mcp_config(cwd=cwd, home=home, env=env).servers.get(name)
        key = _JSON_SERVERS_KEY if cfg is not None and cfg.needs_project_approval() else DISABLED_SERVERS_KEY
        changed = switch_list_item(file, key, name, present=True)
        known = "" if cfg is not None else " (no server of that name is configured here yet)"
        _say(f"Disabled MCP server {name!r} in {file.display} ({key}){'' if changed else ', already listed'}"
             f"{known}: it is not started")
        return 0
    for key in (DISABLED_SERVERS_KEY, _JSON_SERVERS_KEY):
        switch_list_item(file, key, name, present=False)
    holding = []
    for other in SCOPES:
        raw = _raw(settings_file(other, cwd=cwd, home=home))
        json_off = raw.get(_JSON_SERVERS_KEY)
        if name in switched_off_servers([raw]) or (isinstance(json_off, list) and name in json_off):
            holding.append(settings_file(other, cwd=cwd, home=home).display)
    if holding:
        _say(f"MCP server {name!r} stays off: {', '.join(holding)} still switch(es) it off")
        return 1
    _say(f"Enabled MCP server {name!r} in {file.display} (`mini-claude mcp list` shows whether it starts)")
    return 0


def _raw(file: SettingsFile) -> dict[str, object]:
    return read_json_object(file.path, file.display, []) or {}


def switches_here(cwd: Path, home: Path) -> ToolSwitches:
    """The tools the three scope files switch off here, as a session started here would have them (`mcp list`)."""
    files = [settings_file(scope, cwd=cwd, home=home) for scope in SCOPES]
    return ToolSwitches(disabled_tools([read_json_object(f.path, f.display, []) or {} for f in files]))


def _say(text: str, *, err: bool = False) -> None:
    (sys.stderr if err else sys.stdout).write(clean(text) + "\n")
