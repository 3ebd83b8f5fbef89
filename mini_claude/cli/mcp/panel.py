"""The REPL's `/mcp`: the servers panel (status, transport, protocol version, what each offers, restarts) and its
actions — reconnect, enable / disable (cli/mcp/live_switch.py: a server or `SERVER/TOOL`, in the scope `-s` names
or the CLI's default, applied to the session at once; without a name, a picker of servers and tools), tools, log,
login / logout, accept. Everything a server wrote goes through `clean`."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from mini_claude.cli.mcp.live_switch import Chooser, LiveSwitches, server_off_tokens, switch_command
from mini_claude.cli.questions.pin_review import accept_in_session
from mini_claude.cli.terminal.render import TerminalUI, clean, one_line
from mini_claude.cli.terminal.status import server_line
from mini_claude.mcp.config import ServerConfig
from mini_claude.mcp.host import McpHost
from mini_claude.mcp.manager import McpManager, ServerState, ServerStatus
from mini_claude.mcp.tool_switches import ToolSwitches, server_off_note
from mini_claude.tools.mcp_tool import McpToolAdapter
from mini_claude.tools.tool_search import DeferredTools, ServerBudget, budget_note, off_note

if TYPE_CHECKING:
    from mini_claude.mcp.auth import Authorizer

__all__ = ["ACTIONS", "MCP_USAGE", "mcp_command"]

ACTIONS = ("login", "logout", "accept", "reconnect", "enable", "disable", "tools", "log")
MCP_USAGE = ("usage: /mcp | /mcp " + " | /mcp ".join(f"{a} NAME" for a in ACTIONS)
             + " | /mcp enable|disable NAME/TOOL [-s user|project|local] (no NAME: a picker)")
LOG_TAIL_LINES = 20

# builds the interactive half of a login for one server (tests pass a headless one)
AuthorizerFactory = Callable[[ServerConfig, TextIO], "Authorizer"]


async def mcp_command(manager: McpManager, args: str, ui: TerminalUI, *,
                      authorizer_for: AuthorizerFactory | None = None, out: TextIO | None = None,
                      host: McpHost | None = None, deferred: DeferredTools | None = None,
                      switches: ToolSwitches | None = None, choose: Chooser | None = None,
                      trusted: bool = False, flag: tuple[str, Mapping[str, Any]] | None = None,
                      trust_all: bool = False) -> None:
    """`/mcp [ACTION NAME]` (MCP_USAGE). Raises MiniClaudeError (one line) when a login fails; cancelling it
    (Ctrl+C) stops waiting for the browser and closes the redirect listener. `choose` is the REPL's picker
    (`/mcp enable|disable` without a name), `trusted` and `flag` the session's trust and --settings layer,
    `trust_all` its --trust-project-mcp (a project server switched on starts as it would have at start)."""
    stream = out if out is not None else sys.stdout
    words = args.split()
    if not words:
        _print_servers(manager, stream, host, deferred.budget() if deferred is not None else {},
                       deferred.switched_off() if deferred is not None else {})
        return
    if words[0] in ("enable", "disable"):
        live = LiveSwitches(manager, ui, Path.cwd(), switches=switches, choose=choose, host=host, deferred=deferred,
                            trusted=trusted, flag=flag, trust_all=trust_all)
        await switch_command(live, words[0], words[1:])
        return
    if len(words) != 2 or words[0] not in ACTIONS:
        ui.warn(MCP_USAGE)
        return
    action, name = words
    state = manager.states.get(name)
    if state is None:
        known = ", ".join(sorted(manager.states)) or "none"
        ui.warn(f"no MCP server named {name!r} (configured: {known})")
        return
    if action == "accept":
        accept_in_session(manager, name, ui, stream)
        return
    if action in ("reconnect", "tools", "log"):
        await _server_action(manager, action, state, ui, stream, host)
        return
    if not state.is_remote:
        ui.warn(f"{name!r} is a {state.config.type} server; OAuth login is for http and sse servers")
        return
    from mini_claude.mcp.auth import TokenStore, login, logout

    store = TokenStore.default(manager.env)
    if action == "logout":
        forgot = logout(state.config, manager.env, store=store)
        ui.info(f"logged out of MCP server {name!r}" if forgot else f"no stored login for MCP server {name!r}")
        if forgot and state.status is ServerStatus.READY:
            # the running connection still holds the token in memory: reconnect so the session shows the truth
            await manager.restart(name)
        return
    if state.config.needs_project_approval() and state.status in (ServerStatus.NEEDS_APPROVAL,
                                                                   ServerStatus.DISABLED):
        # a login talks to the server (discovery, registration) with its URL: only once the user approved it
        ui.warn(f"{name!r} is a project server that is {state.status.label}: nothing was sent to it; "
                "approve it first (answer yes when a session in this folder asks about it)")
        return
    factory = authorizer_for or _browser_authorizer
    ui.info(f"logging in to MCP server {name!r} (Ctrl+C cancels)")
    await login(state.config, manager.env, factory(state.config, stream), store=store)
    if state.status in (ServerStatus.DISABLED, ServerStatus.NEEDS_APPROVAL):
        ui.info(f"logged in to MCP server {name!r}; it is {state.status.label}, so it was not started")
        return
    ui.info(f"logged in to MCP server {name!r}; restarting it")
    # the new state is announced through the manager's on_change (the REPL prints it); say it again only when
    # nobody listens, so a caller without on_change still learns the outcome
    new = await manager.restart(name)
    if manager.on_change is None:
        print("  " + one_line(server_line(new)), file=stream)


def _print_servers(manager: McpManager, out: TextIO, host: McpHost | None = None,
                   budgets: Mapping[str, ServerBudget] | None = None,
                   off: Mapping[str, Sequence[McpToolAdapter]] | None = None) -> None:
    states = list(manager.states.values())
    if not states:
        print("  no MCP servers configured (see `mini-claude mcp add --help`)", file=out)
    for state in states:
        line = server_line(state)
        if state.status is ServerStatus.NEEDS_AUTH:
            line += f" — log in: /mcp login {state.name}"
        print("  " + one_line(line), file=out)
        details = _details(state, host, (budgets or {}).get(state.name))
        saved = off_note((off or {}).get(state.name, ()))
        if state.status is ServerStatus.DISABLED:  # what switching it off saves, as `mcp list` says
            saved = server_off_note(server_off_tokens(manager, state))
        print("    " + clean(f"{details} · {saved}" if saved else details), file=out)
    print("  actions: " + MCP_USAGE.removeprefix("usage: "), file=out)


def _details(state: ServerState, host: McpHost | None, budget: ServerBudget | None = None) -> str:
    """`stdio · protocol 2025-11-25 · 17 tools (~2.9k tokens, deferred), 4 prompts, resources · 1 restart`."""
    parts = [state.config.type]
    client = state.client
    if client is not None and client.protocol_version:
        parts.append(f"protocol {client.protocol_version}")
    if state.status is ServerStatus.READY:
        cost = budget_note(budget)
        counts = [f"{len(state.tools)} tool{'s' if len(state.tools) != 1 else ''}" + (f" ({cost})" if cost else "")]
        prompts = [c for c in host.prompts.cached() if c.server == state.name] if host is not None else []
        if client is not None and "prompts" in client.server_capabilities:
            counts.append(f"{len(prompts)} prompt{'s' if len(prompts) != 1 else ''}")
        if client is not None and "resources" in client.server_capabilities:
            counts.append("resources")
        parts.append(", ".join(counts))
    parts.append(f"{state.restarts} restart{'s' if state.restarts != 1 else ''}")
    return " · ".join(parts)


async def _server_action(manager: McpManager, action: str, state: ServerState, ui: TerminalUI, out: TextIO,
                         host: McpHost | None) -> None:
    name = state.name
    if action == "tools":
        for tool in state.tools:
            first = ((tool.description or "").strip().splitlines() or [""])[0]
            print(clean(f"  {tool.name}  {first[:120]}"), file=out)
        if not state.tools:
            print(clean(f"  {name} offers no tools now ({state.status.label})"), file=out)
    elif action == "log":
        path = host.logs.path(name) if host is not None else None
        if path is None or not path.exists():
            print(clean(f"  {name} has logged nothing so far"), file=out)
            return
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines()[-LOG_TAIL_LINES:]:
            print("  " + clean(line), file=out)
        print(clean(f"  (the whole log: {path})"), file=out)
    else:
        await manager.restart(name)


def _browser_authorizer(cfg: ServerConfig, out: TextIO) -> Authorizer:
    """Opens the browser (the URL is printed too) and waits, bounded, for the loopback redirect."""
    import webbrowser

    from mini_claude.mcp.auth import BrowserAuthorizer, OAuthSettings

    return BrowserAuthorizer(OAuthSettings.from_config(cfg).callback_port, open_browser=webbrowser.open, out=out)
