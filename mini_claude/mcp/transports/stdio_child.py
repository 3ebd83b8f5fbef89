"""The stdio transport's dealings with the child process itself, apart from the message stream: what to start
(`StdioParams`), the one-line error for a spawn that failed (saying which config key to fix), the error for a child
that ended (exit code or signal, and the tail of its stderr), signalling its process group, and the bounded
stderr ring, and how children are watched (`watch_children_with_pidfds`)."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import errno
import logging
import os
import signal
import sys
import warnings
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from mini_claude.errors import ServerExitedError, SpawnError

__all__ = ["StderrRing", "StdioParams", "exit_error", "group_cpu_ticks", "signal_group", "spawn_error",
           "spawn_turn", "watch_children_with_pidfds"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StdioParams:
    """How to start a stdio server. `env` is the child's *full* environment (None: inherit ours)."""

    command: str
    args: list[str] = field(default_factory=list)
    env: dict[str, str] | None = None
    cwd: str | None = None


class StderrRing:
    """The last `limit_bytes` a child wrote to stderr: older output is dropped as new output comes, so a chatty
    server never grows our memory and never blocks on a full pipe."""

    def __init__(self, limit_bytes: int) -> None:
        self.limit = max(1, limit_bytes)
        self._chunks: collections.deque[bytes] = collections.deque()
        self._size = 0

    def append(self, data: bytes) -> None:
        limit = self.limit
        chunks = self._chunks
        if len(data) >= limit:
            chunks.clear()
            data = data[-limit:]
            self._size = 0
        chunks.append(data)
        self._size += len(data)
        while self._size - len(chunks[0]) >= limit:
            self._size -= len(chunks.popleft())

    def text(self) -> str:
        """What is kept, decoded (invalid UTF-8 replaced)."""
        if not self._chunks:
            return ""
        return b"".join(self._chunks)[-self.limit:].decode("utf-8", "replace")


def exit_error(exit_code: int | None, stderr_tail: str, server: str | None) -> ServerExitedError:
    """The error for a child that ended: how (closed stdout, exited, killed by which signal) and its stderr tail."""
    if exit_code is None:
        what = "server closed its stdout"
    elif exit_code < 0:
        try:
            what = f"server was killed by {signal.Signals(-exit_code).name}"
        except ValueError:
            what = f"server was killed by signal {-exit_code}"
    else:
        what = "server exited"
    return ServerExitedError(what, server=server, exit_code=exit_code, stderr_tail=stderr_tail)


def signal_group(pgid: int | None, sig: int, server: str | None) -> bool:
    """Signal the process group `pgid` (the child's spawn-time pid). False when nothing is left in it."""
    if pgid is None:
        return False
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:  # the group id was reused by someone else's process: not ours to signal
        log.debug("%s: no permission to signal process group %s", server, pgid)
        return False
    return True


def group_cpu_ticks(pgid: int | None) -> int:
    """The CPU time (clock ticks, user + system) used so far by the processes of group `pgid` (a server's wrapper
    such as `npx` or `sh -c` and the program it started), from /proc; 0 where there is no /proc. A reading, for
    telling whether a server is working: it scans /proc, so it is taken rarely (when a startup timeout runs out)."""
    if pgid is None:
        return 0
    total = 0
    try:
        entries = os.listdir("/proc")
    except OSError:
        return 0
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()  # after "pid (comm) ": state, ppid, pgrp, ...
        if len(fields) > 12 and int(fields[2]) == pgid:
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total


def _pidfds_work() -> bool:
    if not hasattr(os, "pidfd_open"):
        return False
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:  # an older kernel (before 5.3), or a sandbox that forbids it
        return False
    return True


