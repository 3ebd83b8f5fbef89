"""The `statusLine` setting: the user's command, run with the session as JSON on its stdin, whose output is shown
under the REPL's prompt (prompt_toolkit's bottom toolbar).

Claude Code's format: `{"type": "command", "command": "...", "padding": 0}`; the input has Claude Code's keys
(`session_id`, `transcript_path`, `cwd`, `model {id, display_name}`, `workspace {current_dir, project_dir,
added_dirs}`, `version`, `output_style {name}`, `cost {...}`, `context_window {...}`, `exceeds_200k_tokens`,
`effort`, `thinking`, `fast_mode`), filled from what this session knows (what it does not track is 0 or null).
Claude Code 2.1.328 shows every line the command prints: so does this, up to `MAX_LINES`, each cut to
`MAX_LINE_CHARS`.

Trust: the command runs only when the setting survived the session's trust filter — `statusLine` is one of the keys
a repository's `.claude/settings*.json` may not set until its folder is trusted (settings.py), exactly as hooks:
`parts.settings` is already filtered, so an untrusted repository's command is never seen here. The user's own
command waits for trust too: it runs in the project folder, where a stranger's `.git/config` can run code through
the git commands status lines like to use (the REPL's trust question names it; git_snapshot.py keeps the same
rule). It runs like a hook
(hooks/runner.py): `/bin/sh -c` in its own process group in the project folder, the session's environment without
the agent's credentials, at most `TIMEOUT_S`; a hung command's whole group is killed and reaped. Refreshes are
coalesced (one run at a time; a refresh asked for meanwhile runs once after it).

Output: colour and style (SGR, `ESC [ … m`) sequences are kept, as Claude Code keeps the user's own colours; every
other escape or control character is removed by `render.clean`, so the command cannot move the cursor, set the
title or the clipboard.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mini_claude import __version__
from mini_claude.cli.terminal.render import clean, one_line
from mini_claude.hooks.runner import run_command
from mini_claude.models.catalog import lookup
from mini_claude.models.pricing import ListPriced, cost_usd, known_price
from mini_claude.secrets import without_credentials
from mini_claude.settings import Settings, setting_source

__all__ = ["MAX_LINES", "TIMEOUT_S", "PromptFooter", "StatusLine", "StatusLineSpec", "keep_colours", "status_input",
           "status_line_spec"]

TIMEOUT_S = 3.0  # a status line command that takes longer is killed (its whole process group)
MAX_LINES = 3
MAX_LINE_CHARS = 400
MAX_LINE_CODES = 64  # colour sequences kept per line; the rest are dropped with the other escapes
# an SGR sequence of at most 16 short numbers: prompt_toolkit's ANSI parser int()s each number, and one over 4300
# digits raised ValueError on every redraw of the toolbar (the REPL stuck at "Press ENTER to continue")
_SGR = re.compile(r"\x1b\[(?:[0-9]{1,3};?){0,16}m")


@dataclass(frozen=True)
class StatusLineSpec:
    """The command to run, the spaces before its line, and the settings file it comes from."""

    command: str
    padding: int
    file: str


def status_line_spec(settings: Settings) -> tuple[StatusLineSpec | None, str | None]:
    """The status line the (trust-filtered) settings ask for, or None; and a problem to report, or None."""
    found = setting_source(settings, ("statusLine",))
    if found is None:
        return None, None
    value, file = found
    if not isinstance(value, dict) or value.get("type", "command") != "command":
        return None, f"{file} statusLine: expected {{\"type\": \"command\", \"command\": \"...\"}}; not shown"
    command = value.get("command")
    if not isinstance(command, str) or not command.strip():
        return None, f"{file} statusLine.command: expected a command string; not shown"
    padding = value.get("padding", 0)
    padding = padding if isinstance(padding, int) and not isinstance(padding, bool) else 0
    return StatusLineSpec(command, max(0, min(padding, 20)), file), None


def status_input(parts: Any, *, started: float, output_style: str | None = None) -> dict[str, Any]:
    """Claude Code's status line input for a session (`SessionParts`); `started`: its `time.monotonic()` start."""
    agent, gate = parts.agent, parts.gate
    model = agent.model
    info = lookup(model.name)
    usage = agent.usage
    priced = model if isinstance(model, ListPriced) else model.name
    window = agent.context.tokens
    last = agent.context.last_input_tokens
    used = round(100 * last / window) if last and window else None
    log = parts.session_log
    thinking = parts.settings.always_thinking
    effort = parts.settings.effort_level or (info.effort if info else None)
    if output_style is None:
        found = setting_source(parts.settings, ("outputStyle",))
        output_style = found[0] if found and isinstance(found[0], str) else "default"
    return {
        "session_id": parts.session_id,
        "transcript_path": str(log.path) if log is not None else "",
        "cwd": str(agent.ctx.cwd),
        "effort": {"level": effort},
        "model": {"id": model.name, "display_name": info.label if info else model.name},
        "workspace": {"current_dir": str(agent.ctx.cwd), "project_dir": str(gate.cwd),
                      "added_dirs": [str(d) for d in gate.additional_dirs]},
        "version": __version__,
        "output_style": {"name": output_style},
        "cost": {"total_cost_usd": round(cost_usd(priced, usage), 6) if known_price(priced) else 0,
                 "total_duration_ms": int((time.monotonic() - started) * 1000),
                 "total_api_duration_ms": 0, "total_lines_added": 0, "total_lines_removed": 0},
        "context_window": {"total_input_tokens": usage.prompt_tokens, "total_output_tokens": usage.output_tokens,
                           "context_window_size": window, "current_usage": None if not last else
                           {"input_tokens": last, "output_tokens": 0, "cache_creation_input_tokens": 0,
                            "cache_read_input_tokens": 0},
                           "used_percentage": used, "remaining_percentage": None if used is None else 100 - used},
        "exceeds_200k_tokens": last > 200_000,
        "fast_mode": False,
        "thinking": {"enabled": thinking is not False and bool(info and info.thinking != "none")},
    }


