"""Keys typed during a turn just before a permission question appears (found by the issue-21 red team): the Esc
watcher reads the terminal only when the event loop gets round to it, and building a question can hold the loop
(the diff of a 20,000-line overwrite takes about a second). Whatever the watcher had not read yet stayed in the
terminal when it gave the terminal back to the question, so a message being typed ("yes also fix the docs⏎")
became the question's answer: `y`, the call allowed unseen. Now the watcher takes in everything already typed
before it lets go (typeahead for the next prompt; an Esc among it interrupts). A real pseudo-terminal."""

from __future__ import annotations

import os
import select

from mini_claude.cli.keys import EscapeWatcher


def _held(fd: int) -> bool:
    """Whether the terminal holds keys for the next reader (select: nothing is consumed)."""
    return bool(select.select([fd], [], [], 0.05)[0])


async def test_keys_typed_before_the_question_are_not_its_answer(terminal: tuple[int, int]) -> None:
    leader, follower = terminal
    pressed: list[int] = []
    watcher = EscapeWatcher(lambda: pressed.append(1), fd=follower)
    watcher.start()
    try:
        os.write(leader, b"yes also fix the docs\r")  # the loop is busy: the watcher's reader has not run
        assert _held(follower)
        with watcher.paused():  # the question is asked now
            assert not _held(follower), "the typed line would answer the question"
        assert watcher.take_typeahead() == "yes also fix the docs\n" and pressed == []

        os.write(leader, b"\x1b")  # an Esc pressed before the question: an interrupt, not a key for it
        assert _held(follower)
        with watcher.paused():
            assert not _held(follower)
        assert pressed == [1]
    finally:
        watcher.stop()


async def test_keys_typed_as_the_turn_ends_wait_at_the_prompt_unsent(terminal: tuple[int, int]) -> None:
    leader, follower = terminal
    watcher = EscapeWatcher(lambda: None, fd=follower)
    watcher.start()
    os.write(leader, b"next message\r")
    assert _held(follower)
    watcher.stop()
    assert not _held(follower) and watcher.take_typeahead() == "next message\n"  # Enter is a line break in it
