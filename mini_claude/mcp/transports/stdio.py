"""The stdio transport: one MCP server as a child process speaking newline-delimited JSON on stdin/stdout.

It owns the child's whole life: spawning it in its own process group with an explicit environment, reading stdout
(framed and decoded by `stdio_lines.StdoutLines`, bounded by `limits.max_message_bytes()`), draining stderr into a
bounded ring, noticing the end (EOF, exit, a grandchild holding the pipe), and a bounded shutdown that leaves no
process and no zombie behind. `stdio_child` holds the pieces about the process rather than the stream (spawn and
exit errors, the stderr ring, signalling the group); `StdioParams` lives there and is re-exported here.
`stdio_process` starts the process and stops it in steps, `stdio_stdin` writes the messages (flow control).

Design notes (each one is a bug seen in other clients):

* The child runs under `loop.subprocess_exec` with our own `SubprocessProtocol` (the machinery under
  `asyncio.create_subprocess_exec`, minus its `StreamReader`s). We need `process_exited()` as an event of its
  own: since Python 3.11 `Process.wait()` only returns once every pipe is closed, so a server that exited but left
  a grandchild holding stdout would look alive forever. It also spares a second buffer and a stderr task: pipe
  data is split into lines, and stderr appended to its ring, right in the protocol callbacks.
* A line over the cap (64 MB by default, `MINI_CLAUDE_MCP_MAX_MESSAGE_BYTES`; `stdio_lines`) fails only the request
  it answers; one that names no request closes the connection with `MessageOverflowError` (pending calls fail with
  it at once, the manager shows the server failed with that reason and restarts it on its next use).
* Decoding happens in `receive()` (the consumer), so a slow consumer applies back-pressure: when complete but
  unread lines pass `STDOUT_PAUSE_BYTES`, reading from the pipe pauses (a partial line never pauses it).
* Lines are decoded on the loop, big ones too. CPython's json decoder holds the GIL for a whole document, so a
  worker thread does not free the loop, it only splits the stall (measured on a 40 MB reply: ~120 ms on the
  loop, ~60 ms with a thread); a multi-MB reply costs the loop ~3 ms per MB.
* The process group is the spawn-time pid, which stays valid after the leader is reaped (`stdio_process`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Callable
from typing import Any

from mini_claude.errors import SpawnError, TransportError
from mini_claude.mcp.transports import limits
from mini_claude.mcp.transports.stdio_child import (
    StderrRing,
    StdioParams,
    exit_error,
    group_cpu_ticks,
    signal_group,
)
from mini_claude.mcp.transports.stdio_lines import NOTHING, StdoutLines
from mini_claude.mcp.transports.stdio_process import spawn_process, stop_process
from mini_claude.mcp.transports.stdio_stdin import StdinWriter

_SET_PIPE_SIZE: int | None  # the fcntl operation that sets a pipe's buffer size (Linux only)
try:
    from fcntl import F_SETPIPE_SZ, fcntl

    _SET_PIPE_SIZE = F_SETPIPE_SZ
except ImportError:  # not Linux
    _SET_PIPE_SIZE = None

__all__ = ["EXIT_GRACE_S", "StdioParams", "StdioTransport"]

log = logging.getLogger(__name__)

EXIT_GRACE_S = 0.5  # after the child exited (or stdout closed): how long the pipes may stay open (grandchildren)
STDOUT_PAUSE_BYTES = 16 * 1024 * 1024  # complete, unread stdout lines buffered before we stop reading the pipe
STDOUT_RESUME_BYTES = 4 * 1024 * 1024
STDOUT_PIPE_BYTES = 1024 * 1024  # kernel pipe buffer we ask for (Linux): 4x fewer wake-ups for big replies


class _Protocol(asyncio.SubprocessProtocol):
    """Forwards the subprocess callbacks to the transport (kept separate so they are not its public API)."""

    def __init__(self, owner: StdioTransport) -> None:
        self._owner = owner

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.SubprocessTransport)  # what loop.subprocess_exec() passes
        self._owner._attach(transport)

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd == 1:
            self._owner._on_stdout(data)
        else:
            self._owner._bytes_in += len(data)
            self._owner._stderr.append(data)
            self._owner._to_sink(data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        self._owner._on_pipe_lost(fd, exc)

    def process_exited(self) -> None:
        self._owner._on_exited()

    def pause_writing(self) -> None:
        self._owner._stdin.pause()

    def resume_writing(self) -> None:
        self._owner._stdin.resume()


class StdioTransport:
    """A `Transport` to a server run as a child process (see the module docstring for the guarantees).

    `pid` is the child's pid once started (also its process group id); `exit_code` its return code once it ended
    (negative: killed by that signal). `max_message_bytes` caps one stdout line (default: `limits`).
    """

    def __init__(
        self,
        params: StdioParams,
        *,
        server: str | None = None,
        stderr_limit_bytes: int = 64 * 1024,
        close_grace_s: float = 2.0,
        term_grace_s: float = 2.0,
        max_message_bytes: int | None = None,
    ) -> None:
        self.params = params
        self.server = server
        self.pid: int | None = None
        self.exit_code: int | None = None
        self._close_grace_s = close_grace_s
        self._term_grace_s = term_grace_s
        self._loop: asyncio.AbstractEventLoop | None = None
        self._proc: asyncio.SubprocessTransport | None = None
        self._stdin = StdinWriter()  # stdin, with its flow control
        self._started = False
        # stdout framing
        limit = max_message_bytes if max_message_bytes is not None else limits.max_message_bytes()
        self._out = StdoutLines(limit=limit, server=server)
        self._reading_paused = False
        self._waiter: asyncio.Future[None] | None = None  # the pending receive()
        self._stderr = StderrRing(stderr_limit_bytes)
        self._bytes_in = 0  # stdout and stderr bytes read so far (progress())
        self.on_stderr: Callable[[bytes], None] | None = None  # SupportsStderrSink: the server's log
        # end of the connection
        self._stdout_eof = False
        self._stderr_eof = False
        self._exited: asyncio.Future[None] | None = None
        self._ended: asyncio.Future[None] | None = None
        self._grace_timer: asyncio.TimerHandle | None = None
        self._error: TransportError | None = None  # set once the connection is over; raised from then on
        self._close_task: asyncio.Task[None] | None = None

    # ---- public API --------------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Spawn the server. Raises TransportError (saying what to fix) when it cannot be started."""
        if self._started:
            raise TransportError("transport already started", server=self.server)
        self._started = True
        loop = self._loop = asyncio.get_running_loop()
        self._exited = loop.create_future()
        self._ended = loop.create_future()
        params = self.params
        if not params.command:
            self._error = SpawnError("no command given (check the server's `command`)", server=self.server)
            raise self._error
        try:
            proc = await spawn_process(loop, params, lambda: _Protocol(self), self.server)
        except SpawnError as exc:
            self._error = exc
            raise
        self._proc = proc
        self.pid = proc.get_pid()
        log.debug("%s: started pid %s: %s", self.server, self.pid, params.command)

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message as one JSON line. Raises TransportError / ServerExitedError once the pipe is gone."""
        if self._error is not None:
            raise self._error.with_traceback(None)
        if self._stdin.lost:
            raise await self._stdin_lost_error()
        if self._stdin.pipe is None:
            raise TransportError("transport not started", server=self.server)
        if await self._stdin.write(message, self._loop_):  # it waited for the pipe to drain
            if self._error is not None:
                raise self._error.with_traceback(None)
            if self._stdin.lost:
                raise await self._stdin_lost_error()

    async def receive(self) -> Any:
        """The next JSON value from stdout. Raises ServerExitedError when the server is gone (every call after)."""
        while True:
            message = self._out.next_message()
            if self._reading_paused and self._out.backlog <= STDOUT_RESUME_BYTES:
                self._set_reading(paused=False)
            if message is not NOTHING:
                return message
            if self._error is not None:
                raise self._error.with_traceback(None)
            if self._waiter is not None:
                raise RuntimeError("receive() is already waiting on this transport")
            if self._loop is None:
                raise TransportError("transport not started", server=self.server)
            waiter = self._waiter = self._loop.create_future()
            try:
                await waiter
            finally:
                self._waiter = None

    async def close(self) -> None:
        """Stop the server in steps (stdin EOF, SIGTERM, SIGKILL to its group); reap it. Idempotent, bounded.

        A pending `receive()` raises TransportError. Cancelling the caller does not abort the shutdown.
        """
        if self._close_task is None:
            if self._loop is None:  # never started: nothing to release, and no starting later
                self._started = True
                if self._error is None:
                    self._error = TransportError("connection closed by the client", server=self.server)
                return
            self._close_task = self._loop.create_task(self._close(), name=f"stdio-close-{self.server}")
        await asyncio.shield(self._close_task)

    def progress(self) -> int:
        """Grows whenever the server does something: bytes it wrote to stdout or stderr, CPU time its process
        group used (`SupportsProgress`: a startup timeout is extended while a slow server is still working)."""
        return self._bytes_in + group_cpu_ticks(self.pid)

    def stderr_text(self) -> str:
        """The tail of the server's stderr alone (`SupportsStderr`)."""
        return self._stderr.text().strip()

    def diagnostics(self) -> str:
        """The tail of the server's stderr, then its recent non-JSON stdout lines (may be empty)."""
        parts = []
        tail = self._stderr.text().strip()
        if tail:
            parts.append(tail)
        if self._out.noise:
            parts.append("non-JSON lines on stdout:\n" + "\n".join(self._out.noise))
        return "\n".join(parts)

    # ---- protocol callbacks (run in the event loop) -----------------------------------------------------------

    def _attach(self, proc: asyncio.SubprocessTransport) -> None:
        self._proc = proc
        self.pid = proc.get_pid()
        stdin = proc.get_pipe_transport(0)
        self._stdin.pipe = stdin if isinstance(stdin, asyncio.WriteTransport) else None
        if _SET_PIPE_SIZE is not None:
            stdout = proc.get_pipe_transport(1)
            pipe = stdout.get_extra_info("pipe") if stdout is not None else None
            if pipe is not None:
                with contextlib.suppress(OSError, ValueError):
                    fcntl(pipe.fileno(), _SET_PIPE_SIZE, STDOUT_PIPE_BYTES)

    def _on_stdout(self, data: bytes) -> None:
        self._bytes_in += len(data)
        if self._stdout_eof or self._close_task is not None:
            return
        overflow = self._out.feed(data)
        if overflow is not None:  # a line over the cap that names no request: nobody to fail but everyone
            log.warning("%s: %s", self.server, overflow.message)
            self._end(overflow)
            self._close_read_pipes()  # stop reading the rest; the session closes us and stops the server
            return
        if self._out.has_items:
            waiter = self._waiter
            if waiter is not None and not waiter.done():
                waiter.set_result(None)
        if self._out.backlog > STDOUT_PAUSE_BYTES and not self._reading_paused:
            self._set_reading(paused=True)

    def _on_pipe_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 0:
            self._stdin.on_lost()
        elif fd == 1:
            if not self._stdout_eof:
                self._stdout_eof = True
                self._out.flush()
            self._update_end()
        elif fd == 2:
            self._stderr_eof = True
            self._to_sink(b"")  # ended: a partial last line goes to the log too
            self._update_end()

    def _to_sink(self, data: bytes) -> None:
        sink = self.on_stderr
        if sink is None:
            return
        try:
            sink(data)
        except Exception:  # the log is a nicety: a full disk must not break the server's connection
            log.debug("%s: the stderr sink failed", self.server, exc_info=True)

    def _on_exited(self) -> None:
        proc = self._proc
        self.exit_code = proc.get_returncode() if proc is not None else None
        log.debug("%s: pid %s exited with %s", self.server, self.pid, self.exit_code)
        if self._exited is not None and not self._exited.done():
            self._exited.set_result(None)
        self._update_end()

    # ---- internals ---------------------------------------------------------------------------------------------

    def _loop_(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            raise TransportError("transport not started", server=self.server)
        return self._loop

    def _set_reading(self, *, paused: bool) -> None:
        pipe = self._proc.get_pipe_transport(1) if self._proc is not None else None
        if not isinstance(pipe, asyncio.ReadTransport) or self._stdout_eof:
            return
        self._reading_paused = paused
        with contextlib.suppress(RuntimeError, AttributeError):  # already closing
            if paused:
                pipe.pause_reading()
            else:
                pipe.resume_reading()

    def _update_end(self) -> None:
        """Called on every end event: stdout EOF, stderr EOF, process exit."""
        if self._error is not None:
            return
        exited = self._exited is not None and self._exited.done()
        if self._stdout_eof and self._stderr_eof and exited:
            self._end()
        elif (self._stdout_eof or exited) and self._grace_timer is None and self._loop is not None:
            # the rest (exit status, last stderr) normally follows within milliseconds; a grandchild that keeps
            # our pipes open must not keep us waiting
            self._grace_timer = self._loop.call_later(EXIT_GRACE_S, self._on_grace_expired)

    def _on_grace_expired(self) -> None:
        if self._error is not None:
            return
        if self._reading_paused and self._loop is not None:
            # stdout is open because *we* stopped reading it (unread backlog): keep the rest of its data
            self._grace_timer = self._loop.call_later(EXIT_GRACE_S, self._on_grace_expired)
            return
        exited = self._exited is not None and self._exited.done()
        if exited and not (self._stdout_eof and self._stderr_eof):
            log.debug("%s: pid %s exited but its pipes stay open; killing its process group", self.server,
                      self.pid)
            signal_group(self.pid, signal.SIGKILL, self.server)
            self._close_read_pipes()
        self._end()

    def _close_read_pipes(self) -> None:
        """Stop reading stdout/stderr for good (a process outside our group may hold them open)."""
        if not self._stdout_eof:
            self._stdout_eof = True
            self._out.flush()
        self._stderr_eof = True
        if self._proc is not None:
            for fd in (1, 2):
                pipe = self._proc.get_pipe_transport(fd)
                if pipe is not None:
                    pipe.close()

    def _end(self, error: TransportError | None = None) -> None:
        """The connection is over: from now on `receive()` (once buffered lines are read) and `send()` raise."""
        if self._error is not None:
            return
        self._error = error if error is not None else exit_error(self.exit_code, self._stderr.text(), self.server)
        if self._grace_timer is not None:
            self._grace_timer.cancel()
        if self._ended is not None and not self._ended.done():
            self._ended.set_result(None)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
        self._stdin.wake()

    async def _stdin_lost_error(self) -> TransportError:
        """Our stdin pipe broke: almost always the server is exiting; wait briefly to report how it ended."""
        if self._error is None and self._ended is not None:
            await asyncio.wait([self._ended], timeout=EXIT_GRACE_S * 2)
        if self._error is not None:
            return self._error.with_traceback(None)
        return TransportError("server closed its stdin", server=self.server)

    async def _close(self) -> None:
        self._end(TransportError("connection closed by the client", server=self.server))
        self._out.clear()  # after close every receive() raises, even if replies were still buffered
        proc = self._proc
        if proc is None:
            return
        assert self._exited is not None
        try:
            await stop_process(proc, self._exited, pid=self.pid, server=self.server,
                               close_grace_s=self._close_grace_s, term_grace_s=self._term_grace_s)
        finally:
            if self._grace_timer is not None:
                self._grace_timer.cancel()
