"""Where a file tool's call needs the user's explicit consent, whatever the broad rules and the mode say.

Three kinds of place, each judged on the path as the tool will open it and on its symlink-resolved target:

- **outside**: not in the working directory, an added directory, or this session's own spill folder. Reads ask
  too (Read / Glob / Grep), as in Claude Code.
- **secret**: the user's credentials — `~/.ssh`, `~/.aws`, `~/.gnupg`, cloud and registry logins, `~/.netrc`,
  `~/.claude.json`, `~/.claude/.credentials.json`, the state directory (approvals, trust, OAuth tokens), and
  anywhere: `.env` / `.env.*` / `*.env`, `.envrc`, SSH private keys, `*.pem` / `*.key` / `*.p12` / `*.pfx`,
  `.netrc`, `.pgpass`, `.my.cnf`, `.s3cfg`, `.git-credentials`, `.npmrc`, `.pypirc`. Neither read nor written
  without asking, in every mode but bypassPermissions. Searches skip such files inside a searched folder.
- **protected**: what configures code execution or the agent itself — `.git/`, `.claude/`, `.mcp.json`,
  `CLAUDE.md` / `CLAUDE.local.md`, editor task folders, hook managers, shell start-up files, `~/.claude/`, and
  git's own files wherever git would take a folder for a repository: a file named `HEAD`, and anything in a folder
  that holds one (a planted bare repository's `config` runs code on the next `git status`). Writes ask in every
  mode but bypassPermissions (acceptEdits and `Edit` / `Edit(**)` included).

`consent_needed(...)` lists `(path, kind)` for one call. An allow rule answers for such a path only when it names
that place on purpose: for *outside*, a rule rooted at `//` or `~/` (a project-relative rule or a bare `Edit` was
written with the project in mind); for *secret* and *protected*, a rule whose fixed part (before any wildcard)
already lies in that secret or protected place (`Read(~/.aws/**)`, `Edit(.claude/commands/**)`, `Read(.env)`),
never a broad one (`Read`, `Read(~/**)`, `Edit(**)`).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from mini_claude.permissions.paths import MatchEnv, expand_path, is_within
from mini_claude.sandbox.guarded_places import (
    HOME_PROTECTED,
    HOME_SECRETS,
    PROTECTED_DIRS,
    PROTECTED_FILES,
    SECRET_NAMES,
    SECRET_SUFFIXES,
)

__all__ = ["Boundary", "BoundaryKind", "Place", "boundary_of", "classify", "literal_root", "may_be_secret",
           "names_made", "plain_name"]

BoundaryKind = Literal["outside", "secret", "protected"]

# The lists live in sandbox/guarded_places.py (the OS sandbox uses them too).
_HOME_SECRETS = HOME_SECRETS
_HOME_PROTECTED = HOME_PROTECTED
_PROTECTED_DIRS = PROTECTED_DIRS
_PROTECTED_FILES = PROTECTED_FILES
_SECRET_NAMES = SECRET_NAMES
_SECRET_SUFFIXES = SECRET_SUFFIXES
_HOME_NAMES = frozenset(os.path.basename(rel) for rel in _HOME_SECRETS + _HOME_PROTECTED)
_GLOB_CHARS = "*?[{\\"
_WHY = {
    "outside": "is outside the working directory and the added directories",
    "secret": "holds secrets (credentials, keys, .env, the agent's own state)",
    "protected": "configures code execution or the agent (.git, .claude, CLAUDE.md, .mcp.json, shell start-up)",
    "linked": "has another name (a hard link), which may be a protected file",
}


@dataclass(frozen=True)
class Place:
    """What a session knows about where it works: the folders a call may use freely and the user's private ones."""

    env: MatchEnv
    work_dirs: tuple[Path, ...]  # cwd and the added directories
    own_dirs: tuple[Path, ...] = ()  # folders of this session's own (its spill folder): readable, not writable
    state_dir: Path | None = None  # the agent's state: approvals, trust, tokens (secret)


@dataclass(frozen=True)
class Boundary:
    """One path of a call that needs consent, and why."""

    path: str  # absolute, as the tool will open it
    kind: BoundaryKind
    outside: bool  # also outside the working directory and the added directories (for the message)
    linked: bool = False  # protected because the file has another name (a hard link)

    def why(self) -> str:
        """`is outside the working directory ... and holds secrets (...)`, for the model and the user."""
        parts = [_WHY["outside"]] if self.outside else []
        if self.kind != "outside":
            parts.append(_WHY["linked" if self.linked else self.kind])
        return " and ".join(parts)


def plain_name(name: str) -> bool:
    """Does a new file of this name need consent only where any new file in its folder would? False for the names
    the places above single out: secret and protected names, and the last part of each home secret or start-up
    file (`config.json` of `~/.docker/config.json`). Lets the gate judge an archive's many members by folder."""
    return not (_is_secret_name(name) or name in _PROTECTED_FILES or name in _PROTECTED_DIRS or name in _HOME_NAMES)


def _is_secret_name(name: str) -> bool:
    return name.startswith(".env.") or name in _SECRET_NAMES or name.endswith(_SECRET_SUFFIXES)


def names_made(base: str, alphabet: str, shortest: int, suffix: str) -> list[str]:
    """The secret or protected names (the lists above) a name `base + S + suffix` can take, S any string of at
    least `shortest` characters of `alphabet`: the pieces `split` names (`CLAUDE.m` + `d`; `.envr` + `c`)."""
    found: list[str] = []
    for name in sorted(_SECRET_NAMES | _PROTECTED_FILES | _PROTECTED_DIRS | _HOME_NAMES):
        length = len(name) - len(base) - len(suffix)
        made = _fit(base, alphabet, length, suffix, name, "whole") if length >= shortest else None
        found += [made] if made else []
    for pattern, where in [*((s, "end") for s in _SECRET_SUFFIXES), (".env.", "start")]:
        for length in range(shortest, max(shortest, len(pattern)) + 1):
            made = _fit(base, alphabet, length, suffix, pattern, where)
            if made:
                found.append(made)
                break
    return list(dict.fromkeys(found))


