"""Showing and accepting changed MCP tool definitions and server instructions (the pinning of
mini_claude/mcp/pinning.py) in the terminal.

Three front ends share these: `-p` (one warning line per server for its tools, one for its instructions:
`session.parts.report_review`, shown through the terminal's `clean`), the REPL (a question per server with the
diff before the next turn: `ask_review`; `/mcp accept
NAME`: `accept_in_session`) and `mini-claude mcp accept NAME [--yes]` (`accept_command`). Accepting takes a
server's withheld tools and its withheld instructions together, after showing both diffs. Every piece of server
text (tool names, descriptions, schemas, instructions) goes through `clean` on its way to the screen.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TextIO

from mini_claude.cli.terminal.render import TerminalUI, clean
from mini_claude.mcp.manager import McpManager, ServerStatus
from mini_claude.mcp.pinning import InstructionsChange, ToolChange

__all__ = ["accept_command", "accept_in_session", "ask_review", "changed_lines"]

EXIT_OK = 0
EXIT_DECLINED = 1  # the user said no at the prompt: nothing was pinned
EXIT_UNREACHABLE = 2  # as `mcp call`: the server is not ready
EXIT_NEEDS_YES = 3  # as a usage error: no terminal to ask on, and no --yes


def changed_lines(server: str, changes: Sequence[ToolChange], instructions: InstructionsChange | None = None
                  ) -> list[str]:
    """A heading and each changed tool's diff (accepted → now), then the instructions' (when they changed too),
    neutralised for the terminal."""
    lines: list[str] = []
    if changes:
        noun = "tool definition" if len(changes) == 1 else "tool definitions"
        lines.append(clean(f"MCP server {server!r}: {len(changes)} {noun} changed since accepted (withheld from the "
                           "model):"))
    for change in changes:
        lines.extend("  " + clean(line) for line in change.diff(server).splitlines())
        if not change.pinnable:
            lines.append(clean(f"  (tool {change.name!r} is too deeply nested to pin: it stays withheld)"))
    if instructions is not None:
        lines.append(clean(f"MCP server {server!r}: its instructions changed since accepted (withheld from the "
                           "system prompt):"))
        lines.extend("  " + clean(line) for line in instructions.diff(server).splitlines())
    return lines


def _accepted_names(changes: Sequence[ToolChange], instructions: InstructionsChange | None) -> list[str]:
    return [change.name for change in changes] + ([instructions.name] if instructions is not None else [])


async def ask_review(manager: McpManager, server: str, ask: Callable[[str], Awaitable[bool]], ui: TerminalUI,
                     out: TextIO) -> None:
    """Interactive: show what a server's withheld tools changed (as they are now) and ask once; yes pins the new
    definitions, no keeps them withheld for this session."""
    state = manager.states.get(server)
    instructions = manager.pins.withheld_instructions(server)
    if state is None or state.status is not ServerStatus.READY or not (state.withheld or instructions):
        return  # accepted meanwhile (/mcp accept), or the server went down
    print("\n".join(changed_lines(server, state.withheld, instructions)), file=out)
    what = "tools" if not instructions else "tools and instructions" if state.withheld else "instructions"
    if await ask(clean(f"Accept the new definitions of {server}'s {what}?")):
        accepted = _accepted_names(manager.accept_changed(server), instructions)
        ui.info(clean(f"accepted: {', '.join(accepted)} (MCP server {server!r})"))
    else:
        ui.info(clean(f"kept withheld for this session; `/mcp accept {server}` or "
                      f"`mini-claude mcp accept {server}` accepts them later"))


def accept_in_session(manager: McpManager, server: str, ui: TerminalUI, out: TextIO) -> None:
    """`/mcp accept NAME`: show the diff and pin the current definitions (typing the command is the consent)."""
    state = manager.states.get(server)
    if state is None:
        known = ", ".join(sorted(manager.states)) or "none"
        ui.warn(clean(f"no MCP server named {server!r} (configured: {known})"))
        return
    instructions = manager.pins.withheld_instructions(server)
    if not state.withheld and instructions is None:
        ui.info(clean(f"nothing to accept: MCP server {server!r} has no withheld tools"))
        return
    print("\n".join(changed_lines(server, state.withheld, instructions)), file=out)
    accepted = _accepted_names(manager.accept_changed(server), instructions)
    ui.info(clean(f"accepted: {', '.join(accepted) or 'nothing'} (MCP server {server!r})"))


def accept_command(manager: McpManager, server: str, *, yes: bool, stdin: TextIO, out: TextIO, err: TextIO) -> int:
    """`mini-claude mcp accept NAME`: the server is connected (and reviewed) already. Show the diff; pin after a
    yes at the prompt (when `stdin` is a terminal) or with `--yes`. Returns the exit code."""
    ask = _terminal_question(stdin, out) if stdin.isatty() else None
    state = manager.states[server]
    if state.status is not ServerStatus.READY:
        err.write(clean(f"mini-claude mcp: {server}: {state.status.value}: {state.error}") + "\n")
        return EXIT_UNREACHABLE
    instructions = manager.pins.withheld_instructions(server)
    if not state.withheld and instructions is None:
        count = len(state.tools)
        print(clean(f"Nothing to accept: the {count} tool{'s' if count != 1 else ''} of MCP server {server!r} "
                    "match their accepted definitions."), file=out)
        return EXIT_OK
    print("\n".join(changed_lines(server, state.withheld, instructions)), file=out)
    if not yes:
        if ask is None:
            err.write(f"mini-claude mcp: not accepted: no terminal to ask on; run `mini-claude mcp accept {server}"
                      " --yes` to accept these definitions\n")
            return EXIT_NEEDS_YES
        if not ask("Accept these definitions? [y/N] "):
            print("Nothing accepted; the changed tools stay withheld.", file=out)
            return EXIT_DECLINED
    accepted = _accepted_names(manager.accept_changed(server), instructions)
    if accepted:
        names = ", ".join(accepted)
        print(clean(f"Accepted {names}: MCP server {server!r} offers {'it' if len(accepted) == 1 else 'them'} "
                    "again."), file=out)
    # what is still withheld could not be pinned (or changed again meanwhile): not a full success
    return EXIT_OK if not state.withheld and manager.pins.withheld_instructions(server) is None else EXIT_DECLINED


def _terminal_question(stdin: TextIO, out: TextIO) -> Callable[[str], bool]:
    def ask(question: str) -> bool:
        out.write(question)
        out.flush()
        return stdin.readline().strip().lower().startswith("y")
    return ask
