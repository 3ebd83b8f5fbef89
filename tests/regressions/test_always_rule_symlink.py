"""A repository may commit `.claude/settings.local.json` as a link to the user's own settings, which apply to every
project: the permission question's "yes, don't ask again" must never write a rule through it (found by the helper
who built /permissions: the user's file gained "allow": ["Bash"])."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mini_claude.cli.questions.permission import save_allow_rules
from mini_claude.errors import ConfigError


def test_an_always_answer_never_writes_through_a_committed_link(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".claude").mkdir(parents=True)
    user_settings = home / ".claude" / "settings.json"
    user_settings.write_text('{"model": "mine"}\n')
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.local.json").symlink_to(user_settings)
    monkeypatch.setenv("HOME", str(home))
    with pytest.raises(ConfigError, match="link"):
        save_allow_rules(project, ["Bash"])
    assert json.loads(user_settings.read_text()) == {"model": "mine"}


def test_a_linked_claude_folder_is_refused_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".claude").mkdir(parents=True)
    project.mkdir()
    (project / ".claude").symlink_to(home / ".claude")
    monkeypatch.setenv("HOME", str(home))
    with pytest.raises(ConfigError):
        save_allow_rules(project, ["Bash(ls:*)"])
    assert not (home / ".claude" / "settings.local.json").exists()


def test_a_plain_local_file_gets_the_rule_and_keeps_the_rest(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    local = tmp_path / ".claude" / "settings.local.json"
    local.write_text('{"permissions": {"deny": ["Read(.env)"]}, "model": "x"}\n')
    assert save_allow_rules(tmp_path, ["Bash(npm test)", "Bash(npm test)"]) == local
    assert json.loads(local.read_text()) == {"permissions": {"deny": ["Read(.env)"], "allow": ["Bash(npm test)"]},
                                             "model": "x"}
