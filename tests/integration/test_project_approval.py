"""A `.mcp.json` server in the working directory runs a command of the repository's choosing: it never starts in a
non-interactive run until approved, and an edited entry needs approval again — any edit to what runs or where data
goes (an env value, a `headersHelper`), with a hint that names the file and what changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mini_claude.mcp.approval import ApprovalStore
from mini_claude.mcp.config import load_mcp_config
from tests.helpers import refused_port
from tests.integration.conftest import Cli, answer, probe_entry

pytestmark = pytest.mark.timeout(90)


def _write_mcp_json(cli: Cli, marker: Path, *extra: str) -> None:
    (cli.work / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": probe_entry("--marker", str(marker),
                                                                                       *extra)}}))


def _status(cli: Cli) -> dict[str, object]:
    r = cli.run("mcp", "list", "--json")
    assert r.rc == 0, r.stderr
    return {row["name"]: row for row in r.json()}["proj"]


def _approve_in_store(cli: Cli, name: str = "proj") -> None:
    env = {"HOME": str(cli.home), "PATH": cli.env["PATH"]}
    cfg = load_mcp_config(cwd=cli.work, home=cli.home, env=env).servers[name]
    ApprovalStore.default({"MINI_CLAUDE_STATE_DIR": str(cli.state)}).record(cli.work, cfg, "approved")


def _hint(name: str, source: str, changes: str) -> str:
    return (f'project MCP server "{name}" ({source}) changed since it was approved ({changes}) and needs approval '
            f'again: run mini-claude interactively to approve it, or set "enabledMcpjsonServers": ["{name}"] (or '
            f'"enableAllProjectMcpServers": true) in ~/.claude/settings.json, or pass --trust-project-mcp')


def test_unapproved_project_server_does_not_start(cli: Cli) -> None:
    marker = cli.tmp / "marker"
    _write_mcp_json(cli, marker)
    cli.mock([answer("done")])
    r = cli.run("-p", "hi", "--yolo")
    assert r.rc == 0, r.stderr
    assert r.stdout.strip() == "done"
    assert not marker.exists()
    assert "enabledMcpjsonServers" in r.stderr and "--trust-project-mcp" in r.stderr
    row = _status(cli)
    assert row["status"] == "needs-approval"
    assert "enabledMcpjsonServers" in str(row["error"])
    assert row["source"] == ".mcp.json"
    assert not marker.exists()


def test_store_approval_starts_it_and_an_edit_asks_again(cli: Cli) -> None:
    marker = cli.tmp / "marker"
    _write_mcp_json(cli, marker)
    _approve_in_store(cli)
    cli.mock([answer("done")])
    r = cli.run("-p", "hi", "--yolo")
    assert r.rc == 0, r.stderr
    assert marker.exists()
    assert "needs approval" not in r.stderr
    assert _status(cli)["status"] == "ready"

    marker.unlink()
    _write_mcp_json(cli, marker, "--tool", "extra")  # args changed: another fingerprint
    assert _status(cli)["status"] == "needs-approval"
    cli.mock([answer("done")])
    r = cli.run("-p", "hi", "--yolo")
    assert r.rc == 0, r.stderr
    assert not marker.exists()
    assert "enabledMcpjsonServers" in r.stderr


def test_user_settings_approval_and_trust_flag(cli: Cli) -> None:
    marker = cli.tmp / "marker"
    _write_mcp_json(cli, marker)
    r = cli.run("mcp", "list", "--json", "--trust-project-mcp")
    assert r.json()[0]["status"] == "ready"
    assert marker.exists()
    marker.unlink()

    (cli.home / ".claude").mkdir()
    (cli.home / ".claude" / "settings.json").write_text(json.dumps({"enabledMcpjsonServers": ["proj"]}))
    cli.mock([answer("done")])
    r = cli.run("-p", "hi", "--yolo")
    assert r.rc == 0, r.stderr
    assert marker.exists()


def test_project_settings_cannot_approve_their_own_servers(cli: Cli) -> None:
    marker = cli.tmp / "marker"
    _write_mcp_json(cli, marker)
    (cli.work / ".claude").mkdir()
    (cli.work / ".claude" / "settings.json").write_text(json.dumps({"enableAllProjectMcpServers": True,
                                                                     "enabledMcpjsonServers": ["proj"]}))
    assert _status(cli)["status"] == "needs-approval"
    assert not marker.exists()


def test_changed_env_value_holds_an_approved_server_and_says_what_changed(cli: Cli) -> None:
    marker = cli.tmp / "marker"
    entry = probe_entry("--marker", str(marker), env={"MODE": "safe"})
    (cli.work / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": entry}}))
    _approve_in_store(cli)
    assert _status(cli)["status"] == "ready"
    assert marker.exists()
    marker.unlink()

    # the repository changes an env value (the name stays) and adds a loader variable
    entry["env"] = {"MODE": "evil", "PYTHONPATH": "."}
    (cli.work / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": entry}}))
    cli.mock([answer("done")])
    r = cli.run("-p", "hi", "--yolo")
    assert r.rc == 0, r.stderr
    hint = _hint("proj", ".mcp.json", "env MODE changed; env PYTHONPATH was added")
    assert hint in r.stderr.splitlines()
    assert "evil" not in r.stderr
    row = _status(cli)
    assert (row["status"], row["error"]) == ("needs-approval", hint)
    assert not marker.exists()


def test_headers_helper_added_to_an_approved_server_never_runs(cli: Cli) -> None:
    helper_marker = cli.tmp / "helper-ran"
    settings = cli.work / ".claude" / "settings.json"
    settings.parent.mkdir()
    entry: dict[str, object] = {"type": "http", "url": f"http://127.0.0.1:{refused_port()}/mcp"}
    settings.write_text(json.dumps({"mcpServers": {"web": entry}}))
    _approve_in_store(cli, "web")

    entry["headersHelper"] = f"touch {helper_marker}; echo {{}}"
    settings.write_text(json.dumps({"mcpServers": {"web": entry}}))
    cli.mock([answer("done")])
    r = cli.run("-p", "hi", "--yolo")
    assert r.rc == 0, r.stderr
    hint = _hint("web", ".claude/settings.json", "headersHelper was added")
    assert hint in r.stderr.splitlines()
    r = cli.run("mcp", "list", "--json")
    row = {row["name"]: row for row in r.json()}["web"]
    assert (row["status"], row["error"], row["source"]) == ("needs-approval", hint, ".claude/settings.json")
    assert not helper_marker.exists()

    # control: the same entry, allowed to start, does run its helper (so the absence above means something)
    cli.run("mcp", "list", "--json", "--trust-project-mcp")
    assert helper_marker.exists()
