"""Editing the permission rules of one settings file: `/permissions add` and `/permissions remove`.

A scope names a file: `user` (`~/.claude/settings.json`), `project` (`.claude/settings.json`, shared through the
repository) and `local` (`.claude/settings.local.json`, the user's own for this project). A file is read through
`jsonfile`'s bounded door and rewritten atomically with everything else in it kept; a file that cannot be read as
a settings object is never overwritten (ConfigError naming the file and key, fix it by hand). Rules are compared
as written, surrounding blanks ignored.

A repository's files (`project`, `local`) are read and written only as real files: a cloned repository can commit
`.claude/settings.local.json` (or `.claude`) as a symlink to the user's own `~/.claude/settings.json`, which is in
force whether the folder is trusted or not, so a rule meant for this project would widen every session. Such a link
is refused (ConfigError), never followed. The user's own file may be a link (dotfile managers make them).

Whether a rule is well formed is the permission layer's question (`permissions.rules.parse_rule`): the caller
checks before adding. This module knows files and lists only, so it sits beside settings.py, below permissions/.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mini_claude.errors import ConfigError
from mini_claude.jsonfile import json_type, read_json_object, write_json_atomic
from mini_claude.settings import LOCAL_SETTINGS_DISPLAY, PROJECT_SETTINGS_DISPLAY, USER_SETTINGS_DISPLAY

__all__ = [
    "RULE_KINDS",
    "SCOPES",
    "SettingsFile",
    "add_rule",
    "kinds_holding",
    "local_switch_files",
    "remove_rule",
    "settings_file",
    "switch_list_item",
]

RULE_KINDS = ("allow", "ask", "deny")
SCOPES = ("user", "project", "local")
# a file shared through the repository is readable by all; the user's own files stay theirs
_NEW_MODES = {"user": 0o600, "project": 0o644, "local": 0o600}


@dataclass(frozen=True)
class SettingsFile:
    """One settings file of a scope: where it is and how messages name it."""

    scope: str
    path: Path
    display: str


def settings_file(scope: str, *, cwd: Path, home: Path) -> SettingsFile:
    """The file of `scope` (one of `SCOPES`; ValueError otherwise)."""
    if scope == "user":
        return SettingsFile(scope, home / ".claude" / "settings.json", USER_SETTINGS_DISPLAY)
    if scope == "project":
        return SettingsFile(scope, cwd / ".claude" / "settings.json", PROJECT_SETTINGS_DISPLAY)
    if scope == "local":
        return SettingsFile(scope, cwd / ".claude" / "settings.local.json", LOCAL_SETTINGS_DISPLAY)
    raise ValueError(f"unknown settings scope {scope!r} (expected one of: {', '.join(SCOPES)})")


def local_switch_files(cwd: Path, home: Path) -> list[SettingsFile]:
    """The local files that hold MCP switches, the one written first: in a linked git worktree the main worktree's
    `.claude/settings.local.json` (shared by the repository's worktrees: worktrees.py), then this tree's own."""
    from mini_claude.worktrees import main_worktree

    own = settings_file("local", cwd=cwd, home=home)
    main = main_worktree(cwd)
    if main is None:
        return [own]
    shared = SettingsFile("local", main / ".claude" / "settings.local.json",
                          f"{main / '.claude' / 'settings.local.json'} (the main worktree's)")
    return [shared, own]


def add_rule(file: SettingsFile, kind: str, rule: str) -> tuple[int, bool]:
    """Append `rule` to `permissions.<kind>` of `file` (created when missing). Returns (its index in that list,
    whether it was added: False when the list held it already, and the file is then left untouched)."""
    _check_kind(kind)
    _refuse_links(file)
    data = _read(file)
    permissions = _section(data, file)
    rules = permissions.setdefault(kind, [])
    if not isinstance(rules, list):
        raise ConfigError(f"expected a list of rule strings, got {json_type(rules)}; fix the file by hand",
                          file=file.display, key=f"permissions.{kind}")
    text = rule.strip()
    for index, item in enumerate(rules):
        if isinstance(item, str) and item.strip() == text:
            return index, False
    rules.append(text)
    write_json_atomic(file.path, data, new_mode=_NEW_MODES[file.scope])
    return len(rules) - 1, True


def kinds_holding(file: SettingsFile, rule: str) -> list[str]:
    """The rule lists (`allow`, `ask`, `deny`) of `file` that hold `rule`; [] for a missing file. Raises
    ConfigError when the file cannot be read."""
    _refuse_links(file)
    permissions = _read(file).get("permissions")
    if not isinstance(permissions, dict):
        return []
    text = rule.strip()
    return [kind for kind in RULE_KINDS if isinstance(permissions.get(kind), list)
            and any(isinstance(item, str) and item.strip() == text for item in permissions[kind])]


def remove_rule(file: SettingsFile, rule: str) -> list[str]:
    """Remove every copy of `rule` from the rule lists of `file`; returns the kinds it was removed from ([] when
    none held it: the file is then left untouched)."""
    _refuse_links(file)
    data = _read(file)
    permissions = data.get("permissions")
    if not isinstance(permissions, dict):
        return []
    text = rule.strip()
    removed: list[str] = []
    for kind in RULE_KINDS:
        items = permissions.get(kind)
        if not isinstance(items, list):
            continue
        kept = [item for item in items if not (isinstance(item, str) and item.strip() == text)]
        if len(kept) != len(items):
            permissions[kind] = kept
            removed.append(kind)
    if removed:
        write_json_atomic(file.path, data, new_mode=_NEW_MODES[file.scope])
    return removed


def switch_list_item(file: SettingsFile, key: str, item: str, *, present: bool) -> bool:
    """Add `item` to (present=True) or remove it from the top-level string list `key` of `file` (created when
    missing); returns whether the file changed (it is left untouched otherwise)."""
    _refuse_links(file)
    data = _read(file)
    items = data.get(key, [])
    if not isinstance(items, list):
        raise ConfigError(f"expected a list of strings, got {json_type(items)}; fix the file by hand",
                          file=file.display, key=key)
    kept = [value for value in items if value != item]
    if present and len(kept) == len(items):
        kept.append(item)
    elif present or len(kept) == len(items):
        return False
    data[key] = kept
    write_json_atomic(file.path, data, new_mode=_NEW_MODES[file.scope])
    return True


def _refuse_links(file: SettingsFile) -> None:
    """A repository's settings file, or its `.claude` folder, that is a symlink: ConfigError (see the docstring)."""
    if file.scope == "user":
        return
    for path in (file.path.parent, file.path):
        if path.is_symlink():
            raise ConfigError(f"not written: {'its folder' if path != file.path else 'it'} is a symbolic link (to "
                              f"{os.readlink(path)}); a project's settings are edited only as a real file",
                              file=file.display)


def _check_kind(kind: str) -> None:
    if kind not in RULE_KINDS:
        raise ValueError(f"unknown rule list {kind!r} (expected one of: {', '.join(RULE_KINDS)})")


def _read(file: SettingsFile) -> dict[str, Any]:
    errors: list[ConfigError] = []
    data = read_json_object(file.path, file.display, errors)
    if errors:
        raise errors[0]
    return data if data is not None else {}


def _section(data: dict[str, Any], file: SettingsFile) -> dict[str, Any]:
    permissions = data.setdefault("permissions", {})
    if not isinstance(permissions, dict):
        raise ConfigError(f"expected an object, got {json_type(permissions)}; fix the file by hand",
                          file=file.display, key="permissions")
    return permissions
