"""What `mcp doctor` (doctor.py) watches while it probes a server: the client's log records about it (`Watch`: the
non-JSON stdout lines, the JSON-RPC oddities, the withheld tools) and its messages (`FirstReply`, a `trace` tap: when
the first arrived, whether any text had to be repaired from invalid UTF-8)."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator
from typing import Any

from mini_claude.mcp.protocol import WITHHELD_LOG_KEY, WithheldTool

__all__ = ["FirstReply", "Watch", "watching"]

MAX_NOTES = 20


class Watch(logging.Handler):
    """The client's log records about one server while it is probed: non-JSON stdout lines, protocol oddities,
    withheld tools (their records carry a `WithheldTool`)."""

    def __init__(self, server: str) -> None:
        super().__init__(logging.DEBUG)
        self.server = server
        self.noise: list[str] = []
        self.notes: list[str] = []
        self.withheld: dict[str, str] = {}

    def emit(self, record: logging.LogRecord) -> None:
        item = getattr(record, WITHHELD_LOG_KEY, None)
        if isinstance(item, WithheldTool):
            if item.server == self.server:
                self.withheld[item.name] = item.reason
            return
        args = record.args if isinstance(record.args, tuple) else ()
        if not args or args[0] != self.server:
            return
        if record.name.endswith("stdio_lines") and record.levelno == logging.DEBUG and len(args) == 2:
            if len(self.noise) < MAX_NOTES:
                self.noise.append(str(args[1])[:200])  # the line skipped as not JSON
            return
        if record.levelno >= logging.WARNING and len(self.notes) < MAX_NOTES:
            text = record.getMessage()
            prefix = f"{self.server}: "
            self.notes.append((text[len(prefix):] if text.startswith(prefix) else text)[:300])


class FirstReply:
    """A message tap: when the server's first message arrived, and whether any text in its messages had to be
    repaired (invalid UTF-8 arrives as U+FFFD)."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.at: float | None = None
        self.replaced = False

    def record(self, server: str | None, direction: str, message: Any) -> None:
        if server != self.server or direction != "recv":
            return
        if self.at is None:
            self.at = time.monotonic()
        if not self.replaced and _has_replacement(message):
            self.replaced = True


def _has_replacement(value: Any, depth: int = 0) -> bool:
    if depth > 64:
        return False
    if isinstance(value, str):
        return "\ufffd" in value
    if isinstance(value, dict):
        return any(_has_replacement(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return any(_has_replacement(v, depth + 1) for v in value)
    return False


class _Watchers(logging.Handler):
    """One handler on the `mini_claude.mcp` logger for every server being probed (they run concurrently): it hands
    each record to that server's `Watch`. While any is probed the logger takes debug records (the non-JSON lines
    are debug records) and, unless the root logger is at debug level (`--debug`), keeps them from the terminal:
    the doctor reports what matters itself."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.watches: dict[str, Watch] = {}
        self.saved: tuple[int, bool] = (logging.NOTSET, True)

    def emit(self, record: logging.LogRecord) -> None:
        for watch in list(self.watches.values()):
            watch.emit(record)


_WATCHERS = _Watchers()


@contextlib.contextmanager
def watching(server: str) -> Iterator[Watch]:
    logger = logging.getLogger("mini_claude.mcp")
    watch = Watch(server)
    if not _WATCHERS.watches:
        _WATCHERS.saved = (logger.level, logger.propagate)
        logger.addHandler(_WATCHERS)
        logger.setLevel(logging.DEBUG)
        logger.propagate = logging.getLogger().getEffectiveLevel() <= logging.DEBUG
    _WATCHERS.watches[f"{server}\0{id(watch)}"] = watch
    try:
        yield watch
    finally:
        del _WATCHERS.watches[f"{server}\0{id(watch)}"]
        if not _WATCHERS.watches:
            logger.removeHandler(_WATCHERS)
            logger.setLevel(_WATCHERS.saved[0])
            logger.propagate = _WATCHERS.saved[1]
