"""The interactive REPL: prompt_toolkit input, slash commands, Ctrl+C handling, permission and approval prompts.

Ctrl+C during a turn (or a `/mcp login`) cancels it (tools are cancelled, the history stays valid) and returns to
the prompt; Ctrl+C at an empty prompt twice in a row exits. MCP servers start in the background: the prompt is
usable at once and servers announce themselves as they become ready or fail. `/mcp login NAME` runs the OAuth
login of an http/sse server and restarts it in the running session, so its tools appear at once.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sys
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

from mini_claude.cli.approval_prompt import server_approval_prompt
from mini_claude.cli.host_ui import ReplHostUI
from mini_claude.cli.mcp_panel import ACTIONS, mcp_command
from mini_claude.cli.pin_review import ask_review
from mini_claude.cli.render import TerminalUI, clean
from mini_claude.cli.session import start_session
from mini_claude.cli.status import server_line
from mini_claude.cli.turn_input import user_turn
from mini_claude.errors import MiniClaudeError
from mini_claude.mcp.config import ServerConfig
from mini_claude.mcp.host.prompts import PROMPT_PREFIX
from mini_claude.mcp.manager import ServerState, ServerStatus
from mini_claude.mcp.pinning import PinReview
from mini_claude.paths import state_dir
from mini_claude.trust import trust_question

__all__ = ["SLASH_COMMANDS", "Repl"]

SLASH_COMMANDS = {
    "/help": "show this help",
    "/clear": "forget the conversation",
    "/cost": "tokens used in this session",
    "/model": "show or set the model: /model NAME",
    "/mcp": "MCP servers: status, transport, protocol, what each offers; /mcp reconnect|enable|disable|tools|"
            "log|login|logout|accept NAME",
    "/exit": "leave (also: exit, quit, Ctrl+D)",
}
_COMPLETIONS = [*SLASH_COMMANDS, *(f"/mcp {action}" for action in ACTIONS)]



class Repl:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.ui = TerminalUI()
        self.parts: Any = None  # SessionParts, once run() started the session
        self._turn: asyncio.Task[Any] | None = None
        self._session: Any = None
        self._reviews: list[str] = []  # servers with changed tool definitions to ask about before the next turn
        self._background: set[asyncio.Future[Any]] = set()
        self._announced: dict[str, tuple[ServerStatus, int, str]] = {}  # what each server's last line said

    async def run(self) -> int:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory
        from prompt_toolkit.patch_stdout import patch_stdout

        from mini_claude.cli.completion import ReplCompleter  # prompt_toolkit: only the REPL pays for it

        history_dir = state_dir()
        history_dir.mkdir(parents=True, exist_ok=True)
        self._session = PromptSession(history=FileHistory(str(history_dir / "repl-history")),
                                      complete_while_typing=True)
        self.parts = await start_session(self.args, self.ui, ask_server=self._ask_server,
                                         ask_permission=self._ask_permission, on_server_change=self._server_changed,
                                         ask_trust=self._ask_trust, on_tools_review=self._tools_review,
                                         host_ui=ReplHostUI(self.ui, ask=self._ask, prompt=self._prompt_text))
        self._session.completer = ReplCompleter(_COMPLETIONS, self.parts.host)
        self.ui.info(f"mini-claude — model {self.parts.agent.model.name}; /help for commands, Ctrl+D to exit")
        try:
            pending = self.args.prompt
            interrupts = 0
            first = True
            while True:
                if pending is None:
                    try:
                        with patch_stdout(raw=True):  # lines printed meanwhile go above the prompt
                            pending = await self._session.prompt_async("> ")
                    except KeyboardInterrupt:
                        interrupts += 1
                        if interrupts >= 2:
                            return 0
                        self.ui.info("(press Ctrl+C again to exit)")
                        continue
                    except EOFError:
                        return 0
                interrupts = 0
                text, pending = pending.strip(), None
                if not text:
                    continue
                if text in ("exit", "quit", "/exit", "/quit"):
                    return 0
                if text.startswith("/") and not text.startswith(PROMPT_PREFIX):
                    await self._slash(text)
                    continue
                if first:  # the first prompt waits for servers still starting, so their tools are there
                    first = False
                    await self._wait_for_servers()
                await self._run_turn(text)
        finally:
            self._sigint(False)
            await self.parts.manager.aclose()

    def _sigint(self, on: bool) -> None:
        """Route SIGINT to `_interrupt` while a turn runs. prompt_toolkit installs and *removes* its own SIGINT
        handler around every prompt, so this is (re)installed after each prompt that happens during a turn."""
        loop = asyncio.get_running_loop()
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            if on:
                loop.add_signal_handler(signal.SIGINT, self._interrupt)
            else:
                loop.remove_signal_handler(signal.SIGINT)

    def _tools_review(self, review: PinReview) -> None:
        """A server's tools changed since accepted (withheld) or it has new ones: say so now, ask before the next
        turn (a question cannot interrupt the prompt the user is typing at)."""
        for note in review.notes():
            self.ui.info(clean(note))
        if review.changed and review.server not in self._reviews:
            self.ui.warn(clean(f"{review.warning()}; you will be asked before the next turn"))
            self._reviews.append(review.server)

    async def _wait_for_servers(self) -> None:
        manager = self.parts.manager
        starting = [s.name for s in manager.states.values() if s.status is ServerStatus.STARTING]
        if not starting:
            return
        self.ui.info(f"waiting for MCP server{'s' if len(starting) > 1 else ''} {', '.join(starting)} to start "
                     "(Ctrl+C to go on without them)")
        await self._interruptible(manager.wait_started(timeout=manager.startup_timeout), "going on without them")

    async def _run_turn(self, text: str) -> None:
        while self._reviews:
            await ask_review(self.parts.manager, self._reviews.pop(0), self._yes, self.ui, sys.stderr)
        outcome = await self._interruptible(self._turn_for(text), "interrupted")
        if outcome is not None and outcome.stop == "max_turns":
            self.ui.warn(f"stopped after {self.parts.agent.max_turns} turns (--max-turns)")

    async def _interruptible(self, work: Awaitable[Any], interrupted: str) -> Any:
        """Run `work` so that Ctrl+C cancels it (and only it): None, after saying `interrupted`, if it was."""
        self._turn = asyncio.ensure_future(work)
        self._sigint(True)
        try:
            return await self._turn
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise
            self.ui.warn(interrupted)
        except MiniClaudeError as exc:
            self.ui.error(str(exc))
        finally:
            self._turn = None
            self._sigint(False)
        return None

    async def _turn_for(self, text: str) -> Any:
        return await self.parts.agent.run(await user_turn(self.parts, text, self.ui))

    def _interrupt(self) -> None:
        if self._turn is not None and not self._turn.done():
            self._turn.cancel()

    async def _slash(self, text: str) -> None:
        command, _, rest = text.partition(" ")
        if command == "/help":
            for name, help_text in SLASH_COMMANDS.items():
                print(f"  {name:<8} {help_text}")
            host = self.parts.host
            for command in host.prompts.cached() if host is not None else ():
                print(clean(f"  {command.usage()}  {command.description}")[:200])
            print("  @server:uri attaches an MCP resource to your message (Tab completes)")
            print("  Ctrl+C cancels a running turn or login; twice at an empty prompt exits")
        elif command == "/clear":
            self.parts.agent.clear()
            self.ui.info("conversation cleared")
        elif command == "/cost":
            usage = self.parts.agent.usage
            print(f"  input tokens: {usage.input_tokens}, output tokens: {usage.output_tokens}")
        elif command == "/model":
            if rest.strip():
                self.parts.agent.model.name = rest.strip()
                if hasattr(self.parts.agent.model, "model"):
                    self.parts.agent.model.model = rest.strip()
            print(f"  model: {self.parts.agent.model.name}")
        elif command == "/mcp":
            await self._interruptible(mcp_command(self.parts.manager, rest, self.ui, host=self.parts.host),
                                      "cancelled")
        else:
            self.ui.warn(f"unknown command {command}; /help lists them")

    def _server_changed(self, state: ServerState) -> None:
        """A server's status line, once per change: "ready" once, later tool-count changes as "13 → 14 tools"."""
        line = server_line(state)
        before = self._announced.get(state.name)
        now = (state.status, len(state.tools), line)
        self._announced[state.name] = now
        if before is not None and before[0] is state.status is ServerStatus.READY and before[1] != now[1]:
            self.ui.info(f"MCP {clean(state.name)}: {before[1]} → {now[1]} tools")
        elif before is None or before[2] != line:
            self.ui.info(f"MCP {clean(line)}")
        if state.status is ServerStatus.READY and self.parts is not None and self.parts.host is not None:
            task = asyncio.ensure_future(self._prefetch(state.name))  # names for completion
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def _prefetch(self, server: str) -> None:
        host = self.parts.host
        with contextlib.suppress(MiniClaudeError):
            await host.prompts.commands()
            if server in host.resources.servers_with_resources():
                await host.resources.refresh(server)

    async def _ask(self, question: str, choices: dict[str, str]) -> str:
        keys = "/".join(choices)
        while True:
            try:
                answer = (await self._session.prompt_async(f"{question} [{keys}] ")).strip().lower()
            except (KeyboardInterrupt, EOFError):
                return choices["n"]
            finally:
                if self._turn is not None:
                    self._sigint(True)
            if answer[:1] in choices:
                return choices[answer[:1]]

    async def _prompt_text(self, label: str) -> str | None:
        """A line typed by the user (an elicitation field); None when dismissed with Ctrl+C / Ctrl+D."""
        try:
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

    async def _ask_permission(self, tool: Any, args: dict[str, Any]) -> str:
        preview = json.dumps(args, ensure_ascii=False)[:300]
        return await self._ask(f"Allow {tool.name}({clean(preview)})?  yes / always / no",
                               {"y": "yes", "a": "always", "n": "no"})


