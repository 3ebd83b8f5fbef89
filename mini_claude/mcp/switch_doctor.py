"""`mini-claude mcp doctor`'s look at the MCP switches of every settings scope: what is wrong with them and what to
change, one line each.

The keys looked at: ours, `disabledMcpTools` and `disabledMcpServers` (tool_switches.py), and Claude Code's
`disabledMcpjsonServers`, `enabledMcpjsonServers` and `enableAllProjectMcpServers`. Found:

* a key that is not a list of strings, an entry that is not a string, a tool entry that is not `SERVER/TOOL`;
* a name that no MCP config here defines (for the user's file, which holds in every project, a server of another
  project in ~/.claude.json counts as defined); a `*Mcpjson*` key naming a server that is not a `.mcp.json` one,
  where the key does nothing;
* a tool entry naming a tool its server does not offer — only said of a server that was reached and listed;
* a file of the repository that switches servers on. Claude Code reads `enabledMcpjsonServers` and
  `enableAllProjectMcpServers` from a project's `.claude/settings.json` too, and so do we, but only once the user
  trusted the folder: a repository never widens anything without the user's consent. In a folder not trusted the
  doctor says the keys are ignored and how to consent. A linked worktree shares only the main worktree's switches
  that turn things off (worktrees.py), so a switch-on there is said not to count;
* keys that look like switches but that nothing reads (`enabledMcpServers`, `enabledMcpTools`).

Pure: the caller reads the files (`SwitchFile`) and knows the servers; nothing here prints or touches the disk.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mini_claude.mcp.tool_switches import DISABLED_SERVERS_KEY, DISABLED_TOOLS_KEY, JSON_SERVERS_KEY

__all__ = ["SwitchFile", "SwitchProblem", "check_offered", "check_switches"]

ENABLED_JSON_KEY = "enabledMcpjsonServers"
ENABLE_ALL_KEY = "enableAllProjectMcpServers"
LIST_KEYS = (DISABLED_TOOLS_KEY, DISABLED_SERVERS_KEY, JSON_SERVERS_KEY, ENABLED_JSON_KEY)
NOT_KEYS = ("enabledMcpServers", "enabledMcpTools")  # written by hand, read by nobody
MAX_NAMES_SHOWN = 6


@dataclass(frozen=True)
class SwitchFile:
    """One settings file's object. `scope`: user, project, local, or shared-local (the main worktree's local file,
    seen from a linked worktree)."""

    scope: str
    display: str
    raw: Mapping[str, Any]


@dataclass(frozen=True)
class SwitchProblem:
    code: str  # stable: "switch-not-a-list", "switch-unknown-server", "switch-unknown-tool", ...
    file: str
    server: str | None  # the server it is about, when it names one
    cause: str
    fix: str


def check_switches(files: Sequence[SwitchFile], servers: Collection[str], *, json_servers: Collection[str],
                   elsewhere: Collection[str] = (), trusted: bool) -> list[SwitchProblem]:
    """Every problem of the switch keys of `files`. `servers`: the names configured here; `json_servers`: those of
    them from `.mcp.json`; `elsewhere`: servers of other projects (the user's file may name them); `trusted`: the
    folder is trusted (its project files' switch-ons count)."""
    found: list[SwitchProblem] = []
    known = ", ".join(sorted(servers)[:MAX_NAMES_SHOWN]) or "none"
    for file in files:
        for key in LIST_KEYS:
            for name in _strings(file, key, found):
                server = _entry_server(name, servers) if key == DISABLED_TOOLS_KEY else name
                if key == DISABLED_TOOLS_KEY and not _is_entry(name):
                    found.append(SwitchProblem("switch-bad-entry", file.display, None,
                                               f"{file.display}: {key} entry {name!r} is not SERVER/TOOL",
                                               "write it as SERVER/TOOL, or SERVER/* for all of a server's tools"))
                    continue
                if server not in servers and not (file.scope == "user" and server in elsewhere):
                    where = " (the user's file holds in every project: ignore this if a project of yours defines " \
                            "it)" if file.scope == "user" else ""
                    found.append(SwitchProblem("switch-unknown-server", file.display, server,
                                               f"{file.display}: {key} names {server!r}, which no MCP config here "
                                               f"defines{where}",
                                               f"fix the name (configured: {known}) or remove the entry"))
                elif key in (JSON_SERVERS_KEY, ENABLED_JSON_KEY) and server in servers and server not in json_servers:
                    other = DISABLED_SERVERS_KEY if key == JSON_SERVERS_KEY else None
                    found.append(SwitchProblem("switch-wrong-key", file.display, server,
                                               f"{file.display}: {key} names {server!r}, which is not a .mcp.json "
                                               f"server: the key does nothing for it",
                                               f'move it to "{other}"' if other else
                                               "remove it: only .mcp.json servers wait for approval"))
        found += _switch_ons(file, trusted)
        for key in NOT_KEYS:
            if key in file.raw:
                found.append(SwitchProblem("switch-no-such-key", file.display, None,
                                           f"{file.display}: {key} is not a key anything reads",
                                           "to switch a server or tool back on, remove it from disabledMcpServers / "
                                           "disabledMcpjsonServers / disabledMcpTools (mini-claude mcp enable "
                                           "NAME[/TOOL] -s SCOPE); a .mcp.json server is approved with "
                                           "enabledMcpjsonServers in your own settings"))
    return found


def check_offered(files: Sequence[SwitchFile], server: str, tools: Collection[str]) -> list[SwitchProblem]:
    """The `disabledMcpTools` entries of `files` naming a tool that `server` (reached, its tools listed) lacks."""
    found: list[SwitchProblem] = []
    offered = ", ".join(sorted(tools)[:MAX_NAMES_SHOWN]) + ("…" if len(tools) > MAX_NAMES_SHOWN else "")
    for file in files:
        value = file.raw.get(DISABLED_TOOLS_KEY)
        for item in value if isinstance(value, list) else ():
            if not isinstance(item, str) or not _is_entry(item):
                continue
            tool = item.strip()[len(server) + 1:] if item.strip().startswith(f"{server}/") else None
            if tool is not None and tool != "*" and tool not in tools:
                found.append(SwitchProblem("switch-unknown-tool", file.display, server,
                                           f"{file.display}: disabledMcpTools lists {item!r}, but {server} offers "
                                           f"no tool {tool!r}",
                                           f"fix the tool name ({server} offers: {offered or 'no tools'}) or remove "
                                           f"the entry"))
    return found


def _strings(file: SwitchFile, key: str, found: list[SwitchProblem]) -> Iterable[str]:
    """The string entries of `file`'s list `key`; a value that is no list, or an entry that is no string, is a
    problem added to `found`."""
    if key not in file.raw:
        return []
    value = file.raw[key]
    if not isinstance(value, list):
        example = '["github/create_issue"]' if key == DISABLED_TOOLS_KEY else '["github"]'
        found.append(SwitchProblem("switch-not-a-list", file.display, None,
                                   f"{file.display}: {key} is {_json_type(value)}, not a list of strings "
                                   f"(it is ignored)", f'make it a list, e.g. "{key}": {example}'))
        return []
    strings = []
    for item in value:
        if isinstance(item, str) and item.strip():
            strings.append(item)
        else:
            found.append(SwitchProblem("switch-not-a-string", file.display, None,
                                       f"{file.display}: {key} holds {_json_type(item)} {_short(item)} (ignored)",
                                       "each entry is a non-empty string: remove that one"))
    return strings


def _switch_ons(file: SwitchFile, trusted: bool) -> list[SwitchProblem]:
    """A file of the repository (or the main worktree's local one) that switches servers on."""
    names = [n for n in file.raw.get(ENABLED_JSON_KEY, []) if isinstance(n, str)] \
        if isinstance(file.raw.get(ENABLED_JSON_KEY), list) else []
    enable_all = file.raw.get(ENABLE_ALL_KEY) is True
    if not names and not enable_all:
        return []
    what = (f"{ENABLE_ALL_KEY} (every .mcp.json server)" if enable_all else "") + \
        (" and " if enable_all and names else "") + (f"{ENABLED_JSON_KEY} ({', '.join(names)})" if names else "")
    if file.scope == "shared-local":
        return [SwitchProblem("switch-on-not-shared", file.display, None,
                              f"{file.display} switches on {what}: a worktree shares only the switches that turn "
                              f"things off, so it does not count here",
                              "approve the servers in this worktree (a session here asks), or list them in this "
                              "worktree's own .claude/settings.local.json")]
    if file.scope == "project" and not trusted:
        return [SwitchProblem("switch-on-untrusted", file.display, None,
                              f"{file.display} (the repository's) switches on {what}: ignored, since this folder "
                              f"is not trusted and a repository cannot switch servers on without your consent",
                              "trust the folder (a session here asks), or approve each server when asked, or list "
                              "it in enabledMcpjsonServers of ~/.claude/settings.json or .claude/settings.local.json")]
    return []


def _is_entry(text: str) -> bool:
    server, sep, tool = text.strip().partition("/")
    return bool(sep and server and tool)  # a tool's (or a server's) name may hold a `/` (tool_switches.py)


def _entry_server(entry: str, servers: Collection[str]) -> str:
    """The server a `SERVER/TOOL` entry names: the longest configured name it starts with (a server's name may
    hold a `/`), else what comes before its first `/`."""
    text = entry.strip()
    found = [name for name in servers if text.startswith(f"{name}/")]
    return max(found, key=len) if found else text.partition("/")[0]


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "an object"
    return "a list" if isinstance(value, list) else type(value).__name__


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"
