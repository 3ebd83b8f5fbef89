"""`shellEnvironment.passThrough` (mini_claude.secrets): read from the user's file and `--settings` only; in a
repository's file (project or local) it is one warning and nothing else, trusted folder or not; a malformed value is
an error naming its key."""

from __future__ import annotations

import json
from pathlib import Path

from mini_claude.settings import load_settings, read_flag_settings
from mini_claude.settings_trust import without_project_widening

REFUSED = ("ignored: a repository's settings cannot pass your secret-looking variables to commands (set it in "
           "~/.claude/settings.json or --settings)")


def _write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_pass_through_comes_from_the_user_and_the_flag_only(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "work"
    _write(home / ".claude" / "settings.json", {"shellEnvironment": {"passThrough": ["NPM_TOKEN", " GH_* "]}})
    _write(cwd / ".claude" / "settings.json", {"shellEnvironment": {"passThrough": ["*"]}})
    _write(cwd / ".claude" / "settings.local.json", {"shellEnvironment": {"passThrough": ["AWS_*"]}})
    flag = read_flag_settings(json.dumps({"shellEnvironment": {"passThrough": ["CARGO_REGISTRY_TOKEN"]}}), cwd)
    settings = load_settings(cwd=cwd, home=home, flag=flag)
    assert settings.shell_pass_through == ["NPM_TOKEN", "GH_*", "CARGO_REGISTRY_TOKEN"]
    assert [(e.file, e.key, e.message) for e in settings.errors] == [
        (".claude/settings.json", "shellEnvironment", REFUSED),
        (".claude/settings.local.json", "shellEnvironment", REFUSED)]
    # an untrusted folder's view keeps the user's and the flag's, and warns no second time
    kept, _dropped = without_project_widening(settings)
    assert kept.shell_pass_through == ["NPM_TOKEN", "GH_*", "CARGO_REGISTRY_TOKEN"]
    assert len(kept.errors) == 2


def test_malformed_pass_through_is_an_error_naming_its_key(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "work"
    cwd.mkdir()
    _write(home / ".claude" / "settings.json", {"shellEnvironment": {"passThrough": ["OK_TOKEN", 3, ""]}})
    settings = load_settings(cwd=cwd, home=home)
    assert settings.shell_pass_through == ["OK_TOKEN"]
    assert [(e.key, e.message) for e in settings.errors] == [
        ("shellEnvironment.passThrough[1]", "expected a variable name, got number"),
        ("shellEnvironment.passThrough[2]", "expected a variable name, got an empty string")]
    _write(home / ".claude" / "settings.json", {"shellEnvironment": ["NPM_TOKEN"]})
    assert [(e.key, e.message) for e in load_settings(cwd=cwd, home=home).errors] == [
        ("shellEnvironment", "expected a list of variable names, got array")]
