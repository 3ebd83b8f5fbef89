"""Importing a session's agent half in a thread while the event loop starts its MCP servers.

A fleet of stdio servers is CPU-bound while it boots, and the agent's modules (the loop, tools, gate, HTTP stack)
take some 100 ms of CPU to import. Imported before the first spawn, that time is the machine's other cores idling;
imported in a thread once the servers are starting, the loop keeps spawning and answering them (the import gives
up the GIL at least every switch interval) while the servers boot beside it. `session/start.py` calls it right after
`manager.start()`; modules already imported cost nothing.

The garbage collector is off during the imports (they allocate some 100k objects and free almost none, so a pass
meanwhile finds nothing). Nothing is frozen after (`gc.freeze`, as cli/main.py does before any server exists): the
loop has been starting servers meanwhile, and a freeze here would keep each one's first client, transport and tool
list for good, never collected after a restart (tests/regressions/test_early_start_gc_freeze.py).
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import logging
import sys
import threading
from collections.abc import Sequence

from mini_claude.errors import MiniClaudeError

__all__ = ["IMPORT_TIMEOUT_S", "import_in_background"]

log = logging.getLogger(__name__)

IMPORT_TIMEOUT_S = 120.0  # an import never takes this long; past it something is wrong with the install


async def import_in_background(*modules: str, warm: Sequence[str] = (), timeout_s: float = IMPORT_TIMEOUT_S) -> None:
    """Import `modules`, then `warm`, in a thread while the loop goes on; raise what an import of `modules` raised
    (a MiniClaudeError naming them past `timeout_s`). `warm` are imported only to be ready sooner: one that fails is
    left for its own user to import (and report)."""
    if all(name in sys.modules for name in (*modules, *warm)):
        return
    loop = asyncio.get_running_loop()
    done: asyncio.Future[BaseException | None] = loop.create_future()

    def finish(failure: BaseException | None) -> None:
        if not done.done():
            done.set_result(failure)

    def work() -> None:
        failure: BaseException | None = None
        collecting = gc.isenabled()
        gc.disable()
        try:
            for name in modules:
                importlib.import_module(name)
            for name in warm:
                try:
                    importlib.import_module(name)
                except Exception as exc:  # not ours to report: whoever needs it imports it again and says so
                    log.debug("warming %s: %s", name, exc)
        except BaseException as exc:  # handed to the awaiting task, raised there
            failure = exc
        finally:
            if collecting:
                gc.enable()
        try:
            loop.call_soon_threadsafe(finish, failure)
        except RuntimeError:  # the loop closed meanwhile (the session was cancelled): nobody waits
            pass

    threading.Thread(target=work, name="mini-claude-imports", daemon=True).start()
    try:
        failure = await asyncio.wait_for(asyncio.shield(done), timeout_s)
    except TimeoutError:
        raise MiniClaudeError(f"importing {', '.join(modules)} took over {timeout_s:g}s: the installation may be "
                              "on a stalled file system (reinstall, or run `mini-claude doctor`)") from None
    if failure is not None:
        raise failure

