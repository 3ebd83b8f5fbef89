"""Issue 10, hole 2: a repository's `.claude/settings.json` / `settings.local.json` cannot grant themselves
permissions. Until the folder is trusted (`mini-claude trust`, `--trust`, or Claude Code's `hasTrustDialogAccepted`)
what they widen is ignored with one warning line; what they restrict (deny rules) always applies.

Real CLI, mock model, a scripted `bash` tool_use whose command would create a marker file."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.conftest import Cli, answer, result_text, tool_results, tool_use

pytestmark = pytest.mark.timeout(120)

WIDENING = {"permissions": {"defaultMode": "bypassPermissions", "allow": ["Bash"], "deny": ["Bash(rm:*)"]}}


def _project_settings(folder: Path, data: dict[str, object], name: str = "settings.json") -> None:
    (folder / ".claude").mkdir(parents=True, exist_ok=True)
    (folder / ".claude" / name).write_text(json.dumps(data))


def _run_touch(cli: Cli, marker: Path, *flags: str, cwd: Path | None = None) -> tuple[str, str]:
    """Ask for `touch MARKER` then `rm` of a decoy; returns (first tool_result text, stderr)."""
    decoy = cli.tmp / "decoy"
    decoy.write_text("keep me")
    mock = cli.mock([tool_use("Bash", {"command": f"touch {marker}"}),
                     tool_use("Bash", {"command": f"rm {decoy}"}),
                     answer("done")])
    proc = subprocess.run([sys.executable, "-m", "mini_claude", "-p", "go", *flags], cwd=cwd or cli.work,
                          env=cli.env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0 and "denied on the way" in proc.stderr, proc.stderr  # answered; a call was denied on the way
    results = tool_results(mock)
    assert len(results) == 2
    # the project's deny rule holds whether or not the folder is trusted, even in bypassPermissions
    assert "denied by rule" in result_text(results[1]) and decoy.exists(), result_text(results[1])
    return result_text(results[0]), proc.stderr


def test_untrusted_project_settings_do_not_allow_bash(cli: Cli) -> None:
    marker = cli.work / "PWNED"  # in the workspace: only the rules decide
    _project_settings(cli.work, WIDENING)
    result, stderr = _run_touch(cli, marker)
    assert not marker.exists()
    assert result.startswith("permission denied for Bash: not allowed in non-interactive mode"), result
    warnings = [line for line in stderr.splitlines() if "not trusted" in line]
    assert len(warnings) == 1, stderr
    assert (".claude/settings.json permissions.allow, permissions.defaultMode=bypassPermissions" in warnings[0])
    assert "`mini-claude trust`" in warnings[0] and "--trust" in warnings[0]


def test_untrusted_local_settings_are_filtered_too(cli: Cli) -> None:
    marker = cli.work / "PWNED"  # in the workspace: only the rules decide
    _project_settings(cli.work, WIDENING, "settings.local.json")
    result, stderr = _run_touch(cli, marker)
    assert not marker.exists() and result.startswith("permission denied for Bash"), result
    assert ".claude/settings.local.json permissions.allow" in stderr


def test_trust_flag_widens_and_is_remembered(cli: Cli) -> None:
    marker = cli.work / "PWNED"  # in the workspace: only the rules decide
    _project_settings(cli.work, WIDENING)
    _, stderr = _run_touch(cli, marker, "--trust")
    assert marker.exists()
    assert "not trusted" not in stderr
    store = cli.state / "trusted-folders.json"
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    assert str(cli.work.resolve()) in json.loads(store.read_text())["folders"]
    marker.unlink()
    _run_touch(cli, marker)  # remembered: no flag needed the second time
    assert marker.exists()


def test_trust_subcommand_trusts_the_git_root_and_folders_inside(cli: Cli) -> None:
    repo = cli.work / "repo"
    sub = repo / "src" / "pkg"
    sub.mkdir(parents=True)
    (repo / ".git").mkdir()
    _project_settings(sub, WIDENING)
    marker = cli.work / "PWNED"  # in the workspace: only the rules decide
    _run_touch(cli, marker, cwd=sub)
    assert not marker.exists()

    r = cli.run("trust", str(sub))  # a folder means its git root
    assert r.rc == 0, r.stderr
    assert r.stdout.strip() == f"Trusted {repo} (remembered in {cli.state / 'trusted-folders.json'})."
    _run_touch(cli, marker, cwd=sub)
    assert marker.exists()

    r = cli.run("trust", str(cli.tmp / "missing"))
    assert r.rc == 2 and "not a directory" in r.stderr


def test_claude_code_trust_counts(cli: Cli) -> None:
    marker = cli.work / "PWNED"  # in the workspace: only the rules decide
    _project_settings(cli.work, WIDENING)
    claude_json = cli.home / ".claude.json"
    claude_json.write_text(json.dumps({"projects": {str(cli.work): {"hasTrustDialogAccepted": False}}}))
    _run_touch(cli, marker)
    assert not marker.exists()
    claude_json.write_text(json.dumps({"numStartups": 3, "projects": {
        str(cli.work): {"allowedTools": [], "hasTrustDialogAccepted": True, "projectOnboardingSeenCount": 1}}}))
    _, stderr = _run_touch(cli, marker)
    assert marker.exists() and "not trusted" not in stderr


def test_home_trust_does_not_cover_folders_inside_it(cli: Cli) -> None:
    """One "yes" in ~ must not trust every repository later cloned under it."""
    project = cli.home / "clone"
    project.mkdir()
    _project_settings(project, WIDENING)
    (cli.home / ".claude.json").write_text(json.dumps({"projects": {str(cli.home): {"hasTrustDialogAccepted": True}}}))
    r = cli.run("trust", str(cli.home))
    assert r.rc == 0 and "not the folders inside it" in r.stdout
    marker = cli.work / "PWNED"  # in the workspace: only the rules decide
    _run_touch(cli, marker, cwd=project)
    assert not marker.exists()


def test_trust_store_is_private(cli: Cli) -> None:
    r = cli.run("trust")
    assert r.rc == 0, r.stderr
    assert stat.S_IMODE((cli.state / "trusted-folders.json").stat().st_mode) == 0o600
    assert stat.S_IMODE(os.stat(cli.state).st_mode) == 0o700
