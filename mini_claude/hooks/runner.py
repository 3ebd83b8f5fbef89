"""Running one `type: command` hook: `/bin/sh -c COMMAND` as the leader of its own session and process group, the
event's JSON on stdin, stdout and stderr read into bounded buffers, every wait bounded.

As Claude Code runs them: the shell is `/bin/sh`, the working directory is the project folder, the environment is
the one the session passes (the user's own without the agent's credentials, plus `CLAUDE_PROJECT_DIR`: engine.py).
However a run ends — the shell exited, the timeout passed, the caller was cancelled — the whole group is signalled
(SIGTERM, `KILL_GRACE_S`, SIGKILL) and the shell is reaped, so nothing the hook started outlives it (tools/shell.py
does the same for the bash tool; this layer cannot import it). Python 3.11's `Process.wait()` returns only once every pipe is closed, which a background child
can delay forever, so the shell's exit is found by polling `returncode`. Nothing is printed here.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from mini_claude.procgroup import signal_group

__all__ = ["MAX_OUTPUT_BYTES", "CommandRun", "run_command"]

SHELL = "/bin/sh"
MAX_OUTPUT_BYTES = 1024 * 1024  # per stream; more is read and dropped so the hook never blocks on a full pipe
PIPE_GRACE_S = 0.5  # after the shell exits, how long its background children may still write before the group goes
KILL_GRACE_S = 0.5  # between SIGTERM and SIGKILL of the group
DRAIN_TIMEOUT_S = 2.0  # once the group is dead, how long to wait for the pipes' end (only a setsid escapee delays it)
REAP_TIMEOUT_S = 5.0  # after SIGKILL, how long to wait for the shell to be reaped
_CHUNK = 64 * 1024
_POLL_MIN_S = 0.005
_POLL_MAX_S = 0.05


@dataclass(frozen=True)
class CommandRun:
    """How one hook command ended. `exit_code` is None when it did not exit by itself (timed out, or could not be
    started: `error` says why). Output is decoded as UTF-8 (invalid bytes replaced) and cut at `MAX_OUTPUT_BYTES`."""

    exit_code: int | None
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False
    error: str = ""


class _Capped:
    """Reads a stream to its end, keeping its first `MAX_OUTPUT_BYTES`."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.cut = False

    async def drain(self, stream: asyncio.StreamReader | None) -> None:
        if stream is None:
            return
        while True:
            chunk = await stream.read(_CHUNK)
            if not chunk:
                return
            room = MAX_OUTPUT_BYTES - len(self.data)
            if room > 0:
                self.data += chunk[:room]
            if len(chunk) > room:
                self.cut = True

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace") + ("\n[output cut]" if self.cut else "")


async def run_command(command: str, stdin: bytes, *, cwd: Path, env: Mapping[str, str],
                      timeout_s: float) -> CommandRun:
    """Run `command` with `stdin`; never raises for the command's own failures (see `CommandRun`). Cancelling the
    caller ends the process group too."""
    began = time.monotonic()
    try:
        proc = await asyncio.create_subprocess_exec(
            SHELL, "-c", command, cwd=str(cwd), env=dict(env), stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        return CommandRun(None, "", "", time.monotonic() - began, error=f"could not start: {exc.strerror or exc}")
    out, err = _Capped(), _Capped()
    tasks = {asyncio.ensure_future(_feed(proc, stdin)), asyncio.ensure_future(out.drain(proc.stdout)),
             asyncio.ensure_future(err.drain(proc.stderr))}
    try:
        exited = await _wait_for_exit(proc, timeout_s)
        if exited:  # let background children flush what they already wrote
            await asyncio.wait(tasks, timeout=PIPE_GRACE_S)
    finally:
        await _end_group(proc)  # every way out: done, timed out, cancelled
        await asyncio.wait(tasks, timeout=DRAIN_TIMEOUT_S)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    seconds = time.monotonic() - began
    if not exited:
        return CommandRun(None, out.text(), err.text(), seconds, timed_out=True)
    return CommandRun(proc.returncode, out.text(), err.text(), seconds)


async def _feed(proc: asyncio.subprocess.Process, data: bytes) -> None:
    """Write the event to the hook's stdin and close it; a hook that does not read it is fine."""
    stdin = proc.stdin
    if stdin is None:
        return
    with contextlib.suppress(OSError):  # BrokenPipe/ConnectionReset: the hook exited or closed stdin unread
        stdin.write(data)
        await stdin.drain()
    with contextlib.suppress(OSError):
        stdin.close()


async def _wait_for_exit(proc: asyncio.subprocess.Process, timeout_s: float) -> bool:
    """Wait until the shell itself has exited (not its pipes); False if `timeout_s` passed first."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    delay = _POLL_MIN_S
    while proc.returncode is None:
        remaining = deadline - loop.time()
        if remaining <= 0:
            return False
        await asyncio.sleep(min(delay, remaining))
        delay = min(delay * 2, _POLL_MAX_S)
    return True


async def _end_group(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM the group (its id is the shell's pid: `start_new_session`), up to `KILL_GRACE_S` for the shell to
    go, SIGKILL, then wait for the shell to be reaped. SIGKILL is sent even if this is cancelled meanwhile."""
    try:
        if signal_group(proc.pid, signal.SIGTERM):
            await _wait_for_exit(proc, KILL_GRACE_S)
    finally:
        signal_group(proc.pid, signal.SIGKILL)
    await _wait_for_exit(proc, REAP_TIMEOUT_S)
