"""Server prompts as slash commands: `/mcp__<server>__<prompt> [args]` (the same qualified names as tools).

Arguments are positional, in the order the prompt declares them, or `name=value` (shell quoting applies);
a missing required argument, an unknown name or one too many is refused with a message naming what the prompt
takes. The rendered messages (text, images, embedded resources) become the user's turn, in order.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from mini_claude.errors import ConfigError, McpError
from mini_claude.mcp.content import convert_result
from mini_claude.mcp.host.completion import complete
from mini_claude.mcp.manager import McpManager
from mini_claude.mcp.naming import qualify_tool_name
from mini_claude.mcp.protocol import CallToolResult
from mini_claude.mcp.server_state import ServerStatus

__all__ = ["PROMPT_PREFIX", "PromptCommand", "PromptService", "parse_arguments"]

PROMPT_PREFIX = "/mcp__"
MAX_PROMPT_TOKENS = 25_000


class PromptCommand:
    """One server prompt as the user calls it."""

    def __init__(self, server: str, prompt: dict[str, Any]) -> None:
        self.server = server
        self.prompt = prompt
        self.name: str = prompt["name"]
        self.command = "/" + qualify_tool_name(server, self.name)
        raw = prompt.get("arguments")
        self.arguments: list[dict[str, Any]] = [a for a in raw if isinstance(a, dict)
                                                and isinstance(a.get("name"), str)] if isinstance(raw, list) else []

    @property
    def description(self) -> str:
        text = self.prompt.get("description")
        return text if isinstance(text, str) else ""

    def usage(self) -> str:
        names = [a["name"] if a.get("required") else f"[{a['name']}]" for a in self.arguments]
        return " ".join([self.command, *names])


def parse_arguments(command: PromptCommand, text: str) -> dict[str, str]:
    """`text` (what follows the command) → the prompt's arguments; ConfigError saying what is wrong."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise ConfigError(f"{command.command}: cannot read the arguments ({exc})") from None
    declared = [a["name"] for a in command.arguments]
    values: dict[str, str] = {}
    positional = iter(declared)
    for word in words:
        name, sep, value = word.partition("=")
        if sep and name in declared:
            values[name] = value
            continue
        slot = next((n for n in positional if n not in values), None)
        if slot is None:
            raise ConfigError(f"{command.command}: too many arguments (usage: {command.usage()})")
        values[slot] = word
    missing = [a["name"] for a in command.arguments if a.get("required") and a["name"] not in values]
    if missing:
        raise ConfigError(f"{command.command}: missing required argument{'s' if len(missing) > 1 else ''} "
                          f"{', '.join(missing)} (usage: {command.usage()})")
    return values


class PromptService:
    """Prompts of the manager's ready servers (`bind` the manager once it exists)."""

    def __init__(self) -> None:
        self.manager: McpManager | None = None
        self._listed: dict[str, list[PromptCommand]] = {}

    def bind(self, manager: McpManager) -> None:
        self.manager = manager

    def forget(self, server: str) -> None:
        """A server's prompts changed (`notifications/prompts/list_changed`) or it went away: list again."""
        self._listed.pop(server, None)

    async def commands(self) -> list[PromptCommand]:
        """Every ready server's prompts (listed once per server until it changes)."""
        manager = self.manager
        if manager is None:
            return []
        found: list[PromptCommand] = []
        for state in manager.states.values():
            client = state.client
            if state.status is not ServerStatus.READY or client is None or "prompts" not in client.server_capabilities:
                continue
            if state.name not in self._listed:
                try:
                    listed = await client.list_prompts()
                except McpError:
                    continue  # a failed listing leaves this server's prompts out; the next call tries again
                self._listed[state.name] = [PromptCommand(state.name, p) for p in listed
                                            if isinstance(p.get("name"), str)]
            found.extend(self._listed[state.name])
        return found

    def cached(self) -> list[PromptCommand]:
        """The prompts listed so far (for completion, which must not wait)."""
        return [c for listed in self._listed.values() for c in listed]

    async def complete_argument(self, command: PromptCommand, name: str, value: str,
                                context: dict[str, str]) -> list[str]:
        """`completion/complete` for one argument of a prompt; [] when the server does not complete or fails."""
        return await complete(self.manager, command.server, {"type": "ref/prompt", "name": command.name}, name,
                              value, context)

    async def find(self, command: str) -> PromptCommand | None:
        return next((c for c in await self.commands() if c.command == command), None)

    async def render(self, text: str, *, spill_dir: Path) -> list[dict[str, Any]] | None:
        """The user's turn for a `/mcp__…` line; None when no server prompt has that name."""
        head, _, rest = text.strip().partition(" ")
        command = await self.find(head)
        if command is None:
            return None
        arguments = parse_arguments(command, rest)
        assert self.manager is not None
        client = await self.manager.connected_client(command.server)
        rendered = await client.get_prompt(command.name, arguments)
        blocks: list[dict[str, Any]] = []
        for message in rendered["messages"]:
            content = message.get("content") if isinstance(message, dict) else None
            items = content if isinstance(content, list) else [content]
            result = CallToolResult(content=[c for c in items if isinstance(c, dict)], structured_content=None,
                                    is_error=False, raw={})
            converted = convert_result(result, spill_dir=spill_dir, stem=f"{command.server}-prompt",
                                       max_output_tokens=MAX_PROMPT_TOKENS)
            blocks.extend(converted.blocks)
        if not blocks or blocks[0].get("type") != "text":
            blocks.insert(0, {"type": "text", "text": f"{command.command} {rest}".strip()})
        return blocks
