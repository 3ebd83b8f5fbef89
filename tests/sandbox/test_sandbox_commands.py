"""The sandbox from the user's side: the REPL's `!` runs confined, `/sandbox` shows and switches it (and saves it
to the user's settings, keeping the rest), `doctor` reports it, and a repository's settings files cannot turn off
or widen what the user's file turned on."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from mini_claude.cli.shell_escape import run_command
from mini_claude.cli.slash.sandbox import sandbox_command
from mini_claude.sandbox.bwrap import find_bwrap
from mini_claude.settings import load_settings
from mini_claude.tools.shell import BashTool
from tests.sandbox.conftest import make_sandbox

pytestmark = pytest.mark.timeout(60)
needs_bwrap = pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap is not installed")


@needs_bwrap
async def test_a_bang_command_runs_confined(place: dict[str, Path]) -> None:
    shell = BashTool()
    shell.sandbox = make_sandbox(place)
    command = f"echo ok > here.txt; touch {place['outside']}/bang"
    launch = await shell.sandbox_launch(command, {"command": command}, place["work"])
    assert launch is not None
    try:
        output = await run_command(command, cwd=place["work"], env={**shell.env, **launch.env}, argv=launch.argv)
    finally:
        shell.sandbox_done(launch)
    assert "Read-only file system" in output.stderr and output.code == 1
    assert (place["work"] / "here.txt").read_text() == "ok\n" and not (place["outside"] / "bang").exists()


@needs_bwrap
async def test_slash_sandbox_shows_switches_and_saves(place: dict[str, Path]) -> None:
    sandbox = make_sandbox(place, enabled=False)
    settings = place["home"] / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"model": "opus", "sandbox": {"excludedCommands": ["docker"]}}))
    parts = SimpleNamespace(gate=SimpleNamespace(sandbox=sandbox), env={"HOME": str(place["home"])})
    shown = await sandbox_command(parts, "")
    assert shown[0] == "sandbox: off" and "enabled: false" in shown
    on = await sandbox_command(parts, "on")
    assert on[0] == "sandbox turned on for this session" and on[1].startswith("sandbox: on (bubblewrap: ")
    assert sandbox.enabled and json.loads(settings.read_text())["sandbox"] == {"excludedCommands": ["docker"]}
    saved = await sandbox_command(parts, "save off")
    assert saved[0] == "sandbox.enabled = false saved in ~/.claude/settings.json" and not sandbox.enabled
    assert json.loads(settings.read_text()) == {"model": "opus",
                                                "sandbox": {"excludedCommands": ["docker"], "enabled": False}}
    assert (await sandbox_command(parts, "sideways"))[0].startswith("usage: /sandbox")


def test_doctor_reports_a_sandbox_that_cannot_start(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".claude").mkdir(parents=True)
    work.mkdir()
    (home / ".claude" / "settings.json").write_text(json.dumps({"sandbox": {"enabled": True}}))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "MINI_CLAUDE_STATE_DIR": str(tmp_path / "state"),
           "MINI_CLAUDE_BWRAP": "/bin/false", "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.run([sys.executable, "-m", "mini_claude", "doctor", "--json"], cwd=work, env=env,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    report = json.loads(proc.stdout)
    [state] = [row for row in report["sections"]["sandbox"] if row["label"] == "state"]
    assert state["ok"] is False and state["data"]["enabled"] is True and "/bin/false" in state["text"]
    assert [p["code"] for p in state["problems"]] == ["sandbox-unavailable"]


def test_a_repository_cannot_turn_off_what_the_user_turned_on(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".claude").mkdir(parents=True)
    (work / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"sandbox": {"enabled": True}}))
    (work / ".claude" / "settings.local.json").write_text(json.dumps(
        {"sandbox": {"enabled": False, "excludedCommands": ["bash"], "network": {"allowedDomains": ["evil.com"]}}}))
    settings = load_settings(cwd=work, home=home)
    assert settings.sandbox.is_enabled and settings.sandbox.excluded_commands == ()
    assert not settings.sandbox.network_on
    assert {e.key for e in settings.errors} == {"sandbox.enabled", "sandbox.excludedCommands",
                                                "sandbox.network.allowedDomains"}
    (home / ".claude" / "settings.json").write_text("{}")
    (work / ".claude" / "settings.local.json").write_text(json.dumps({"sandbox": {"enabled": True}}))
    assert load_settings(cwd=work, home=home).sandbox.is_enabled  # a repository may turn it on
