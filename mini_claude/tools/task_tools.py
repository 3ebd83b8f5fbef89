"""`TaskOutput` and `TaskStop` (Claude Code's names and input keys): the model's way to read a background task's new
output and to end it (tools/background.py has the tasks; `Bash` with `run_in_background` starts them).

Both touch only the session's own background tasks, found by id in `ToolContext.background`: an id that names no
task of this session is an error and touches nothing. They read no file of the user's, so the permission gate lets
them run without asking in every mode, plan mode included (permissions/gate.py).
"""

from __future__ import annotations

import json
from typing import Any

from mini_claude.tools.background import BackgroundTask, BackgroundTasks
from mini_claude.tools.base import ToolContext, ToolResult

__all__ = ["TASK_OUTPUT_TOOL_NAME", "TASK_STOP_TOOL_NAME", "TaskOutputTool", "TaskStopTool"]

TASK_OUTPUT_TOOL_NAME = "TaskOutput"
TASK_STOP_TOOL_NAME = "TaskStop"
DEFAULT_WAIT_MS = 30_000
MAX_WAIT_MS = 600_000
MAX_SHOWN_CHARS = 30_000  # of new output in one TaskOutput result (the latest; the file has the rest)


class TaskOutputTool:
    """Shows a background task's status and the output it wrote since the last look, optionally after waiting for
    it to end."""

    name = TASK_OUTPUT_TOOL_NAME
    description = (
        "Check on a background task started with Bash `run_in_background`: its status (running, or how it ended "
        "and its exit code) and the output it has written since the last time you checked. With `block` (the "
        "default) the call first waits for the task to end, at most `timeout` milliseconds (default "
        f"{DEFAULT_WAIT_MS}, at most {MAX_WAIT_MS}); with `block: false` it answers at once. Only the newest "
        f"{MAX_SHOWN_CHARS} characters of new output are shown; the task's output file holds everything."
    )
    read_only = True

    def __init__(self) -> None:
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "task_id": {"type": "string", "description": "The id the background Bash call returned."},
                "block": {"type": "boolean", "default": True,
                          "description": "Wait for the task to end (up to `timeout`) before answering."},
                "timeout": {"type": "number", "default": DEFAULT_WAIT_MS, "minimum": 0, "maximum": MAX_WAIT_MS,
                            "description": "How long to wait when blocking, in milliseconds."},
            },
            "required": ["task_id"],
        }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        tasks = ctx.background
        task_id = args.get("task_id")
        if not isinstance(task_id, str) or not task_id:
            return ToolResult.error("task_id must be the id of a background task")
        task = tasks.get(task_id)
        if task is None:
            return ToolResult.error(tasks.unknown(task_id))
        block = args.get("block", True)
        wait_ms = args.get("timeout", DEFAULT_WAIT_MS)
        if isinstance(wait_ms, bool) or not isinstance(wait_ms, int | float):
            return ToolResult.error("timeout must be a number of milliseconds")
        waited = None
        if block is not False and task.running:
            wait_s = min(max(float(wait_ms), 0.0), MAX_WAIT_MS) / 1000
            waited = wait_s if not await tasks.wait(task, wait_s) else None
        return ToolResult.text(_report(tasks, task, waited))


class TaskStopTool:
    """Ends a running background task: its whole process group, SIGTERM then SIGKILL."""

    name = TASK_STOP_TOOL_NAME
    description = (
        "Stop a background task started with Bash `run_in_background`: the command and everything it started "
        "are terminated. Use it for a server or watcher you no longer need, or a command that hangs."
    )
    read_only = False  # it ends processes: never run beside other calls, and not for a read-only sub-agent

    def __init__(self) -> None:
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "task_id": {"type": "string", "description": "The id of the background task to stop."},
                "shell_id": {"type": "string", "description": "Former name of task_id; use task_id."},
            },
        }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        tasks = ctx.background
        task_id = args.get("task_id") or args.get("shell_id")
        if not isinstance(task_id, str) or not task_id:
            return ToolResult.error("task_id is required: the id of the background task to stop")
        task = tasks.get(task_id)
        if task is None:
            return ToolResult.error(tasks.unknown(task_id))
        if not await tasks.stop(task):
            task.told = True
            return ToolResult.error(f"Background task {task.id} is not running: it {task.status()} after "
                                    f"{task.runtime_s():.1f}s.")
        task.told = True
        return ToolResult.text(json.dumps({
            "message": f"Stopped background task {task.id} ({task.shown_command()}).",
            "task_id": task.id,
            "task_type": "local_bash",
            "command": task.command,
        }, separators=(",", ":")))  # compact, as Claude Code writes it


def _report(tasks: BackgroundTasks, task: BackgroundTask, waited_s: float | None) -> str:
    """TaskOutput's answer: status, the output file, then the new output."""
    text, skipped = tasks.read_new(task)
    if len(text) > MAX_SHOWN_CHARS:
        skipped += len(text[: len(text) - MAX_SHOWN_CHARS].encode("utf-8", "replace"))
        text = text[len(text) - MAX_SHOWN_CHARS :]
    if task.running:
        status = f"running for {task.runtime_s():.1f}s"
        if waited_s is not None:
            status += f" (still running after waiting {waited_s:g}s)"
    else:
        task.told = True  # the model sees how it ended here: no separate notice
        status = f"{task.status()} after {task.runtime_s():.1f}s"
    lines = [f"task {task.id}: {status}", f"output file: {task.output_path}"]
    if skipped:
        lines.append(f"({skipped} bytes of new output before this were left out; the output file has them)")
    lines.append(f"new output:\n{text.rstrip(chr(10))}" if text else "no new output")
    return "\n".join(lines)
