"""The interactive REPL: prompt_toolkit input, slash commands, Ctrl+C handling; its questions (permission, approval,
trust, a typed line) are its base `ReplQuestions`' (cli/repl_questions.py).

Ctrl+C or Esc during a turn (or a `!` command, a `/mcp login`) cancels it (tools are cancelled, the history stays
valid) and returns to the prompt; Ctrl+C at an empty prompt twice in a row exits. A backslash then Enter continues
the line. `!cmd` runs a shell command through the gate and hands its output to the model (cli/shell_escape.py);
`# note` asks which memory file takes the note (cli/questions/memory_note.py). MCP servers start in the background: the
prompt is usable at once and servers announce themselves as they become ready or fail. `/mcp login NAME` runs the
OAuth login of an http/sse server and restarts it in the running session, so its tools appear at once.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import Awaitable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from mini_claude.cli.keys import EscapeWatcher
from mini_claude.cli.mcp.panel import mcp_command  # noqa: F401  (tests import it from here)
from mini_claude.cli.questions.host_ui import ReplHostUI
from mini_claude.cli.questions.memory_note import add_memory_note
from mini_claude.cli.questions.pin_review import ask_review
from mini_claude.cli.repl_apps import SIDE_QUESTION, ReplApps
from mini_claude.cli.repl_questions import ReplQuestions
from mini_claude.cli.resume import conversation_lines, record_session, resume_session
from mini_claude.cli.session_args import start_session
from mini_claude.cli.shell_escape import admit, bash_blocks, run_command
from mini_claude.cli.slash.commands import COMPLETIONS, SLASH_COMMANDS, SlashCommands, reload_memory
from mini_claude.cli.terminal.picker import Option, pick
from mini_claude.cli.terminal.render import TerminalUI, clean, one_line
from mini_claude.cli.terminal.status import server_line
from mini_claude.cli.terminal.status_line import PromptFooter
from mini_claude.cli.terminate import end_session_on_terminate
from mini_claude.cli.turn_input import run_user_turn, user_turn
from mini_claude.errors import MiniClaudeError
from mini_claude.mcp.host.prompts import PROMPT_PREFIX
from mini_claude.mcp.manager import ServerState, ServerStatus
from mini_claude.mcp.pinning import PinReview
from mini_claude.paths import state_dir, user_home
from mini_claude.permissions import PermissionMode
from mini_claude.tools.shell import BashTool, SandboxRefused

__all__ = ["SLASH_COMMANDS", "Repl"]

_MODE_LABELS = {PermissionMode.PLAN: "plan> ", PermissionMode.ACCEPT_EDITS: "accept-edits> ",
                PermissionMode.BYPASS: "bypass> "}
_NEXT_MODE = {PermissionMode.DEFAULT: PermissionMode.ACCEPT_EDITS, PermissionMode.ACCEPT_EDITS: PermissionMode.PLAN}


class Repl(ReplQuestions):
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.ui = TerminalUI()
        self.parts: Any = None  # SessionParts, once run() started the session
        self._turn: asyncio.Task[Any] | None = None
        self._session: Any = None
        # servers with changed tool definitions or instructions to ask about before the next turn
        self._reviews: list[str] = []
        self._background: set[asyncio.Future[Any]] = set()
        self._interrupted_at_prompt = False
        self._questions = asyncio.Lock()  # one question at a time: permission, sampling, a form
        self._at_prompt = False  # the user is typing at "> ": a server's question cannot be asked now
        self._announced: dict[str, tuple[ServerStatus, int, str]] = {}  # what each server's last line said
        self._commands = SlashCommands(self)
        self._keys = EscapeWatcher(self._interrupt)  # Esc while a turn runs (a terminal's stdin only)
        self._unsent: list[dict[str, Any]] = []  # a `!` command's output whose model request failed
        self._retype = ""  # an interrupted `!` command, back at the next prompt (as in Claude Code)
        self._footer = PromptFooter(lambda: self._session)  # under the prompt: vi keys' mode, the statusLine
        self._apps = ReplApps(self.ui, session=lambda: self._session, at_prompt=lambda: self._at_prompt,
                              busy=lambda: self._turn is not None, ask=self._yes, retype=self.retype,
                              lock=self._questions)  # MCP Apps views: cli/repl_apps.py

    async def run(self) -> int:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.filters import Condition
        from prompt_toolkit.history import FileHistory
        from prompt_toolkit.key_binding import KeyBindings
        from prompt_toolkit.patch_stdout import patch_stdout
        from prompt_toolkit.styles import Style

        from mini_claude.cli.completion import ReplCompleter  # prompt_toolkit: only the REPL pays for it

        end_session_on_terminate()  # a closed terminal (SIGHUP) or a kill (SIGTERM) still cleans up
        history_dir = state_dir()
        history_dir.mkdir(parents=True, exist_ok=True)
        keys = KeyBindings()

        @keys.add("enter", filter=Condition(lambda: self._session.default_buffer.document.text_before_cursor
                                            .endswith("\\")))
        def _continue_line(event: Any) -> None:  # `\` then Enter: a line break instead of sending (Claude Code's)
            event.current_buffer.delete_before_cursor(1)
            event.current_buffer.insert_text("\n")

        @keys.add("c-o")
        def _expand(event: Any) -> None:  # Ctrl+O: the last folded tool output, whole, above the prompt
            from prompt_toolkit.application import run_in_terminal

            run_in_terminal(lambda: self.ui.expand_last() or self.ui.info("(no folded output to expand)"))

        @keys.add("s-tab")
        def _next_mode(event: Any) -> None:  # Shift+Tab: default → acceptEdits → plan → default
            if self.parts is not None:
                self.set_mode(_NEXT_MODE.get(self.parts.gate.mode, PermissionMode.DEFAULT))
                event.app.invalidate()

        self._session = PromptSession(history=FileHistory(str(history_dir / "repl-history")),
                                      complete_while_typing=True, key_bindings=keys,
                                      style=Style.from_dict({"bottom-toolbar": "noreverse"}))
        self.parts = await start_session(self.args, self.ui, apps=True, ask_server=self._ask_server,
                                         ask_permission=self._ask_permission, on_server_change=self._server_changed,
                                         ask_trust=self._ask_trust, on_tools_review=self._tools_review,
                                         host_ui=ReplHostUI(self.ui, ask=self._ask, prompt=self._prompt_text,
                                                            lock=self._questions, can_ask=lambda: not self._at_prompt,
                                                            refusing_views=self._apps.refusing))
        if self.parts.apps is not None:
            self.parts.apps.front = self._apps
        self._session.completer = ReplCompleter([*COMPLETIONS, *self.parts.commands], self.parts.host)
        for name in sorted(set(self.parts.commands) & set(SLASH_COMMANDS)):
            self.ui.warn(f"custom command {name} ({self.parts.commands[name].path}) is ignored: {name} is built in")
        record_session(self.parts)
        self._footer.start(self.parts, self.ui)  # editorMode, statusLine
        self.ui.info(f"mini-claude — model {self.parts.agent.model.name}; /help for commands, Ctrl+D to exit")
        try:  # a resumed conversation is shown under the banner, just above the prompt
            if await resume_session(self.parts, continue_=self.args.continue_, resume=self.args.resume, ui=self.ui,
                                    pick=self.pick_session):
                self._show_conversation()
        except MiniClaudeError as exc:
            self.ui.error(str(exc))
        hooks = self.parts.hooks
        if hooks is not None:  # what SessionStart hooks print joins the first prompt
            await hooks.session_start("resume" if self.args.continue_ or self.args.resume else "startup")
        try:
            pending = self.args.prompt
            interrupts = 0
            first = True
            while True:
                from_view = False
                if pending is None:
                    pending = self._apps.next_message()  # a view's message: a turn for the model, never a command
                    from_view = pending is not None
                if pending is None:
                    try:
                        self._at_prompt = True
                        try:
                            with patch_stdout(raw=True):  # lines printed meanwhile go above the prompt
                                pending = await self._session.prompt_async(self._prompt_label,
                                                                           default=self._retyped())
                        finally:
                            self._at_prompt = False
                    except KeyboardInterrupt:
                        interrupts += 1
                        if interrupts >= 2:
                            return 0
                        self.ui.info("(press Ctrl+C again to exit)")
                        continue
                    except EOFError:
                        return 0
                    if pending == SIDE_QUESTION:  # a view's question or message took the prompt
                        pending = None
                        await self._apps.prompt_left()
                        continue
                interrupts = 0
                text, pending = pending.strip(), None
                if not text:
                    continue
                if from_view:  # `!cmd`, `/permissions add …`, `#note`, `exit`: the user's alone, never a view's
                    if first:
                        first = False
                        await self._wait_for_servers()
                    await self.run_turn(text, from_view=True)
                    continue
                if text in ("exit", "quit", "/exit", "/quit"):
                    return 0
                if text.startswith("#") and len(text) > 1:  # "# use tabs": a line for a memory file
                    await self._remember(text[1:])
                    continue
                if text.startswith("!"):  # "!ls": the shell, not the model
                    if text[1:].strip():
                        await self.interruptible(self._shell_escape(text[1:].strip()), "interrupted")
                    else:
                        self.ui.info("! runs a shell command: !git status")
                    continue
                command = text.split(maxsplit=1)[0]
                # built-in commands first: a repository's .claude/commands/plan.md never stands in for /plan
                custom = command in self.parts.commands and command not in SLASH_COMMANDS
                if text.startswith("/") and not text.startswith(PROMPT_PREFIX) and not custom:
                    try:
                        await self._slash(text)
                    except (MiniClaudeError, OSError) as exc:  # a bad /resume ID, an unwritable CLAUDE.md
                        self.ui.error(str(exc))
                    continue
                if first:  # the first prompt waits for servers still starting, so their tools are there
                    first = False
                    await self._wait_for_servers()
                await self.run_turn(text)
        finally:
            self._sigint(False)
            if hooks is not None:
                await hooks.session_end("prompt_input_exit")
            await self.parts.agent.ctx.background.aclose()  # no background command outlives the session
            await self._footer.aclose()
            if self.parts.apps is not None:  # every view told (ui/resource-teardown), the web side closed
                await self.parts.apps.aclose()
            if self.parts.gate.sandbox is not None:  # its proxy and private /tmp (os._exit skips atexit)
                await self.parts.gate.sandbox.aclose()
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
        """A server's tools or instructions changed since accepted (withheld) or it has new tools: say so now, ask
        before the next turn (a question cannot interrupt the prompt the user is typing at)."""
        withheld = review.warning() if review.changed else review.instructions_warning()
        for note in review.notes():
            if not (review.instructions is not None and not review.changed and note == withheld):
                self.ui.info(clean(note))  # (withheld instructions alone: the warning below says it once)
        if (review.changed or review.instructions is not None) and review.server not in self._reviews:
            self.ui.warn(clean(f"{withheld}; you will be asked before the next turn"))
            self._reviews.append(review.server)

    async def _wait_for_servers(self) -> None:
        manager = self.parts.manager
        starting = [s.name for s in manager.states.values() if s.status is ServerStatus.STARTING]
        if not starting:
            return
        self.ui.info(f"waiting for MCP server{'s' if len(starting) > 1 else ''} {', '.join(starting)} to start "
                     "(Ctrl+C to go on without them)")
        await self.interruptible(manager.wait_started(timeout=manager.startup_timeout), "going on without them")

    async def run_turn(self, text: str, *, from_view: bool = False) -> None:
        """One turn of the model. `from_view`: a view's `ui/message`, which is plain text (no custom command, server
        prompt or `@` mention is expanded: those are the user's to type)."""
        while self._reviews:
            await ask_review(self.parts.manager, self._reviews.pop(0), self._yes, self.ui, sys.stderr)
        work = self._view_turn(text) if from_view else self._turn_for(text)
        outcome = await self.interruptible(work, "interrupted")
        if outcome is not None and outcome.stop == "max_turns":
            self.ui.warn(f"stopped after {self.parts.agent.max_turns} turns (--max-turns)")
        self.status_changed()

    async def interruptible(self, work: Awaitable[Any], interrupted: str) -> Any:
        """Run `work` so that Ctrl+C cancels it (and only it): None, after saying `interrupted`, if it was."""
        self._turn = asyncio.ensure_future(work)
        self._sigint(True)
        self._keys.start()
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
            self._keys.stop()
            self.ui.work_ended()  # no spinner left over the prompt, even for a call that never finished
            self._turn = None
            self._sigint(False)
        return None

    async def _view_turn(self, text: str) -> Any:
        apps = self.parts.apps
        context = apps.take_model_context() if apps is not None else []
        return await self._run_with_unsent([{"type": "text", "text": text}, *context])

    async def _turn_for(self, text: str) -> Any:
        if not self._unsent or text.split(maxsplit=1)[0] in self.parts.commands:  # (a command's turn: kept for later)
            return await run_user_turn(self.parts, text, self.ui)
        turn = await user_turn(self.parts, text, self.ui)
        return await self._run_with_unsent([{"type": "text", "text": turn}] if isinstance(turn, str) else turn)

    async def _run_with_unsent(self, blocks: list[dict[str, Any]], *, keep: bool = False) -> Any:
        """A turn of `blocks` after what waits in `_unsent`. When the request fails the history is put back: what
        waited waits again (with `blocks` too when `keep`: a `!` command's output is not lost)."""
        unsent, self._unsent = self._unsent, []
        try:
            return await self.parts.agent.run([*unsent, *blocks])
        except MiniClaudeError:
            self._unsent = [*unsent, *blocks] if keep else unsent
            if self._unsent:
                self.ui.info("(the shell command's output goes to the model with your next message)")
            raise

    async def _shell_escape(self, command: str) -> Any:
        """`!cmd` (cli/shell_escape.py): the gate first, then the command; its output shown, then the model's
        answer to it. Interrupted while running: nothing reaches the model; the line is back at the prompt."""
        parts = self.parts
        shell = next((t for t in parts.agent.tools() if isinstance(t, BashTool)), BashTool())  # the session's env
        decision = await admit(command, gate=parts.gate, shell=shell, hooks=parts.hooks)
        if not decision.allowed:
            self.ui.error(f"! {command}: not run: {decision.reason}")
            return None
        cwd = parts.agent.ctx.cwd
        try:
            launch = await shell.sandbox_launch(command, {"command": command}, cwd)  # the OS sandbox, when on
        except SandboxRefused as refused:
            self.ui.error(f"! {command}: not run: {refused}")
            return None
        env = shell.env if launch is None else {**shell.env, **launch.env}
        try:
            output = await run_command(command, cwd=cwd, env=env, argv=None if launch is None else launch.argv)
        except asyncio.CancelledError:
            self._retype = f"!{command}"
            raise
        except OSError as exc:
            self.ui.error(f"! {command}: could not start the shell: {exc.strerror or exc}")
            return None
        finally:
            shell.sandbox_done(launch)
        note = shell.sandbox.explain(command, output.stdout + output.stderr) if launch and shell.sandbox else None
        if note:
            output = replace(output, stderr=f"{output.stderr}\n{note}".lstrip("\n"))
        if output.stdout:
            print(clean(output.stdout), flush=True)
        if output.stderr:
            print(clean(output.stderr), file=sys.stderr, flush=True)
        return await self._run_with_unsent(bash_blocks(command, output), keep=True)

    def _retyped(self) -> str:
        """The next prompt's starting text: an interrupted `!` command, then what was typed during the turn."""
        text, self._retype = self._retype + self._keys.take_typeahead(), ""
        return text

    def _interrupt(self) -> None:
        if self._turn is not None and not self._turn.done():
            self._turn.cancel()

    async def _slash(self, text: str) -> None:
        await self._commands.run(text)

    def _prompt_label(self) -> str:
        mode = self.parts.gate.mode if self.parts is not None else PermissionMode.DEFAULT
        return _MODE_LABELS.get(mode, "> ")

    def set_mode(self, mode: PermissionMode) -> None:
        self.parts.gate.mode = mode
        self.status_changed()
        self.ui.info(f"permission mode: {mode.value}" + (" (read-only tools only; /plan off or Shift+Tab leaves it)"
                                                           if mode is PermissionMode.PLAN else ""))

    async def _remember(self, line: str) -> None:
        if await add_memory_note(line, ask=self._ask, ui=self.ui, cwd=Path.cwd(), home=user_home()) is not None:
            reload_memory(self.parts, self.ui)  # the next request's system prompt has it

    def _server_changed(self, state: ServerState) -> None:
        """A server's status line, once per change: "ready" once, later tool-count changes as "13 → 14 tools"."""
        line = server_line(state)
        before = self._announced.get(state.name)
        now = (state.status, len(state.tools), line)
        self._announced[state.name] = now
        if before is not None and before[0] is state.status is ServerStatus.READY and before[1] != now[1]:
            self.ui.info(f"MCP {one_line(state.name)}: {before[1]} → {now[1]} tools")
        elif before is None or before[2] != line:
            self.ui.info(f"MCP {one_line(line)}")
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

    @property
    def vi_mode(self) -> bool:
        return self._footer.vi_mode

    def set_editor_mode(self, vim: bool) -> None:
        self._footer.set_editor_mode(vim)

    def status_changed(self) -> None:
        self._footer.refresh()

    async def choose(self, title: str, options: Sequence[Option], default: int = 0) -> int | None:
        """The arrow-key picker; off a terminal a numbered list and a typed number. Inside `interruptible` work
        (`/mcp disable`'s picker) the Esc watcher lets go of the terminal meanwhile, so the keys reach the picker."""
        with self._keys.paused():
            return await pick(title, options, default=default,
                              typed=self._prompt_text if self._session is not None else None)

    async def resume(self, which: str) -> None:
        if await resume_session(self.parts, continue_=False, resume=which, ui=self.ui, pick=self.pick_session):
            self._show_conversation()

    def _show_conversation(self) -> None:
        """A resumed conversation's last exchanges, compact, before the prompt (cli/resume.py)."""
        for line in conversation_lines(self.parts.agent.history, Path(self.parts.agent.ctx.cwd)):
            print(line)

    def retype(self, text: str) -> None:
        self._retype = text

    def record_session(self) -> None:
        record_session(self.parts)
