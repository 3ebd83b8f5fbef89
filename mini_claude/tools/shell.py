"""The `Bash` tool, and the process-group handling shared by tools that run subprocesses.

Every subprocess starts as the leader of its own session (so of its own process group, with no controlling
terminal). Whatever way a run ends — the command finished, it timed out, or the caller was cancelled — the whole
group is signalled (SIGTERM, a short grace, SIGKILL) and the direct child is reaped, so nothing the command started
survives it, not even a background grandchild that still holds the output pipe.

Python 3.11's `Process.wait()` only returns once every pipe is closed, which a background grandchild can delay
forever; so the direct child's exit is detected by polling `returncode` (set by the child watcher on exit).

A command runs in the environment it is given (`BashTool(env=...)`: the session's, which is the real environment
with the settings' `env` on top, `settings.session_env`), else in mini-claude's own.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mini_claude.procgroup import signal_group
from mini_claude.tools.base import ToolContext, ToolResult

__all__ = [
    "DEFAULT_TIMEOUT_MS",
    "KILL_GRACE_S",
    "MAX_OUTPUT_CHARS",
    "MAX_TIMEOUT_MS",
    "PIPE_GRACE_S",
    "BashTool",
    "group_alive",
    "terminate_group",
    "wait_for_exit",
]

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
MAX_OUTPUT_CHARS = 30_000
# After the shell exits, background children may keep the pipe open: read what they write for this long, then kill.
PIPE_GRACE_S = 0.5
# Between SIGTERM and SIGKILL of a process group.
KILL_GRACE_S = 0.5
# How long to wait for the output pipe to reach EOF once the group is dead (only a process that left the group
# with setsid can hold it longer; we stop reading then).
DRAIN_TIMEOUT_S = 2.0
# How long to wait for the killed direct child to be reaped.
REAP_TIMEOUT_S = 5.0
READ_CHUNK_BYTES = 64 * 1024
# Bytes kept from each end of the output: enough for MAX_OUTPUT_CHARS of any UTF-8 text.
_KEEP_BYTES = 4 * MAX_OUTPUT_CHARS
_POLL_MIN_S = 0.005
_POLL_MAX_S = 0.05


# --------------------------------------------------------------------------------------------------------------
# Process groups


def group_alive(pgid: int) -> bool:
    """Whether process group `pgid` still has a live (non-zombie) member.

    Zombies still count for `killpg(pgid, 0)` until their new parent reaps them, which in some containers is never;
    on Linux /proc tells them apart.
    """
    if not signal_group(pgid, 0):
        return False
    proc_root = Path("/proc")
    if not proc_root.is_dir():
        return True
    try:
        entries = list(os.scandir(proc_root))
    except OSError:
        return True
    for entry in entries:
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp ...": comm may contain spaces and parentheses, so split after the last ")".
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) >= 3 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            return True
    return False


async def wait_for_exit(proc: asyncio.subprocess.Process, timeout_s: float | None) -> bool:
    """Wait until the direct child has exited (not its pipes); False if `timeout_s` passed first."""
    loop = asyncio.get_running_loop()
    deadline = None if timeout_s is None else loop.time() + timeout_s
    delay = _POLL_MIN_S
    while proc.returncode is None:
        if deadline is not None:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return False
            delay = min(delay, remaining)
        await asyncio.sleep(delay)
        delay = min(delay * 2, _POLL_MAX_S)
    return True


async def terminate_group(proc: asyncio.subprocess.Process, *, grace_s: float = KILL_GRACE_S) -> None:
    """End the process group led by `proc`: SIGTERM, up to `grace_s` for it to go, SIGKILL, then reap `proc`.

    Cheap when everything has already exited. SIGKILL is sent even if this coroutine is cancelled meanwhile.
    """
    pgid = proc.pid
    loop = asyncio.get_running_loop()
    try:
        if signal_group(pgid, signal.SIGTERM):
            deadline = loop.time() + grace_s
            delay = _POLL_MIN_S
            while loop.time() < deadline and group_alive(pgid):
                await asyncio.sleep(delay)
                delay = min(delay * 2, _POLL_MAX_S)
    finally:
        signal_group(pgid, signal.SIGKILL)
    # The child watcher reaps the direct child; this only waits for it to have done so.
    await wait_for_exit(proc, REAP_TIMEOUT_S)


async def _finish(task: asyncio.Task[Any], timeout_s: float) -> None:
    """Give `task` up to `timeout_s` to end on its own, then cancel it."""
    await asyncio.wait({task}, timeout=timeout_s)
    if not task.done():
        task.cancel()
        await asyncio.wait({task})


# --------------------------------------------------------------------------------------------------------------
# Output capture


class _HeadTail:
    """Keeps the first and last `keep` bytes of a stream, and how many bytes went by in all."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.keep - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.keep:
                del self.tail[: len(self.tail) - self.keep]

    def render(self, max_chars: int) -> str:
        """The output as text: whole when it fits in `max_chars`, else its head and tail with a marker between."""
        dropped = self.total - len(self.head) - len(self.tail)
        half = max_chars // 2
        if dropped == 0:
            text = bytes(self.head + self.tail).decode("utf-8", "replace")
            if len(text) <= max_chars:
                return text
            head, tail = text[:half], text[len(text) - half :]
        else:
            head = bytes(self.head).decode("utf-8", "replace")[:half]
            tail_text = bytes(self.tail).decode("utf-8", "replace")
            tail = tail_text[len(tail_text) - half :]
        omitted = max(self.total - len(head.encode()) - len(tail.encode()), 0)
        return (
            f"{head}\n\n… [output truncated: {omitted} of {self.total} bytes omitted from the middle; to see "
            f"everything, redirect the output to a file and inspect it with Grep or Read] …\n\n{tail}"
        )


