"""Background shell commands with real processes: `Bash` with `run_in_background` returns at once with the task's id
and output file; `TaskOutput` shows only the output that is new since the last look and can wait for the end;
`TaskStop` ends the whole process group; an unknown id is a clear error that touches nothing; the model is told
once when a task ends; the output file is capped; timeouts and the session's close leave nothing running."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from mini_claude.tools.background import BackgroundTasks
from mini_claude.tools.base import ToolContext, ToolResult
from mini_claude.tools.former_names import upgrade_tool_use
from mini_claude.tools.shell import BashTool
from mini_claude.tools.task_tools import TaskOutputTool, TaskStopTool
from tests.helpers import assert_group_gone, eventually, read_pidfile, wait_gone

pytestmark = pytest.mark.timeout(30)

# prints "one", waits for a file named `go` in the working directory, prints "two", then stays up
TWO_STEPS = "echo one; while [ ! -e go ]; do sleep 0.02; done; echo two; sleep 100"


@pytest.fixture
async def ctx(tmp_path: Path) -> AsyncIterator[ToolContext]:
    work = tmp_path / "work"
    work.mkdir()
    context = ToolContext(cwd=work, spill_dir=tmp_path / "spill")
    try:
        yield context
    finally:
        await context.background.aclose()


async def start(ctx: ToolContext, command: str, **kw: object) -> ToolResult:
    return await BashTool().run({"command": command, "run_in_background": True, **kw}, ctx)


async def output(ctx: ToolContext, task_id: str, **kw: object) -> ToolResult:
    return await TaskOutputTool().run({"task_id": task_id, "block": False, **kw}, ctx)


async def test_start_returns_at_once_with_the_id_and_the_output_file(ctx: ToolContext) -> None:
    result = await start(ctx, "echo hello; sleep 100", description="greets")
    assert not result.is_error
    text = result.as_text()
    path = ctx.spill_dir / "bash_1.output"
    assert text.startswith("Started in the background as task bash_1 (stopped after 600s if still running).")
    assert f"Its output is being written to {path}." in text
    task = ctx.background.get("bash_1")
    assert task is not None and task.running and task.description == "greets"
    await eventually(lambda: path.read_text() == "hello\n", "the output in the file")
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert (await start(ctx, "true")).as_text().startswith("Started in the background as task bash_2 ")


async def test_reads_show_only_what_is_new(ctx: ToolContext) -> None:
    await start(ctx, TWO_STEPS)
    path = ctx.spill_dir / "bash_1.output"
    await eventually(lambda: path.read_text() == "one\n", "the first line")
    first = await output(ctx, "bash_1")
    assert not first.is_error
    lines = first.as_text().splitlines()
    assert lines[0].startswith("task bash_1: running for ")
    assert lines[1:] == [f"output file: {path}", "new output:", "one"]

    (ctx.cwd / "go").touch()
    await eventually(lambda: path.read_text() == "one\ntwo\n", "the second line")
    second = (await output(ctx, "bash_1")).as_text().splitlines()
    assert second[1:] == [f"output file: {path}", "new output:", "two"]
    assert (await output(ctx, "bash_1")).as_text().endswith("\nno new output")


async def test_a_blocking_read_waits_for_the_end(ctx: ToolContext) -> None:
    await start(ctx, "sleep 0.3; echo done; exit 3")
    result = await TaskOutputTool().run({"task_id": "bash_1", "block": True, "timeout": 20_000}, ctx)
    lines = result.as_text().splitlines()
    assert lines[0].startswith("task bash_1: exited with code 3 after ")
    assert lines[2:] == ["new output:", "done"]
    assert ctx.background.take_notices(ctx, everyone=True) == []  # the model saw the end: no notice


async def test_a_blocking_read_is_bounded_by_its_timeout(ctx: ToolContext) -> None:
    await start(ctx, "sleep 100")
    loop = asyncio.get_running_loop()
    began = loop.time()
    result = await TaskOutputTool().run({"task_id": "bash_1", "timeout": 300}, ctx)  # block defaults to true
    assert 0.25 <= loop.time() - began < 5
    assert "running for" in result.as_text() and "(still running after waiting 0.3s)" in result.as_text()


async def test_stop_ends_the_whole_group(ctx: ToolContext) -> None:
    command = "sleep 100 & echo $! > child; echo $$ > shell; wait"
    await start(ctx, command)
    child, shell = read_pidfile(ctx.cwd / "child"), read_pidfile(ctx.cwd / "shell")
    result = await TaskStopTool().run({"task_id": "bash_1"}, ctx)
    assert not result.is_error
    assert json.loads(result.as_text()) == {"message": f"Stopped background task bash_1 ({command}).",
                                            "task_id": "bash_1", "task_type": "local_bash", "command": command}
    assert await wait_gone(child) and await wait_gone(shell)
    assert_group_gone(shell)
    assert (await output(ctx, "bash_1")).as_text().startswith("task bash_1: was stopped by TaskStop after ")
    again = await TaskStopTool().run({"shell_id": "bash_1"}, ctx)  # Claude Code's former key still works
    assert again.is_error and again.as_text().startswith("Background task bash_1 is not running: it was stopped "
                                                         "by TaskStop after ")
    assert ctx.background.take_notices(ctx) == []  # the model stopped it: nothing to announce


async def test_stop_takes_the_former_shell_id_key(ctx: ToolContext) -> None:
    await start(ctx, "sleep 100")
    result = await TaskStopTool().run({"shell_id": "bash_1"}, ctx)
    assert not result.is_error and json.loads(result.as_text())["task_id"] == "bash_1"


async def test_an_unknown_id_is_a_clear_error_and_touches_nothing(ctx: ToolContext) -> None:
    for tool in (TaskOutputTool(), TaskStopTool()):
        result = await tool.run({"task_id": "bash_9"}, ctx)
        assert result.is_error and result.as_text() == "No background task with ID 'bash_9': this session has none."
    await start(ctx, "sleep 100")
    result = await TaskStopTool().run({"task_id": "../bash_1"}, ctx)
    assert result.as_text() == "No background task with ID '../bash_1': this session's background tasks are: bash_1."
    task = ctx.background.get("bash_1")
    assert task is not None and task.running
    missing = await TaskStopTool().run({}, ctx)
    assert missing.is_error and missing.as_text() == "task_id is required: the id of the background task to stop"


async def test_the_end_is_announced_once_to_the_agent_that_started_it(ctx: ToolContext) -> None:
    await start(ctx, "echo bye; exit 2", description="says bye")
    task = ctx.background.get("bash_1")
    assert task is not None
    await asyncio.wait_for(task.done.wait(), 10)
    other = ToolContext(cwd=ctx.cwd, spill_dir=ctx.spill_dir, background=ctx.background)  # a sub-agent's copy
    assert ctx.background.take_notices(other) == []
    notes = ctx.background.take_notices(ctx)
    assert len(notes) == 1
    note = notes[0]
    assert note.startswith("<background-task-ended>\nBackground task bash_1 (says bye — `echo bye; exit 2`) exited "
                           "with code 2 after ")
    assert f"Its output is in {ctx.spill_dir / 'bash_1.output'};" in note
    assert "not a message from the user" in note
    assert ctx.background.take_notices(ctx, everyone=True) == []


async def test_a_sub_agents_task_reaches_the_main_agent_if_it_did_not_take_it(ctx: ToolContext) -> None:
    child = ToolContext(cwd=ctx.cwd, spill_dir=ctx.spill_dir, background=ctx.background)
    await start(child, "true")
    task = ctx.background.get("bash_1")
    assert task is not None
    await asyncio.wait_for(task.done.wait(), 10)
    assert ctx.background.take_notices(ctx) == []
    assert len(ctx.background.take_notices(ctx, everyone=True)) == 1


async def test_the_output_file_is_capped_and_reads_show_the_latest(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path, spill_dir=tmp_path / "spill",
                      background=BackgroundTasks(file_cap=1000, tail_keep=500))
    try:
        await start(ctx, "seq 1 20000")
        task = ctx.background.get("bash_1")
        assert task is not None
        await asyncio.wait_for(task.done.wait(), 10)
        total = len("".join(f"{n}\n" for n in range(1, 20001)).encode())
        data = (ctx.spill_dir / "bash_1.output").read_text()
        assert data.startswith("1\n2\n3\n")
        assert data[1000:] == (f"\n[mini-claude: output past 1000 bytes was not written to this file; "
                               f"{total - 1000} bytes left out]\n")
        text = (await output(ctx, "bash_1")).as_text()
        assert f"({total - 500} bytes of new output before this were left out; the output file has them)" in text
        assert text.endswith("\n19999\n20000")
    finally:
        await ctx.background.aclose()


async def test_a_background_command_is_killed_at_its_timeout(ctx: ToolContext) -> None:
    result = await start(ctx, f"echo $$ > {ctx.cwd / 'pid'}; sleep 100", timeout=300)
    assert "(stopped after 0.3s if still running)" in result.as_text()
    pid = read_pidfile(ctx.cwd / "pid")
    task = ctx.background.get("bash_1")
    assert task is not None
    await asyncio.wait_for(task.done.wait(), 10)
    assert await wait_gone(pid)
    assert task.status() == "was killed at its timeout (0.3s)"
    assert "was killed at its timeout (0.3s) after" in ctx.background.take_notices(ctx)[0]


async def test_what_the_shell_left_running_ends_with_it(ctx: ToolContext) -> None:
    await start(ctx, f"sleep 100 & echo $! > {ctx.cwd / 'pid'}; echo started")
    pid = read_pidfile(ctx.cwd / "pid")
    task = ctx.background.get("bash_1")
    assert task is not None
    await asyncio.wait_for(task.done.wait(), 10)
    assert task.status() == "exited with code 0"
    assert await wait_gone(pid)


async def test_closing_the_session_stops_every_task(ctx: ToolContext) -> None:
    for n in range(2):
        await start(ctx, f"echo $$ > {ctx.cwd / f'pid{n}'}; sleep 100")
    pids = [read_pidfile(ctx.cwd / f"pid{n}") for n in range(2)]
    await ctx.background.aclose()
    for pid in pids:
        assert await wait_gone(pid)
        assert_group_gone(pid)
    assert [t.status() for t in ctx.background.tasks()] == ["was stopped when the session ended"] * 2


async def test_a_character_cut_in_two_is_shown_whole(ctx: ToolContext) -> None:
    await start(ctx, "printf 'caf\\303'; while [ ! -e go ]; do sleep 0.02; done; printf '\\251!'; sleep 100")
    path = ctx.spill_dir / "bash_1.output"
    await eventually(lambda: path.read_bytes() == b"caf\xc3", "the first half")
    assert (await output(ctx, "bash_1")).as_text().endswith("new output:\ncaf")
    (ctx.cwd / "go").touch()
    await eventually(lambda: path.read_bytes() == "café!".encode(), "the rest")
    assert (await output(ctx, "bash_1")).as_text().endswith("new output:\né!")


def test_former_names_reach_these_tools_with_their_keys() -> None:
    assert upgrade_tool_use({"type": "tool_use", "name": "BashOutput", "input": {"bash_id": "b1"}})["input"] == {
        "task_id": "b1"}
    for name in ("KillShell", "KillBash"):
        upgraded = upgrade_tool_use({"type": "tool_use", "name": name, "input": {"shell_id": "b1"}})
        assert (upgraded["name"], upgraded["input"]) == ("TaskStop", {"task_id": "b1"})


async def test_an_output_file_left_in_the_folder_is_not_overwritten(ctx: ToolContext) -> None:
    ctx.spill_dir.mkdir()
    (ctx.spill_dir / "bash_1.output").write_text("someone else's")
    result = await start(ctx, "echo mine")
    assert result.as_text().startswith("Started in the background as task bash_2 ")
    assert (ctx.spill_dir / "bash_1.output").read_text() == "someone else's"