def _fit(base: str, alphabet: str, length: int, suffix: str, pattern: str, where: str) -> str | None:
    """`base + S + suffix` with `pattern` at its start, its end or as the whole name, S `length` characters of
    `alphabet` (the first one where the pattern leaves them free); None when no such S exists."""
    if length < 0 or not alphabet:
        return None
    cells: list[str | None] = [*base, *([None] * length), *suffix]
    if len(pattern) > len(cells) or (where == "whole" and len(pattern) != len(cells)):
        return None
    at = len(cells) - len(pattern) if where == "end" else 0
    for j, char in enumerate(pattern):
        cell = cells[at + j]
        if cell is None and char in alphabet:
            cells[at + j] = char
        elif cell != char:
            return None
    return "".join(alphabet[0] if c is None else c for c in cells)


def may_be_secret(path: str, place: Place) -> bool:
    """A cheap first look for searches, which ask about every file they meet: False only when `path` (absolute)
    is surely not secret — neither it nor its resolved target has a secret name, and the target lies in none of the
    secret folders. True means `classify` must decide."""
    real = os.path.realpath(path)
    if _is_secret_name(os.path.basename(path)) or _is_secret_name(os.path.basename(real)):
        return True
    return any(real == root or real.startswith(root + "/") for root in _secret_roots(place))


def _secret_roots(place: Place) -> tuple[str, ...]:
    """The resolved secret folders and files of `place` (home's credentials, the state folder)."""
    key = (place.env.home, place.state_dir)
    roots = _ROOTS_CACHE.get(key)
    if roots is None:
        found = [os.path.realpath(place.env.home / rel) for rel in _HOME_SECRETS]
        if place.state_dir is not None:
            found.append(os.path.realpath(place.state_dir))
        roots = _ROOTS_CACHE[key] = tuple(root.rstrip("/") for root in found)
    return roots


_ROOTS_CACHE: dict[tuple[Path, Path | None], tuple[str, ...]] = {}


def _under(path: str, base: Path, rels: Iterable[str]) -> bool:
    return any(is_within(path, [base / rel]) for rel in rels)


def classify(path: str, place: Place, *, write: bool) -> BoundaryKind | None:
    """Why `path` (absolute, as the tool will open it) needs consent for a read or a write, or None. Both the path
    as written and its resolved target are looked at: a link to a secret is a secret."""
    real = os.path.realpath(path)
    forms = (path, real)
    home = place.env.home
    if any(_is_secret_name(os.path.basename(p)) for p in forms) or _under(path, home, _HOME_SECRETS) or (
            place.state_dir is not None and is_within(path, [place.state_dir])
            and not is_within(path, place.own_dirs)):
        return "secret"
    if write and (_protected_name(forms) or _under(path, home, _HOME_PROTECTED) or _hard_linked(path)):
        return "protected"
    if is_within(path, place.work_dirs):
        return None
    if not write and is_within(path, place.own_dirs):
        return None
    return "outside"


def boundary_of(path: str, place: Place, *, write: bool) -> Boundary | None:
    """`classify`, as a Boundary that also says whether the path is outside the working folders."""
    kind = classify(path, place, write=write)
    if kind is None:
        return None
    outside = kind == "outside" or not (is_within(path, place.work_dirs)
                                        or (not write and is_within(path, place.own_dirs)))
    linked = kind == "protected" and not (_protected_name((path, os.path.realpath(path)))
                                          or _under(path, place.env.home, _HOME_PROTECTED))
    return Boundary(path, kind, outside, linked)


def _hard_linked(path: str) -> bool:
    """Is `path` an existing file with another name (a hard link)? Writing it writes that name too, which may be a
    protected file (`ln .git/config x`, then `echo ... >> x`): one stat, following a symlink to its file."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(st.st_mode) and st.st_nlink > 1


def _protected_name(forms: Sequence[str]) -> bool:
    for form in forms:
        parts = Path(form).parts
        if parts and parts[-1] in _PROTECTED_FILES:
            return True
        if _PROTECTED_DIRS.intersection(parts[:-1]) or (parts and parts[-1] in _PROTECTED_DIRS):
            return True
        if _in_git_dir(form):
            return True
    return False


def _in_git_dir(path: str) -> bool:
    """Is `path` inside a folder git would take for a repository (one holding a `HEAD` file)? git needs `HEAD`,
    `objects/` and `refs/`; `HEAD` itself is protected, so a model cannot finish planting one unasked."""
    folder = os.path.dirname(path)
    while True:
        if os.path.isfile(os.path.join(folder, "HEAD")):
            return True
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent


def literal_root(spec: str, env: MatchEnv) -> str | None:
    """The fixed part of a path rule's specifier, made absolute (`~/.aws/**` -> `/home/u/.aws`, `.env` ->
    `<cwd>/.env`), or None when the pattern starts with a wildcard."""
    if spec.startswith("//"):
        base, rest = "/", spec[2:]
    elif spec == "~" or spec.startswith("~/"):
        base, rest = str(env.home), spec[2:]
    else:
        base, rest = str(env.cwd), spec.removeprefix("./").lstrip("/")
    fixed: list[str] = []
    for part in rest.split("/"):
        if not part or any(c in part for c in _GLOB_CHARS):
            break
        fixed.append(part)
    if not fixed and rest.strip("/"):
        return None
    return expand_path(os.path.join(base, *fixed), env) if fixed else base
