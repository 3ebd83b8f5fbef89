"""Project memory: the CLAUDE.md files, found where Claude Code finds them and placed where it places them — as a
`<system-reminder>` block opening the conversation's first user message (`Memory.reminder`), not in the system
prompt.

In order (later is more specific): `~/.claude/CLAUDE.md` (the user's), then from the project root (the git root,
else the working directory) down to the working directory, in each folder `CLAUDE.md`, `.claude/CLAUDE.md` and
`CLAUDE.local.md`; then `.claude/rules/*.md` of the project root, by name. A line's `@path` tokens (outside code)
import more files, resolved against the importing file's folder (`~/` is the home folder, absolute paths are
absolute), at most `MAX_IMPORT_DEPTH` hops deep, each file once (cycles end there).

Trust: the user's own file may import anything. A file from the repository is untrusted text for the model: it,
and what it imports, must be inside the project (symlinks resolved), so a cloned repository cannot pull `~/.ssh/id_rsa`
or `/etc/...` into what is sent to the model; such an import is skipped with a warning. A file's own
`<system-reminder>` / `</system-reminder>` tags are made inert in the block, so its text cannot end the block and
open one that reads as mini-claude's. Files are read through
`jsonfile`'s bounded door (regular files only: a FIFO or a device is a warning, never a hang), sizes capped
(`MAX_FILE_CHARS` a file, cut beyond; `MAX_TOTAL_CHARS` in all). The REPL's `# note` writes only a regular
CLAUDE.md, never through a symlink (`append_memory_line`).

Where a `# note` may go (`NOTE_TARGETS`, Claude Code's three): the project's `./CLAUDE.md` (shared, committed), the
project-local `./CLAUDE.local.md` (personal, kept out of git; loaded as kind "local") and the user's
`~/.claude/CLAUDE.md`. Each is written by the same door (`append_memory_note`).
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path

from mini_claude.errors import ConfigError
from mini_claude.git_snapshot import inert_reminder_tags
from mini_claude.jsonfile import read_regular_head

__all__ = ["MAX_IMPORT_DEPTH", "NOTE_TARGETS", "Memory", "MemoryFile", "NoteTarget", "append_memory_line",
           "append_memory_note", "load_memory", "note_refusal", "project_root"]

MAX_IMPORT_DEPTH = 5
MAX_FILE_CHARS = 40_000
MAX_TOTAL_CHARS = 120_000
_IMPORT = re.compile(r"(?<![\w`])@((?:~/|/|\./|\.\./|[\w.-]+/)?[\w./~-]*[\w-])")
_FENCE = re.compile(r"^\s*(```|~~~)")
_CODE_SPAN = re.compile(r"`[^`]*`")
_APPEND_FLAGS = (os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY
                 | getattr(os, "O_CLOEXEC", 0))
_NEW_MEMORY_MODE = 0o644


@dataclass(frozen=True)
class NoteTarget:
    """A memory file a `# note` may be added to: the key that picks it, its name, what it is for, where it is."""

    key: str
    label: str
    purpose: str
    user: bool  # under the home folder (`~/.claude/…`), else in the working directory
    name: str

    def path(self, cwd: Path, home: Path) -> Path:
        return home / ".claude" / self.name if self.user else cwd / self.name


NOTE_TARGETS = (
    NoteTarget("p", "project memory", "./CLAUDE.md, shared with the team through git", False, "CLAUDE.md"),
    NoteTarget("l", "project-local memory", "./CLAUDE.local.md, yours, keep it out of git", False, "CLAUDE.local.md"),
    NoteTarget("u", "user memory", "~/.claude/CLAUDE.md, yours, in every project", True, "CLAUDE.md"),
)


@dataclass(frozen=True)
class MemoryFile:
    path: Path
    text: str
    kind: str  # "user" | "project" | "local" | "rule" | "import"
    imported_by: Path | None = None


@dataclass
class Memory:
    files: list[MemoryFile] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def reminder(self, display: Callable[[Path], str] | None = None) -> str:
        """The files as the block that opens the conversation ("" when there are none)."""
        if not self.files:
            return ""
        shown: Callable[[Path], str] = display or str
        parts = ["<system-reminder>\nThe user's and the project's standing instructions, from their memory files "
                 "(CLAUDE.md). Follow them: where they differ from your usual habits they win, and a later file is "
                 "more specific than an earlier one."]
        for item in self.files:
            origin = _KINDS.get(item.kind, item.kind) if item.imported_by is None else \
                f"imported by {shown(item.imported_by)}"
            # a file's text (or its path: a folder named `<`) cannot close the block and open one of its own
            parts.append(inert_reminder_tags(f"Contents of {shown(item.path)} ({origin}):\n\n{item.text.strip()}"))
        return "\n\n".join(parts) + "\n</system-reminder>"


_KINDS = {"user": "the user's own instructions, for every project",
          "project": "project instructions, shared through the repository",
          "local": "the user's private instructions for this project",
          "rule": "a project rule"}


def project_root(cwd: Path) -> Path:
    """The git root above `cwd` (a folder holding `.git`), else `cwd`."""
    resolved = cwd.resolve()
    for folder in (resolved, *resolved.parents):
        if (folder / ".git").exists():
            return folder
    return resolved


def load_memory(cwd: Path, home: Path, sources: Collection[str] | None = None) -> Memory:
    """The CLAUDE.md files of `sources` (user, project, local: `--setting-sources`; None: all); the project's
    rules count as project files."""
    memory = Memory()
    root = project_root(cwd)
    loader = _Loader(memory, root, home)
    if sources is not None:
        loader.sources = frozenset(sources)
    loader.add(home / ".claude" / "CLAUDE.md", "user", trusted=True)
    resolved = cwd.resolve()
    chain = [resolved, *resolved.parents]
    folders = list(reversed(chain[: chain.index(root) + 1])) if root in chain else [resolved]
    for folder in folders:
        if folder == home.resolve():
            continue  # ~/CLAUDE.md is not a project's
        loader.add(folder / "CLAUDE.md", "project", trusted=False)
        loader.add(folder / ".claude" / "CLAUDE.md", "project", trusted=False)
        loader.add(folder / "CLAUDE.local.md", "local", trusted=False)
    rules = root / ".claude" / "rules"
    if rules.is_dir():
        for path in sorted(rules.glob("*.md")):
            loader.add(path, "rule", trusted=False)
    return memory


def append_memory_line(cwd: Path, line: str) -> Path:
    """`# text` in the REPL, for the project: append `- text` to the working directory's CLAUDE.md."""
    return append_memory_note(cwd / "CLAUDE.md", line)


