"""The REPL's questions to the user at its prompt: a y/n-style choice, a typed line (an elicitation field), which
saved session to resume, whether to trust the folder, whether to start a project MCP server, and the permission
question for a tool call (with the Notification hooks beside it, and Ctrl+C there denying the call and ending the
turn). `ReplQuestions` is `Repl`'s base (cli/repl.py): it asks through the Repl's prompt_toolkit session, pausing
the Esc watcher while the user answers.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mini_claude.agent.sessions import SessionInfo
from mini_claude.cli.keys import EscapeWatcher
from mini_claude.cli.questions.approval import server_approval_prompt
from mini_claude.cli.questions.permission import BLOCK_VIEW, PromptAnswers, permission_question
from mini_claude.cli.repl_apps import ReplApps
from mini_claude.cli.resume import age
from mini_claude.cli.terminal.picker import Option, pick
from mini_claude.cli.terminal.render import TerminalUI, clean, one_line
from mini_claude.mcp.config import ServerConfig
from mini_claude.permissions.answers import AskContext, PermissionAnswer
from mini_claude.permissions.rules import claude_tool_name
from mini_claude.trust import trust_question

__all__ = ["ReplQuestions"]


class ReplQuestions:
    """The questions half of `Repl`: what they use of it is declared here, set by `Repl.__init__` and `Repl.run`."""

    ui: TerminalUI
    parts: Any  # SessionParts
    _session: Any  # the prompt_toolkit PromptSession
    _keys: EscapeWatcher
    _turn: asyncio.Task[Any] | None
    _questions: asyncio.Lock
    _background: set[asyncio.Future[Any]]
    _interrupted_at_prompt: bool
    _at_prompt: bool  # the user is typing at "> "
    _apps: ReplApps  # MCP Apps views: a view's question at the prompt makes the prompt step aside
    _sigint: Callable[[bool], None]
    _interrupt: Callable[[], None]

    async def _ask(self, question: str, choices: dict[str, str]) -> str:
        keys = "/".join(choices)
        while True:
            try:
                with self._keys.paused(), self.ui.paused():  # the answer keys go to the question; no spinner
                    answer = (await self._session.prompt_async(f"{question} [{keys}] ")).strip().lower()
            except (KeyboardInterrupt, EOFError):
                self._interrupted_at_prompt = True
                return choices["n"]
            finally:
                if self._turn is not None:
                    self._sigint(True)
            if answer[:1] in choices:
                return choices[answer[:1]]

    async def pick_session(self, saved: list[SessionInfo]) -> SessionInfo | None:
        """The arrow-key picker of saved sessions (newest first): each one's first prompt, its age and size."""
        options = [Option(clean(one_line(info.first_prompt or "(no prompt)")),
                          clean(f"{age(info.modified)} · {max(1, info.size // 1024)} KB")) for info in saved]
        with self._keys.paused():
            chosen = await pick("Resume which conversation?", options, typed=self._prompt_text)
        return None if chosen is None else saved[chosen]

    async def confirm(self, question: str) -> bool:
        return await self._yes(question)

    async def typed(self, label: str) -> str | None:
        return await self._prompt_text(label)

    async def _prompt_text(self, label: str) -> str | None:
        """A line typed by the user (an elicitation field); None when dismissed with Ctrl+C / Ctrl+D."""
        try:
            with self._keys.paused(), self.ui.paused():
                return str(await self._session.prompt_async(label))
        except (KeyboardInterrupt, EOFError):
            return None
        finally:
            if self._turn is not None:
                self._sigint(True)

    async def _yes(self, question: str) -> bool:
        return await self._ask(question, {"y": "yes", "n": "no"}) == "yes"

    async def _ask_trust(self, folder: Path, ignored: list[str]) -> bool:
        print("\n".join(clean(line) for line in trust_question(folder, ignored)), file=sys.stderr)
        return await self._ask("Do you trust the files in this folder?", {"y": "yes", "n": "no"}) == "yes"

    async def _ask_server(self, cfg: ServerConfig) -> str:
        print("\n".join(server_approval_prompt(cfg, Path.cwd())), file=sys.stderr)
        return await self._ask("Start it?", {"y": "approve", "a": "approve-all", "n": "deny"})

    async def _ask_permission(self, tool: Any, args: dict[str, Any],
                              context: AskContext | None = None) -> str | PermissionAnswer:
        view = context.view if context is not None else None
        if view is not None and self._apps.refusing(view):
            return self._apps.refusal(view)
        if self._at_prompt:  # a view's tool call while the user is at the prompt: the prompt steps aside
            return await self._apps.between_prompts(lambda: self._ask_permission(tool, args, context))
        hooks = self.parts.hooks
        if hooks is not None:  # Notification hooks, beside the question (a desktop ping must not delay it)
            task = asyncio.ensure_future(hooks.notification(f"Claude needs your permission to use {claude_tool_name(tool.name)}",
                                                            "permission_prompt"))
            self._background.add(task)
            task.add_done_callback(self._background.discard)
        async with self._questions:
            if view is not None and self._apps.refusing(view):  # blocked while this question waited its turn
                return self._apps.refusal(view)
            return await self._permission_question(tool, args, view)

    async def _permission_question(self, tool: Any, args: dict[str, Any],
                                   view: str | None = None) -> str | PermissionAnswer:
        self._interrupted_at_prompt = False
        answer = await permission_question(self.parts.gate, tool, args, PromptAnswers(
            ask=self._ask, prompt_text=self._prompt_text, ui=self.ui, trusted=self.parts.trusted,
            interrupted=self._interrupted_then_end_turn), view=view)
        if answer == BLOCK_VIEW and view is not None:
            self._apps.refuse(view)
            return self._apps.refusal(view)
        return answer

    def _interrupted_then_end_turn(self) -> bool:
        """Ctrl+C at a permission prompt: deny this call and end the turn."""
        if self._interrupted_at_prompt:
            self._interrupt()
        return self._interrupted_at_prompt
