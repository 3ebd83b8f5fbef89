"""`/permissions add allow RULE project` in a cloned, untrusted repository whose `.claude` folder (or
`.claude/settings.json`) is committed as a link to the user's `~/.claude` (found by the issue-21 red team): the
scope picker took the linked file for "the session runs from the home folder", swapped the scope to `user` and
wrote the allow rule into `~/.claude/settings.json` — in force at once and in every project, where the same rule
for the repository's file is saved but not applied. The link is now refused like the `local` scope's; a session
really run from the home folder still edits the user's file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mini_claude.cli.slash.permissions import add_permission
from mini_claude.errors import ConfigError
from tests.permissions.test_slash_permissions import runs, session_gate


@pytest.mark.parametrize("linked", ["folder", "file"])
async def test_project_scope_never_writes_through_a_link_to_the_users_settings(tmp_path: Path, linked: str) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".claude").mkdir(parents=True)
    work.mkdir()
    user = home / ".claude" / "settings.json"
    user.write_text('{"theme": "dark"}')
    if linked == "folder":
        (work / ".claude").symlink_to(home / ".claude")
    else:
        (work / ".claude").mkdir()
        (work / ".claude" / "settings.json").symlink_to(user)
    gate = session_gate(work, home, trusted=False)
    with pytest.raises(ConfigError, match=r"\.claude/settings\.json: not written: .* is a symbolic link"):
        add_permission(gate, trusted=False, kind="allow", rule="Bash", scope="project", home=home)
    assert json.loads(user.read_text()) == {"theme": "dark"}
    assert [r.text for r in gate.rules.allow] == [] and not await runs(gate, "ls")


async def test_run_from_the_home_folder_the_project_file_is_the_users(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    gate = session_gate(home, home, trusted=False)
    said = add_permission(gate, trusted=False, kind="allow", rule="Bash(make:*)", scope="project", home=home)
    assert said == "added allow rule Bash(make:*) to ~/.claude/settings.json; applied to this session"
    assert json.loads((home / ".claude" / "settings.json").read_text()) == {"permissions": {"allow": ["Bash(make:*)"]}}
    assert await runs(gate, "make build")