def note_refusal(path: Path) -> ConfigError | None:
    """Why `append_memory_note` would refuse `path` (a symlink, a FIFO, a folder…), None when it may be written
    (or created). A look before asking which file: the write itself checks again on its open descriptor."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return ConfigError(f"not written: {exc.strerror or exc}", file=str(path))
    if stat.S_ISLNK(info.st_mode):
        return _link_refusal(path)
    if not stat.S_ISREG(info.st_mode):
        return ConfigError("not written: not a regular file", file=str(path))
    return None


def append_memory_note(path: Path, line: str) -> Path:
    """Append `- line` to the memory file `path` (created when missing, its folder too).

    Only a regular file is written, never through a symlink (a repository may commit `CLAUDE.md` as a link to a
    file of the user's, which the loader would not read either) nor into a FIFO or a device: ConfigError saying
    so. The checks are on the open descriptor (`O_NOFOLLOW`, `O_NONBLOCK`, then `fstat`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = _open_regular(path)
    with os.fdopen(fd, "ab") as handle:  # read-write only for the last byte; O_NONBLOCK: a FIFO opens at once
        info = os.fstat(fd)
        ends_open = info.st_size > 0 and os.pread(fd, 1, info.st_size - 1) != b"\n"
        handle.write(f"{chr(10) if ends_open else ''}- {line.strip()}\n".encode())
    return path


LOCAL_MEMORY_NAME = "CLAUDE.local.md"
_MAX_GITIGNORE_BYTES = 1 << 20  # a larger .gitignore is left alone


def ignore_local_memory(folder: Path) -> Path | None:
    """Keep the project-local memory file out of git, as Claude Code does: in a git work tree, `CLAUDE.local.md` is
    added to `folder`'s `.gitignore` (created when missing) unless a line of it names the file already. Written
    like a note: a regular file only, never through a symlink (ConfigError). The `.gitignore` changed, or None."""
    if not any((place / ".git").exists() for place in (folder, *folder.parents)):
        return None
    ignore = folder / ".gitignore"
    fd = _open_regular(ignore)
    with os.fdopen(fd, "ab") as handle:
        info = os.fstat(fd)
        if info.st_size > _MAX_GITIGNORE_BYTES:
            return None
        text = os.pread(fd, info.st_size, 0)
        named = {line.strip() for line in text.decode("utf-8", "replace").splitlines()}
        if named & {LOCAL_MEMORY_NAME, f"/{LOCAL_MEMORY_NAME}"}:
            return None
        opening = b"\n" if text and not text.endswith(b"\n") else b""
        handle.write(opening + f"{LOCAL_MEMORY_NAME}\n".encode())
    return ignore


def _open_regular(path: Path) -> int:
    """`path` opened to append (created when missing): never through a symlink, only a regular file (a FIFO or a
    device is closed again) — ConfigError saying which."""
    try:
        fd = os.open(path, _APPEND_FLAGS, _NEW_MEMORY_MODE)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _link_refusal(path) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ConfigError("not written: not a regular file", file=str(path))
    return fd


def _link_refusal(path: Path) -> ConfigError:
    return ConfigError(f"not written: it is a symbolic link (notes go only into a real {path.name} file)",
                       file=str(path))


class _Loader:
    def __init__(self, memory: Memory, root: Path, home: Path) -> None:
        self.memory = memory
        self.root = root
        self.home = home
        self.seen: set[Path] = set()
        self.total = 0
        self.sources = frozenset(("user", "project", "local"))  # the scopes read (`--setting-sources`)

    def add(self, path: Path, kind: str, *, trusted: bool, by: Path | None = None, depth: int = 0) -> None:
        if depth == 0 and ("project" if kind == "rule" else kind) not in self.sources:
            return
        try:
            resolved = path.resolve()
            if resolved in self.seen or not resolved.exists():
                return
        except OSError:
            return
        if not trusted and not resolved.is_relative_to(self.root):
            # a repository's file (or a link in it) pointing out of the project: never sent to the model
            self.memory.warnings.append(f"{path}: not loaded: it leads outside the project ({resolved})")
            return
        try:
            head = read_regular_head(resolved, str(path), max_bytes=MAX_FILE_CHARS * 4)
        except ConfigError as exc:  # a FIFO, a device, a folder, unreadable: this file only
            self.memory.warnings.append(f"{path}: not loaded: {exc.message}")
            return
        if head is None:
            return
        data, longer = head
        self.seen.add(resolved)
        text = data.decode("utf-8", errors="replace")
        if longer or len(text) > MAX_FILE_CHARS:
            text = text[:MAX_FILE_CHARS] + "\n[…cut: the file is longer]"
        if self.total + len(text) > MAX_TOTAL_CHARS:
            self.memory.warnings.append(f"{path}: not loaded (memory files are limited to {MAX_TOTAL_CHARS} "
                                        "characters in all)")
            return
        self.total += len(text)
        self.memory.files.append(MemoryFile(path, text, kind, by))
        for target in _imports(text):
            self._import(target, path, trusted=trusted, depth=depth + 1)

    def _import(self, target: str, by: Path, *, trusted: bool, depth: int) -> None:
        if depth > MAX_IMPORT_DEPTH:
            self.memory.warnings.append(f"{by}: @{target} not imported (imports go {MAX_IMPORT_DEPTH} deep at most)")
            return
        if target.startswith("~/"):
            path = self.home / target[2:]
        else:
            path = Path(target) if target.startswith("/") else by.parent / target
        if not trusted:
            try:
                inside = path.resolve().is_relative_to(self.root)
            except OSError:
                inside = False
            if not inside:
                self.memory.warnings.append(f"{by}: @{target} not imported: a repository's memory file may import "
                                            "only files inside the project")
                return
        self.add(path, "import", trusted=trusted, by=by, depth=depth)


def _imports(text: str) -> list[str]:
    """The `@path` tokens of `text`, outside fenced code blocks and code spans."""
    found: list[str] = []
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        for match in _IMPORT.finditer(_CODE_SPAN.sub("", line)):
            target = match.group(1)
            if "/" in target or "." in target:  # a path, not a mention of @someone
                found.append(target)
    return found
