"""Outside review of issue 27: GNU sed ends a `:label` at `;` or a blank, so `sed ':a;e CMD' f` runs CMD and
`sed ':a;w .git/config' f` writes .git/config; the gate read the label to the end of the line and saw neither.
Each script is first run with the real sed (the marker appears / the file is written), then judged under
`Bash(sed:*)` (must not run unasked) and, for `rm`, in bypass mode with `Bash(rm:*)` denied (refused)."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.tools.shell import BashTool
from tests.helpers import require_program


def _allowed(command: str, work: Path, mode: PermissionMode, **rules: tuple[str, ...]) -> bool:
    gate = PermissionGate(mode, RuleSet.from_strings(**rules), ask=None, cwd=work, home=work.parent)
    return asyncio.run(gate.check(BashTool(env={}), {"command": command})).allowed


@pytest.mark.parametrize("script", [":a;e touch MARK", ":a e touch MARK", "bx;:x;e touch MARK",
                                    ":a;s/hello/touch MARK/e", "1{:a};e touch MARK"])
def test_a_label_does_not_hide_the_e_command(tmp_path: Path, script: str) -> None:
    require_program("sed", "the finding is run with the real sed")
    (tmp_path / "a.txt").write_text("hello\n")
    command = f"sed -n '{script}' a.txt"
    subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, timeout=30)
    assert (tmp_path / "MARK").exists(), f"sed did not run the marker for {command!r} (the test is not real)"
    assert not _allowed(command, tmp_path, PermissionMode.DEFAULT, allow=("Bash(sed:*)",))
    rm = command.replace("touch MARK", "rm victim")
    assert not _allowed(rm, tmp_path, PermissionMode.BYPASS, deny=("Bash(rm:*)",))


def test_a_label_does_not_hide_the_w_command(tmp_path: Path) -> None:
    require_program("sed", "the finding is run with the real sed")
    (tmp_path / "a.txt").write_text("hello\n")
    (tmp_path / ".git").mkdir()
    command = "sed ':a;w .git/config' a.txt"
    subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, timeout=30)
    assert (tmp_path / ".git" / "config").read_text() == "hello\n"  # the write is real
    assert not _allowed(command, tmp_path, PermissionMode.DEFAULT, allow=("Bash(sed:*)",))


def test_the_common_loop_idiom_still_passes(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\nb\n")
    for command in ("sed ':a;N;$!ba;s/\\n/ /g' a.txt", "sed -e ':a' -e 's/x/y/;ta' a.txt"):
        assert _allowed(command, tmp_path, PermissionMode.DEFAULT, allow=("Bash(sed:*)",)), command
