"""Terminal output: the agent's text, `● Read(calc.py)` tool lines with `  ⎿  Read 2 lines` under them, status tables.

Rich rendering (markdown, diffs) when stdout is a terminal; plain text otherwise. In print mode (`-p`) only the
final answer goes to stdout; everything else goes to stderr. Tool calls and their results are printed by
`ToolDisplay` (tool_display.py; what they say is tool_lines.py's), with a spinner below while calls run in a
terminal and long outputs folded for Ctrl+O. The model's extended thinking is shown folded, one dim `✻ Thinking…`
line per turn (`show_thinking`, or MINI_CLAUDE_SHOW_THINKING=1, shows its text); -p shows none.

`clean()`, the one door to the terminal for text a model, a server or a repository produced, and its twins
`one_line()` and `json_text()` are neutral.py's, re-exported here where the rest of the CLI imports them.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import time
from pathlib import Path
from typing import IO, Any

from mini_claude.cli.terminal.neutral import clean, json_text, one_line
from mini_claude.cli.terminal.retry_line import RetryCountdown, retry_line
from mini_claude.cli.terminal.tool_display import Call, ToolDisplay
from mini_claude.models.base import AssistantTurn, RetryNotice

__all__ = ["TerminalUI", "clean", "json_text", "one_line", "setup_logging"]

THINKING_FOLDED = "✻ Thinking… (MINI_CLAUDE_SHOW_THINKING=1 shows it)"
THINKING_REDACTED = "✻ Thinking… (encrypted by the API)"


def setup_logging(*, debug: bool = False) -> None:
    """Log to stderr: warnings and errors (everything with `debug`), every record with the secrets in its URLs
    redacted (`logredact`, httpx's request lines included) and passed through `clean` (records quote server
    text)."""
    from mini_claude.logredact import add_redaction

    handler = _CurrentStderr()
    handler.setFormatter(_Formatter("%(levelname)s %(name)s: %(message)s", tracebacks=debug))
    logging.basicConfig(level=logging.DEBUG if debug else logging.WARNING, handlers=[handler])
    add_redaction(scrub=clean)


class _Formatter(logging.Formatter):
    """One line per record unless `--debug`: an exception's traceback becomes `(ValueError: why)` after the message
    (a traceback on stderr is for debugging, never the user's answer to a problem)."""

    def __init__(self, fmt: str, *, tracebacks: bool) -> None:
        super().__init__(fmt)
        self._tracebacks = tracebacks

    def format(self, record: logging.LogRecord) -> str:
        if not self._tracebacks and (record.exc_info or record.stack_info):
            exc = record.exc_info[1] if record.exc_info else None
            shown = f"{record.getMessage()} ({type(exc).__name__}: {exc})" if exc is not None else record.getMessage()
            record = logging.makeLogRecord({**record.__dict__, "msg": shown, "args": None, "exc_info": None,
                                            "exc_text": None, "stack_info": None})
        return super().format(record)


class _CurrentStderr(logging.StreamHandler):  # type: ignore[type-arg]
    """On a terminal, writes to `sys.stderr` as it is when a record comes: while the spinner is live, rich's proxy,
    which prints the line above the spinner instead of through it (a warning from a background task). Redirected
    (`2>debug.log`), to that file, always: the proxies print to stdout."""

    def __init__(self) -> None:
        self._real = sys.stderr
        self._follow = _isatty(self._real)
        super().__init__()

    @property  # type: ignore[override]
    def stream(self) -> Any:
        return sys.stderr if self._follow else self._real

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # no isatty, or closed
        return False


class TerminalUI(ToolDisplay):
    """An AgentUI for the terminal. `print_mode`: stdout gets only the final answer (written by the caller). Its tool
    calls and their results: `ToolDisplay` (tool_display.py)."""

    def __init__(self, *, print_mode: bool = False, out: IO[str] | None = None, err: IO[str] | None = None,
                 rich_output: bool | None = None) -> None:
        self.print_mode = print_mode
        self._out = out
        self._err = err
        self.rich = (self.out.isatty() if rich_output is None else rich_output) and not print_mode
        self._buffer: list[str] = []
        self._live: Any = None
        self._live_transient = False  # the Live shows only the spinner (no text yet): it leaves nothing behind
        self._console: Any = None
        self._thinking: _Thinking | None = None
        self._running: list[Call] = []  # the calls started and not finished, in start order
        self._running_since: float | None = None  # when the first of them started (the spinner's clock)
        self._last_shown: Call | None = None  # whose line is the last tool line printed
        self._folded: tuple[str, str] | None = None  # (call line, whole text) of the last result shown folded
        self._pause = 0  # questions being asked: no live line meanwhile
        self.cwd: Path | None = None  # paths under it are shown relative (None: the process's working directory)
        self.show_thinking = os.environ.get("MINI_CLAUDE_SHOW_THINKING", "").strip().lower() in ("1", "true", "yes")

    @property
    def out(self) -> IO[str]:
        """The stream given, else whatever `sys.stdout` is now (the REPL's prompt patches it while it is shown,
        so a line written meanwhile lands above the prompt instead of over it)."""
        return self._out or sys.stdout

    @property
    def err(self) -> IO[str]:
        return self._err or sys.stderr

    # ---- AgentUI -----------------------------------------------------------------------------------------------

    def request_started(self, input_tokens: int, activity: str = "Thinking") -> None:
        """A model request is on its way: in the terminal, a spinner with what it is for, the seconds waited and
        the tokens sent and received so far, until the answer is complete (`request_finished`)."""
        if not self.rich:
            return
        self._thinking = _Thinking(input_tokens, activity)
        self._live_update()

    def request_finished(self, completed: bool = True) -> None:
        if self._thinking is None:
            return
        self._thinking = None
        if not completed:  # failed or cancelled: nothing stays live over the next prompt
            self._end_text()
            self._spin()  # a sub-agent's request inside a Task: the Task still runs
            return
        if self._live is not None and self._live_transient:
            self._live.stop()  # only the spinner was shown: it goes
            self._live = None
            self._spin()
        elif self._live is not None:
            self._live_update()  # the text stays, the spinner line goes

    def model_retrying(self, notice: RetryNotice) -> None:
        """A request failed and waits to be sent again: the spinner line shows why and counts down (retry_line.py);
        without a spinner (-p), one line on stderr."""
        if self._thinking is not None:
            self._thinking.retry = RetryCountdown(notice)
            self._live_update()
        else:
            self._line(self.err, clean(retry_line(notice), visible=True), style="yellow")

    def text_delta(self, text: str) -> None:
        if self.print_mode:
            return
        self._buffer.append(text)
        if self._thinking is not None:
            self._thinking.received += len(text)
        if self.rich:
            self._live_update()
        else:
            self.out.write(clean(text, visible=True))
            self.out.flush()

    def assistant_done(self, turn: AssistantTurn) -> None:
        if self.print_mode:
            return
        self._show_thinking(turn)
        if not self._buffer and turn.text:  # non-streaming backend: show the whole text now
            self.text_delta(turn.text)
        self._end_text()

    # ---- helpers -----------------------------------------------------------------------------------------------

    def info(self, text: str) -> None:
        self._line(self.err, clean(text), style="dim")

    def warn(self, text: str) -> None:
        self._line(self.err, clean(text), style="yellow")

    def error(self, text: str) -> None:
        self._line(self.err, clean(text), style="bold red")

    def _show_thinking(self, turn: AssistantTurn) -> None:
        """The turn's thinking: one dim line, or its text (dim) when `show_thinking`."""
        thinking = "\n".join(str(b.get("thinking") or "") for b in turn.thinking if b.get("type") == "thinking")
        if not turn.thinking:
            return
        if self.show_thinking and thinking.strip():
            shown = "✻ " + clean(thinking, visible=True)
        else:
            shown = THINKING_FOLDED if thinking.strip() else THINKING_REDACTED
        self._line(self.out, shown, style="dim")

    def _tool_stream(self) -> IO[str]:
        return self.err if self.print_mode else self.out

    def _line(self, stream: IO[str], text: str, *, style: str = "") -> None:
        if self.rich and stream is self.out:
            self._console_for(stream).print(text, style=style, markup=False, highlight=False)
        else:
            stream.write(text + "\n")
            stream.flush()

    def _console_for(self, stream: IO[str]) -> Any:
        if self._console is None:
            from rich.console import Console

            self._console = Console(file=self._out, highlight=False)  # None: rich follows sys.stdout
        if self._out is None:  # the REPL's prompt patches sys.stdout (no terminal size of its own): the real one's
            columns = shutil.get_terminal_size((0, 0)).columns
            if columns > 0:
                self._console.width = columns
        return self._console

    def _live_update(self) -> None:
        from rich.console import Group
        from rich.markdown import Markdown

        if self._pause:
            return
        transient = not self._buffer
        if self._live is not None and self._live_transient and not transient:
            self._live.stop()  # the first text: from a spinner that vanishes to text that stays
            self._live = None
        if self._live is None:
            from rich.live import Live

            self._live = Live(console=self._console_for(self.out), refresh_per_second=8, transient=transient)
            self._live_transient = transient
            self._live.start()
        # cleaned before rich sees it: its Markdown (and the code blocks in it) would pass ESC and C1 through
        parts: list[Any] = [Markdown(clean("".join(self._buffer), visible=True))] if self._buffer else []
        if self._thinking is not None:
            parts.append(self._thinking)
        if self._running and self._running_since is not None:
            from mini_claude.cli.terminal.tool_lines import Running

            parts.append(Running(self._running_since, len(self._running)))
        self._live.update(Group(*parts))

    def _stop_live(self) -> None:
        """End the live display: the streamed text stays on the screen, the spinner lines go."""
        if self._live is None:
            return
        if not self._live_transient:  # redrawn without the spinners first: its last frame is what stays
            from rich.markdown import Markdown

            self._live.update(Markdown(clean("".join(self._buffer), visible=True)), refresh=True)
            self._buffer = []
        self._live.stop()
        self._live = None

    def _end_text(self) -> None:
        self._thinking = None
        if self._live is not None:
            self._stop_live()
        elif self._buffer and not self.rich and not "".join(self._buffer).endswith("\n"):
            self.out.write("\n")
            self.out.flush()
        self._buffer = []

    @staticmethod
    def _syntax(text: str) -> Any:
        from rich.syntax import Syntax

        return Syntax(text, "diff", theme="ansi_dark", background_color="default")


class _Thinking:
    """The spinner line while the model works: `✻ Thinking… 4s · ↑ 12.3k tokens · ↓ 250 tokens · esc or ctrl+c to
    interrupt`, redrawn by rich's Live (elapsed time from the monotonic clock; tokens received estimated from the
    characters streamed, 4 a token)."""

    def __init__(self, input_tokens: int, activity: str = "Thinking") -> None:
        from rich.spinner import Spinner

        self.activity = activity
        self.started = time.monotonic()
        self.input_tokens = input_tokens
        self.received = 0
        self.retry: RetryCountdown | None = None  # while a failed attempt waits to be sent again
        self._spinner = Spinner("dots", style="cyan")

    def label(self) -> str:
        if self.retry is not None and not self.received:
            return f"{clean(self.retry.label(), visible=True)} · esc or ctrl+c to interrupt"
        seconds = int(time.monotonic() - self.started)
        parts = [f"{seconds}s", f"↑ {_tokens(self.input_tokens)} tokens"]
        if self.received:
            parts.append(f"↓ {_tokens(self.received // 4)} tokens")
        return f"{self.activity}… {' · '.join(parts)} · esc or ctrl+c to interrupt"

    def __rich__(self) -> Any:
        from rich.text import Text

        self._spinner.text = Text(self.label(), style="yellow" if self.retry is not None and not self.received else "dim")
        return self._spinner


def _tokens(count: int) -> str:
    return str(count) if count < 1000 else f"{count / 1000:.1f}k"
