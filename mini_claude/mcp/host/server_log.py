"""Server logging: `notifications/message` kept in a per-server log file, the serious ones shown as one line; a
server's stderr kept in the same file, line by line from the first byte (`stderr_sink`: a transport that hands its
stderr over as it reads it; `mcp doctor` hands over what it saw).

Every message goes to `<state>/mcp-logs/<server>.log` (0600 in a 0700 folder, opened without following a
symlink, rolled over to `.log.1` past `MAX_LOG_BYTES`); `warning` and above also reach the UI as one line, at most
`SCREEN_LINES` per `SCREEN_WINDOW_S` seconds per server (the next shown line says how many were held back). The
per-server `"logLevel"` setting is sent as `logging/setLevel` once connected, to servers that declare `logging`.

Bounded: at most `2 × MAX_LOG_BYTES` per server name, and `prune_server_logs` (the daily state sweep) removes the
logs of servers that wrote nothing for `MAX_LOG_AGE_S` (30 days), so renamed or removed servers leave nothing behind.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mini_claude.mcp.host.ui import HostUI
from mini_claude.mcp.protocol import LOG_LEVELS

__all__ = ["LOG_LEVELS", "MAX_LOG_AGE_S", "MAX_LOG_BYTES", "ServerLogs", "log_file_name", "prune_server_logs"]

log = logging.getLogger(__name__)

SCREEN_FROM = LOG_LEVELS.index("warning")
SCREEN_LINES = 3
SCREEN_WINDOW_S = 10.0
MAX_LOG_BYTES = 5 * 1024 * 1024
MAX_LOG_AGE_S = 30 * 24 * 3600
MAX_ENTRY_CHARS = 20_000
_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]")


def log_file_name(server: str) -> str:
    """A file name for a server's log that cannot leave the folder (`../x` → `.._x`)."""
    cleaned = _SAFE_NAME.sub("_", server)[:100].lstrip(".") or "_"
    return f"{cleaned}.log"


def prune_server_logs(folder: Path, *, now: float | None = None, max_age_s: float = MAX_LOG_AGE_S) -> int:
    """Remove the log files (`*.log`, `*.log.1`) in `folder` not written for `max_age_s`; how many. Never raises."""
    cutoff = (time.time() if now is None else now) - max_age_s
    removed = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        if not entry.name.endswith((".log", ".log.1")):
            continue
        try:
            if entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mtime < cutoff:
                os.unlink(entry.path)
                removed += 1
        except OSError:
            continue
    return removed


class _Screen:
    """How many lines a server has had on screen lately, and how many were held back."""

    def __init__(self) -> None:
        self.shown: list[float] = []
        self.held = 0


class ServerLogs:
    """Receives every server's log messages (one `on_message` callback per server)."""

    def __init__(self, folder: Path, ui: HostUI, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.folder = folder
        self.ui = ui
        self._clock = clock
        self._screens: dict[str, _Screen] = {}
        self._stderr_pending: dict[str, bytes] = {}
        self._folder_ready = False

    def path(self, server: str) -> Path:
        return self.folder / log_file_name(server)

    def on_message(self, server: str) -> Callable[[str, Any], None]:
        def message(_method: str, params: Any) -> None:
            self.record(server, params)
        return message

    def record(self, server: str, params: Any) -> None:
        if not isinstance(params, dict):
            return
        level = str(params["level"]) if params.get("level") in LOG_LEVELS else "info"
        logger = str(params["logger"]) if isinstance(params.get("logger"), str) else ""
        data = params.get("data")
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
        text = text[:MAX_ENTRY_CHARS]
        self._append(server, f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {level.upper()} {logger}: {text}\n")
        if LOG_LEVELS.index(level) >= SCREEN_FROM:
            self._show(server, f"[{level}] {logger + ': ' if logger else ''}{text}")

    def stderr_sink(self, server: str) -> Callable[[bytes], None]:
        """A callable taking the server's stderr as it comes, chunk by chunk from the first byte: each line goes to
        its log as `<time> STDERR: <line>` (a longer line than `MAX_ENTRY_CHARS` bytes in pieces; a partial last
        line waits for its end, or for `end_stderr`; an empty chunk says the stderr ended). Nothing reaches the screen: stderr is the server's own diagnostics."""
        def take(data: bytes) -> None:
            if data:
                self.record_stderr(server, data)
            else:  # the stderr ended (SupportsStderrSink)
                self.end_stderr(server)
        return take

    def record_stderr(self, server: str, data: bytes) -> None:
        pending = self._stderr_pending.get(server, b"") + data
        *lines, rest = pending.split(b"\n")
        # a very long line is logged in pieces (nothing is cut, nothing held without bound)
        pieces = [line[i:i + MAX_ENTRY_CHARS] for line in lines for i in range(0, max(len(line), 1), MAX_ENTRY_CHARS)]
        while len(rest) > MAX_ENTRY_CHARS:
            pieces.append(rest[:MAX_ENTRY_CHARS])
            rest = rest[MAX_ENTRY_CHARS:]
        self._stderr_pending[server] = rest
        if pieces:
            self._append(server, "".join(self._stderr_entry(piece) for piece in pieces))

    def end_stderr(self, server: str) -> None:
        """The server's stderr ended: its unterminated last line, if any, goes to the log."""
        rest = self._stderr_pending.pop(server, b"")
        if rest:
            self._append(server, self._stderr_entry(rest))

    @staticmethod
    def _stderr_entry(line: bytes) -> str:
        text = line.rstrip(b"\r").decode("utf-8", "replace")
        return f"{time.strftime('%Y-%m-%dT%H:%M:%S')} STDERR: {text}\n"

    def _show(self, server: str, line: str) -> None:
        screen = self._screens.setdefault(server, _Screen())
        now = self._clock()
        screen.shown = [t for t in screen.shown if now - t < SCREEN_WINDOW_S]
        if len(screen.shown) >= SCREEN_LINES:
            screen.held += 1
            return
        screen.shown.append(now)
        if screen.held:
            line = f"{line} ({screen.held} more in {self.path(server)})"
            screen.held = 0
        self.ui.notice(server, line)

    def _append(self, server: str, entry: str) -> None:
        path = self.path(server)
        try:
            if not self._folder_ready:  # once, not for every message
                self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
                os.chmod(self.folder, 0o700)
                self._folder_ready = True
            try:
                if path.stat().st_size > MAX_LOG_BYTES:
                    os.replace(path, path.with_name(path.name + ".1"))
            except FileNotFoundError:
                pass
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
            try:
                os.write(fd, entry.encode("utf-8", "replace"))
            finally:
                os.close(fd)
        except OSError as exc:
            log.debug("%s: cannot write its log to %s: %s", server, path, exc)