class _PidfdWatcher(asyncio.AbstractChildWatcher):
    """Python 3.12's child watcher on 3.11: each child's pidfd is read by the loop that spawned it (the running
    loop at spawn time, in whatever thread), so it holds no per-loop state and needs no thread."""

    def add_child_handler(self, pid: int, callback: Callable[..., object], *args: object) -> None:
        loop = asyncio.get_running_loop()
        pidfd = os.pidfd_open(pid)
        loop.add_reader(pidfd, self._reap, loop, pidfd, pid, callback, args)

    @staticmethod
    def _reap(loop: asyncio.AbstractEventLoop, pidfd: int, pid: int, callback: Callable[..., object],
              args: tuple[object, ...]) -> None:
        loop.remove_reader(pidfd)
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:  # reaped by someone else: its exit status is lost
            returncode = 255
            log.warning("child process pid %d exited before we could reap it", pid)
        else:
            returncode = os.waitstatus_to_exitcode(status)
        os.close(pidfd)
        callback(pid, returncode, *args)

    def remove_child_handler(self, pid: int) -> bool:
        return False  # never needed by asyncio's subprocess transport, which only adds

    def attach_loop(self, loop: asyncio.AbstractEventLoop | None) -> None:
        pass

    def close(self) -> None:
        pass

    def is_active(self) -> bool:
        return True

    def __enter__(self) -> _PidfdWatcher:
        return self

    def __exit__(self, *exc_info: object) -> None:
        pass


_installed = False
_spawn_turns: dict[asyncio.AbstractEventLoop, tuple[asyncio.Lock, list[int]]] = {}  # per loop: the lock, its users


@contextlib.asynccontextmanager
async def spawn_turn(loop: asyncio.AbstractEventLoop) -> AsyncIterator[None]:
    """Hold `loop`'s spawn lock: one spawn at a time, each in its own loop turn.

    A spawn blocks the loop until the child has exec'd (~10 ms for a Python server on a busy machine). Sixty
    servers started at once would otherwise spawn back to back in one turn, and none of their handshakes could
    begin until the last had spawned; taking turns lets the loop read the first servers' answers between spawns,
    so the fleet is ready soon after its last spawn (bench/fleet.py). The lock is dropped with its last user (it
    refers to its loop: kept, it would keep every loop that ever spawned two servers at once)."""
    entry = _spawn_turns.get(loop)
    if entry is None:
        entry = _spawn_turns[loop] = (asyncio.Lock(), [0])
    lock, users = entry
    users[0] += 1
    try:
        async with lock:
            yield
    finally:
        users[0] -= 1
        if not users[0] and _spawn_turns.get(loop) is entry:
            del _spawn_turns[loop]


def watch_children_with_pidfds() -> None:
    """Before spawning a server: on Python 3.11 on Linux, have asyncio watch children with a pidfd each, read by
    the event loop itself, instead of its default `ThreadedChildWatcher`, which runs one thread per child (sixty
    servers, sixty threads blocked in waitpid). Python 3.12 does this by itself. Installed once per process."""
    global _installed
    if _installed:
        return
    _installed = True
    if sys.platform != "linux" or sys.version_info >= (3, 12) or not _pidfds_work():
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        asyncio.set_child_watcher(_PidfdWatcher())


def spawn_error(exc: BaseException, params: StdioParams, server: str | None) -> SpawnError:
    """Translate a spawn failure into one line that says what to change."""
    command = params.command
    if isinstance(exc, OSError):
        about_cwd = params.cwd is not None and exc.filename == params.cwd
        if about_cwd:
            if isinstance(exc, FileNotFoundError):
                text = f"working directory not found: {params.cwd} (check the server's `cwd`)"
            elif isinstance(exc, NotADirectoryError):
                text = f"working directory is not a directory: {params.cwd} (check the server's `cwd`)"
            else:
                text = f"cannot enter working directory {params.cwd}: {exc.strerror} (check the server's `cwd`)"
        elif isinstance(exc, FileNotFoundError):
            if os.sep in command:
                text = f"command not found: {command} (no such file; check the server's `command`)"
            else:
                text = (f"command not found: {command} (not on the PATH; check the server's `command`, "
                        "give its full path, or set PATH in its `env`)")
        elif isinstance(exc, PermissionError):
            text = (f"command is not executable: {command} (check the server's `command` and the file's "
                    "permissions)")
        elif exc.errno == errno.ENOEXEC:
            text = f"cannot execute {command}: not a program (a script needs a #! line; check the server's `command`)"
        else:
            text = f"cannot start {command}: {exc.strerror or exc} (check the server's `command`)"
    else:  # ValueError / TypeError from Popen: a NUL byte, a non-string env value, ...
        text = f"invalid server command or environment for {command!r}: {exc} (check `command`, `args`, `env`)"
    return SpawnError(text, server=server)