def keep_colours(text: str) -> str:
    """`text` with its SGR colour sequences kept and everything else `clean`ed away (other escapes, controls,
    bidi overrides); one line per line, at most `MAX_LINES`, each at most `MAX_LINE_CHARS` visible characters."""
    lines = []
    for line in text.splitlines()[:MAX_LINES]:
        pieces = _SGR.split(line)
        codes = _SGR.findall(line)
        shown = codes[:MAX_LINE_CODES]
        kept, visible = [], 0
        for index, piece in enumerate(pieces):
            piece = clean(piece).replace("\t", " ")[:max(0, MAX_LINE_CHARS - visible)]
            visible += len(piece)
            kept.append(piece)
            if index < len(shown):
                kept.append(shown[index])
        reset = shown and shown[-1] not in ("\x1b[0m", "\x1b[m")  # a colour left on ends with the line
        lines.append("".join(kept) + ("\x1b[0m" if reset else ""))
    while lines and not _SGR.sub("", lines[-1]).strip():
        lines.pop()
    return "\n".join(lines)


class StatusLine:
    """One REPL's status line: `refresh()` runs the command (coalesced), `text` is what to show (SGR kept),
    `on_change` is called when it changes (the REPL redraws its prompt)."""

    def __init__(self, spec: StatusLineSpec, *, inputs: Callable[[], dict[str, Any]], cwd: Path,
                 env: dict[str, str], on_change: Callable[[], None] = lambda: None,
                 on_problem: Callable[[str], None] = lambda _: None, timeout_s: float = TIMEOUT_S) -> None:
        self.spec = spec
        self.text = ""
        self.error = ""  # why the last run showed nothing (timed out, failed), told once to `on_problem`
        self._inputs, self._cwd, self._on_change, self._timeout = inputs, cwd, on_change, timeout_s
        self._on_problem = on_problem
        self._env = without_credentials(env, [("CLAUDE_PROJECT_DIR", str(cwd))])
        self._task: asyncio.Task[None] | None = None
        self._again = False

    def refresh(self) -> None:
        """Run the command again soon (once more after the run in progress, if one is)."""
        if self._task is not None and not self._task.done():
            self._again = True
            return
        self._task = asyncio.ensure_future(self._runs())

    async def settled(self) -> None:
        """Wait until no run is in progress (tests, and the end of the session)."""
        while self._task is not None and not self._task.done():
            await asyncio.wait({self._task})

    async def aclose(self) -> None:
        """Stop a run in progress: its process group is ended and reaped (hooks/runner.py)."""
        self._again = False
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _runs(self) -> None:
        while True:
            self._again = False
            await self._run_once()
            if not self._again:
                return

    async def _run_once(self) -> None:
        data = json.dumps(self._inputs()).encode()
        run = await run_command(self.spec.command, data, cwd=self._cwd, env=self._env, timeout_s=self._timeout)
        before = self.error
        if run.timed_out:
            text, self.error = "", f"statusLine command timed out after {self._timeout:g}s (killed)"
        elif run.exit_code is None:
            text, self.error = "", f"statusLine command: {run.error}"
        else:
            text = keep_colours(run.stdout)
            said = run.stderr.strip().splitlines()[:1]
            self.error = "" if text or run.exit_code == 0 else \
                f"statusLine command exited {run.exit_code}" + (f": {one_line(said[0])[:200]}" if said else "")
        if self.error and self.error != before:
            self._on_problem(self.error)
        if text and self.spec.padding:
            text = "\n".join(" " * self.spec.padding + line for line in text.split("\n"))
        if text != self.text:
            self.text = text
            self._on_change()


