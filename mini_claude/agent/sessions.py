"""Saved conversations: every session is written as it goes, so it survives an exit, a crash or `kill -9`.

`<state>/sessions/<project>/<id>.jsonl` (0600 in 0700 folders; `<project>` is the working directory with every
character outside `[A-Za-z0-9_-]` turned into `-`, as Claude Code names its project folders). The first line
describes the session (`{"type": "session", "id", "cwd", "created"}`); each later line is one change of the
history, appended and flushed at once: `{"type": "message", "message": …}` (added at the end), `{"type":
"replace", "index": N, "message": …}` (the last message grew: content merged into it), `{"type": "truncate",
"length": N}` (a failed prompt taken back) or `{"type": "reset", "messages": […]}` (the whole history rewritten:
compaction). Replaying the lines gives the history; a line cut by a crash ends
the replay there. A session saved while the built-in tools had their former names (`read_file`, `bash`) comes
back with today's (tools/former_names.py). A history whose last message asks for tool calls that never got results (the process died
during them) is closed with error results, so it is valid to send again.

Bounded (`prune_sessions`, run by the daily state sweep): a session not written for `MAX_SESSION_AGE_S` (30 days,
Claude Code's default `cleanupPeriodDays`) is removed, at most `MAX_SESSIONS_PER_FOLDER` (the newest) are kept per
folder, and the sessions of a working directory that no longer exists (as each file's first line names it) go
with it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from mini_claude.agent.turns import user_text
from mini_claude.tools.former_names import upgrade_history

__all__ = ["INTERRUPTED_RESULT", "MAX_SESSIONS_PER_FOLDER", "MAX_SESSION_AGE_S", "SessionInfo", "SessionLog",
           "checkpoints_dir", "list_sessions", "load_session", "prune_sessions", "replay_session", "sessions_dir"]

INTERRUPTED_RESULT = "The session ended (the process stopped) before this tool call finished."
MAX_SESSION_AGE_S = 30 * 24 * 3600
MAX_SESSIONS_PER_FOLDER = 200
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_CHECKPOINTS = ".checkpoints"
_HEADER_BYTES = 64 * 1024  # how much of a session file is read to find its working directory


def sessions_dir(state: Path, cwd: Path) -> Path:
    return state / "sessions" / _UNSAFE.sub("-", str(cwd.resolve()))


def checkpoints_dir(session_file: Path) -> Path:
    """Where a session's checkpoints of file changes are kept (agent/checkpoints.py): beside its file."""
    return session_file.with_suffix(_CHECKPOINTS)


@dataclass(frozen=True)
class SessionInfo:
    id: str
    path: Path
    modified: float
    size: int
    first_prompt: str


class SessionLog:
    """Appends a session's history changes to its file (`sync(history)` after every change)."""

    def __init__(self, path: Path, session_id: str, cwd: Path, *, written: list[dict[str, Any]] | None = None
                 ) -> None:
        self.path = path
        self.id = session_id
        self._written = [_dump(m) for m in written or []]
        self._file: IO[str] | None = None
        self._cwd = cwd
        self._new = written is None
        self.error: OSError | None = None  # the first write that failed (the conversation goes on regardless)

    @classmethod
    def create(cls, state: Path, cwd: Path, session_id: str) -> SessionLog:
        return cls(sessions_dir(state, cwd) / f"{session_id}.jsonl", session_id, cwd)

    def sync(self, history: list[dict[str, Any]], rewritten: bool = False) -> None:
        """Write what changed in `history` since the last call (`rewritten`: anywhere, not only at its end). Never
        raises: a full disk costs the saved copy, not the conversation (the first failure is kept in `error`)."""
        try:
            if rewritten:
                self._write({"type": "reset", "messages": history})
                self._written = [_dump(m) for m in history]
                return
            self._sync(history)
        except OSError as exc:
            self.error = self.error or exc

    def _sync(self, history: list[dict[str, Any]]) -> None:
        written = self._written
        if len(history) < len(written):
            self._write({"type": "truncate", "length": len(history)})
            del written[len(history):]
        if written:
            last = _dump(history[len(written) - 1])
            if last != written[-1]:
                self._write({"type": "replace", "index": len(written) - 1, "message": history[len(written) - 1]})
                written[-1] = last
        for message in history[len(written):]:
            self._write({"type": "message", "message": message})
            written.append(_dump(message))

    def _write(self, record: dict[str, Any]) -> None:
        if self._file is None:
            self._file = _open_private(self.path)
            if self._new:
                self._file.write(json.dumps({"type": "session", "id": self.id, "cwd": str(self._cwd),
                                             "created": time.time()}) + "\n")
                self._new = False
        self._file.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def load_session(path: Path) -> list[dict[str, Any]]:
    """The history saved in `path`, replayed and made valid to send (see the module docstring)."""
    history = upgrade_history(replay_session(path))
    _close_unanswered(history)
    return history


