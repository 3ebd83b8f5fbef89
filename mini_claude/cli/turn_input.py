"""What a line the user typed becomes for the model, the same in `-p` and the REPL: a custom command (`/name args`,
mini_claude.agent.commands) is expanded, its `allowed-tools` allowed while it runs (a project's only in a trusted
folder; its ``!`cmd` `` and `@path` go through the session's gate, asked about where it asks, raising CommandStopped
when one is refused); a server prompt (`/mcp__server__prompt args`) is rendered into the turn; `@server:uri` mentions
attach their resources; resources the session subscribed to that changed since the last turn are attached again,
fresh."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mini_claude.agent.commands import Expansion, command_rules, expand_command
from mini_claude.agent.loop import RunOutcome
from mini_claude.cli.terminal.render import TerminalUI
from mini_claude.errors import ConfigError, McpError
from mini_claude.mcp.host.prompts import PROMPT_PREFIX
from mini_claude.mcp.host.resources import find_mentions
from mini_claude.session.parts import SessionParts
from mini_claude.tools.shell import BashTool

__all__ = ["run_user_turn", "user_turn"]


async def run_user_turn(parts: SessionParts, text: str, ui: TerminalUI) -> RunOutcome:
    """Run one typed line as a turn of the agent (see the module docstring)."""
    head, _, rest = text.strip().partition(" ")
    command = parts.commands.get(head) if text.startswith("/") else None
    if command is None:
        return await parts.agent.run(await user_turn(parts, text, ui))
    shell = next((t for t in parts.agent.tools() if isinstance(t, BashTool)), BashTool())  # the session's env
    with command_rules(parts.gate, command, trusted=parts.trusted):  # its allowed-tools, for this run alone
        expansion = await expand_command(command, rest, gate=parts.gate, shell=shell, ctx=parts.agent.ctx,
                                         hooks=parts.hooks)
        for problem in expansion.problems:
            ui.warn(problem)
        return await parts.agent.run(await _command_turn(parts, expansion, ui))


async def _command_turn(parts: SessionParts, expansion: Expansion, ui: TerminalUI) -> str | list[dict[str, Any]]:
    """The turn for an expanded custom command: its text as any typed line, then the `@` files it attached. An
    `@server:uri` is read only when the command itself wrote it and the rules allow the read unasked: no one typed
    it, and a command's `!` output (a commit message, a file) must not choose what a server reads."""
    host = parts.host
    own = set(find_mentions(expansion.own_text, set(host.resources.manager.states))) \
        if host is not None and host.resources.manager is not None else set()

    def refused(server: str, uri: str) -> str | None:
        if (server, uri) not in own:
            return "the command's own text does not name it (a command's output did)"
        return parts.gate.unasked_resource_read(server)

    # a server prompt only when the command itself starts with it, never because of what its `!` commands printed
    turn = await user_turn(parts, expansion.text, ui, refused=refused,
                           prompts=expansion.own_text.lstrip().startswith(PROMPT_PREFIX))
    if not expansion.attachments:
        return turn
    blocks = [{"type": "text", "text": turn}] if isinstance(turn, str) else list(turn)
    return [*blocks, *expansion.attachments]


async def user_turn(parts: SessionParts, text: str, ui: TerminalUI,
                    refused: Callable[[str, str], str | None] | None = None,
                    prompts: bool = True) -> str | list[dict[str, Any]]:
    """The turn for `text`. Raises ConfigError for an unknown prompt command or bad arguments, McpError when the
    server could not render it; a mention that cannot be read is a warning line and is left out. `refused(server,
    uri)` says why a mention is not read; by default only a deny rule for that server stops what the user typed.
    Without `prompts` a leading `/mcp__server__prompt` is text like any other."""
    host = parts.host
    if host is None:
        return text
    spill_dir = parts.agent.ctx.spill_dir
    if prompts and text.startswith(PROMPT_PREFIX):
        head = text.split(maxsplit=1)[0]
        rendered = await host.prompts.render(text, spill_dir=spill_dir)
        if rendered is None:
            known = ", ".join(c.command for c in await host.prompts.commands()) or "none"
            raise ConfigError(f"no MCP prompt {head} (available: {known})")
        return rendered
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}]
    attached = await host.resources.attach_mentions(
        text, spill_dir=spill_dir, refused=refused or (lambda server, _uri: parts.gate.server_refused(server)))
    for problem in attached.problems:
        ui.warn(problem)
    blocks.extend(attached.blocks)
    for server, uri in host.resources.take_updates():
        try:
            fresh = await host.resources.read_blocks(server, uri, spill_dir=spill_dir)
        except McpError as exc:
            ui.warn(f"{server} resource {uri} changed but could not be read again: {exc}")
            continue
        blocks.append({"type": "text", "text": f"[{server} resource {uri} changed; its contents now]"})
        blocks.extend(fresh)
    if parts.apps is not None:  # what MCP Apps views asked the model to know, once
        blocks.extend(parts.apps.take_model_context())
    return text if len(blocks) == 1 else blocks
