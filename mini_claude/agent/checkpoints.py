"""Checkpoints of the files our own tools change, so `/rewind` can put them back as they were before a prompt.

Before Write, Edit or NotebookEdit runs (agent/tool_calls.py asks `before_tool`), the file it names is saved as it
is — its bytes and mode, or "did not exist" — once per prompt, keyed by that prompt (agent/turns.py). The store
sits beside the session's transcript and goes with it: `<state>/sessions/<project>/<id>.checkpoints/` (0700),
`index.jsonl` (one line a file and prompt) and one `N.bin` a saved copy (0600), so a `--continue`d or resumed
session can still rewind. Bounded: a file over `MAX_FILE_BYTES`, or one that would take the store past
`MAX_STORE_BYTES`, is noted as not covered instead of copied (and `/rewind` says so).

`restore(point)` puts every file changed since that prompt back as it was before it (the earliest copy of each),
deleting the files our tools created. It never writes through a symbolic link (a link planted since at the file
or at a folder on its path is refused, not followed), never outside `roots` (the folders the session could
write), and only regular files. Changes made by shell commands (Bash) are not covered: only our own tools are seen.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mini_claude.agent.turns import PromptPoint, current_point, prompt_points
from mini_claude.tools.base import ToolContext

__all__ = ["MAX_FILE_BYTES", "MAX_STORE_BYTES", "WRITE_TOOLS", "Checkpoints", "Restored"]

MAX_FILE_BYTES = 2 << 20
MAX_STORE_BYTES = 100 << 20
WRITE_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
_INDEX = "index.jsonl"


@dataclass
class Restored:
    """What `restore` did, file by file."""

    written: list[str] = field(default_factory=list)  # put back as it was
    deleted: list[str] = field(default_factory=list)  # created since: removed
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why not)


class Checkpoints:
    """The checkpoints of one session (`folder`), keyed by the prompts of `history` (the agent's own list)."""

    def __init__(self, folder: Path, history: list[dict[str, Any]]) -> None:
        self.folder = folder
        self.history = history
        self._entries: list[dict[str, Any]] | None = None

    # ---- recording ---------------------------------------------------------------------------------------------

    def before_tool(self, name: str, args: dict[str, Any], ctx: ToolContext) -> None:
        """Save the file a write tool is about to change, unless this prompt saved it already. Never raises: a
        checkpoint that cannot be kept costs the rewind of that file, not the tool call."""
        key = WRITE_TOOLS.get(name)
        raw = args.get(key) if key else None
        if not isinstance(raw, str) or not raw.strip():
            return  # not one of our file tools (Bash, an MCP tool): not covered
        point = current_point(self.history)
        if point is None:
            return
        path = os.path.abspath(ctx.resolve(raw))
        try:
            self._record(point, path)
        except OSError:
            pass

    def _record(self, point: PromptPoint, path: str) -> None:
        entries = self._load()
        if any(e["mark"] == point.mark and e["path"] == path for e in entries):
            return
        entry: dict[str, Any] = {"index": point.index, "block": point.block, "mark": point.mark,
                                 "prompt": point.text[:200], "path": path, "time": time.time(),
                                 "folder": os.path.realpath(os.path.dirname(path))}
        entry.update(self._copy(path, len(entries)))
        self._ensure_folder()
        with _open_new(self.folder / _INDEX, append=True) as f:
            f.write(json.dumps(entry, ensure_ascii=False) + "\n")
        entries.append(entry)

    def _copy(self, path: str, number: int) -> dict[str, Any]:
        """The file's state now: {"existed": False}, a copy's name and mode, or why it is not covered."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            return {"existed": False}
        except OSError as exc:
            why = "a symbolic link" if exc.errno == errno.ELOOP else exc.strerror or str(exc)
            return {"existed": True, "skipped": why}
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return {"existed": True, "skipped": "not a regular file"}
            if info.st_size > MAX_FILE_BYTES:
                return {"existed": True, "skipped": f"over {MAX_FILE_BYTES >> 20} MB when it was changed"}
            if self._store_bytes() + info.st_size > MAX_STORE_BYTES:
                return {"existed": True, "skipped": f"the checkpoints reached {MAX_STORE_BYTES >> 20} MB"}
            data = f.read(MAX_FILE_BYTES + 1)
        blob = f"{number}-{os.urandom(6).hex()}.bin"
        self._ensure_folder()
        with _open_new(self.folder / blob, append=False, binary=True) as out:
            out.write(data)
        return {"existed": True, "blob": blob, "mode": stat.S_IMODE(info.st_mode)}

    def _store_bytes(self) -> int:
        try:
            return sum(entry.stat(follow_symlinks=False).st_size for entry in os.scandir(self.folder))
        except OSError:
            return 0

    def _ensure_folder(self) -> None:
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.folder, 0o700)

    def _load(self) -> list[dict[str, Any]]:
        if self._entries is None:
            self._entries = []
            try:
                with open(self.folder / _INDEX, encoding="utf-8") as f:
                    for line in f:
                        try:
                            entry = json.loads(line)
                        except json.JSONDecodeError:
                            break
                        if isinstance(entry, dict) and isinstance(entry.get("path"), str) and \
                                isinstance(entry.get("mark"), str):
                            self._entries.append(entry)
            except OSError:
                pass
        return self._entries

    # ---- reading -----------------------------------------------------------------------------------------------

    def changes_since(self, point: PromptPoint) -> list[dict[str, Any]]:
        """The earliest saved state of each file changed at or after `point`'s prompt (in the current history)."""
        later = {p.mark for p in prompt_points(self.history) if p.key >= point.key}
        first: dict[str, dict[str, Any]] = {}
        for entry in self._load():
            if entry["mark"] in later and entry["path"] not in first:
                first[entry["path"]] = entry
        return list(first.values())

    def files_changed_at(self, point: PromptPoint) -> list[str]:
        """The files our tools changed while answering `point`'s prompt."""
        return [e["path"] for e in self._load() if e["mark"] == point.mark]

    # ---- restoring ---------------------------------------------------------------------------------------------

    def restore(self, point: PromptPoint, roots: list[Path]) -> Restored:
        """Put the files changed since `point` back as they were before it (see the module docstring)."""
        done = Restored()
        real_roots = [os.path.realpath(r) for r in roots]
        for entry in self.changes_since(point):
            path = entry["path"]
            why = self._restore_one(entry, real_roots)
            if why is None:
                (done.written if entry.get("existed") else done.deleted).append(path)
            elif why:
                done.skipped.append((path, why))
        return done

    def _restore_one(self, entry: dict[str, Any], roots: list[str]) -> str | None:
        """None when done, "" when there was nothing to do, else why it was not restored."""
        path = entry["path"]
        if entry.get("skipped"):
            return f"not saved before the change ({entry['skipped']})"
        real = os.path.join(str(entry.get("folder")), os.path.basename(path))  # the file as it was found
        if not any(real.startswith(r.rstrip(os.sep) + os.sep) for r in roots):
            return "outside the folders this session may write"
        folder = os.path.dirname(path)
        if os.path.lexists(folder) and os.path.realpath(folder) != entry.get("folder"):
            return "a folder on its path is now a symbolic link or was moved"
        try:
            if not entry.get("existed"):
                return _delete(path)
            blob = str(entry.get("blob"))
            if os.path.basename(blob) != blob or not blob.endswith(".bin"):
                return "its saved copy is missing"
            data = (self.folder / blob).read_bytes()
            os.makedirs(folder, exist_ok=True)
            if os.path.realpath(folder) != entry.get("folder"):
                return "a folder on its path is now a symbolic link"
            return _write_regular(path, data, int(entry.get("mode", 0o644)))
        except OSError as exc:
            return exc.strerror or str(exc)

    def forget_from(self, point: PromptPoint) -> None:
        """Drop the checkpoints of `point`'s prompt and the later ones (the conversation was cut back before it)."""
        later = {p.mark for p in prompt_points(self.history) if p.key >= point.key}
        entries = self._load()
        kept = [e for e in entries if e["mark"] not in later]
        if len(kept) == len(entries):
            return
        gone = {str(e.get("blob")) for e in entries if e["mark"] in later and e.get("blob")}
        try:
            self._ensure_folder()
            tmp = self.folder / f"{_INDEX}.tmp"
            with _open_new(tmp, append=False) as f:
                f.writelines(json.dumps(e, ensure_ascii=False) + "\n" for e in kept)
            os.replace(tmp, self.folder / _INDEX)
            for blob in gone:
                (self.folder / blob).unlink(missing_ok=True)
        except OSError:
            return
        self._entries = kept


def _delete(path: str) -> str | None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return ""
    if not stat.S_ISREG(info.st_mode):
        return "it is no longer a regular file (a link or a folder): left as it is"
    os.unlink(path)
    return None


def _write_regular(path: str, data: bytes, mode: int) -> str | None:
    """`data` into `path`: never through a symbolic link, only into a regular file (created when missing)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, mode & 0o777)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "it is now a symbolic link: not followed"
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return "it is no longer a regular file: left as it is"
        if info.st_nlink > 1:  # a hard link planted since would carry the write to another file
            return "it now has other hard links: left as it is"
        os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fchmod(fd, mode & 0o7777)
    finally:
        os.close(fd)
    return None


def _open_new(path: Path, *, append: bool, binary: bool = False) -> Any:
    """A private (0600) file of the store, never through a link."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | (os.O_APPEND if append else os.O_TRUNC)
    fd = os.open(path, flags, 0o600)
    return os.fdopen(fd, ("a" if append else "w") + ("b" if binary else ""), **({} if binary else {"encoding": "utf-8"}))
