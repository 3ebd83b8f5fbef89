"""How `TerminalUI` shows tool calls: `● Read(calc.py)` when a call starts, `  ⎿  Read 2 lines` when it ends (what
the lines say is tool_lines.py's), a spinner below while calls run (`Running… 3s · esc or ctrl+c to interrupt`,
a terminal only), long outputs folded with the last one kept for Ctrl+O (`expand_last`), an edit's diff under its
summary, and no live line while the user answers a question (`paused`) or once a turn is over (`work_ended`).

`ToolDisplay` is `TerminalUI`'s base (render.py): the state and the printing helpers it uses are declared here and
set by `TerminalUI`. Nothing here imports render (render imports this module): text goes through neutral.py.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from mini_claude.cli.terminal.neutral import clean
from mini_claude.cli.terminal.tool_lines import call_line, short, shown_result
from mini_claude.tools.base import ToolResult

__all__ = ["MAX_DIFF_LINES", "RESULT_PREVIEW_LINES", "Call", "ToolDisplay"]

RESULT_PREVIEW_LINES = 4  # output lines shown under a summary before `… +N lines`
MAX_DIFF_LINES = 400  # an edit's diff lines shown


@dataclass(eq=False)
class Call:
    """A call shown and not yet finished: its name and arguments as the agent gave them, its line as shown."""

    name: str
    args: dict[str, Any]
    line: str
    name_chars: int  # how much of `line` is the name (bold)


class ToolDisplay:
    """The tool half of `TerminalUI` (see the module docstring)."""

    rich: bool
    print_mode: bool
    cwd: Path | None
    _live: Any
    _live_transient: bool
    _thinking: Any
    _running: list[Call]
    _running_since: float | None
    _last_shown: Call | None
    _folded: tuple[str, str] | None
    _pause: int
    _line: Callable[..., None]
    _console_for: Callable[[IO[str]], Any]
    _live_update: Callable[[], None]
    _stop_live: Callable[[], None]
    _end_text: Callable[[], None]
    _tool_stream: Callable[[], IO[str]]
    _syntax: Callable[[str], Any]
    if TYPE_CHECKING:
        @property
        def out(self) -> IO[str]: ...  # TerminalUI's: the stream given, else sys.stdout now

    def tool_started(self, name: str, args: dict[str, Any]) -> None:
        """`● Read(calc.py)`; in a terminal, a spinner below it until the last running call finishes."""
        self._end_text()
        call = Call(name, args if isinstance(args, dict) else {"input": args}, call_line(name, args, self._cwd()),
                     len(call_line(name, {})))
        self._running.append(call)
        self._show_call(call.line, call.name_chars)
        self._last_shown = call
        if self.rich and self._running_since is None:
            self._running_since = time.monotonic()
        self._spin()

    def tool_finished(self, name: str, result: ToolResult) -> None:
        """`  ⎿  Read 2 lines` under the call (labelled with the call when another call's line came in between:
        calls that run together finish in any order), the first output lines folded past RESULT_PREVIEW_LINES,
        an edit's diff whole (up to MAX_DIFF_LINES)."""
        call = next((c for c in self._running if c.name == name), None)
        if call is None:  # finished without a start we saw: its own line first
            call = Call(name, {}, call_line(name, {}), 0)
        else:
            self._running.remove(call)
        label = f"{short(call.line)}: " if self._last_shown is not call else ""
        summary, body, diff = shown_result(name, call.args, result, self._cwd(), RESULT_PREVIEW_LINES, MAX_DIFF_LINES)
        text = "\n".join([f"  ⎿  {label}{summary}", *(f"     {line}" for line in body.lines)])
        if body.hidden:
            hint = " (ctrl+o to expand)" if self.rich else ""
            text += f"\n     … +{body.hidden} lines{hint}"
            self._folded = (call.line, body.full)
        self._line(self._tool_stream(), text, style="red" if result.is_error else "dim")
        if diff:
            self._show_diff(diff)
        self._last_shown = call
        if not self._running:
            self._running_since = None
        self._spin()

    def expand_last(self) -> bool:
        """Print the last folded result whole, under its call line (Ctrl+O at the prompt); False if none."""
        if self._folded is None:
            return False
        line, full = self._folded
        self._show_call(line, 0)
        lines = full.splitlines() or [""]
        self._line(self._tool_stream(), "\n".join(("  ⎿  " if i == 0 else "     ") + text
                                                  for i, text in enumerate(lines)), style="dim")
        return True

    def work_ended(self) -> None:
        """A turn (or any interruptible work) is over: nothing stays live over the prompt, and a call that never
        reported its end (cancelled past its grace time) is forgotten."""
        self._running.clear()
        self._running_since = None
        self._end_text()

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """No live line while the user answers a question (a sub-agent's permission prompt while its Task runs, an
        MCP server's question during its call): the spinner comes back afterwards."""
        self._pause += 1
        if self._live is not None:
            self._stop_live()
        try:
            yield
        finally:
            self._pause -= 1
            self._spin()

    def _cwd(self) -> Path:
        return self.cwd or Path.cwd()

    def _show_call(self, line: str, name_chars: int) -> None:
        """`● name(argument)`: the name bold in a terminal."""
        if self.rich and not self.print_mode:
            from rich.text import Text

            text = Text("● ")
            text.append(line[:name_chars], style="bold")
            text.append(line[name_chars:])
            self._console_for(self.out).print(text, highlight=False)
        else:
            self._line(self._tool_stream(), f"● {line}")

    def _show_diff(self, diff: str) -> None:
        """An edit's diff under its summary: coloured in a terminal, else indented text (MAX_DIFF_LINES at most)."""
        lines = clean(diff, visible=True).splitlines()
        lines = lines[next((i for i, line in enumerate(lines) if line.startswith("@@")), 0):]  # no file header
        shown = lines[:MAX_DIFF_LINES]
        if len(lines) > len(shown):
            shown.append(f"… +{len(lines) - len(shown)} lines")
        if self.rich:
            from rich.padding import Padding

            self._console_for(self.out).print(Padding(self._syntax("\n".join(shown)), (0, 0, 0, 5)))
        else:
            self._line(self._tool_stream(), "\n".join(f"     {line}" for line in shown))

    def _spin(self) -> None:
        """The live line as it should be now: the tool spinner while calls run, gone when none does (terminal
        only; not while a question is asked)."""
        if not self.rich or self._pause:
            return
        if self._running:
            self._live_update()
        elif self._live is not None and self._live_transient and self._thinking is None:
            self._live.stop()
            self._live = None
