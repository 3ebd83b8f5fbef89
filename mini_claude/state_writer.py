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
is logged, as a synchronous one would be, and never raised.
"""

from __future__ import annotations

import atexit
import logging
import threading
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
        self._writing = False
        self._held = False
        self._thread: threading.Thread | None = None

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
                atexit.register(self.flush, EXIT_WAIT_S)
            if not self._held:
                self._cond.notify_all()

    def pending(self, path: Path) -> Any | None:
        with self._cond:
            item = self._pending.get(path)
            return item[0] if item is not None else None

    def flush(self, timeout_s: float) -> bool:
        """Release any hold and wait until everything put so far is written; False when `timeout_s` ran out first."""
        with self._cond:
            self._held = False
            self._cond.notify_all()
            return self._cond.wait_for(lambda: not self._pending and not self._writing, timeout=timeout_s)

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: bool(self._pending) and not self._held)
                path, item = next(iter(self._pending.items()))
                self._writing = True
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
                    self._writing = False
                    self._cond.notify_all()
