"""The REPL's built-in slash commands: their table (name → help line) and one handler each.

A command is one entry in `SLASH_COMMANDS` (its help line) and one in `SlashCommands.handlers` (its method);
`run` dispatches. What a command needs of the REPL (its session parts, terminal, questions, the
Ctrl+C-cancellable runner) comes through the `ReplContext` Protocol, so a command module never imports the REPL.
Built-ins come first: a repository's `.claude/commands/plan.md` never stands in for `/plan` (the REPL checks).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import uuid
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from mini_claude.agent.memory import load_memory
from mini_claude.cli.mcp.panel import ACTIONS, mcp_command
from mini_claude.cli.slash.agents import agents_command
from mini_claude.cli.slash.choices import model_command
from mini_claude.cli.slash.config import CONFIG_HELP, config_command
from mini_claude.cli.slash.context import context_lines, measure_context
from mini_claude.cli.slash.output_style import output_style_command
from mini_claude.cli.slash.permissions import (
    SESSION_SCOPE,
    USAGE,
    add_permission,
    permission_listing,
    remove_permission,
    split_scope,
)
from mini_claude.cli.slash.sandbox import SANDBOX_HELP, sandbox_command
from mini_claude.cli.slash.sessions import export_command, rewind_command
from mini_claude.cli.slash.status import status_lines
from mini_claude.cli.terminal.picker import Option
from mini_claude.cli.terminal.render import TerminalUI, clean, one_line
from mini_claude.errors import ConfigError
from mini_claude.models.pricing import ListPriced, cost_usd, known_price
from mini_claude.paths import user_home
from mini_claude.permissions import PermissionMode
from mini_claude.settings import Settings, load_settings
from mini_claude.settings_rules import RULE_KINDS, SCOPES

__all__ = ["COMPLETIONS", "INIT_PROMPT", "SLASH_COMMANDS", "ReplContext", "SlashCommands", "reload_memory"]

SLASH_COMMANDS = {
    "/help": "show this help",
    "/clear": "forget the conversation",
    "/cost": "tokens used in this session and their estimated price",
    "/model": "choose the model (a picker; /model NAME switches at once); the choice is remembered",
    "/config": CONFIG_HELP,
    "/vim": "vi keys in the prompt on or off (remembered as editorMode)",
    "/mcp": "MCP servers: status, transport, protocol, what each offers; /mcp reconnect|tools|log|login|logout|"
            "accept NAME; /mcp enable|disable [NAME[/TOOL]] [-s user|project|local] (no NAME: a picker)",
    "/add-dir": "work in another folder too: /add-dir DIR (MCP servers see it as a root)",
    "/compact": "summarise the older part of the conversation now: /compact [what to keep in focus]",
    "/hooks": "the hooks in force (event, matcher, command) and the settings file each comes from",
    "/permissions": "the allow / ask / deny rules in force and the file of each; /permissions add allow|ask|deny "
                    "RULE [user|project|local], /permissions remove RULE [scope]",
    "/status": "version, model and where it is served, folders, trust, mode, settings and memory files, servers",
    "/context": "what fills the context window, part by part, with token estimates",
    "/doctor": "check the install, keys, settings and memory files, MCP config and servers: each problem with its fix",
    "/plan": "plan mode on or off: /plan [on|off] (Shift+Tab cycles default → acceptEdits → plan)",
    "/resume": "pick up a saved conversation of this folder: /resume [ID]",
    "/export": "write the conversation as Markdown: /export [FILE] (default conversation-DATE-TIME.md here)",
    "/rewind": "go back to before a prompt: the files mini-claude's tools changed since, the conversation, or both",
    "/init": "have the model write a starter CLAUDE.md for this project",
    "/memory": "edit the memory files (CLAUDE.md) in $EDITOR",
    "/sandbox": SANDBOX_HELP,
    "/agents": "the sub-agent types (built-in, ~/.claude/agents, .claude/agents) and their tools; /agents new writes one",
    "/output-style": "how the agent answers: /output-style [NAME] (default, Explanatory, Learning, … or a style file)",
    "/tasks": "background shell commands: id, status, run time, command; /tasks stop ID (also /bashes)",
    "/exit": "leave (also: exit, quit, Ctrl+D)",
}
COMPLETIONS = [*SLASH_COMMANDS, "/agents new", *(f"/mcp {action}" for action in ACTIONS),
               *(f"/permissions {action}" for action in ("add allow", "add ask", "add deny", "remove"))]
INIT_PROMPT = ("Look around this project (its layout, build files, README, tests) and write a CLAUDE.md at its "
               "root for future sessions: how to build, test and run it, the layout, and the conventions the "
               "code follows. Keep it short and factual. If a CLAUDE.md exists, improve it instead.")


class ReplContext(Protocol):
    """What a slash command may use of the running REPL."""

    parts: Any  # SessionParts
    ui: TerminalUI

    async def interruptible(self, work: Awaitable[Any], interrupted: str) -> Any: ...
    async def run_turn(self, text: str) -> None: ...
    def set_mode(self, mode: PermissionMode) -> None: ...
    async def resume(self, which: str) -> None: ...  # `/resume [ID]`: a saved conversation (a picker without ID)
    def record_session(self) -> None: ...  # save the conversation from here on, under `parts.session_id`
    async def confirm(self, question: str) -> bool: ...  # a yes/no question
    async def typed(self, label: str) -> str | None: ...  # a typed line (the pickers' fallback off a terminal)
    def retype(self, text: str) -> None: ...  # text put back at the next prompt, to edit or send

    @property
    def vi_mode(self) -> bool: ...  # the prompt has vi keys (/vim, editorMode)

    async def choose(self, title: str, options: Sequence[Option], default: int = 0) -> int | None: ...  # picker
    def set_editor_mode(self, vim: bool) -> None: ...
    def status_changed(self) -> None: ...  # the session changed: the status line runs again


class SlashCommands:
    """The built-in commands of one REPL."""

    def __init__(self, repl: ReplContext) -> None:
        self.repl = repl
        self.handlers: dict[str, Callable[[str], Awaitable[None]]] = {
            "/help": self._help, "/clear": self._clear, "/cost": self._cost, "/model": self._model,
            "/mcp": self._mcp, "/add-dir": self._add_dir, "/compact": self._compact, "/hooks": self._hooks,
            "/plan": self._plan, "/resume": self._resume, "/init": self._init, "/memory": self._memory,
            "/permissions": self._permissions, "/status": self._status, "/context": self._context,
            "/doctor": self._doctor, "/sandbox": self._sandbox, "/tasks": self._tasks, "/bashes": self._tasks,
            "/export": self._export, "/rewind": self._rewind,
            "/agents": self._agents, "/output-style": self._output_style,
            "/config": self._config, "/settings": self._config, "/vim": self._vim,
        }

    async def run(self, text: str) -> None:
        command, _, rest = text.partition(" ")
        handler = self.handlers.get(command)
        if handler is None:
            self.repl.ui.warn(f"unknown command {command}; /help lists them")
            return
        await handler(rest.strip())
        self.repl.status_changed()  # the model, the mode, the session id or the folders may have changed

    async def _help(self, _: str) -> None:
        parts = self.repl.parts
        for name, help_text in SLASH_COMMANDS.items():
            print(f"  {name:<12} {help_text}")
        for custom in parts.commands.values():
            hint = f" {custom.argument_hint}" if custom.argument_hint else ""
            print(clean(f"  {custom.command}{hint}  {custom.description or '(' + custom.scope + ' command)'}")[:200])
        host = parts.host
        for command in host.prompts.cached() if host is not None else ():
            print(clean(f"  {command.usage()}  {command.description}")[:200])
        print("  @server:uri attaches an MCP resource to your message (Tab completes)")
        print("  !command runs a shell command (through the permission rules); the model sees its output")
        print("  # note adds a line to a memory file (it asks which: project, project-local or user)")
        print("  \\ then Enter continues the line; Enter sends it")
        print("  Esc or Ctrl+C interrupts a running turn, command or login; Ctrl+C twice at an empty prompt exits")

    async def _agents(self, rest: str) -> None:
        typed = self.repl.typed
        await agents_command(self.repl.parts, rest, self.repl.ui, typed=typed)

    async def _output_style(self, name: str) -> None:
        parts = self.repl.parts
        if parts.styles is None:
            self.repl.ui.warn("/output-style: this session has no output styles")
            return
        typed = self.repl.typed
        done = await output_style_command(parts.styles, name, cwd=parts.gate.cwd, typed=typed)
        for line in done.warnings:
            self.repl.ui.warn(clean(line, visible=True))
        print("\n".join(clean(f"  {line}", visible=True) for line in done.lines))

    async def _doctor(self, _: str) -> None:
        from mini_claude.cli.doctor.report import doctor_report

        await self.repl.interruptible(doctor_report(self.repl.parts, out=sys.stdout), "cancelled")

    async def _clear(self, _: str) -> None:
        parts = self.repl.parts
        hooks = parts.hooks
        if hooks is not None:
            await hooks.session_end("clear")
        parts.agent.on_history = None  # the old conversation stays saved; a new one starts
        parts.agent.clear()
        parts.session_id = str(uuid.uuid4())
        self.repl.record_session()
        if hooks is not None:
            await hooks.session_start("clear")
        self.repl.ui.info("conversation cleared")

    async def _hooks(self, _: str) -> None:
        """Each hook in force and the file it comes from; a repository's wait for trust."""
        parts = self.repl.parts
        lines = parts.hooks.listing() if parts.hooks is not None else []
        for line in lines:
            print(clean(f"  {line}"))
        if not lines:
            print("  no hooks in force (they go in the \"hooks\" section of ~/.claude/settings.json or the project's "
                  ".claude/settings.json)")
        if not parts.trusted:
            print("  this folder is not trusted: its .claude/settings*.json hooks do not run until it is "
                  "(`mini-claude trust`)")

    async def _add_dir(self, text: str) -> None:
        folder = _existing_folder(text)
        if folder is None:
            self.repl.ui.warn("usage: /add-dir DIR (an existing folder)")
            return
        parts = self.repl.parts
        gate = parts.gate
        gate.additional_dirs = (*gate.additional_dirs, folder)
        if parts.host is not None and await parts.host.add_root(folder):
            self.repl.ui.info(f"added {folder}: writes there no longer ask, and MCP servers see it as a root")
        else:
            self.repl.ui.info(f"{folder} was already a working folder")

    async def _compact(self, focus: str) -> None:
        done = await self.repl.interruptible(self.repl.parts.agent.compact(focus), "cancelled")
        if done is False:
            self.repl.ui.info("nothing to compact yet")

    async def _plan(self, wanted: str) -> None:
        wanted = wanted.lower()
        if wanted in ("", "on", "off"):
            on = wanted == "on" or (wanted == "" and self.repl.parts.gate.mode is not PermissionMode.PLAN)
            self.repl.set_mode(PermissionMode.PLAN if on else PermissionMode.DEFAULT)
        else:
            self.repl.ui.warn("usage: /plan [on|off]")

    async def _resume(self, which: str) -> None:
        await self.repl.resume(which)

    async def _export(self, rest: str) -> None:
        await export_command(self.repl.parts, rest, self.repl.ui, self.repl.confirm)

    async def _rewind(self, _: str) -> None:
        await rewind_command(self.repl.parts, self.repl.ui, self.repl.typed, self.repl.retype)

    async def _cost(self, _: str) -> None:
        usage = self.repl.parts.agent.usage
        served = self.repl.parts.agent.model
        model = served.name
        priced = served if isinstance(served, ListPriced) else model  # the price depends on where it is served
        dollars = (f"about ${cost_usd(priced, usage):.4f} at {model}'s list prices (cache reads at a tenth of the "
                   f"input price, writes at 1.25 times)" if known_price(priced)
                   else f"cost unknown: no list price known for {model} where it is served")
        print(clean(f"  input tokens: {usage.input_tokens} (+ {usage.cache_read_tokens} read from the cache, "
                    f"{usage.cache_write_tokens} written to it), output tokens: {usage.output_tokens}; "
                    f"{dollars}"))

    async def _model(self, name: str) -> None:
        await model_command(self.repl.parts, name, choose=self.repl.choose, warn=self.repl.ui.warn)

    async def _config(self, rest: str) -> None:
        await config_command(self.repl.parts, rest, on_disk=self._files_now(), target=self.repl,
                             warn=self.repl.ui.warn, model=self._model,
                             output_style=self._output_style)

    async def _vim(self, _: str) -> None:
        await self._config(f"editorMode={'normal' if self.repl.vi_mode else 'vim'}")

    async def _init(self, _: str) -> None:
        await self.repl.run_turn(INIT_PROMPT)
        reload_memory(self.repl.parts, self.repl.ui)  # what it wrote is in the next request's system prompt

    async def _memory(self, _: str) -> None:
        memory = self.repl.parts.memory
        paths = [f.path for f in memory.files if f.kind != "user"] if memory is not None else []
        paths = paths or [Path.cwd() / "CLAUDE.md"]
        _edit([*paths, Path.home() / ".claude" / "CLAUDE.md"], self.repl.ui)  # the editor has the terminal
        reload_memory(self.repl.parts, self.repl.ui)

    async def _permissions(self, rest: str) -> None:
        """List the rules in force with their files; `add KIND RULE [scope]`, `remove RULE [scope]`."""
        parts = self.repl.parts
        gate, home = parts.gate, user_home(parts.env)
        action, _, rest = rest.partition(" ")
        try:
            if action in ("", "list"):
                lines = permission_listing(gate, trusted=parts.trusted, on_disk=self._files_now())
                print("\n".join(clean(f"  {line}", visible=True) for line in lines))
            elif action == "add":
                kind, _, rest = rest.strip().partition(" ")
                rule, scope = split_scope(rest, SCOPES)
                if kind not in RULE_KINDS or not rule:
                    self.repl.ui.warn(f"usage: {USAGE}")
                    return
                self.repl.ui.info(clean(add_permission(gate, trusted=parts.trusted, kind=kind, rule=rule,
                                                       scope=scope or "local", home=home), visible=True))
            elif action in ("remove", "rm"):
                rule, scope = split_scope(rest, (*SCOPES, SESSION_SCOPE))
                self.repl.ui.info(clean(remove_permission(gate, rule=rule, scope=scope, home=home), visible=True))
            else:
                self.repl.ui.warn(f"usage: {USAGE}")
        except ConfigError as exc:
            self.repl.ui.error(clean(str(exc), visible=True))

    async def _status(self, _: str) -> None:
        print("\n".join(clean(f"  {line}", visible=True) for line in status_lines(self.repl.parts, self._files_now())))

    async def _sandbox(self, rest: str) -> None:
        try:
            lines = await sandbox_command(self.repl.parts, rest)
        except (ConfigError, OSError) as exc:
            self.repl.ui.error(clean(f"/sandbox: {exc}", visible=True))
            return
        print("\n".join(clean(f"  {line}", visible=True) for line in lines))

    async def _context(self, _: str) -> None:
        report = await self.repl.interruptible(measure_context(self.repl.parts), "cancelled")
        if report is not None:
            print("\n".join(clean(f"  {line}", visible=True) for line in context_lines(report)))

    async def _tasks(self, rest: str) -> None:
        """The session's background commands (Bash `run_in_background`); `stop ID` ends one."""
        tasks = self.repl.parts.agent.ctx.background
        action, _, task_id = rest.partition(" ")
        if action == "stop" and task_id.strip():
            task = tasks.get(task_id.strip())
            if task is None:
                self.repl.ui.warn(one_line(tasks.unknown(task_id.strip())))
            elif await tasks.stop(task, reason="stopped by user"):
                self.repl.ui.info(f"stopped {task.id}")
            else:
                self.repl.ui.info(f"{task.id} is not running: it {task.status()}")
            return
        if action:
            self.repl.ui.warn("usage: /tasks [stop ID]")
            return
        for task in tasks.tasks():
            command = one_line(task.command)
            print(f"  {task.id:<8} {task.status().removeprefix('was '):<34} {task.runtime_s():>7.1f}s  "
                  f"{command if len(command) <= 80 else command[:79] + '…'}")
        if not tasks.tasks():
            print("  no background tasks in this session (the model starts one with Bash and run_in_background)")

    def _files_now(self) -> Settings:
        """The settings files as they are on disk now, unfiltered, with the session's `--settings` layer."""
        parts = self.repl.parts
        settings = parts.settings
        flag = (settings.flag_display, settings.flag) if settings.flag else None
        return load_settings(cwd=parts.gate.cwd, home=user_home(parts.env), flag=flag)

    async def _mcp(self, rest: str) -> None:
        parts = self.repl.parts
        settings = parts.settings
        flag = (settings.flag_display, settings.flag) if settings.flag else None
        await self.repl.interruptible(mcp_command(parts.manager, rest, self.repl.ui, host=parts.host,
                                                  deferred=parts.deferred, switches=parts.tool_switches,
                                                  choose=self.repl.choose, trusted=parts.trusted, flag=flag,
                                                  trust_all=bool(getattr(self.repl.args, "trust_project_mcp", False))),
                                      "cancelled")


def reload_memory(parts: Any, ui: TerminalUI) -> None:
    """Read the memory files again, so the next request's system prompt has what was written."""
    if parts.memory is not None:
        fresh = load_memory(Path.cwd(), user_home())
        parts.memory.files[:] = fresh.files
        for warning in fresh.warnings:
            ui.warn(f"memory: {warning}")


def _edit(paths: list[Path], ui: TerminalUI) -> None:
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        subprocess.run([*shlex.split(editor), *map(str, dict.fromkeys(paths))], check=False)
    except OSError as exc:
        ui.warn(f"cannot run the editor {editor!r}: {exc}")


def _existing_folder(text: str) -> Path | None:
    """`text` as an absolute folder (relative to the working directory, `~` expanded), None if not a folder."""
    if not text:
        return None
    folder = (Path.cwd() / Path(text).expanduser()).resolve()
    return folder if folder.is_dir() else None
