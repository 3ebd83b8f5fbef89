"""One session's background shell commands (`Bash` with `run_in_background`): starting them, reading their new
output, stopping them, telling the model when one ends, listing them, and stopping them all when the session ends.

A background command starts exactly as a foreground one does (tools/procs.py `start_shell`: the same shell,
environment and working directory, its own process group, stdin /dev/null), but the call returns at once with the
task's id (`bash_1`, `bash_2`, … in the order started) and the file its output goes to: `<id>.output`, 0600, in the
session's spill folder (which the model may Read without asking). The file is bounded: past `OUTPUT_FILE_CAP`
bytes it stops growing and ends, once the task is over, with a line saying how much was left out; the last
`TAIL_KEEP` bytes are kept in memory too: `read_new` reads from there, so it shows the latest output whatever
the file holds.

A task ends when its shell exits (what it left running in its group is stopped then, as for a foreground call),
at its timeout, when `stop` is called (TaskStop, `/tasks stop`), or when the session closes (`aclose`). Every end
SIGTERMs the group, waits a short grace, SIGKILLs it and reaps the shell. An `atexit` hook SIGKILLs any group still
alive should the session's teardown be skipped, so no command outlives mini-claude.

The agent that started a task hears once that it ended, as a text note before its next model request
(`take_notices`; the main agent also hears of its sub-agents' tasks they did not take), unless TaskOutput already
showed the end or TaskStop ended it.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import signal
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mini_claude.procgroup import signal_group
from mini_claude.tools.procs import finish_task, start_shell, terminate_group, wait_for_exit

__all__ = ["OUTPUT_FILE_CAP", "TAIL_KEEP", "BackgroundTask", "BackgroundTasks"]

OUTPUT_FILE_CAP = 4 * 1024 * 1024  # bytes of a task's output kept in its file
TAIL_KEEP = 256 * 1024  # bytes of the latest output kept in memory (the most `read_new` returns)
PIPE_GRACE_S = 0.5  # after the shell exits, what its background children still write is read this long
DRAIN_TIMEOUT_S = 2.0  # the output pipe's EOF once the group is dead
_POLL_MAX_S = 0.25  # how often a running task's shell is checked for exit, at most
_READ_CHUNK = 64 * 1024
_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_COMMAND_SHOWN = 120  # characters of a command in a note to the model
_IDS_LISTED = 20  # task ids named when an unknown one is asked for (the latest)
_ID_SHOWN = 80  # characters of an unknown id repeated back


class _Capture:
    """A task's output: the file (first `cap` bytes of the stream) and the last `keep` bytes in memory. Offsets
    are positions in the whole stream."""

    def __init__(self, fd: int, cap: int, keep: int) -> None:
        self.fd, self.cap, self.keep = fd, cap, keep
        self.total = 0  # bytes received
        self.written = 0  # bytes in the file
        self.tail = bytearray()

    def add(self, chunk: bytes) -> None:
        if self.written < self.cap and self.fd >= 0:
            part = memoryview(chunk)[: self.cap - self.written]
            try:
                while part:
                    done = os.write(self.fd, part)
                    self.written += done
                    part = part[done:]
            except OSError:  # a full disk: the file stops here, the tail still has the latest output
                self.cap = self.written
        self.total += len(chunk)
        self.tail += chunk
        if len(self.tail) > self.keep:
            del self.tail[: len(self.tail) - self.keep]

    def since(self, start: int) -> tuple[bytes, int]:
        """The stream from offset `start` to now, at most its last `keep` bytes; and how many bytes before those
        were left out."""
        tail_start = self.total - len(self.tail)
        begin = max(start, tail_start)
        return bytes(self.tail[begin - tail_start :]), begin - start

    def close(self) -> None:
        if self.fd < 0:
            return
        with contextlib.suppress(OSError):
            if self.total > self.written:
                os.pwrite(self.fd, f"\n[mini-claude: output past {self.written} bytes was not written to this file; "
                                   f"{self.total - self.written} bytes left out]\n".encode(), self.written)
            os.close(self.fd)
        self.fd = -1


@dataclass(eq=False)
class BackgroundTask:
    """One background command and what became of it."""

    id: str
    command: str
    description: str
    output_path: Path
    timeout_s: float
    owner: object  # the ToolContext of the agent that started it
    proc: asyncio.subprocess.Process
    capture: _Capture
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None
    # why it ended: "exited", "timeout", "stopped" (TaskStop), "stopped by user" (/tasks), "session end"
    end: str | None = None
    read_upto: int = 0  # stream offset TaskOutput has shown so far
    told: bool = False  # the model knows it ended (a note, TaskOutput or TaskStop)
    done: asyncio.Event = field(default_factory=asyncio.Event)
    watcher: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        return self.ended is None

    def runtime_s(self) -> float:
        return (self.ended if self.ended is not None else time.monotonic()) - self.started

    def status(self) -> str:
        """How it stands, to follow "it": `running`, `exited with code 3`, `was stopped by TaskStop`…"""
        code = self.proc.returncode
        if self.end is None:
            return "running"
        if self.end == "timeout":
            return f"was killed at its timeout ({self.timeout_s:g}s)"
        if self.end == "stopped":
            return "was stopped by TaskStop"
        if self.end == "stopped by user":
            return "was stopped by the user"
        if self.end == "session end":
            return "was stopped when the session ended"
        if code is not None and code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"was killed by {name}"
        return f"exited with code {code}"

    def shown_command(self) -> str:
        """The command for a note to the model: one line, bounded."""
        text = " ".join(self.command.split())
        return text if len(text) <= _COMMAND_SHOWN else text[: _COMMAND_SHOWN - 1] + "…"


class BackgroundTasks:
    """The background tasks of one session (one per `ToolContext`, shared with its sub-agents' copies)."""

    def __init__(self, *, file_cap: int = OUTPUT_FILE_CAP, tail_keep: int = TAIL_KEEP) -> None:
        self._tasks: dict[str, BackgroundTask] = {}
        self._count = 0
        self._file_cap, self._tail_keep = file_cap, tail_keep
        self._exit_hook = False

    # ---- starting and looking up -------------------------------------------------------------------------------

    async def start(self, command: str, *, cwd: Path, env: Mapping[str, str] | None, out_dir: Path, owner: object,
                    timeout_s: float, description: str = "", argv: Sequence[str] | None = None) -> BackgroundTask:
        """Start `command` in the background (see the module docstring). Raises OSError when the output file or the
        shell cannot be made. `argv`: the command line that runs it (the sandbox's), as for `start_shell`."""
        os.makedirs(out_dir, mode=0o700, exist_ok=True)
        for _ in range(100):  # a file left by an earlier registry in this folder keeps its name
            self._count += 1
            task_id = f"bash_{self._count}"
            path = out_dir / f"{task_id}.output"
            try:
                fd = os.open(path, _FILE_FLAGS, 0o600)
                break
            except FileExistsError:
                continue
        else:
            raise FileExistsError(f"no free output file name in {out_dir}")
        try:
            proc = await start_shell(command, cwd, env, argv=argv)
        except BaseException:
            os.close(fd)
            raise
        if not self._exit_hook:
            atexit.register(self._kill_all_now)
            self._exit_hook = True
        task = BackgroundTask(task_id, command, description, path, timeout_s, owner, proc,
                              _Capture(fd, self._file_cap, self._tail_keep))
        self._tasks[task_id] = task
        task.watcher = asyncio.create_task(self._watch(task), name=f"background {task_id}")
        return task

    def get(self, task_id: str) -> BackgroundTask | None:
        return self._tasks.get(task_id)

    def tasks(self) -> list[BackgroundTask]:
        """Every task of the session, in the order started (those that ended too)."""
        return list(self._tasks.values())

    def unknown(self, task_id: str) -> str:
        """The error for an id that names no task of this session."""
        ids = list(self._tasks)
        known = ", ".join(ids[-_IDS_LISTED:]) if len(ids) <= _IDS_LISTED else f"…, {', '.join(ids[-_IDS_LISTED:])}"
        listed = f"this session's background tasks are: {known}" if ids else "this session has none"
        shown = task_id if len(task_id) <= _ID_SHOWN else task_id[:_ID_SHOWN] + "…"
        return f"No background task with ID {shown!r}: {listed}."

    # ---- reading, waiting, stopping ----------------------------------------------------------------------------

    def read_new(self, task: BackgroundTask) -> tuple[str, int]:
        """The output `task` wrote since the last `read_new` (as text), and how many bytes before it were left out
        (more than `TAIL_KEEP` new bytes: the latest are shown; the file has the rest, up to its cap)."""
        data, skipped = task.capture.since(task.read_upto)
        if task.running:  # a character cut in half is shown whole next time
            data = data[: _complete_utf8(data)]
        task.read_upto += skipped + len(data)
        return data.decode("utf-8", "replace"), skipped

    async def wait(self, task: BackgroundTask, timeout_s: float) -> bool:
        """Wait up to `timeout_s` for `task` to end; whether it has."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(task.done.wait(), timeout_s)
        return not task.running

    async def stop(self, task: BackgroundTask, *, reason: str = "stopped") -> bool:
        """End a running task (its whole group: SIGTERM, grace, SIGKILL, reaped); False when it had ended."""
        if not task.running:
            return False
        if task.end is None:
            task.end = reason
        await terminate_group(task.proc)
        if task.watcher is not None:
            await asyncio.wait({task.watcher}, timeout=DRAIN_TIMEOUT_S + 1)
        return True

    async def aclose(self) -> None:
        """Stop every task still running (the session ends). Safe to call twice."""
        running = [task for task in self._tasks.values() if task.running]
        await asyncio.gather(*(self.stop(task, reason="session end") for task in running), return_exceptions=True)
        for task in running:  # a watcher still draining a pipe a setsid'd process holds
            if task.watcher is not None and not task.watcher.done():
                task.watcher.cancel()
        if self._exit_hook:
            atexit.unregister(self._kill_all_now)
            self._exit_hook = False

    # ---- telling the model -------------------------------------------------------------------------------------

    def take_notices(self, owner: object, *, everyone: bool = False) -> list[str]:
        """Notes for the agent whose ToolContext is `owner` on the tasks it started that ended since it last heard
        (every agent's, with `everyone`), each given once."""
        notes = []
        for task in self._tasks.values():
            if task.running or task.told or not (everyone or task.owner is owner):
                continue
            task.told = True
            notes.append(_notice(task))
        return notes

    # ---- the task's life ---------------------------------------------------------------------------------------

    async def _watch(self, task: BackgroundTask) -> None:
        proc = task.proc
        assert proc.stdout is not None
        reader = asyncio.create_task(_pump(proc.stdout, task.capture))
        try:
            if await wait_for_exit(proc, task.timeout_s, max_poll_s=_POLL_MAX_S):
                await asyncio.wait({reader}, timeout=PIPE_GRACE_S)  # what its children already wrote
                if task.end is None:
                    task.end = "exited"
            elif task.end is None:
                task.end = "timeout"
        finally:
            try:
                await terminate_group(proc)
                await finish_task(reader, DRAIN_TIMEOUT_S)
            finally:
                task.capture.close()
                task.ended = time.monotonic()
                task.end = task.end or "exited"
                task.done.set()

    def _kill_all_now(self) -> None:
        """At interpreter exit: SIGKILL every group still alive (the session's teardown did not run)."""
        for task in self._tasks.values():
            if task.running:
                signal_group(task.proc.pid, signal.SIGKILL)


async def _pump(stream: asyncio.StreamReader, capture: _Capture) -> None:
    while chunk := await stream.read(_READ_CHUNK):
        capture.add(chunk)


def _complete_utf8(data: bytes) -> int:
    """The length of `data` without a UTF-8 sequence cut off at its end."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte < 0x80:
            return len(data)
        if byte >= 0xC0:  # a lead byte: is its sequence complete?
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return len(data) if back >= need else len(data) - back
    return len(data)


def _notice(task: BackgroundTask) -> str:
    """The note that tells the model a task ended (our wording; see the module docstring)."""
    what = f"{task.description} — `{task.shown_command()}`" if task.description else f"`{task.shown_command()}`"
    return (f"<background-task-ended>\nBackground task {task.id} ({what}) {task.status()} after "
            f"{task.runtime_s():.1f}s. Its output is in {task.output_path}; TaskOutput with task_id "
            f"\"{task.id}\" shows what you have not read yet.\nThis is an automatic notice from mini-claude, not "
            "a message from the user.\n</background-task-ended>")
