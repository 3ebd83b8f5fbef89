"""Settings files: merge order, raw per-file dicts, and errors that name file + key while other files still load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mini_claude.settings import Settings, SettingsRule, load_settings


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / "home"
    cwd = tmp_path / "project"
    (home / ".claude").mkdir(parents=True)
    (cwd / ".claude").mkdir(parents=True)
    return cwd, home


def write(path: Path, data: object) -> None:
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")


def load(dirs: tuple[Path, Path]) -> Settings:
    cwd, home = dirs
    return load_settings(cwd=cwd, home=home)


def test_no_files_is_empty_and_fine(dirs: tuple[Path, Path]) -> None:
    s = load(dirs)
    assert s.permissions_allow == [] and s.permissions_deny == [] and s.permissions_ask == []
    assert s.default_mode is None and s.model is None and s.env == {}
    assert s.user == {} and s.project == {} and s.local == {}
    assert s.errors == [] and s.loaded_files == []


def test_merge_order_user_project_local(dirs: tuple[Path, Path]) -> None:
    cwd, home = dirs
    write(home / ".claude/settings.json", {
        "permissions": {"allow": ["Read"], "deny": ["Bash(rm:*)"], "defaultMode": "plan"},
        "env": {"A": "user", "B": "user"}, "model": "user-model", "enabledMcpjsonServers": ["x"],
    })
    write(cwd / ".claude/settings.json", {
        "permissions": {"allow": ["Bash(git status:*)"], "ask": ["Bash(git push:*)"], "defaultMode": "acceptEdits"},
        "env": {"B": "project"},
    })
    write(cwd / ".claude/settings.local.json", {
        "permissions": {"allow": ["Edit(docs/**)"]}, "env": {"C": "local"}, "model": "local-model",
    })
    s = load(dirs)
    assert s.errors == []
    assert s.permissions_allow == [
        SettingsRule("Read", "~/.claude/settings.json", "permissions.allow[0]"),
        SettingsRule("Bash(git status:*)", ".claude/settings.json", "permissions.allow[0]"),
        SettingsRule("Edit(docs/**)", ".claude/settings.local.json", "permissions.allow[0]"),
    ]
    assert s.permissions_deny == [SettingsRule("Bash(rm:*)", "~/.claude/settings.json", "permissions.deny[0]")]
    assert s.permissions_ask == [SettingsRule("Bash(git push:*)", ".claude/settings.json", "permissions.ask[0]")]
    assert s.default_mode == "acceptEdits"  # project beats user; local does not set it
    assert s.env == {"A": "user", "B": "project", "C": "local"}
    assert s.model == "local-model"
    assert s.user["enabledMcpjsonServers"] == ["x"]
    assert "enabledMcpjsonServers" not in s.project
    assert s.loaded_files == ["~/.claude/settings.json", ".claude/settings.json", ".claude/settings.local.json"]


def test_bad_json_names_the_file_and_other_files_still_load(dirs: tuple[Path, Path]) -> None:
    cwd, home = dirs
    write(home / ".claude/settings.json", {"permissions": {"allow": ["Read"]}})
    write(cwd / ".claude/settings.json", '{"permissions": {"allow": ["Bash"],}}')
    write(cwd / ".claude/settings.local.json", {"model": "m"})
    s = load(dirs)
    assert [str(e) for e in s.errors] == [
        ".claude/settings.json: invalid JSON at line 1 column 36: Expecting property name enclosed in double quotes"
    ]
    assert s.errors[0].file == ".claude/settings.json" and s.errors[0].key is None
    assert [r.text for r in s.permissions_allow] == ["Read"]
    assert s.model == "m"
    assert s.project == {}


def test_wrong_types_name_file_and_key(dirs: tuple[Path, Path]) -> None:
    cwd, home = dirs
    write(home / ".claude/settings.json", {
        "permissions": {"allow": "Bash", "deny": ["Bash(rm:*)", 3, None], "defaultMode": 1},
        "env": {"OK": "1", "BAD": 2}, "model": ["x"],
    })
    write(cwd / ".claude/settings.json", {"permissions": ["Read"], "env": "nope"})
    write(cwd / ".claude/settings.local.json", [1, 2])
    s = load(dirs)
    assert [(e.file, e.key, e.message) for e in s.errors] == [
        ("~/.claude/settings.json", "permissions.allow", "expected a list of rule strings, got string"),
        ("~/.claude/settings.json", "permissions.deny[1]", "expected a rule string, got number"),
        ("~/.claude/settings.json", "permissions.deny[2]", "expected a rule string, got null"),
        ("~/.claude/settings.json", "permissions.defaultMode", "expected a string, got number"),
        ("~/.claude/settings.json", "env.BAD", "expected a string, got number"),
        ("~/.claude/settings.json", "model", "expected a string, got array"),
        (".claude/settings.json", "permissions", "expected an object, got array"),
        (".claude/settings.json", "env", "expected an object of strings, got string"),
        (".claude/settings.local.json", None, "expected a JSON object at the top level, got array"),
    ]
    assert str(s.errors[1]) == "~/.claude/settings.json: permissions.deny[1]: expected a rule string, got number"
    # the good values around the bad ones still load
    assert [r.text for r in s.permissions_deny] == ["Bash(rm:*)"]
    assert s.env == {"OK": "1"}


def test_unknown_default_mode_is_an_error_not_a_value(dirs: tuple[Path, Path]) -> None:
    cwd, home = dirs
    write(home / ".claude/settings.json", {"permissions": {"defaultMode": "plan"}})
    write(cwd / ".claude/settings.json", {"permissions": {"defaultMode": "auto"}})
    s = load(dirs)
    assert [str(e) for e in s.errors] == [
        ".claude/settings.json: permissions.defaultMode: unknown mode 'auto' "
        "(expected one of: default, acceptEdits, plan, bypassPermissions)"
    ]
    assert s.default_mode == "plan"


def test_empty_file_is_an_empty_object(dirs: tuple[Path, Path]) -> None:
    cwd, _home = dirs
    write(cwd / ".claude/settings.json", "  \n")
    s = load(dirs)
    assert s.errors == [] and s.project == {} and s.loaded_files == [".claude/settings.json"]


def test_unreadable_path_is_an_error(dirs: tuple[Path, Path]) -> None:
    cwd, _home = dirs
    (cwd / ".claude/settings.local.json").mkdir()
    s = load(dirs)
    assert len(s.errors) == 1
    assert s.errors[0].file == ".claude/settings.local.json"
    assert s.errors[0].message == "not a regular file (a folder)"  # the bounded reader names what it found


def test_cwd_is_home_reads_the_user_file_once(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    write(tmp_path / ".claude/settings.json", {"permissions": {"allow": ["Read"]}})
    s = load_settings(cwd=tmp_path, home=tmp_path)
    assert [r.text for r in s.permissions_allow] == ["Read"]
    assert s.loaded_files == ["~/.claude/settings.json"]
