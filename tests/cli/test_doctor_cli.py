"""Issue 21, `mini-claude doctor`: the real CLI as a subprocess in an isolated HOME, with real settings files, real
MCP servers (tests/mcp/servers/faulty_server.py) and no model: a healthy setup exits 0; an invalid settings file is
named (exit 1); a missing key says which variable to set; a broken server gets its cause; a project server not
approved is reported and never started; `--json` parses; no secret value ever appears in the output."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import clean_env, run_cli

pytestmark = pytest.mark.timeout(60)

FAULTY = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "faulty_server.py"


def _server(mode: str, **extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(FAULTY), "--mode", mode], **extra}


def _setup(tmp_path: Path, user: dict[str, Any] | None = None) -> tuple[Path, Path]:
    """(home, work): an isolated HOME with `user` as ~/.claude/settings.json, and an empty project folder."""
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".claude").mkdir(parents=True)
    work.mkdir()
    if user is not None:
        (home / ".claude" / "settings.json").write_text(json.dumps(user))
    return home, work


def _doctor(work: Path, env: dict[str, str], *args: str) -> tuple[int, dict[str, Any], str]:
    r = run_cli(["doctor", "--json", "--timeout", "15", *args], cwd=work, env=env)
    assert "Traceback" not in r.stderr, r.stderr
    return r.returncode, json.loads(r.stdout), r.stderr


def _row(report: dict[str, Any], section: str, label: str) -> dict[str, Any]:
    rows = {row["label"]: row for row in report["sections"][section]}
    assert label in rows, (label, list(rows))
    return rows[label]


def test_a_healthy_setup_exits_0_and_says_what_each_file_contributes(tmp_path: Path) -> None:
    home, work = _setup(tmp_path, {"permissions": {"allow": ["Read", "Bash(git status:*)"], "deny": ["Bash(rm:*)"]},
                                   "hooks": {"PreToolUse": [{"matcher": "Bash",
                                                             "hooks": [{"type": "command", "command": "true"}]}]},
                                   "model": "sonnet", "mcpServers": {"good": _server("normal")}})
    (work / ".claude").mkdir()
    # an untrusted folder's widening is a note (it is ignored until trusted), never a problem
    (work / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Edit"],
                                                                                "ask": ["Write"]}}))
    (work / "CLAUDE.md").write_text("# project notes\n")
    env = clean_env(tmp_path, ANTHROPIC_API_KEY="k")

    text = run_cli(["doctor"], cwd=work, env=env)
    assert text.returncode == 0, text.stdout + text.stderr
    assert text.stdout.rstrip().endswith("No problems found."), text.stdout
    for expected in ("Install", "Keys", "Settings", "Memory files", "MCP config files", "MCP servers",
                     "ANTHROPIC_API_KEY (environment) → anthropic",
                     f"{home / '.claude' / 'settings.json'}: 2 allow / 1 deny rules, 1 hook, 1 MCP server, "
                     "model sonnet",
                     f"{work / '.claude' / 'settings.json'}: 1 allow / 1 ask rules",
                     "ignored while the folder is untrusted: permissions.allow",
                     f"{work / 'CLAUDE.md'} (16 characters)"):
        assert expected in text.stdout, (expected, text.stdout)

    rc, report, _ = _doctor(work, env)
    assert rc == 0 and report["ok"] and report["problem_count"] == 0
    user = _row(report, "settings", "user")
    assert user["data"]["contributes"] == {"allow": 2, "deny": 1, "hooks": 1, "mcpServers": 1, "model": "sonnet"}
    assert _row(report, "settings", "project")["data"]["ignored"] == ["permissions.allow"]
    good = _row(report, "servers", "good")
    assert good["ok"] and good["data"]["tools"] == 1, good
    [record] = report["servers"]
    assert record["server"] == "good" and record["ok"] and record["tools"] == ["echo"]
    assert _row(report, "install", "state")["ok"]


def test_an_invalid_settings_file_is_named_with_its_error(tmp_path: Path) -> None:
    _, work = _setup(tmp_path)
    (work / ".claude").mkdir()
    local = work / ".claude" / "settings.local.json"
    local.write_text('{"permissions": ')
    (work / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"defaultMode": "yolo"}}))
    env = clean_env(tmp_path, ANTHROPIC_API_KEY="k")

    rc, report, _ = _doctor(work, env)
    assert rc == 1 and not report["ok"]
    [broken] = _row(report, "settings", "local")["problems"]
    assert broken["code"] == "invalid-settings"
    assert broken["cause"].startswith(".claude/settings.local.json: invalid JSON at line 1"), broken
    assert str(local) in broken["fix"]
    [mode] = _row(report, "settings", "project")["problems"]
    assert "permissions.defaultMode: unknown mode 'yolo'" in mode["cause"]
    assert mode["fix"].startswith("fix permissions.defaultMode in ")

    text = run_cli(["doctor"], cwd=work, env=env)
    assert text.returncode == 1
    assert f"✘ local        {local}: unreadable" in text.stdout, text.stdout
    assert text.stdout.rstrip().endswith("2 problems found: each is marked ✘ above, with its fix.")


def test_a_missing_key_says_which_variable_to_set(tmp_path: Path) -> None:
    _, work = _setup(tmp_path)
    rc, report, _ = _doctor(work, clean_env(tmp_path))
    assert rc == 1
    [problem] = _row(report, "keys", "credential")["problems"]
    assert problem["code"] == "no-credential" and problem["cause"] == "no model credential found"
    assert problem["fix"].startswith("set ANTHROPIC_API_KEY ")
    assert [p["code"] for s in report["sections"].values() for r in s for p in r["problems"]] == ["no-credential"]


def test_a_broken_server_gets_its_cause_and_a_project_server_not_approved_is_not_started(tmp_path: Path) -> None:
    started = tmp_path / "project-server-started"
    _, work = _setup(tmp_path, {"mcpServers": {"broken": _server("crash_at_start")}})
    (work / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": {
        "command": "/bin/sh", "args": ["-c", 'touch "$1" && exec "$2" "$3" --mode normal', "sh", str(started),
                                       sys.executable, str(FAULTY)]}}}))
    env = clean_env(tmp_path, ANTHROPIC_API_KEY="k")
    rc, report, _ = _doctor(work, env)
    assert rc == 1
    [crash] = _row(report, "servers", "broken")["problems"]
    assert crash["code"] == "exits-at-start"
    assert crash["cause"] == "it exited with code 3 before answering initialize: fatal: cannot load config"
    assert crash["fix"].startswith("run it by hand to see the whole error: ")
    proj = _row(report, "servers", "proj")
    assert proj["text"] == "not started: awaiting approval (.mcp.json)"
    assert [p["code"] for p in proj["problems"]] == ["held"]
    assert "enabledMcpjsonServers" in proj["problems"][0]["cause"]
    assert _row(report, "mcp-config", ".mcp.json")["data"]["awaiting_approval"] == ["proj"]
    assert not started.exists()  # never started

    rc, report, _ = _doctor(work, env, "--trust-project-mcp")  # as a session with that flag: it is tried
    assert _row(report, "servers", "proj")["ok"] and started.exists()


def test_no_secret_value_appears_in_the_output(tmp_path: Path) -> None:
    secrets = {"api": "sk-ant-api-S3CRET-1", "token": "tok-S3CRET-2", "settings": "set-S3CRET-3",
               "server": "srv-S3CRET-4", "header": "hdr-S3CRET-5", "userinfo": "pw-S3CRET-6",
               "query": "q-S3CRET-7", "dotenv": "dot-S3CRET-8", "helper": "helper-S3CRET-9"}
    _, work = _setup(tmp_path, {
        "env": {"MY_SERVICE_TOKEN": secrets["settings"]},
        "apiKeyHelper": f"echo {secrets['helper']}",
        "mcpServers": {"local": _server("crash_at_start", env={"API_TOKEN": secrets["server"]}),
                       "remote": {"type": "http", "url": f"http://127.0.0.1:9/mcp?token={secrets['query']}",
                                  "headers": {"Authorization": f"Bearer {secrets['header']}"}}}})
    (work / ".env").write_text(f"OPENAI_API_KEY={secrets['dotenv']}\n")
    env = clean_env(tmp_path, ANTHROPIC_API_KEY=secrets["api"], ANTHROPIC_AUTH_TOKEN=secrets["token"],
                    ANTHROPIC_BASE_URL=f"http://user:{secrets['userinfo']}@127.0.0.1:9/?key={secrets['query']}")
    text = run_cli(["doctor"], cwd=work, env=env)
    as_json = run_cli(["doctor", "--json"], cwd=work, env=env)
    report = json.loads(as_json.stdout)
    credential = _row(report, "keys", "credential")
    assert credential["data"]["source"] == "ANTHROPIC_AUTH_TOKEN"  # named...
    assert credential["data"]["also_set"] == ["apiKeyHelper (~/.claude/settings.json)", "ANTHROPIC_API_KEY"]
    assert "http://***@127.0.0.1:9/?key=***" in text.stdout
    for output in (text.stdout, text.stderr, as_json.stdout, as_json.stderr):
        for name, value in secrets.items():
            assert value not in output, (name, output)  # ...never shown, not even in part
            assert "S3CRET" not in output, output
