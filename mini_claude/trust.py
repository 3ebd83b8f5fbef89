"""Workspace trust: whether the user trusts the files of the folder mini-claude runs in.

A *folder* is the git root of the working directory (the nearest ancestor holding `.git`, a directory or a
worktree's file), else the working directory itself. Until the folder is trusted, what its files would widen
(project settings' allow rules, permissive modes, helpers, env, `.env` endpoints) is ignored; see
`settings_trust.without_project_widening` and `models.factory.model_environment`.

A folder is trusted when it, the working directory, or a folder containing them was trusted

* with mini-claude (`mini-claude trust`, `--trust`, or "yes" to the REPL's question): recorded in
  `<state dir>/trusted-folders.json` (0600, written atomically), or
* in Claude Code: `~/.claude.json` → `projects[<absolute path>].hasTrustDialogAccepted == true`.

The home directory is never trusted implicitly, and trust given to the home directory (or to `/`) covers that
folder only, never the folders inside it: otherwise one "yes" in `~` would trust every repository ever cloned.

Only small file reads happen here (no git subprocess), so `-p` starts fast. Nothing is printed.
"""

from __future__ import annotations

import enum
import logging
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mini_claude.errors import ConfigError
from mini_claude.jsonfile import MAX_CLAUDE_JSON_BYTES, read_json_object, write_json_atomic
from mini_claude.statefile import read_state

__all__ = [
    "CLAUDE_JSON_NAME",
    "TRUST_FILE_NAME",
    "TRUST_HINT",
    "TrustDecision",
    "TrustState",
    "TrustStore",
    "check_trust",
    "decide_trust",
    "trust_question",
    "untrusted_line",
    "workspace_folder",
]

log = logging.getLogger(__name__)

TRUST_FILE_NAME = "trusted-folders.json"
CLAUDE_JSON_NAME = ".claude.json"
TRUST_HINT = "run `mini-claude trust` here or pass --trust to use them"
_STORE_VERSION = 1
_FILE_MODE = 0o600
_DIR_MODE = 0o700
MAX_TRUST_BYTES = 1024 * 1024  # a folder list; a bigger store is set aside


@dataclass(frozen=True)
class TrustState:
    """The folder a run is about and whether it is trusted; `source` says by what (empty when untrusted)."""

    folder: Path
    trusted: bool
    source: str = ""


class TrustDecision(enum.Enum):
    TRUSTED = "trusted"  # already trusted: nothing to do
    REMEMBER = "remember"  # trust it now and record that (--trust)
    ASK = "ask"  # ask the user (interactive, and the folder holds something trust would change)
    UNTRUSTED = "untrusted"  # run with the project's widening settings ignored


def workspace_folder(cwd: Path) -> Path:
    """The folder trust is about: the nearest ancestor of `cwd` (itself included) holding `.git`, else `cwd`."""
    start = Path(os.path.abspath(cwd))
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start


class TrustStore:
    """The folders trusted with mini-claude: `{"version": 1, "folders": {"/abs/path": {"trustedAt": epoch_s}}}`.

    Bounded by the folders the user trusted; `prune` (the daily state sweep) forgets folders that no longer exist.
    A corrupt, oversized (`MAX_TRUST_BYTES`) or newer store trusts nothing and is set aside with a warning."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def in_state_dir(cls, state: Path) -> TrustStore:
        return cls(state / TRUST_FILE_NAME)

    def _folders(self) -> dict[str, Any]:
        data = read_state(self.path, what="trusted folders", max_bytes=MAX_TRUST_BYTES, version=_STORE_VERSION,
                          afresh="no folder is trusted by it")
        folders = data.get("folders") if data is not None else None
        return folders if isinstance(folders, dict) else {}

    def folders(self) -> set[str]:
        """The trusted folders' absolute paths; a missing or malformed file holds none (never raises)."""
        return {key for key, value in self._folders().items() if isinstance(value, dict)}

    def record(self, folder: Path) -> None:
        """Remember `folder` (resolved) as trusted. The file is rewritten atomically, 0600 in a 0700 folder."""
        folders = self._folders()
        folders[str(_resolved(folder))] = {"trustedAt": int(time.time())}
        self._write(folders)

    def prune(self) -> int:
        """Forget trusted folders that no longer exist; how many. Never raises."""
        folders = self._folders()
        gone = [path for path in folders if not os.path.isdir(path)]
        for path in gone:
            del folders[path]
        if gone:
            try:
                self._write(folders)
            except OSError as exc:
                log.warning("could not save %s: %s", self.path, exc)
                return 0
        return len(gone)

    def _write(self, folders: dict[str, Any]) -> None:
        self.path.parent.mkdir(mode=_DIR_MODE, parents=True, exist_ok=True)
        write_json_atomic(self.path, {"version": _STORE_VERSION, "folders": folders}, new_mode=_FILE_MODE)


