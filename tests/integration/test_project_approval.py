"""A `.mcp.json` server in the working directory runs a command of the repository's choosing: it never starts in a
non-interactive run until approved, and an edited entry needs approval again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mini_claude.mcp.approval import ApprovalStore
from mini_claude.mcp.config import load_mcp_config
from tests.integration.conftest import Cli, answer, probe_entry

pytestmark = pytest.mark.timeout(90)


def _write_mcp_json(cli: Cli, marker: Path, *extra: str) -> None:
    (cli.work / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": probe_entry("--marker", str(marker),
                                                                                       *extra)}}))


def _status(cli: Cli) -> dict[str, object]:
    r = cli.run("mcp", "list", "--json")
    assert r.rc == 0, r.stderr
    return {row["name"]: row for row in r.json()}["proj"]


def _approve_in_store(cli: Cli) -> None:
    env = {"HOME": str(cli.home), "PATH": cli.env["PATH"]}
    cfg = load_mcp_config(cwd=cli.work, home=cli.home, env=env).servers["proj"]
    ApprovalStore.default({"MINI_CLAUDE_STATE_DIR": str(cli.state)}).record(cli.work, cfg, "approved")


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
