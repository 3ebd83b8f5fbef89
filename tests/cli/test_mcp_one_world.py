"""Issue 19, "one MCP world": the `mini-claude mcp …` commands see and call what a session in the same folder would —
the host's capabilities (roots, sampling, elicitation), folder trust, approvals, pins and config discovery from a
subfolder — and the small truths around them (reset-project-choices, enable, remove, add URL, a missing
--mcp-config, a closed stdout). Real CLI subprocesses, real servers (our probe, the `everything` peer), the mock
model for the agent's side."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mini_claude.mcp.approval import ApprovalStore
from mini_claude.mcp.config import load_mcp_config
from tests.helpers import run_cli
from tests.integration.conftest import Cli, answer, probe_entry
from tests.peers import peer_command

pytestmark = pytest.mark.timeout(120)



def _everything(cli: Cli) -> str:
    argv = peer_command("PEER_EVERYTHING")
    return cli.config_file({"everything": {"command": argv[0], "args": argv[1:]}})


def _mcp_tools_in_request(log: list[dict[str, Any]], server: str) -> set[str]:
    prefix = f"mcp__{server}__"
    return {t["name"][len(prefix):] for t in log[0]["body"]["tools"] if t["name"].startswith(prefix)}


def test_mcp_tools_lists_what_the_agent_is_offered(cli: Cli) -> None:
    config = _everything(cli)
    r = cli.run("mcp", "tools", "everything", "--json", "--mcp-config", config)
    assert r.rc == 0, r.stderr
    cli_names = {row["name"] for row in r.json()}
    # the tools the everything server offers only to a client declaring roots, sampling and elicitation
    assert {"get-roots-list", "trigger-sampling-request", "trigger-elicitation-request"} <= cli_names
    log_path = cli.tmp / "requests.jsonl"
    from mini_claude.models.mock_server import MockModelServer
    from mini_claude.models.scenario import parse_scenario

    mock = MockModelServer(parse_scenario({"turns": [answer("done")]}), log_path=log_path)
    url = mock.start()
    try:
        r = cli.run("-p", "hi", "--mcp-config", config, env={"ANTHROPIC_BASE_URL": url,
                                                            "MINI_CLAUDE_TOOL_SEARCH": "false"})
    finally:
        mock.stop()
    assert r.rc == 0, r.stderr
    log = [json.loads(line) for line in log_path.read_text().splitlines()]
    assert _mcp_tools_in_request(log, "everything") == cli_names


def test_mcp_call_get_roots_list_answers_with_the_folder(cli: Cli) -> None:
    r = cli.run("mcp", "call", "everything", "get-roots-list", "--mcp-config", _everything(cli))
    assert r.rc == 0, r.stderr
    assert cli.work.as_uri() in r.stdout


def _project_server(cli: Cli, folder: Path, name: str = "proj") -> None:
    (folder / ".mcp.json").write_text(json.dumps({"mcpServers": {name: probe_entry()}}))


def test_mcp_list_honours_folder_trust_like_a_session(cli: Cli) -> None:
    _project_server(cli, cli.work)
    (cli.work / ".claude").mkdir()
    (cli.work / ".claude" / "settings.json").write_text(json.dumps({"enabledMcpjsonServers": ["proj"]}))
    untrusted = {row["name"]: row for row in cli.run("mcp", "list", "--json").json()}
    assert untrusted["proj"]["status"] == "needs-approval"  # a repository cannot approve its own servers
    assert cli.run("trust").rc == 0
    r = cli.run("mcp", "list", "--json")
    assert r.rc == 0, r.stderr
    assert {row["name"]: row for row in r.json()}["proj"]["status"] == "ready"
    cli.mock([answer("done")])
    session = cli.run("-p", "hi")
    assert session.rc == 0 and "needs approval" not in session.stderr, session.stderr


def test_a_subfolder_finds_the_roots_mcp_json_and_the_projects_local_servers(cli: Cli) -> None:
    subprocess.run(["git", "init", "-q", str(cli.work)], check=True, timeout=30)
    _project_server(cli, cli.work, "rootsrv")
    deeper = cli.work / "sub" / "deeper"
    deeper.mkdir(parents=True)
    (cli.work / "sub" / ".mcp.json").write_text(json.dumps({"mcpServers": {"subsrv": probe_entry()}}))
    (cli.home / ".claude.json").write_text(json.dumps({"projects": {
        str(cli.work): {"mcpServers": {"localroot": probe_entry()}},
        str(deeper): {"mcpServers": {"localdeeper": probe_entry()}}}}))  # keyed by the git root, as Claude Code
    r = run_cli(["mcp", "list", "--json", "--trust-project-mcp"], cwd=deeper, env=cli.env)
    assert r.returncode == 0, r.stderr
    rows = {row["name"]: row for row in json.loads(r.stdout)}
    assert set(rows) == {"rootsrv", "subsrv", "localroot"}
    assert rows["rootsrv"]["source"] == "../../.mcp.json" and rows["subsrv"]["source"] == "../.mcp.json"
    assert all(row["status"] == "ready" for row in rows.values()), rows
    mock = cli.mock([answer("done")])  # a session started there has the same servers
    r = run_cli(["-p", "hi", "--trust-project-mcp"], cwd=deeper, env=cli.env)
    assert r.returncode == 0, r.stderr
    offered = {t["name"] for t in mock.requests[0]["body"]["tools"]}
    assert {"mcp__rootsrv__echo", "mcp__subsrv__echo", "mcp__localroot__echo"} <= offered
    assert not any(name.startswith("mcp__localdeeper__") for name in offered)
    # `mcp add -s local` from the subfolder writes to the same project entry
    r = run_cli(["mcp", "add", "added", "--", sys.executable, "-c", "pass"], cwd=deeper, env=cli.env)
    assert r.returncode == 0, r.stderr
    projects = json.loads((cli.home / ".claude.json").read_text())["projects"]
    assert "added" in projects[str(cli.work)]["mcpServers"]


def test_the_nearest_mcp_json_wins(cli: Cli) -> None:
    sub = cli.work / "sub"
    sub.mkdir()
    (cli.work / ".mcp.json").write_text(json.dumps({"mcpServers": {"same": {"command": "false"}}}))
    (sub / ".mcp.json").write_text(json.dumps({"mcpServers": {"same": probe_entry()}}))
    r = run_cli(["mcp", "get", "same", "--json"], cwd=sub, env=cli.env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["source"] == ".mcp.json"
    assert json.loads(r.stdout)["config"]["command"] == sys.executable


def _deny(cli: Cli, name: str = "proj") -> None:
    env = {"HOME": str(cli.home), "PATH": cli.env["PATH"]}
    cfg = load_mcp_config(cwd=cli.work, home=cli.home, env=env).servers[name]
    ApprovalStore.default({"MINI_CLAUDE_STATE_DIR": str(cli.state)}).record(cli.work, cfg, "denied")


def test_enable_tells_the_truth_and_reset_project_choices_is_the_way_back(cli: Cli) -> None:
    _project_server(cli, cli.work)
    _deny(cli)  # the user answered "no" at the approval question
    assert {row["name"]: row for row in cli.run("mcp", "list", "--json").json()}["proj"]["status"] == "disabled"
    r = cli.run("mcp", "enable", "proj")
    assert r.rc == 1
    assert "Enabled" not in r.stdout
    assert "stays off" in r.stdout and "mini-claude mcp reset-project-choices" in r.stdout
    r = cli.run("mcp", "reset-project-choices")
    assert r.rc == 0, r.stderr
    assert "proj" in r.stdout
    row = {row["name"]: row for row in cli.run("mcp", "list", "--json").json()}["proj"]
    assert row["status"] == "needs-approval"  # asked again, like a server never decided on
    assert cli.run("mcp", "reset-project-choices").stdout.startswith("No approvals")


def test_enable_says_enabled_when_it_is(cli: Cli) -> None:
    config = cli.config_file({"mine": probe_entry()})
    (cli.home / ".claude.json").write_text(json.dumps({"mcpServers": json.loads(Path(config).read_text())
                                                       ["mcpServers"]}))
    assert cli.run("mcp", "disable", "mine").rc == 0
    r = cli.run("mcp", "enable", "mine")
    assert r.rc == 0, r.stdout + r.stderr
    assert r.stdout.startswith("Enabled MCP server 'mine'")


def test_remove_refuses_a_name_in_several_scopes_and_s_picks_one(cli: Cli) -> None:
    for scope in ("local", "user"):
        r = cli.run("mcp", "add", "-s", scope, "twice", "--", sys.executable, "-c", "pass")
        assert r.rc == 0, r.stderr
    r = cli.run("mcp", "remove", "twice")
    assert r.rc == 3
    assert "several scopes (local, user)" in r.stderr and "-s local or -s user" in r.stderr
    data = json.loads((cli.home / ".claude.json").read_text())
    assert "twice" in data["mcpServers"]  # nothing removed
    assert cli.run("mcp", "remove", "-s", "user", "twice").rc == 0
    data = json.loads((cli.home / ".claude.json").read_text())
    assert "twice" not in data["mcpServers"]
    assert "twice" in next(iter(data["projects"].values()))["mcpServers"]
    assert cli.run("mcp", "remove", "twice").rc == 0  # one scope left: no need to say which


def test_add_infers_http_from_a_url_and_says_so(cli: Cli) -> None:
    r = cli.run("mcp", "add", "-s", "user", "web", "https://example.invalid/mcp")
    assert r.rc == 0, r.stderr
    assert "http" in r.stdout and "URL" in r.stdout
    entry = json.loads((cli.home / ".claude.json").read_text())["mcpServers"]["web"]
    assert entry == {"type": "http", "url": "https://example.invalid/mcp"}
    r = cli.run("mcp", "add", "-s", "user", "-t", "sse", "old", "https://example.invalid/sse")
    assert json.loads((cli.home / ".claude.json").read_text())["mcpServers"]["old"]["type"] == "sse"


def test_a_missing_mcp_config_file_is_an_error(cli: Cli) -> None:
    for command in (["list"], ["get", "x"], ["tools", "x"], ["doctor"]):
        r = cli.run("mcp", *command, "--mcp-config", str(cli.tmp / "missing.json"))
        assert r.rc == 2, (command, r.stderr)
        assert "missing.json: no such file" in r.stderr


def test_a_closed_stdout_is_not_an_error(cli: Cli) -> None:
    config = cli.config_file({"fs": probe_entry()})
    read, write = os.pipe()
    os.close(read)  # the reader is gone before anything is written (`| head -0`)
    try:
        proc = subprocess.run([sys.executable, "-m", "mini_claude", "mcp", "get", "fs", "--mcp-config", config],
                              cwd=cli.work, env=cli.env, stdout=write, stderr=subprocess.PIPE, text=True,
                              timeout=60, stdin=subprocess.DEVNULL)
    finally:
        os.close(write)
    assert proc.returncode == 0, proc.stderr
    assert "BrokenPipe" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
