"""Starting a shell command in its own process group, and ending that group: what the `Bash` tool (foreground and
background, tools/shell.py and tools/background.py), the REPL's `!` escape and the grep engine share.

Every command starts as the leader of its own session (so of its own process group, with no controlling terminal),
stdin /dev/null, stdout and stderr into one pipe. Whatever way a run ends, the whole group is signalled (SIGTERM, a
short grace, SIGKILL) and the direct child is reaped, so nothing the command started survives it.

Python 3.11's `Process.wait()` only returns once every pipe is closed, which a background grandchild can delay
forever; so the direct child's exit is detected by polling `returncode` (set by the child watcher on exit).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mini_claude.procgroup import forget_group, signal_group, track_group

__all__ = ["KILL_GRACE_S", "REAP_TIMEOUT_S", "finish_task", "group_alive", "shell_path", "start_shell",
           "terminate_group", "wait_for_exit"]

# Between SIGTERM and SIGKILL of a process group.
KILL_GRACE_S = 0.5
# How long to wait for the killed direct child to be reaped.
REAP_TIMEOUT_S = 5.0
_POLL_MIN_S = 0.005
_POLL_MAX_S = 0.05


def shell_path() -> str:
    """The shell a command runs in: bash when there is one, else /bin/sh. Looked up only in PATH's absolute
    folders: a relative entry (`node_modules/.bin`, `bin`, an empty one) names a folder of whatever project the
    agent runs in, and a `bash` planted there would run every command — `echo hi` included, which asks nobody."""
    absolute = os.pathsep.join(d for d in os.environ.get("PATH", os.defpath).split(os.pathsep) if os.path.isabs(d))
    return shutil.which("bash", path=absolute) or "/bin/sh"


async def start_shell(command: str, cwd: Path, env: Mapping[str, str] | None, *,
                      argv: Sequence[str] | None = None) -> asyncio.subprocess.Process:
    """`command` running under `shell_path() -c` in `cwd` with `env` (None: ours), leader of its own process group,
    stdin /dev/null, stdout and stderr into one pipe (`proc.stdout`). Raises OSError when it cannot start.
    `argv`: the whole command line instead (the sandbox's, which runs the shell inside; the group is the same).

    A cancellation while the process is being set up ends its group before it is passed on: asyncio would otherwise
    kill the shell alone and then wait for its pipe to close, which a child it already started (`sleep 300 &`)
    holds open, so the cancelled caller would hang that long."""
    starting = asyncio.ensure_future(asyncio.create_subprocess_exec(
        *(argv if argv is not None else (shell_path(), "-c", command)),
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
        env=dict(env) if env is not None else None,
    ))
    try:
        proc = await asyncio.shield(starting)
        track_group(proc.pid)  # until terminate_group: killed at once should mini-claude die without its clean-up
        return proc
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            proc = await starting
            track_group(proc.pid)
            await terminate_group(proc)
        raise


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


async def wait_for_exit(proc: asyncio.subprocess.Process, timeout_s: float | None, *,
                        max_poll_s: float = _POLL_MAX_S) -> bool:
    """Wait until the direct child has exited (not its pipes); False if `timeout_s` passed first. The polling
    interval grows to `max_poll_s` (a long-running background command needs no 50 ms wake-ups)."""
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
        delay = min(delay * 2, max_poll_s)
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
    forget_group(pgid)


async def finish_task(task: asyncio.Task[Any], timeout_s: float) -> None:
    """Give `task` up to `timeout_s` to end on its own, then cancel it."""
    await asyncio.wait({task}, timeout=timeout_s)
    if not task.done():
        task.cancel()
        await asyncio.wait({task})
