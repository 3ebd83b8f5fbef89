"""`mini-claude mcp disable|enable NAME -s user|project|local`: switch a server off or on in one settings file —
Claude Code's `disabledMcpjsonServers` for a `.mcp.json` server, our `disabledMcpServers` for any other (a listed
server is not started; session/start.py `resolve_approvals`).

`mini-claude mcp disable|enable SERVER/TOOL [-s user|project|local]`: switch one MCP tool (or `SERVER/*`, all
of a server's tools) off or on in one settings file's `disabledMcpTools` list (mcp/tool_switches.py says what the
key means). The default scope is `local` (`.claude/settings.local.json`), as for `mcp add`. The file is written
through settings_rules (atomic; a repository's file that is a symlink is refused, never followed).

In a linked git worktree, `local` means the main worktree's `.claude/settings.local.json` (worktrees.py): a
choice made in one worktree holds in all of the repository's.

Enabling says what still holds the tool off (exit 1): an entry in another scope's file, or `SERVER/*`.

`tool_switch` and `server_switch` write and return a `Switched` (what happened, in one line); the CLI prints it
(`switch_tool`, `switch_server`), the REPL's `/mcp enable|disable` shows it and applies it to the live session
(cli/mcp/live_switch.py).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from mini_claude.cli.terminal.render import clean
from mini_claude.jsonfile import read_json_object
from mini_claude.mcp.config import ServerConfig
from mini_claude.mcp.tool_switches import (
    DISABLED_SERVERS_KEY,
    DISABLED_TOOLS_KEY,
    JSON_SERVERS_KEY,
    ToolSwitches,
    disabled_tools,
    parse_tool_entry,
    switched_off_servers,
)
from mini_claude.settings_rules import SettingsFile, local_switch_files, settings_file, switch_list_item

__all__ = ["Switched", "all_switch_files", "files_holding", "server_holders", "server_switch", "switch_server",
           "switch_tool", "switches_here", "tool_switch"]


@dataclass(frozen=True)
class Switched:
    """The outcome of one switch: `done` when the thing is now as asked (False: enabling left it off elsewhere),
    the file written, and the sentence saying so."""

    done: bool
    file: str
    message: str


def tool_switch(entry: str, *, enabled: bool, scope: str | None, cwd: Path, home: Path) -> Switched:
    """Write the switch of `SERVER/TOOL` (or `SERVER/*`) in `scope`'s file (default local). ValueError for an entry
    that is not SERVER/TOOL; ConfigError for a file that cannot be written."""
    server, tool = parse_tool_entry(entry)
    entry = f"{server}/{tool}"
    files = _scope_files(scope or "local", cwd, home)
    file = files[0]
    changed = switch_list_item(file, DISABLED_TOOLS_KEY, entry, present=not enabled)
    if enabled:  # in a linked worktree, `local` is the main worktree's file and this tree's own
        for other in files[1:]:
            changed = switch_list_item(other, DISABLED_TOOLS_KEY, entry, present=False) or changed
    what = f"all tools of MCP server {server!r}" if tool == "*" else f"MCP tool {tool!r} of server {server!r}"
    if not enabled:
        note = "" if changed else " (it was already listed)"
        return Switched(True, file.display, f"Disabled {what} in {file.display}{note}: the model is not offered it")
    holding = files_holding(server, tool, cwd=cwd, home=home)
    if holding:
        return Switched(False, file.display, f"{what[0].upper()}{what[1:]} stays off: {'; '.join(holding)} (remove "
                                             f"it there, or enable {entry} with -s SCOPE)")
    return Switched(True, file.display,
                    f"Enabled {what} in {file.display}" + ("" if changed else " (it was not switched off there)"))


def switch_tool(entry: str, *, enabled: bool, scope: str | None, cwd: Path, home: Path) -> int:
    """The CLI's: 0 when the tool is now as asked, 1 when enabling left it off elsewhere, 3 on bad input."""
    try:
        done = tool_switch(entry, enabled=enabled, scope=scope, cwd=cwd, home=home)
    except ValueError as exc:
        _say(f"mini-claude mcp: {exc}", err=True)
        return 3
    _say(done.message)
    return 0 if done.done else 1


