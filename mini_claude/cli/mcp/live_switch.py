"""The REPL's `/mcp enable|disable [NAME | NAME/TOOL | NAME/*] [-s user|project|local]`: a switch written where
`mini-claude mcp enable|disable` writes it (cli/mcp/toggles.py; the same defaults: a tool in the local file, a
server without `-s` in ~/.claude.json's list for this project, Claude Code's place) and applied to the running
session at once: a server switched off is stopped, one switched on is started when a session started now would
start it (nothing else holds it: `resolve_approvals` decides, as at start), a tool switched off leaves the next
request's tool list (the session's `ToolSwitches`), one switched on comes back.

Without NAME, a picker lists every server and the tools of each running one, with its state and what it costs in
a request; Enter switches the row under the cursor and the picker comes back (Esc ends). Every row's detail says
what the switch saves (or adds) in tokens: measured on the listed definitions, or for a server that is off on its
tools as they were last listed (their pins). Every piece of server text goes through `clean`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mini_claude.cli.terminal.picker import Option
from mini_claude.cli.terminal.render import TerminalUI, clean
from mini_claude.errors import ConfigError
from mini_claude.mcp.config import LoadedConfig
from mini_claude.mcp.host import McpHost
from mini_claude.mcp.manager import McpManager, ServerState, ServerStatus
from mini_claude.mcp.naming import qualify_tool_name
from mini_claude.mcp.server_state import McpToolEntry
from mini_claude.mcp.tool_switches import ToolSwitches, disabled_tools, last_listed_tools, parse_tool_entry
from mini_claude.paths import user_home
from mini_claude.settings_rules import SCOPES
from mini_claude.tools.mcp_tool import McpToolAdapter
from mini_claude.tools.tool_search import DeferredTools

__all__ = ["SWITCH_USAGE", "LiveSwitches", "server_off_tokens", "split_scope", "switch_command"]

CHARS_PER_TOKEN = 4  # the definitions' estimate (tools/tool_search.py `definition_tokens`)
SWITCH_USAGE = "usage: /mcp enable|disable [NAME | NAME/TOOL | NAME/*] [-s user|project|local]"
Chooser = Callable[[str, Sequence[Option], int], Awaitable["int | None"]]


@dataclass
class LiveSwitches:
    """What a switch needs of the running session."""

    manager: McpManager
    ui: TerminalUI
    cwd: Path
    switches: ToolSwitches | None = None  # the session's live tool switches (None: nothing to switch live)
    choose: Chooser | None = None  # the REPL's picker (None: no picker, NAME is needed)
    host: McpHost | None = None
    deferred: DeferredTools | None = None
    trusted: bool = False  # the folder is trusted: its project files' approval keys count
    trust_all: bool = False  # the session was started with --trust-project-mcp: every project server is approved
    flag: tuple[str, Mapping[str, Any]] | None = None  # the session's --settings layer (display, raw)


def split_scope(words: Sequence[str]) -> tuple[list[str], str | None]:
    """(`words` without `-s SCOPE` / `--scope SCOPE` / `--scope=SCOPE`, the scope or None); ValueError for a
    missing or unknown scope, or two of them."""
    rest: list[str] = []
    scope: str | None = None
    it = iter(words)
    for word in it:
        value: str | None
        if word in ("-s", "--scope"):
            value = next(it, None)
        elif word.startswith("--scope="):
            value = word.partition("=")[2]
        else:
            rest.append(word)
            continue
        if value not in SCOPES:
            raise ValueError(f"-s takes one of {', '.join(SCOPES)}")
        if scope is not None:
            raise ValueError("give -s once")
        scope = value
    return rest, scope


async def switch_command(live: LiveSwitches, action: str, words: Sequence[str]) -> None:
    """`/mcp enable|disable …` (`action` is "enable" or "disable", `words` what follows it)."""
    try:
        names, scope = split_scope(words)
    except ValueError as exc:
        live.ui.warn(f"{exc}; {SWITCH_USAGE}")
        return
    if len(names) > 1:
        live.ui.warn(SWITCH_USAGE)
        return
    if names:
        await switch_one(live, names[0], enabled=action == "enable", scope=scope)
        return
    if live.choose is None:
        live.ui.warn(SWITCH_USAGE)
        return
    await pick_and_switch(live, scope)


async def switch_one(live: LiveSwitches, name: str, *, enabled: bool, scope: str | None) -> None:
    """Switch one server or tool, in its file and in this session; what happened is said on `live.ui`."""
    try:
        if "/" in name and name not in live.manager.states:  # a server's own name may hold a `/`: it is the server
            _switch_tool(live, name, enabled, scope)
        else:
            await _switch_server(live, name, enabled, scope)
    except ConfigError as exc:  # a file that cannot be written (a symlink, not a list, unreadable)
        live.ui.warn(str(exc))


def _switch_tool(live: LiveSwitches, entry: str, enabled: bool, scope: str | None) -> None:
    from mini_claude.cli.mcp.toggles import tool_switch

    try:
        server, tool = parse_tool_entry(entry)
    except ValueError as exc:
        live.ui.warn(str(exc))
        return
    entry = f"{server}/{tool}"
    cost = _tool_cost(live, server, tool)
    home = user_home(live.manager.env)
    done = tool_switch(entry, enabled=enabled, scope=scope, cwd=live.cwd, home=home)
    flag_holds = enabled and live.flag is not None and \
        any(listed in (entry, f"{server}/*") for listed in disabled_tools([live.flag[1]]))
    if not done.done:
        live.ui.warn(done.message)
        return
    if flag_holds and live.flag is not None:
        live.ui.warn(f"{done.message}, but {live.flag[0]} (--settings) still lists it: it stays off in this session")
        return
    if live.switches is not None:
        live.switches.switch(entry, on=enabled)
    saving = f"; {'adds' if enabled else 'saves'} ~{cost} tokens a request" if cost else ""
    live.ui.info(f"{done.message}, from the next request on{saving}")


async def _switch_server(live: LiveSwitches, name: str, enabled: bool, scope: str | None) -> None:
    from mini_claude.cli.mcp.toggles import server_switch
    from mini_claude.mcp.config_edit import set_server_enabled

    manager = live.manager
    state = manager.states.get(name)
    if state is None:
        known = ", ".join(sorted(manager.states)) or "none"
        live.ui.warn(f"no MCP server named {name!r} (configured: {known})")
        return
    home = user_home(manager.env)
    if scope is None:  # as `mini-claude mcp enable|disable NAME`: ~/.claude.json's list for this project
        path = set_server_enabled(name, enabled, cwd=live.cwd, home=home)
        message, done = f"{'enabled' if enabled else 'disabled'} MCP server {name!r} for this project " \
                        f"(remembered in {path})", True
    else:
        switched = server_switch(name, enabled=enabled, scope=scope, cwd=live.cwd, home=home, env=dict(manager.env),
                                 config=state.config)
        message, done = switched.message, switched.done
    if not enabled:
        cost = _server_cost(live, state)
        await manager.set_enabled(name, False)
        live.ui.info(f"{message}; stopped" + (f", saves ~{cost} tokens a request" if cost else ""))
        return
    if not done:
        live.ui.warn(message)
        return
    if state.status not in (ServerStatus.DISABLED, ServerStatus.NEEDS_APPROVAL):
        live.ui.info(f"{message}; it is {state.status.label} in this session")
        return
    held = await _hold_now(live, state)
    if held is not None:
        live.ui.warn(f"{message}, but it stays off: {held}")
        return
    # said once the start is over (the REPL announces the server's states as they come)
    state = await manager.set_enabled(name, True, lift_hold=True)
    if state.status is ServerStatus.READY:
        cost = _server_cost(live, state)
        live.ui.info(f"{message}; started" + (f", adds ~{cost} tokens a request" if cost else ""))
    else:
        live.ui.warn(f"{message}; it did not start: {state.status.label}" + (f" ({state.error})" if state.error
                                                                              else ""))


async def _hold_now(live: LiveSwitches, state: ServerState) -> str | None:
    """Why a session started here now would still hold the server back (None: it would start it)."""
    from mini_claude.session.start import resolve_approvals
    from mini_claude.settings import load_settings
    from mini_claude.settings_trust import without_project_widening

    if state.config.disabled:
        return f'"disabled": true in {state.config.source}'
    env = dict(live.manager.env)
    flag = (live.flag[0], dict(live.flag[1])) if live.flag is not None else None
    settings = load_settings(cwd=live.cwd, home=user_home(env), flag=flag)
    if not live.trusted:
        settings, _ignored = without_project_widening(settings)
    held = await resolve_approvals(LoadedConfig(servers={state.name: state.config}), settings, cwd=live.cwd,
                                   env=env, trust_all=live.trust_all, ask=None, trusted=live.trusted)
    return held[state.name][1] if state.name in held else None


# ---- the picker ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Row:
    option: Option
    target: str  # "server" or "server/tool"; "" for a row that cannot be switched (a tool named `*`)
    on: bool


async def pick_and_switch(live: LiveSwitches, scope: str | None) -> None:
    """The picker: Enter switches the row under the cursor (on ↔ off) and shows the list again; Esc ends."""
    assert live.choose is not None
    where = _where(live, scope)
    at = 0
    while True:
        rows = _rows(live)
        if not rows:
            live.ui.info("no MCP servers configured (see `mini-claude mcp add --help`)")
            return
        chosen = await live.choose(f"MCP servers and tools: Enter switches one on or off ({where}); Esc when done",
                                   [row.option for row in rows], min(at, len(rows) - 1))
        if chosen is None:
            return
        row = rows[chosen]
        at = chosen
        if not row.target:
            live.ui.warn(clean(row.option.detail))
            continue
        await switch_one(live, row.target, enabled=not row.on, scope=scope)


def _where(live: LiveSwitches, scope: str | None) -> str:
    from mini_claude.settings_rules import local_switch_files, settings_file

    home = user_home(live.manager.env)
    if scope is None:
        return f"saved: servers in ~/.claude.json for this project, tools in {local_switch_files(live.cwd, home)[0].display}"
    file = local_switch_files(live.cwd, home)[0] if scope == "local" else settings_file(scope, cwd=live.cwd, home=home)
    return f"saved in {file.display}"


def _rows(live: LiveSwitches) -> list[_Row]:
    rows: list[_Row] = []
    budgets = live.deferred.budget() if live.deferred is not None else {}
    for state in live.manager.states.values():
        on = state.status is not ServerStatus.DISABLED
        tools = _tool_costs(live, state.name) if state.status is ServerStatus.READY else {}
        switched = live.switches
        offered = {tool: cost for tool, cost in tools.items()
                   if switched is None or not switched.is_off(state.name, tool)}
        if state.status is ServerStatus.READY:
            total = _server_cost(live, state)
            deferred = budgets.get(state.name)
            note = " (deferred behind ToolSearch: each is sent once found)" if deferred and deferred.deferred else ""
            detail = f"{len(offered)} of {_count(len(tools), 'tool')} on, ~{total} tokens a request{note}; " \
                     f"off saves ~{total} tokens"
        elif on:
            detail = f"{state.status.label}; off: not started again"
        else:
            last = server_off_tokens(live.manager, state)
            detail = f"on adds ~{last} tokens a request (its tools as last listed)" if last is not None else \
                "on: what it costs is known once it has listed its tools"
        state_word = "on" if state.status is ServerStatus.READY else state.status.label
        # a row's name is what its switch targets: shown exactly (made visible), so an invisible look-alike a
        # server lists (`poke` + U+200B) never reads as the tool it imitates
        rows.append(_Row(Option(clean(f"{'●' if on else '○'} {state.name}  {state_word}", visible=True),
                                clean(detail)),
                         state.name, on))
        for tool, cost in tools.items():
            tool_on = tool in offered
            detail = f"~{cost} tokens; off saves them" if tool_on else f"off; on adds ~{cost} tokens a request"
            target = f"{state.name}/{tool}"
            if tool == "*":  # `SERVER/*` means every tool of the server: a tool named `*` cannot be switched alone
                detail, target = f"a tool named * cannot be switched alone ({state.name}/* is every tool)", ""
            rows.append(_Row(Option(clean(f"    {'●' if tool_on else '○'} {state.name}/{tool}", visible=True),
                                    clean(detail)),
                             target, tool_on))
    return rows


def _tool_chars(live: LiveSwitches, server: str) -> dict[str, int]:
    """Each model-visible tool of a ready server → its definition's JSON characters in a request (as sent)."""
    return {entry.tool.name: McpToolAdapter(live.manager, entry, live.host).definition_chars
            for entry in live.manager.server_tools(server) if entry.tool.model_visible}


