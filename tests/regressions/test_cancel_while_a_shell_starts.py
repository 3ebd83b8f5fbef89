"""A Bash command cancelled while its process is still being set up (Ctrl+C right after a background command was
started, under load) must not hang: asyncio killed the shell alone and then waited for its output pipe to close,
which a child the shell had already started (`sleep 100 &`) held open for as long as it ran. `start_shell` now
lets the setup finish and ends the whole group before passing the cancellation on."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from mini_claude.tools.procs import start_shell
from tests.helpers import wait_gone

pytestmark = pytest.mark.timeout(30)


async def test_a_cancelled_start_ends_the_group_and_returns(tmp_path: Path) -> None:
    starting = asyncio.ensure_future(start_shell("sleep 100 & echo $! > pid; wait", tmp_path, None))
    pid = tmp_path / "pid"
    while not pid.exists():  # one step of the loop at a time, each followed by a pause the shell can use
        await asyncio.sleep(0)
        assert not starting.done(), "the setup finished before the shell had started its child"
        deadline = time.monotonic() + 0.05
        while not pid.exists() and time.monotonic() < deadline:
            time.sleep(0.005)  # noqa: ASYNC251 -- on purpose: the loop is held, the setup still waits on it
    starting.cancel()
    began = time.monotonic()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(starting, 10)
    assert time.monotonic() - began < 5
    assert await wait_gone(int(pid.read_text()))
