"""Starting and stopping a stdio server's process: the spawn, and the bounded shutdown in steps that leaves no
process and no zombie behind.

The child starts in its own session (so its own process group), with pipes for stdin, stdout and stderr, an
explicit environment and working folder; one spawn at a time per loop (`stdio_child.spawn_turn`). A failure becomes
a `SpawnError` that says what to change.

The shutdown (MCP's stdio shutdown, then signals): close its stdin (the polite request to exit) → wait → SIGTERM its
process group → wait → SIGKILL the group → wait. Whatever stays in the group (grandchildren) is killed at the end
even when the leader exited by itself. The process group is the spawn-time pid: after the leader is reaped
`os.getpgid()` would fail, but the group (and anything left in it) can still be killed by that id.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import subprocess
from collections.abc import Callable

from mini_claude.mcp.transports.stdio_child import (
    StdioParams,
    signal_group,
    spawn_error,
    spawn_turn,
    watch_children_with_pidfds,
)

__all__ = ["KILL_WAIT_S", "spawn_process", "stop_process"]

log = logging.getLogger(__name__)

KILL_WAIT_S = 2.0  # after SIGKILL: how long to wait for the exit to be reported before giving up


async def spawn_process(loop: asyncio.AbstractEventLoop, params: StdioParams,
                        protocol: Callable[[], asyncio.SubprocessProtocol],
                        server: str | None) -> asyncio.SubprocessTransport:
    """Start `params.command` in its own process group, its callbacks going to `protocol()`. Raises SpawnError
    (saying what to fix) when it cannot be started."""
    watch_children_with_pidfds()
    try:
        async with spawn_turn(loop):
            proc, _ = await loop.subprocess_exec(
                protocol,
                params.command,
                *params.args,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=dict(params.env) if params.env is not None else None,
                cwd=params.cwd,
                start_new_session=True,
            )
    except (OSError, ValueError, TypeError) as exc:
        raise spawn_error(exc, params, server) from exc
    return proc


async def stop_process(proc: asyncio.SubprocessTransport, exited: asyncio.Future[None], *, pid: int | None,
                       server: str | None, close_grace_s: float, term_grace_s: float) -> None:
    """Stop the child of `proc` (`exited` is done once it exited) and close our ends of its pipes; the process is
    reaped by asyncio's child watcher."""
    try:
        stdin = proc.get_pipe_transport(0)
        if stdin is not None:
            stdin.close()  # EOF on stdin: the polite request to exit (MCP spec, stdio shutdown)
        if not exited.done():
            await asyncio.wait([exited], timeout=close_grace_s)
        if not exited.done():
            log.debug("%s: pid %s ignored stdin EOF; sending SIGTERM to its group", server, pid)
            signal_group(pid, signal.SIGTERM, server)
            await asyncio.wait([exited], timeout=term_grace_s)
        if not exited.done():
            log.debug("%s: pid %s ignored SIGTERM; sending SIGKILL to its group", server, pid)
            signal_group(pid, signal.SIGKILL, server)
            await asyncio.wait([exited], timeout=KILL_WAIT_S)
        if not exited.done():
            log.warning("%s: pid %s did not exit after SIGKILL", server, pid)
    finally:
        # whatever stayed in the group (grandchildren) goes too, even when the leader exited by itself
        signal_group(pid, signal.SIGKILL, server)
        stdin = proc.get_pipe_transport(0)
        if isinstance(stdin, asyncio.WriteTransport) and stdin.get_write_buffer_size():
            stdin.abort()  # drop what a server that never read its stdin left in our buffer
        proc.close()  # closes our pipe ends; the process is reaped by asyncio's child watcher