def _tool_costs(live: LiveSwitches, server: str) -> dict[str, int]:
    """Each model-visible tool of a ready server → its definition's tokens (4 characters a token)."""
    return {tool: chars // CHARS_PER_TOKEN for tool, chars in _tool_chars(live, server).items()}


def _tool_cost(live: LiveSwitches, server: str, tool: str) -> int:
    chars = _tool_chars(live, server)
    return (sum(chars.values()) if tool == "*" else chars.get(tool, 0)) // CHARS_PER_TOKEN


def _server_cost(live: LiveSwitches, state: ServerState) -> int:
    """What the server's tools that are on cost a request now (0 when it is not running): their characters
    summed, then 4 a token, as `mcp list` and `/context` measure a server."""
    if state.status is not ServerStatus.READY:
        return 0
    switches = live.switches
    return sum(chars for tool, chars in _tool_chars(live, state.name).items()
               if switches is None or not switches.is_off(state.name, tool)) // CHARS_PER_TOKEN


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def server_off_tokens(manager: McpManager, state: ServerState) -> int | None:
    """What a server that is off would cost a request: its model-visible tools as last listed (their pins),
    measured as the session measures a running server's; None when they are not known."""
    tools = last_listed_tools(manager.pins.store, manager.pins.key_for(state.config))
    if tools is None:
        return None
    entries = [McpToolEntry(state.name, tool, qualify_tool_name(state.name, tool.name)) for tool in tools]
    return sum(McpToolAdapter(manager, entry).definition_chars for entry in entries
               if entry.tool.model_visible) // CHARS_PER_TOKEN