def files_holding(server: str, tool: str, *, cwd: Path, home: Path) -> list[str]:
    """Which scope files still switch the tool off, e.g. `.claude/settings.json lists github/*`."""
    found: list[str] = []
    for file in all_switch_files(cwd, home):
        raw = _raw(file)
        for listed in disabled_tools([raw]):
            if listed in (f"{server}/{tool}", f"{server}/*"):
                found.append(f"{file.display} lists {listed}")
    return found


def server_switch(name: str, *, enabled: bool, scope: str, cwd: Path, home: Path, env: dict[str, str],
                  config: ServerConfig | None = None) -> Switched:
    """Switch server `name` off or on in `scope`'s settings file (ConfigError when it cannot be written).
    `config`: the server's, when the caller has it (a session's, --mcp-config included); else looked up here."""
    from mini_claude.mcp.config import load_mcp_config

    files = _scope_files(scope, cwd, home)
    file = files[0]
    if not enabled:
        cfg = config or load_mcp_config(cwd=cwd, home=home, env=env).servers.get(name)
        key = JSON_SERVERS_KEY if cfg is not None and cfg.needs_project_approval() else DISABLED_SERVERS_KEY
        changed = switch_list_item(file, key, name, present=True)
        known = "" if cfg is not None else " (no server of that name is configured here yet)"
        return Switched(True, file.display, f"Disabled MCP server {name!r} in {file.display} ({key})"
                                            f"{'' if changed else ', already listed'}{known}: it is not started")
    for written in files:
        for key in (DISABLED_SERVERS_KEY, JSON_SERVERS_KEY):
            switch_list_item(written, key, name, present=False)
    holding = server_holders(name, cwd=cwd, home=home)
    if holding:
        return Switched(False, file.display,
                        f"MCP server {name!r} stays off: {', '.join(holding)} still switch(es) it off")
    return Switched(True, file.display, f"Enabled MCP server {name!r} in {file.display}")


def server_holders(name: str, *, cwd: Path, home: Path) -> list[str]:
    """The scope files whose `disabledMcpServers` or `disabledMcpjsonServers` still name the server."""
    holding = []
    for other in all_switch_files(cwd, home):
        raw = _raw(other)
        json_off = raw.get(JSON_SERVERS_KEY)
        if name in switched_off_servers([raw]) or (isinstance(json_off, list) and name in json_off):
            holding.append(other.display)
    return holding


def switch_server(name: str, *, enabled: bool, scope: str, cwd: Path, home: Path,
                  env: dict[str, str]) -> int:
    """`mcp disable|enable NAME -s SCOPE`; 0 when done, 1 when enabling left the server off in another file."""
    done = server_switch(name, enabled=enabled, scope=scope, cwd=cwd, home=home, env=env)
    _say(done.message + (" (`mini-claude mcp list` shows whether it starts)" if done.done and enabled else ""))
    return 0 if done.done else 1


def _raw(file: SettingsFile) -> dict[str, object]:
    return read_json_object(file.path, file.display, []) or {}


def _scope_files(scope: str, cwd: Path, home: Path) -> list[SettingsFile]:
    """The files a switch of `scope` writes, the first for a disable (local in a linked worktree: the main
    worktree's, shared by all the repository's worktrees, then this tree's own)."""
    return local_switch_files(cwd, home) if scope == "local" else [settings_file(scope, cwd=cwd, home=home)]


def all_switch_files(cwd: Path, home: Path) -> list[SettingsFile]:
    """Every file whose switches count here: user, project, and the local ones (worktrees.py)."""
    return [settings_file("user", cwd=cwd, home=home), settings_file("project", cwd=cwd, home=home),
            *local_switch_files(cwd, home)]


def switches_here(cwd: Path, home: Path) -> ToolSwitches:
    """The tools the three scope files switch off here, as a session started here would have them (`mcp list`)."""
    return ToolSwitches(disabled_tools([_raw(f) for f in all_switch_files(cwd, home)]))


def _say(text: str, *, err: bool = False) -> None:
    (sys.stderr if err else sys.stdout).write(clean(text) + "\n")
