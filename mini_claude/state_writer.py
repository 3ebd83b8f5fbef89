"""State files written behind: one background thread writes them (atomically, with fsync, as `statefile` does), so
an event loop never waits on a disk. A session's fleet of servers pins its tools as each comes up; each pin file's
fsync took 3-5 ms, and sixty of them on the loop held up the next spawns and handshakes by a quarter of a second.

    writer = WriteBehind("MCP tool pins")
    writer.put(path, data)          # returns at once; a later put of the same path replaces one not yet written
    writer.pending(path)            # what was put and is not yet on disk (readers look here first), else None
    writer.flush(timeout_s=5)       # wait (bounded) until everything put is written
    writer.hold(); …; writer.release()   # while held, nothing is written: a burst of puts goes out after it

A session holds its pin writes while its fleet starts (McpManager.start), so the writer thread does not compete with
the event loop for the interpreter until the servers are up, then writes them all.

What is put is written before the process exits (an exit hook waits, bounded by `EXIT_WAIT_S`); a write that fails
is logged, as a synchronous one would be, and never raised. The thread ends when nothing is left to write (a put
starts another), so a closed session leaves no thread behind.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mini_claude.statefile import write_state

__all__ = ["EXIT_WAIT_S", "WriteBehind"]

log = logging.getLogger(__name__)

EXIT_WAIT_S = 5.0


class WriteBehind:
    def __init__(self, what: str) -> None:
        self.what = what  # for the log line of a failed write
        self._cond = threading.Condition()
        self._pending: dict[Path, tuple[Any, Callable[[], None] | None]] = {}
        self._held = False
        self._thread: threading.Thread | None = None  # the writer, while there is something to write
        self._ended: threading.Thread | None = None  # the last writer that ended (flush joins it)
        self._exit_hook = False
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []  # `flushed()` callers

    def hold(self) -> None:
        with self._cond:
            self._held = True

    def release(self) -> None:
        with self._cond:
            self._held = False
            self._cond.notify_all()

    def put(self, path: Path, data: Any, *, after: Callable[[], None] | None = None) -> None:
        """Have `data` written to `path` (JSON, atomically); `after` runs in the writer once it is written."""
        with self._cond:
            self._pending[path] = (data, after)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=f"write-behind ({self.what})", daemon=True)
                self._thread.start()
            if not self._exit_hook:
                self._exit_hook = True
                atexit.register(self.flush, EXIT_WAIT_S)
            if not self._held:
                self._cond.notify_all()

    def pending(self, path: Path) -> Any | None:
        with self._cond:
            item = self._pending.get(path)
            return item[0] if item is not None else None

    def flush(self, timeout_s: float) -> bool:
        """Release any hold and wait until everything put so far is written and the writer has ended; False when
        `timeout_s` ran out first."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            self._held = False
            self._cond.notify_all()
            done = self._cond.wait_for(lambda: self._thread is None, timeout=timeout_s)
            ended = self._ended
        if done and ended is not None and ended is not threading.current_thread():
            ended.join(max(0.0, deadline - time.monotonic()))
        return done

    async def flushed(self, timeout_s: float) -> bool:
        """`flush` for an event loop: releases any hold and waits, without blocking the loop or starting a thread,
        until the writer has written everything and ended; False when `timeout_s` ran out first."""
        loop = asyncio.get_running_loop()
        with self._cond:
            self._held = False
            self._cond.notify_all()
            if self._thread is None:
                return True
            done: asyncio.Future[None] = loop.create_future()
            self._waiters.append((loop, done))
        try:
            await asyncio.wait_for(asyncio.shield(done), timeout_s)
        except TimeoutError:
            return False
        return True

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: not self._pending or not self._held)
                if not self._pending:  # all written: end (a later put starts a new writer)
                    self._thread, self._ended = None, threading.current_thread()
                    waiters, self._waiters = self._waiters, []
                    self._cond.notify_all()
                    for loop, done in waiters:
                        with contextlib.suppress(RuntimeError):  # that loop is closed: nobody waits any more
                            loop.call_soon_threadsafe(_set_done, done)
                    return
                path, item = next(iter(self._pending.items()))
            try:
                write_state(path, item[0])
                if item[1] is not None:
                    item[1]()
            except OSError as exc:
                log.warning("could not save the %s in %s: %s", self.what, path, exc)
            except Exception:  # a bug must not end the writer: what is put later is still written
                log.exception("writing the %s in %s failed", self.what, path)
            finally:
                with self._cond:
                    if self._pending.get(path) is item:  # not replaced meanwhile: written
                        del self._pending[path]
                    self._cond.notify_all()


def _set_done(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
