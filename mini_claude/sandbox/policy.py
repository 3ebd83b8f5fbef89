"""What a sandboxed command may touch, independent of how a platform enforces it.

- reads: the whole file system, except the user's secret places (`SECRET_HOME_PATHS` under the home folder, the
  agent's state folder), which look empty;
- writes: only the working folder, the added folders and a private temporary folder (the command's /tmp), minus
  what stays read-only inside them:
  - at the top of each writable folder, the protected names (`PROTECTED_NAMES`: the agent's configuration, editor
    tasks, hook managers, `.envrc`, `HEAD`, …) and a whole `.git` that does not exist yet;
  - in an existing `.git` (and in each submodule's and linked worktree's git folder inside it), every file that
    configures git or sends it elsewhere (`GIT_FILES`, `GIT_DIRS`): config, config.worktree, commondir, hooks/,
    info/, objects/info/alternates; the rest of `.git` stays writable (git's own lock files and renames);
  - the home's start-up files (`HOME_PROTECTED`) when the home, or a folder holding one of them, is writable;
- network: none, or only through the agent's proxy (which admits the allowed domains).

A protected path that does not exist gets a placeholder for the run where creating it would take effect by itself
(`RUNS_BY_ITSELF`, the git files, the home's start-up files): an empty folder, which git ignores (an empty file
bound from /dev/null would show up to `git add -A` and stop it), except `commondir`, which must name the git folder
itself (git refuses an empty one), and a repository's missing `HEAD`, which gets a socket node `refs` instead (see
`_no_bare_repository`) — see `Protected`. The lists are guarded_places.py's, shared with the gate.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from mini_claude.sandbox.guarded_places import (
    HOME_PROTECTED,
    HOME_PROTECTED_DIRS,
    HOME_SECRETS,
    PROTECTED_DIRS,
    PROTECTED_FILES,
    RUNS_BY_ITSELF,
    SECRET_NAMES,
    SECRET_SUFFIXES,
)

__all__ = ["GIT_DIRS", "GIT_FILES", "PROTECTED_NAMES", "SECRET_HOME_PATHS", "Protected", "SandboxPolicy"]

# Under the home folder: the gate's secret places and secret names (`~/.pgpass`, `~/.env`), unreadable inside.
SECRET_HOME_PATHS = tuple(dict.fromkeys(
    (*HOME_SECRETS, *sorted(SECRET_NAMES), *(suffix for suffix in SECRET_SUFFIXES if suffix == ".env"))))
# At the top of every writable folder: what configures code execution or the agent. Read-only inside.
PROTECTED_NAMES = tuple(sorted((PROTECTED_DIRS | PROTECTED_FILES | RUNS_BY_ITSELF) - {".git"}))  # .git: below
# In a git folder: what configures git, names the code it runs, or sends it to other objects or another repository.
GIT_FILES = ("config", "config.worktree", "commondir", "objects/info/alternates", "objects/info/http-alternates")
GIT_DIRS = ("hooks", "info")
# A linked worktree's admin folder (.git/worktrees/NAME): where its checkout and common repository are, its config.
_WORKTREE_FILES = ("config.worktree", "commondir", "gitdir")
_MODULE_DEPTH = 4  # submodules inside submodules, as far as anyone nests them


@dataclass(frozen=True)
class Protected:
    """One read-only path inside a writable folder. `exists`: it is there now; else, when `placeholder`, something
    stands there for the command's run so nothing can be created there, removed afterwards: an empty folder, or a
    file holding `content` (made by the caller before the run). Without `placeholder` a missing path is left be."""

    path: Path
    exists: bool
    is_dir: bool
    placeholder: bool = True
    content: str | None = None
    socket: bool = False  # the placeholder is a read-only socket node (see `_no_bare_repository`)


@dataclass(frozen=True)
class SandboxPolicy:
    """One command's confinement. `tmp_dir` is the host folder seen as /tmp inside; `proxy_socket` the agent's
    proxy (None: no network at all)."""

    writable: tuple[Path, ...]
    home: Path
    state_dir: Path | None
    tmp_dir: Path
    proxy_socket: Path | None = None
    proxy_port: int = 3128

    def secrets(self) -> list[Path]:
        """The secret places that exist now (a missing one has nothing to hide)."""
        found = [self.home / rel for rel in SECRET_HOME_PATHS]
        if self.state_dir is not None:
            found.append(self.state_dir)
        return [path for path in found if path.exists() or path.is_symlink()]

    def protected(self) -> list[Protected]:
        """The protected paths of every writable folder: existing ones, and the missing ones that get a
        placeholder."""
        found: list[Protected] = []
        for root in self.writable:
            git = root / ".git"
            repository = git.is_dir() and not git.is_symlink()
            for name in PROTECTED_NAMES:
                item = _protected(root / name, True, placeholder=name in RUNS_BY_ITSELF)
                if name == "HEAD" and repository and not item.exists:
                    item = _no_bare_repository(root) or item
                if item.exists or item.placeholder:
                    found.append(item)
            if repository:
                found.extend(_git_folder(git))
            elif git.exists() or git.is_symlink():  # a worktree's `.git` file names the real repository
                found.append(Protected(git, True, False))
            else:
                found.append(Protected(git, False, True))
            found.extend(self._home_files(root))
        unique: dict[Path, Protected] = {}
        for item in found:
            unique.setdefault(item.path, item)
        return list(unique.values())

    def _home_files(self, root: Path) -> list[Protected]:
        """The home's start-up files, and its secret places that do not exist yet (`~/.ssh/authorized_keys` must not
        be planted), that lie inside the writable folder `root`. A missing one whose parent folder is missing too
        gets its topmost missing folder as the placeholder (nothing else may be left behind)."""
        found: list[Protected] = []
        home = Path(os.path.realpath(self.home))  # the writable folders are real paths too
        for rel in (*HOME_PROTECTED, *HOME_SECRETS):
            path = home / rel
            if rel in HOME_SECRETS and (rel in HOME_PROTECTED or os.path.lexists(path)):
                continue  # an existing secret place is hidden (SECRET_HOME_PATHS); a missing one must not be made
            if root == path or root.is_relative_to(path):  # the added folder is itself a start-up folder
                found.append(Protected(root, True, True))
                continue
            if not _inside(path, root):
                continue
            item = _protected(path, rel in HOME_PROTECTED_DIRS)
            if not item.exists:
                top = path
                while top.parent != root and _inside(top.parent, root) and not top.parent.exists():
                    top = top.parent
                if top != path:
                    item = Protected(top, False, True)
            found.append(item)
        return found


def _no_bare_repository(root: Path) -> Protected | None:
    """In a repository's top folder, what keeps git from taking the folder itself for a bare repository (it does
    when `.git` is made invalid, say by writing garbage into `.git/HEAD`) without a `HEAD` placeholder, which would
    make every `git log HEAD` / `git diff HEAD` there "ambiguous: both revision and filename": a read-only socket
    node named `refs` (or `objects`). git needs both to be searchable folders; it lists neither sockets nor empty
    folders as untracked, and opening a socket fails at once (a FIFO would hang a reader). None: both exist."""
    for name in ("refs", "objects"):
        path = root / name
        try:
            mode = path.lstat().st_mode
        except OSError:
            return Protected(path, False, False, socket=True)
        if stat.S_ISSOCK(mode):  # the placeholder a run still going made
            return Protected(path, True, False, socket=True)
    return None


def _git_folder(git: Path, depth: int = 0) -> list[Protected]:
    """What stays read-only in the git folder `git`, its linked worktrees' admin folders and its submodules'."""
    found = [_protected(git / name, True) for name in GIT_DIRS]
    for name in GIT_FILES:
        item = _protected(git / name, False)
        if name == "commondir" and not item.exists:
            item = Protected(item.path, False, False, content=os.path.realpath(git) + "\n")  # "here", said plainly
        found.append(item)
    for admin in _subfolders(git / "worktrees"):
        found.extend(_protected(admin / name, False, placeholder=False) for name in _WORKTREE_FILES)
    if depth < _MODULE_DEPTH:
        for module in _module_git_dirs(git / "modules"):
            found.extend(_git_folder(module, depth + 1))
    return [item for item in found if item.exists or item.placeholder]


def _module_git_dirs(modules: Path) -> list[Path]:
    """The submodules' git folders under `.git/modules` (a name may hold slashes: `modules/lib/foo`)."""
    found: list[Path] = []
    stack = _subfolders(modules)
    while stack and len(found) < 200:
        folder = stack.pop()
        if (folder / "HEAD").is_file():
            found.append(folder)
        else:
            stack.extend(_subfolders(folder))
    return found


def _subfolders(folder: Path) -> list[Path]:
    try:
        return [Path(entry.path) for entry in os.scandir(folder) if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _inside(path: Path, root: Path) -> bool:
    return path != root and path.is_relative_to(root)


def _protected(path: Path, is_dir: bool, *, placeholder: bool = True) -> Protected:
    """`is_dir`: a placeholder is an empty folder (true for files too at a folder's top; see the module docstring)."""
    exists = path.exists() or path.is_symlink()
    return Protected(path, exists, path.is_dir() if exists else is_dir, placeholder)
