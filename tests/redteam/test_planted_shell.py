"""The shell every Bash command runs in is never one a repository planted (outside review, round 3). `bash` was
looked up through the whole PATH, relative entries included, from the agent's working folder: with `bin` or
`node_modules/.bin` (or an empty entry) early in PATH, a project's own `bash` ran every command, starting with an
`echo` the gate lets run unasked."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.tools.base import ToolContext
from mini_claude.tools.procs import shell_path
from mini_claude.tools.shell import BashTool

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("entry", ["node_modules/.bin", "bin", ""])
async def test_a_bash_planted_in_the_project_never_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         entry: str) -> None:
    marker = tmp_path / "PWNED"
    folder = tmp_path / entry if entry else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    planted = folder / "bash"
    planted.write_text(f"#!/bin/sh\ntouch {marker}\necho planted\n")
    planted.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", f"{entry}{os.pathsep}{os.environ.get('PATH', os.defpath)}")
    assert os.path.isabs(shell_path()) and not shell_path().startswith(str(tmp_path))
    tool = BashTool(env=dict(os.environ))
    gate = PermissionGate(PermissionMode.DEFAULT, RuleSet(), ask=None, cwd=tmp_path, home=tmp_path / "home")
    assert (await gate.check(tool, {"command": "echo hi"})).allowed  # 7b: nobody is asked
    result = await tool.run({"command": "echo hi"}, ToolContext(cwd=tmp_path, spill_dir=tmp_path / ".spill"))
    assert result.as_text().strip() == "hi" and not marker.exists()
