"""The bash tool with real subprocesses: exit codes, timeouts, cancellation, background children, capping."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from mini_claude.tools.base import ToolContext
from mini_claude.tools.shell import MAX_OUTPUT_CHARS, BashTool
from tests.helpers import wait_gone

pytestmark = pytest.mark.timeout(30)


async def bash(ctx: ToolContext, command: str, **kw: object):
    return await BashTool().run({"command": command, **kw}, ctx)


async def test_success_in_cwd(ctx: ToolContext) -> None:
    result = await bash(ctx, "pwd; echo out; echo err >&2")
    assert not result.is_error
    assert result.as_text() == f"{ctx.cwd}\nout\nerr"


async def test_no_output(ctx: ToolContext) -> None:
    result = await bash(ctx, "true")
    assert not result.is_error and result.as_text() == "(no output)"


async def test_stdin_is_dev_null(ctx: ToolContext) -> None:
    result = await bash(ctx, "cat; echo done")
    assert result.as_text() == "done"


async def test_nonzero_exit_is_error(ctx: ToolContext) -> None:
    result = await bash(ctx, "echo failing; exit 3")
    assert result.is_error
    assert result.as_text() == "failing\n\nexit code 3"


async def test_bad_arguments(ctx: ToolContext) -> None:
    assert (await BashTool().run({}, ctx)).is_error
    assert (await bash(ctx, "true", timeout=0)).is_error
    assert (await bash(ctx, "true", timeout="soon")).is_error


async def test_timeout_kills_the_whole_group(ctx: ToolContext) -> None:
    pidfile = ctx.cwd / "pid"
    start = time.monotonic()
    result = await bash(ctx, f"sleep 100 & echo $! > {pidfile}; echo started; sleep 100", timeout=500)
    assert time.monotonic() - start < 5
    assert result.is_error
    assert result.as_text().startswith("command timed out after 0.5s")
    assert "started" in result.as_text()
    assert await wait_gone(int(pidfile.read_text()))


async def test_timeout_escalates_to_sigkill(ctx: ToolContext) -> None:
    pidfile = ctx.cwd / "pid"
    cmd = f"trap '' TERM; (trap '' TERM; sleep 100) & echo $! > {pidfile}; sleep 100"
    result = await bash(ctx, cmd, timeout=300)
    assert result.is_error and "timed out" in result.as_text()
    assert await wait_gone(int(pidfile.read_text()))


async def test_cancellation_kills_group_and_reraises(ctx: ToolContext) -> None:
    child_pid, grandchild_pid = ctx.cwd / "child", ctx.cwd / "grandchild"
    cmd = f"echo $$ > {child_pid}; sleep 100 & echo $! > {grandchild_pid}; wait"
    task = asyncio.create_task(bash(ctx, cmd))
    deadline = time.monotonic() + 5
    while not (grandchild_pid.exists() and grandchild_pid.read_text().strip()):
        assert time.monotonic() < deadline, "command did not start"
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_gone(int(child_pid.read_text()))
    assert await wait_gone(int(grandchild_pid.read_text()))


async def test_background_grandchild_does_not_hang(ctx: ToolContext) -> None:
    pidfile = ctx.cwd / "pid"
    start = time.monotonic()
    result = await bash(ctx, f"sleep 100 & echo $! > {pidfile}; echo quick")
    assert time.monotonic() - start < 5
    assert not result.is_error and result.as_text() == "quick"
    assert await wait_gone(int(pidfile.read_text()))


async def test_background_output_written_right_away_is_kept(ctx: ToolContext) -> None:
    result = await bash(ctx, "(sleep 0.1; echo late) & echo early")
    assert result.as_text().split() == ["early", "late"]


async def test_detached_background_is_also_stopped(ctx: ToolContext) -> None:
    pidfile = ctx.cwd / "pid"
    result = await bash(ctx, f"nohup sleep 100 >/dev/null 2>&1 & echo $! > {pidfile}")
    assert not result.is_error
    assert await wait_gone(int(pidfile.read_text()))


async def test_output_capped_keeping_head_and_tail(ctx: ToolContext) -> None:
    result = await bash(ctx, "seq 1 200000")
    text = result.as_text()
    assert not result.is_error
    assert text.startswith("1\n2\n3\n")
    assert text.endswith("199999\n200000")
    assert "bytes omitted" in text
    assert len(text) < MAX_OUTPUT_CHARS + 400


async def test_moderate_output_is_whole(ctx: ToolContext) -> None:
    result = await bash(ctx, "seq 1 1000")
    assert result.as_text() == "\n".join(str(i) for i in range(1, 1001))


async def test_missing_cwd_is_error(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path / "gone", spill_dir=tmp_path / "spill")
    result = await bash(ctx, "true")
    assert result.is_error and "does not exist" in result.as_text()