def check_trust(cwd: Path, *, home: Path, state: Path) -> TrustState:
    """Whether the folder of `cwd` is trusted (by mini-claude's store or by Claude Code's `~/.claude.json`)."""
    folder = workspace_folder(cwd)
    candidates = list(_candidates(cwd, folder, home))
    ours = TrustStore.in_state_dir(state).folders()
    for path in candidates:
        if path in ours:
            return TrustState(folder, True, f"trusted with mini-claude ({path})")
    projects = _claude_json(home).get("projects")
    if isinstance(projects, dict):
        for path in candidates:
            entry = projects.get(path)
            if isinstance(entry, dict) and entry.get("hasTrustDialogAccepted") is True:
                return TrustState(folder, True, f"trusted in Claude Code ({path})")
    return TrustState(folder, False)


def decide_trust(state: TrustState, *, trust_flag: bool, can_ask: bool, has_widening: bool) -> TrustDecision:
    """What to do about trust at start-up.

    `--trust` trusts (and records) an untrusted folder; a trusted one stays as it is. Otherwise an untrusted folder
    is asked about only in an interactive run and only when it holds something trust would change (a folder with no
    project settings or `.env` endpoints gains nothing from a question); a "no" is not recorded, so the next
    interactive run asks again.
    """
    if state.trusted:
        return TrustDecision.TRUSTED
    if trust_flag:
        return TrustDecision.REMEMBER
    if can_ask and has_widening:
        return TrustDecision.ASK
    return TrustDecision.UNTRUSTED


def untrusted_line(folder: Path, ignored: Sequence[str]) -> str:
    """The one warning line of an untrusted run: what was ignored, and how to trust the folder."""
    return f"this folder ({folder}) is not trusted: ignored {'; '.join(ignored)} — {TRUST_HINT}"


def trust_question(folder: Path, ignored: Sequence[str]) -> list[str]:
    """The lines shown above the REPL's "Do you trust the files in this folder?" question."""
    return [f"mini-claude has not been told to trust {folder}. If you trust it, its files may widen what "
            "mini-claude does:",
            *(f"  - {item}" for item in ignored),
            "Say no to run with them ignored (you will be asked again next time); "
            "`mini-claude trust` trusts a folder without asking."]


def _candidates(cwd: Path, folder: Path, home: Path) -> Iterator[str]:
    """Paths whose trust covers `cwd`, as keys: the folder, `cwd`, then each containing folder except the home
    directory and `/` (whose trust covers only themselves). Both the path as written and its resolved form, since
    Claude Code keys projects by the path it was started in."""
    home_keys = {os.path.abspath(home), str(_resolved(home))}
    seen: set[str] = set()
    start = Path(os.path.abspath(cwd))
    exact = [folder, start]
    for index, path in enumerate([*exact, *start.parents]):
        for key in (os.path.abspath(path), str(_resolved(path))):
            if key in seen:
                continue
            seen.add(key)
            is_exact = index < len(exact)
            if not is_exact and (key in home_keys or Path(key).parent == Path(key)):
                continue
            yield key


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return Path(os.path.abspath(path))


def _claude_json(home: Path) -> dict[str, Any]:
    """Claude Code's `~/.claude.json`, read through the bounded door (`jsonfile`); {} when it is missing or
    unusable (not a regular file, too big, too deep, malformed: logged, never raised; `mcp list` reports it)."""
    errors: list[ConfigError] = []
    data = read_json_object(home / CLAUDE_JSON_NAME, "~/" + CLAUDE_JSON_NAME, errors, max_bytes=MAX_CLAUDE_JSON_BYTES)
    for error in errors:
        log.debug("not read for trust: %s", error)
    return data or {}
