"""Esc while the REPL works (a turn, a `!` command, /compact, a login): prompt_toolkit is not reading then, so
`EscapeWatcher` reads the terminal itself for that time.

`start()` puts the terminal in cbreak mode (no echo, no line editing; ISIG stays, so Ctrl+C still raises SIGINT)
and watches stdin on the event loop; a lone Esc calls `on_escape`. A key sequence that starts with ESC (an arrow,
a function key) is not an Esc. Anything else typed meanwhile is kept, not lost: `take_typeahead()` hands it to the
next prompt as its starting text (Backspace edits it; Enter becomes a line break in it, so nothing is sent
unseen). `paused()` gives the terminal back (its saved mode, no reader) while a question asked mid-turn reads its
answer with prompt_toolkit, so the answer keys reach the question. `stop()` restores the saved mode. Both first read
what the terminal already holds (`_drain`): keys typed before the question was shown, while the event loop was busy
(preparing a long diff takes a second), are typeahead, never the question's answer.

When stdin is not a terminal (a pipe, a file, /dev/null) nothing is read and nothing changes: Ctrl+C (SIGINT) is
then the only interrupt.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import logging
import os
import select
import sys
import termios
import tty
from collections.abc import Callable, Iterator
from typing import Any

log = logging.getLogger(__name__)

__all__ = ["ESC", "EscapeWatcher", "split_keys"]

ESC = "\x1b"
READ_BYTES = 1024
MAX_DRAIN_READS = 64  # a terminal that never stops sending is not read forever
_BACKSPACES = ("\x7f", "\x08")


def split_keys(data: str, typed: str = "") -> tuple[int, str]:
    """(lone Esc presses, `typed` with the other keys of `data` applied) for `data` as one read returned it. `ESC [` / `ESC O` start a
    sequence (arrows, function keys), skipped whole; ESC with another key is Alt+key, skipped; ESC at the end or
    before another ESC is the Esc key. Controls but newline and tab are dropped; a Backspace removes the last
    character kept; CR is a newline."""
    escapes, kept, i = 0, list(typed), 0
    while i < len(data):
        char = data[i]
        if char == ESC:
            following = data[i + 1] if i + 1 < len(data) else ""
            if following in ("", ESC):
                escapes += 1
                i += 1
                continue
            i += 2
            if following in "[O":  # CSI / SS3: parameters up to the final byte (@ to ~)
                while i < len(data) and not "@" <= data[i] <= "~":
                    i += 1
                i += 1
            continue
        if char in _BACKSPACES:
            if kept:
                kept.pop()
        elif char == "\r" or char == "\n":
            kept.append("\n")
        elif char == "\t" or char >= " ":
            kept.append(char)
        i += 1
    return escapes, "".join(kept)


class EscapeWatcher:
    """Reads the terminal while the REPL works (see the module docstring). Not re-entrant: one `start`/`stop`."""

    def __init__(self, on_escape: Callable[[], None], fd: int | None = None) -> None:
        self._on_escape = on_escape
        self._fd = _stdin_fd() if fd is None else fd
        self._saved: list[Any] | None = None  # the terminal's mode before start(); None: not watching
        self._paused = 0
        self._typeahead = ""
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    @property
    def watching(self) -> bool:
        return self._saved is not None and self._paused == 0

    def start(self) -> None:
        if self._saved is not None or not _is_terminal(self._fd):
            return
        try:
            self._saved = termios.tcgetattr(self._fd)
        except termios.error:
            return
        self._paused = 0
        self._resume()

    def stop(self) -> None:
        if self._saved is None:
            return
        if self._paused == 0:
            self._drain()
        self._release()
        self._saved = None
        self._paused = 0

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """The terminal as it was, for prompt_toolkit to ask a question; watching again afterwards."""
        if self._saved is None:
            yield
            return
        self._paused += 1
        if self._paused == 1:
            self._drain()  # what was typed before the question is not its answer
            self._release()
        try:
            yield
        finally:
            self._paused -= 1
            if self._paused == 0 and self._saved is not None:
                self._resume()

    def take_typeahead(self) -> str:
        text, self._typeahead = self._typeahead, ""
        return text

    def _resume(self) -> None:
        try:
            tty.setcbreak(self._fd, termios.TCSANOW)
            asyncio.get_running_loop().add_reader(self._fd, self._readable)
        except (termios.error, OSError, RuntimeError, NotImplementedError) as exc:
            # the terminal would not go back to cbreak (it went away) or the loop cannot watch it: no Esc, and
            # the terminal left as it was; Ctrl+C still interrupts
            log.debug("Esc not watched from here on: %s", exc)
            self._restore()

    def _release(self) -> None:
        with contextlib.suppress(RuntimeError, ValueError, OSError):
            asyncio.get_running_loop().remove_reader(self._fd)
        self._restore()

    def _restore(self) -> None:
        if self._saved is not None:
            with contextlib.suppress(termios.error, OSError):
                termios.tcsetattr(self._fd, termios.TCSANOW, self._saved)

    def _drain(self) -> None:
        """Take in every key the terminal holds now, without waiting (see the module docstring)."""
        for _ in range(MAX_DRAIN_READS):
            try:
                ready, _, _ = select.select([self._fd], [], [], 0)
            except (OSError, ValueError):
                return
            if not ready or not self._readable():
                return

    def _readable(self) -> bool:
        """Read once and apply the keys; False when nothing could be read."""
        try:
            data = os.read(self._fd, READ_BYTES)
        except BlockingIOError:
            return False
        except OSError:
            data = b""
        if not data:  # the terminal went away: stop reading it
            with contextlib.suppress(RuntimeError, ValueError, OSError):
                asyncio.get_running_loop().remove_reader(self._fd)
            return False
        escapes, self._typeahead = split_keys(self._decoder.decode(data), self._typeahead)
        for _ in range(escapes):
            self._on_escape()
        return True


def _stdin_fd() -> int:
    """stdin's descriptor; -1 when it has none (replaced by an object without one)."""
    try:
        return sys.stdin.fileno()
    except (AttributeError, ValueError, OSError):  # io.UnsupportedOperation is both OSError and ValueError
        return -1


def _is_terminal(fd: int) -> bool:
    if fd < 0:
        return False
    try:
        return os.isatty(fd)
    except OSError:
        return False
