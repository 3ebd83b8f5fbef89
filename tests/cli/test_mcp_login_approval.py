"""`mini-claude mcp login NAME` and a project server (issue 18, finding 10): it used to contact an unapproved
server from the repository's `.mcp.json` — initialize, OAuth discovery, registration — at its expanded URL. Now
nothing is sent before approval: without a terminal the login is refused; in a terminal (tmux) the session's
approval question is asked first (showing `${VAR}` as written and naming the variable, never its value), "n" is
remembered and sends nothing, "y" logs in. The server is a real loopback HTTP server that records every request."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import start_terminal

from tests.helpers import PYTHON, clean_env, run_cli
from tests.mcp.auth.mock_oauth import MockOAuth

pytestmark = pytest.mark.timeout(90)

FETCH = "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=10).read()"
SECRET = "tok-VALUE-never-shown"


@pytest.fixture
def mock() -> Iterator[MockOAuth]:
    server = MockOAuth().start()
    yield server
    server.stop()


def _project(tmp_path: Path, mock: MockOAuth, name: str) -> Path:
    work = tmp_path / name
    work.mkdir()
    (work / ".mcp.json").write_text(json.dumps(
        {"mcpServers": {"remote": {"type": "http", "url": mock.mcp_url + "?k=${SECRET_TOKEN}"}}}))
    return work


def test_without_a_terminal_login_is_refused_and_nothing_is_sent(mock: MockOAuth, tmp_path: Path) -> None:
    work = _project(tmp_path, mock, "work")
    proc = run_cli(["mcp", "login", "remote", "--no-browser"], cwd=work,
                   env=clean_env(tmp_path, SECRET_TOKEN=SECRET))
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.splitlines()[-1] == (
        "mini-claude mcp: not logging in to MCP server 'remote', nothing was sent to it: project MCP server "
        '"remote" (.mcp.json) needs approval: run mini-claude interactively to approve it, or set '
        '"enabledMcpjsonServers": ["remote"] (or "enableAllProjectMcpServers": true) in ~/.claude/settings.json, '
        "or pass --trust-project-mcp")
    assert mock.requests == []
    assert SECRET not in proc.stdout + proc.stderr
    script = tmp_path / "browser.py"
    script.write_text(FETCH)
    approved = run_cli(["mcp", "login", "remote", "--trust-project-mcp"], cwd=work,  # the user's flag approves
                       env=clean_env(tmp_path, SECRET_TOKEN=SECRET, BROWSER=f"{PYTHON} {script} %s"))
    assert approved.returncode == 0, approved.stderr
    assert mock.requests[0]["query"] == {"k": SECRET}


def test_in_a_terminal_the_approval_question_comes_first(mock: MockOAuth, tmp_path: Path) -> None:
    script = tmp_path / "browser.py"
    script.write_text(FETCH)
    env = {"SECRET_TOKEN": SECRET, "BROWSER": f"{PYTHON} {script} %s"}
    denied = _project(tmp_path, mock, "denied")
    term = start_terminal(tmp_path, denied, "no", ["mcp", "login", "remote"], env)
    try:
        term.wait_for(lambda s: "[y/n]" in s, "the approval question")
        screen = term.screen()
        assert 'Project MCP server "remote" from .mcp.json wants to start.' in screen
        assert f"url:           {mock.mcp_url}?k=${{SECRET_TOKEN}}" in screen
        assert "from your env: SECRET_TOKEN — their values go to this server" in screen
        assert SECRET not in screen
        assert mock.requests == []  # asked before anything was sent
        term.keys("n", "Enter")
        term.wait_for(lambda s: "denied by you for this project" in s and "[exit 3]" in s, "the refusal")
    finally:
        term.close()
    assert mock.requests == []
    again = run_cli(["mcp", "login", "remote"], cwd=denied, env=clean_env(tmp_path, **env))
    assert again.returncode == 3 and "denied for this project" in again.stderr  # "n" was remembered
    assert mock.requests == []

    approved = _project(tmp_path, mock, "approved")
    term = start_terminal(tmp_path, approved, "yes", ["mcp", "login", "remote"], env)
    try:
        term.wait_for(lambda s: "[y/n]" in s, "the approval question")
        assert mock.requests == []
        term.keys("y", "Enter")
        term.wait_for(lambda s: "Logged in to MCP server 'remote'." in s and "[exit 0]" in s, "the login")
    finally:
        term.close()
    assert mock.requests[0]["query"] == {"k": SECRET}  # approved: now the expanded URL is used
    listed = run_cli(["mcp", "list"], cwd=approved, env=clean_env(tmp_path, **env))
    assert "remote" in listed.stdout and "ready" in listed.stdout, listed.stdout + listed.stderr