class PromptFooter:
    """What the REPL shows under its prompt (prompt_toolkit's bottom toolbar): the vi keys' mode when they are on,
    and the status line. `session()` gives the REPL's PromptSession (None before it exists). The toolbar is there
    only when it has something to show, so a plain REPL keeps its last screen line."""

    def __init__(self, session: Callable[[], Any]) -> None:
        self._session = session
        self.status_line: StatusLine | None = None

    def start(self, parts: Any, ui: Any) -> None:
        """The session's `editorMode` and `statusLine` (trust-filtered settings: a repository's only once trusted)."""
        self.set_editor_mode(parts.settings.editor_mode == "vim")
        spec, problem = status_line_spec(parts.settings)
        if problem:
            ui.warn(clean(problem))
        if spec is not None and not parts.trusted:  # a stranger's .git/config could run code through it
            ui.info("statusLine: not run in an untrusted folder (`mini-claude trust` trusts it)")
        elif spec is not None:
            started = time.monotonic()
            self.status_line = StatusLine(spec, inputs=lambda: status_input(parts, started=started),
                                          cwd=parts.gate.cwd, env=parts.env, on_change=self._redraw,
                                          on_problem=ui.warn)
            self._show()
            self.status_line.refresh()

    def refresh(self) -> None:
        if self.status_line is not None:
            self.status_line.refresh()

    async def aclose(self) -> None:
        if self.status_line is not None:
            await self.status_line.aclose()

    @property
    def vi_mode(self) -> bool:
        from prompt_toolkit.enums import EditingMode

        session = self._session()
        return session is not None and session.editing_mode is EditingMode.VI

    def set_editor_mode(self, vim: bool) -> None:
        """vi keys in the prompt (`editorMode: "vim"`, /vim) or the usual emacs-style ones."""
        from prompt_toolkit.enums import EditingMode

        session = self._session()
        if session is not None:
            session.editing_mode = EditingMode.VI if vim else EditingMode.EMACS
            self._show()

    def _redraw(self) -> None:
        session = self._session()
        if session is not None:
            session.app.invalidate()

    def _show(self) -> None:
        session = self._session()
        if session is not None:
            session.bottom_toolbar = self.toolbar if self.status_line is not None or self.vi_mode else None

    def toolbar(self) -> Any:
        from prompt_toolkit.formatted_text import ANSI, merge_formatted_text
        from prompt_toolkit.key_binding.vi_state import InputMode

        shown: list[Any] = []
        session = self._session()
        if self.vi_mode and session is not None:
            insert = session.app.vi_state.input_mode is not InputMode.NAVIGATION
            shown.append([("bold", "-- INSERT -- " if insert else "-- NORMAL -- ")])
        if self.status_line is not None and self.status_line.text:
            shown.append(ANSI(self.status_line.text))  # SGR colours only: keep_colours
        return merge_formatted_text(shown)
