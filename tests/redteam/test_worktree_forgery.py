"""Red-team round 5 on the local MCP switches shared by a repository's worktrees (mini_claude/worktrees.py): a
folder the project ships (an unpacked archive can hold a `.git` file and a fake worktree folder) must not name
another repository of the user's as its main worktree, or `mcp disable … -s local` would write that project's
`.claude/settings.local.json`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from mini_claude.worktrees import main_worktree
from tests.helpers import PYTHON, clean_env

pytestmark = pytest.mark.timeout(60)


def _forge(project: Path, victim: Path) -> None:
    """`project`'s own files claim it is a linked worktree of `victim`, back link and all."""
    (victim / ".git").mkdir(parents=True)
    fake = project / ".fake" / "wt"
    fake.mkdir(parents=True)
    (fake / "commondir").write_text(str(victim / ".git"))
    (fake / "gitdir").write_text("../../.git")  # the back link to project/.git checks out
    (project / ".git").write_text("gitdir: .fake/wt\n")


def test_a_shipped_worktree_folder_names_no_other_repository(tmp_path: Path) -> None:
    project, victim = tmp_path / "project", tmp_path / "victim"
    _forge(project, victim)
    assert main_worktree(project) is None


def test_mcp_disable_local_in_a_forged_worktree_writes_only_the_project(tmp_path: Path) -> None:
    project, victim = tmp_path / "project", tmp_path / "victim"
    _forge(project, victim)
    run = subprocess.run([PYTHON, "-m", "mini_claude", "mcp", "disable", "probe", "-s", "local"], cwd=project,
                         env=clean_env(tmp_path), capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stdout + run.stderr
    assert not (victim / ".claude").exists()
    local = json.loads((project / ".claude" / "settings.local.json").read_text())
    assert local["disabledMcpServers"] == ["probe"]