def replay_session(path: Path) -> list[dict[str, Any]]:
    """The history exactly as the file has it (a crash may have left tool calls without results)."""
    history: list[dict[str, Any]] = []
    with path.open(encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                break  # a line cut by a crash: what came before it stands
            kind = record.get("type") if isinstance(record, dict) else None
            if kind == "message" and _is_message(record.get("message")):
                history.append(record["message"])
            elif kind == "replace" and _is_message(record.get("message")) and record.get("index") == len(history) - 1:
                history[-1] = record["message"]
            elif kind == "truncate" and isinstance(record.get("length"), int):
                del history[max(0, record["length"]):]
            elif kind == "reset" and isinstance(record.get("messages"), list) and all(
                    _is_message(m) for m in record["messages"]):
                history = list(record["messages"])
    return history


def list_sessions(state: Path, cwd: Path) -> list[SessionInfo]:
    """This folder's saved sessions, newest first."""
    folder = sessions_dir(state, cwd)
    found: list[SessionInfo] = []
    for path in folder.glob("*.jsonl") if folder.is_dir() else ():
        try:
            stat = path.stat()
        except OSError:
            continue
        found.append(SessionInfo(path.stem, path, stat.st_mtime, stat.st_size, _first_prompt(path)))
    return sorted(found, key=lambda info: info.modified, reverse=True)


def _first_prompt(path: Path) -> str:
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            for line, _ in zip(f, range(50), strict=False):
                record = json.loads(line)
                message = record.get("message") if isinstance(record, dict) else None
                if _is_message(message) and message["role"] == "user" and isinstance(message["content"], list):
                    typed = user_text(message["content"])  # the opening reminders (CLAUDE.md, git) are no prompt
                    if typed:
                        return " ".join(typed.split())[:80]
    except (OSError, json.JSONDecodeError):
        pass
    return ""


def prune_sessions(state: Path, *, now: float | None = None, max_age_s: float = MAX_SESSION_AGE_S,
                   max_per_folder: int = MAX_SESSIONS_PER_FOLDER) -> int:
    """Remove old sessions (see the module docstring) under `state/sessions`; how many. Never raises."""
    cutoff = (time.time() if now is None else now) - max_age_s
    removed = 0
    try:
        folders = [entry.path for entry in os.scandir(state / "sessions") if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return 0
    for folder in folders:
        found: list[tuple[float, str]] = []
        stores: list[str] = []
        try:
            for entry in os.scandir(folder):
                if entry.name.endswith(".jsonl") and entry.is_file(follow_symlinks=False):
                    found.append((entry.stat(follow_symlinks=False).st_mtime, entry.path))
                elif entry.name.endswith(_CHECKPOINTS) and entry.is_dir(follow_symlinks=False):
                    stores.append(entry.path)
        except OSError:
            continue
        found.sort(reverse=True)  # newest first
        for index, (mtime, path) in enumerate(found):
            if mtime < cutoff or index >= max_per_folder or _folder_gone(Path(path)):
                try:
                    os.unlink(path)
                    removed += 1
                except OSError:
                    continue
        for store in stores:  # the checkpoints of a session whose file is gone
            if not os.path.exists(store[: -len(_CHECKPOINTS)] + ".jsonl"):
                shutil.rmtree(store, ignore_errors=True)
        try:
            os.rmdir(folder)  # only when nothing is left in it
        except OSError:
            pass
    return removed


def _folder_gone(path: Path) -> bool:
    """Whether the working directory a session file names on its first line no longer exists (False when the file
    does not say)."""
    try:
        with path.open("rb") as f:
            line = f.readline(_HEADER_BYTES)
        record = json.loads(line)
    except (OSError, ValueError):
        return False
    cwd = record.get("cwd") if isinstance(record, dict) and record.get("type") == "session" else None
    return isinstance(cwd, str) and os.path.isabs(cwd) and not os.path.isdir(cwd)


def _close_unanswered(history: list[dict[str, Any]]) -> None:
    """Give every tool_use of a trailing assistant message an error result (the process died during them)."""
    if not history or history[-1]["role"] != "assistant":
        return
    uses = [b for b in history[-1]["content"] if isinstance(b, dict) and b.get("type") == "tool_use"]
    if uses:
        history.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": b.get("id"), "content": INTERRUPTED_RESULT, "is_error": True}
            for b in uses]})


def _is_message(value: Any) -> bool:
    return isinstance(value, dict) and value.get("role") in ("user", "assistant") and isinstance(
        value.get("content"), list)


def _dump(message: dict[str, Any]) -> str:
    return json.dumps(message, sort_keys=True, ensure_ascii=False)


def _open_private(path: Path) -> IO[str]:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    return os.fdopen(fd, "a", encoding="utf-8")
