"""REPL completion: slash commands, server prompts (`/mcp__server__prompt`) and their arguments (the server's
`completion/complete`), and `@server:uri` resource mentions. Names come from what the host listed already;
argument values are asked of the server as the user types (bounded, never blocking the prompt on failure)."""

from __future__ import annotations

import shlex
from collections.abc import AsyncGenerator, Iterable, Iterator
from typing import Any

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from mini_claude.cli.terminal.render import clean
from mini_claude.mcp.host import McpHost

__all__ = ["ReplCompleter"]


class ReplCompleter(Completer):
    def __init__(self, commands: Iterable[str], host: McpHost | None = None) -> None:
        self.commands = list(commands)
        self.host = host

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        text = document.text_before_cursor
        word = document.get_word_before_cursor(WORD=True)
        if text.startswith("/") and " " not in text:
            names = [*self.commands, *(c.command for c in self._prompts())]
            for name in names:
                if name.startswith(text):
                    yield Completion(name, start_position=-len(text))
            return
        if word.startswith("@") and self.host is not None:
            for mention in self.host.resources.cached_mentions():
                if mention.startswith(word):
                    yield Completion(mention, start_position=-len(word), display=clean(mention))

    async def get_completions_async(self, document: Document,
                                    complete_event: CompleteEvent) -> AsyncGenerator[Completion, None]:
        for completion in self.get_completions(document, complete_event):
            yield completion
        for completion in await self._argument_completions(document.text_before_cursor):
            yield completion
        for completion in await self._template_completions(document.get_word_before_cursor(WORD=True)):
            yield completion

    def _prompts(self) -> list[Any]:
        return self.host.prompts.cached() if self.host is not None else []

    async def _template_completions(self, word: str) -> list[Completion]:
        """`@server:` + a resource template: the template itself, then its first variable's values from the
        server's `completion/complete` (e.g. `@everything:demo://resource/dynamic/text/` → `…/text/1`)."""
        if not word.startswith("@") or self.host is None:
            return []
        found: list[Completion] = []
        for server, template in self.host.resources.cached_templates():
            head = f"@{server}:{template}"
            fixed, brace, rest = head.partition("{")
            if not brace or "}" not in rest:
                continue
            if fixed.startswith(word) and word != fixed:  # still typing the fixed part: offer the template
                found.append(Completion(fixed, start_position=-len(word), display=clean(head)))
            elif word.startswith(fixed):
                variable = rest.split("}", 1)[0]
                typed = word[len(fixed):]
                for value in await self.host.resources.complete_template(server, template, variable, typed):
                    found.append(Completion(fixed + value, start_position=-len(word), display=clean(value)))
        return found

    async def _argument_completions(self, text: str) -> list[Completion]:
        """Values for the argument being typed after a prompt command (positional or `name=`)."""
        head, sep, rest = text.partition(" ")
        command = next((c for c in self._prompts() if c.command == head), None) if sep else None
        if command is None or self.host is None or not command.arguments:
            return []
        try:
            words = shlex.split(rest)
        except ValueError:
            return []
        current = "" if rest.endswith(" ") or not rest else words.pop()
        declared = [a["name"] for a in command.arguments]
        context: dict[str, str] = {}
        positional = iter(declared)
        for word in words:
            key, eq, value = word.partition("=")
            slot = key if eq and key in declared else next(positional, None)
            if slot is not None:
                context[slot] = value if eq and key in declared else word
        name, eq, value = current.partition("=")
        if eq and name in declared:
            prefix = f"{name}="
        else:
            name = next((n for n in positional if n not in context), "")
            value, prefix = current, ""
        if not name:
            return []
        values = await self.host.prompts.complete_argument(command, name, value, context)
        return [Completion(prefix + shlex.quote(v) if " " in v else prefix + v, start_position=-len(current),
                           display=clean(v)) for v in values]
