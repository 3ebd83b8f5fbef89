"""The REPL's Esc watcher (cli/keys.py) on a real pseudo-terminal: a lone Esc interrupts, an arrow key does not,
other keys are kept for the next prompt, a question gets the terminal back in its own mode, and `stop` restores
the mode it found. Not a terminal: nothing is read or changed."""

from __future__ import annotations

import asyncio
import os
import termios

from mini_claude.cli.keys import EscapeWatcher, split_keys
from tests.helpers import eventually


def test_split_keys_tells_a_lone_esc_from_sequences() -> None:
    assert split_keys("\x1b") == (1, "")
    assert split_keys("\x1b\x1b") == (2, "")
    assert split_keys("\x1b[A\x1bOP\x1b[1;5C") == (0, "")  # arrow, F1, Ctrl+Right
    assert split_keys("\x1bb") == (0, "")  # Alt+b
    assert split_keys("ab\x7fc\rd\t\x01", typed="x") == (0, "xac\nd\t")  # Backspace, Enter, a control dropped
    assert split_keys("\x7f\x7f", typed="a") == (0, "")


def _watching(watcher: EscapeWatcher) -> bool:  # (a call: mypy would narrow the property across statements)
    return watcher.watching


async def test_esc_interrupts_and_other_keys_wait_for_the_prompt(terminal: tuple[int, int]) -> None:
    leader, follower = terminal
    before = termios.tcgetattr(follower)
    pressed: list[int] = []
    watcher = EscapeWatcher(lambda: pressed.append(1), fd=follower)
    watcher.start()
    try:
        mode = termios.tcgetattr(follower)
        assert not mode[3] & (termios.ICANON | termios.ECHO) and mode[3] & termios.ISIG  # Ctrl+C still signals
        os.write(leader, b"\x1b[A")
        os.write(leader, "hé".encode())
        await eventually(lambda: watcher.take_typeahead() == "hé", "the typed text kept")
        assert pressed == []  # an arrow key is no Esc
        os.write(leader, b"\x1b")
        await eventually(lambda: pressed == [1], "the Esc")
    finally:
        watcher.stop()
    assert termios.tcgetattr(follower) == before


async def test_a_question_gets_the_terminal_back(terminal: tuple[int, int]) -> None:
    leader, follower = terminal
    before = termios.tcgetattr(follower)
    pressed: list[int] = []
    watcher = EscapeWatcher(lambda: pressed.append(1), fd=follower)
    watcher.start()
    try:
        with watcher.paused():
            assert termios.tcgetattr(follower) == before and not _watching(watcher)
            os.write(leader, b"\x1by\r")  # the question's answer: not the watcher's
            assert not asyncio.get_running_loop().remove_reader(follower)  # no reader installed to take it
            with watcher.paused():  # nested questions (a permission question's follow-up)
                pass
            assert not _watching(watcher)
        assert _watching(watcher)
        assert pressed == [] and watcher.take_typeahead() == ""
        assert os.read(follower, 16) == b"\x1by\n"  # still there for the question (ICRNL: CR read as LF)
    finally:
        watcher.stop()
    assert termios.tcgetattr(follower) == before


async def test_not_a_terminal_is_left_alone() -> None:
    read, write = os.pipe()
    try:
        watcher = EscapeWatcher(lambda: None, fd=read)
        watcher.start()
        assert not _watching(watcher)
        with watcher.paused():
            pass
        watcher.stop()
        os.write(write, b"\x1b")
        assert os.read(read, 1) == b"\x1b"  # nothing consumed it
    finally:
        os.close(read)
        os.close(write)