async def _pump(stream: asyncio.StreamReader, sink: _HeadTail) -> None:
    while chunk := await stream.read(READ_CHUNK_BYTES):
        sink.add(chunk)


# --------------------------------------------------------------------------------------------------------------
# The tool


def _shell() -> str:
    return shutil.which("bash") or "/bin/sh"


def _signal_name(returncode: int) -> str:
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


class BashTool:
    """Runs a shell command in the session's working directory and returns its combined output."""

    name = "Bash"
    description = (
        "Run a shell command with `bash -c` in the project's working directory and return its combined stdout "
        "and stderr. Each call is a fresh shell: `cd`, variables and shell state do not persist between calls. "
        "stdin is /dev/null and there is no terminal, so interactive programs (editors, pagers, prompts) will not "
        "work: pass non-interactive flags (e.g. `git --no-pager`, `-y`). The command is killed after `timeout` milliseconds "
        f"(default {DEFAULT_TIMEOUT_MS} ms, at most {MAX_TIMEOUT_MS} ms). Background processes (`cmd &`) do not "
        "outlive the call: when the command finishes, everything it started is stopped. Output longer than "
        f"{MAX_OUTPUT_CHARS} characters is cut in the middle (head and tail kept). A non-zero exit code is reported "
        "as an error. Prefer Read, Glob and Grep over cat, find and grep for reading and searching files."
    )
    read_only = False

    def __init__(self, *, max_output_chars: int = MAX_OUTPUT_CHARS, env: Mapping[str, str] | None = None) -> None:
        self.env = dict(env) if env is not None else None
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "command": {"type": "string", "description": "The command line to run."},
                "timeout": {
                    "type": "integer",
                    "description": f"Kill the command after this many milliseconds (default {DEFAULT_TIMEOUT_MS}, "
                    f"max {MAX_TIMEOUT_MS}).",
                    "minimum": 1,
                    "maximum": MAX_TIMEOUT_MS,
                },
                "description": {
                    "type": "string",
                    "description": "A few words saying what the command does, shown to the user.",
                },
            },
            "required": ["command"],
        }
        self.max_output_chars = max_output_chars

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        command = args.get("command")
        if not isinstance(command, str) or not command.strip():
            return ToolResult.error("command must be a non-empty string")
        timeout_ms = args.get("timeout", DEFAULT_TIMEOUT_MS)
        if timeout_ms is None:
            timeout_ms = DEFAULT_TIMEOUT_MS
        if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int | float) or timeout_ms <= 0:
            return ToolResult.error("timeout must be a positive number of milliseconds")
        timeout_s = min(float(timeout_ms), MAX_TIMEOUT_MS) / 1000
        if not ctx.cwd.is_dir():
            return ToolResult.error(f"working directory {ctx.cwd} does not exist")

        try:
            proc = await asyncio.create_subprocess_exec(
                _shell(),
                "-c",
                command,
                cwd=ctx.cwd,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
                env=self.env,
            )
        except OSError as exc:
            return ToolResult.error(f"could not start the shell: {exc.strerror or exc}")

        assert proc.stdout is not None
        output = _HeadTail(_KEEP_BYTES)
        reader = asyncio.create_task(_pump(proc.stdout, output))
        try:
            exited = await wait_for_exit(proc, timeout_s)
            if exited:
                # Let background children flush what they already wrote before the group is killed.
                await asyncio.wait({reader}, timeout=PIPE_GRACE_S)
        finally:
            # Every path (done, timed out, cancelled) ends the whole group and reaps the child.
            await terminate_group(proc)
            await _finish(reader, DRAIN_TIMEOUT_S)

        text = output.render(self.max_output_chars).rstrip("\n")
        if not exited:
            message = f"command timed out after {timeout_s:g}s"
            return ToolResult.error(f"{message}; output so far:\n{text}" if text else message)
        code = proc.returncode
        if code == 0:
            return ToolResult.text(text or "(no output)")
        status = f"exit code {code}"
        if code is not None and code < 0:
            status += f" (killed by {_signal_name(code)})"
        return ToolResult.error(f"{text}\n\n{status}" if text else status)
