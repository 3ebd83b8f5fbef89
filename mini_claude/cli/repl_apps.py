"""MCP Apps in the REPL (`AppsFront`): a view's URL as one line, a view's message as the next turn, and the
questions a view causes (a permission for its tool call, a link to open) asked even while the user sits at the
prompt.

A view put on the page prints `view: URL  (opened in your browser | open it in a browser)` through the terminal's
neutralising path. A `ui/message` is queued as the next turn (at most `MAX_QUEUED` waiting), shown as coming from
the view before it runs, and goes to the model as plain text: never a command, `!`, `#` or `@` mention (repl.py).
At the prompt, the prompt steps aside for it at once. A question from a view at the prompt (`between_prompts`)
makes the prompt step aside too — what was typed comes back afterwards — and the question is asked in the usual
way; during a turn it waits its turn with the turn's own questions. The user may answer a view's permission
question with "refuse this server's views for the rest of the session" (`refuse`): from then on their calls that
would ask are refused without a question, and the terminal says so once.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from mini_claude.cli.terminal.neutral import clean, one_line
from mini_claude.errors import ViewRefusedError
from mini_claude.mcp.apps.service import ViewNotice
from mini_claude.mcp.apps.views import View
from mini_claude.permissions.answers import PermissionAnswer

__all__ = ["MAX_QUEUED", "SIDE_QUESTION", "ReplApps"]

MAX_QUEUED = 8
SIDE_QUESTION = "\x00mini-claude: a view's question\x00"  # what the prompt returns when it stepped aside
PROMPT_GONE_TIMEOUT_S = 5.0
T = TypeVar("T")


class ReplApps:
    """`session()`: the REPL's PromptSession; `at_prompt()`: the user is at "> "; `busy()`: a turn runs;
    `ask(question)`: a y/n question; `retype(text)`: what the next prompt starts with; `lock`: one question at a
    time."""

    def __init__(self, ui: Any, *, session: Callable[[], Any], at_prompt: Callable[[], bool],
                 busy: Callable[[], bool], ask: Callable[[str], Awaitable[bool]], retype: Callable[[str], None],
                 lock: asyncio.Lock) -> None:
        self.ui = ui
        self._busy = busy  # a turn (or a `!` command) runs: its questions are asked the usual way
        self._lock = lock  # the REPL's one-question-at-a-time lock
        self._session = session
        self._at_prompt = at_prompt
        self._ask = ask
        self._retype = retype
        self._messages: deque[tuple[str, str]] = deque()
        self._side = asyncio.Lock()  # one side question at a time
        self._prompt_gone = asyncio.Event()
        self._resume = asyncio.Event()
        self._refused: set[str] = set()  # servers whose views' questions the user refused for the session

    # ---- AppsFront -----------------------------------------------------------------------------------------------
    def view_shown(self, notice: ViewNotice) -> None:
        where = "opened in your browser" if notice.opened else "open it in a browser"
        self.ui.info(f"view: {notice.url}  ({where})")

    def note(self, text: str) -> None:
        self.ui.warn(text)

    async def user_message(self, view: View, text: str) -> None:
        if len(self._messages) >= MAX_QUEUED:
            raise ViewRefusedError(f"{MAX_QUEUED} messages already wait for the agent; try again later")
        self._messages.append((f"{view.server}/{view.tool.name}", text))
        if self._at_prompt():
            self._leave_prompt()

    async def confirm(self, question: str) -> bool:
        async def asked() -> bool:
            async with self._lock:
                # one line: a server's tool name in it cannot start a line that reads as a question of its own
                return await self._ask(one_line(question))
        return await self.between_prompts(asked)

    # ---- the REPL's side -----------------------------------------------------------------------------------------
    def refuse(self, server: str) -> None:
        """The user's answer: refuse the calls of `server`'s views that would ask, for the rest of the session."""
        if server not in self._refused:
            self._refused.add(server)
            self.ui.info(clean(f"calls from views of MCP server {server} that need your approval are refused for "
                               "the rest of this session", visible=True))

    def refusing(self, server: str) -> bool:
        return server in self._refused

    @staticmethod
    def refusal(server: str) -> PermissionAnswer:
        return PermissionAnswer(False, message="the user refuses this server's views' calls for the rest of the "
                                               "session")

    def next_message(self) -> str | None:
        """The next line a view sent, shown as coming from it; None when none waits."""
        if not self._messages:
            return None
        source, text = self._messages.popleft()
        self.ui.info(f"from view {source}: {text}")
        return text

    async def prompt_left(self) -> None:
        """The prompt returned SIDE_QUESTION: wait for the question that took it (if any) to be answered."""
        self._prompt_gone.set()
        if self._side.locked():
            await self._resume.wait()

    async def between_prompts(self, work: Callable[[], Awaitable[T]]) -> T:
        """Run `work` (a question) now: at the prompt, the prompt steps aside first and comes back after."""
        async with self._side:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + PROMPT_GONE_TIMEOUT_S
            while not self._at_prompt():  # between a turn and the next prompt: wait for the prompt
                if self._busy():
                    return await work()
                if loop.time() >= deadline:
                    raise ViewRefusedError("the terminal could not ask the user just now")
                await asyncio.sleep(0.05)
            self._prompt_gone.clear()
            self._resume.clear()
            self._leave_prompt()
            try:
                try:
                    await asyncio.wait_for(self._prompt_gone.wait(), PROMPT_GONE_TIMEOUT_S)
                except TimeoutError:
                    raise ViewRefusedError("the terminal could not ask the user just now") from None
                return await work()
            finally:
                self._resume.set()

    def _leave_prompt(self, tries: int = 100) -> None:
        """Make the prompt return SIDE_QUESTION (keeping what was typed); a prompt still starting is tried again
        shortly (every 50 ms, `tries` times) while there is still a reason to."""
        if not self._at_prompt() or not (self._messages or self._side.locked()):
            return
        session = self._session()
        if session is not None and session.app.is_running:
            self._retype(session.default_buffer.text)  # what the user was typing comes back
            with contextlib.suppress(Exception):  # prompt_toolkit: the prompt is already returning
                session.app.exit(result=SIDE_QUESTION)
            return
        if tries > 0:
            asyncio.get_running_loop().call_later(0.05, self._leave_prompt, tries - 1)
