"""`mini-claude mcp login / logout` and `mcp list` for a server that needs an OAuth login, through the real CLI
against a loopback mock authorization server (the "browser" is a $BROWSER command that follows the redirects)."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import PYTHON, clean_env
from tests.helpers import run_cli as cli
from tests.mcp.auth.mock_oauth import MockOAuth

FETCH = "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=10).read()"


@pytest.fixture
def mock() -> Iterator[MockOAuth]:
    server = MockOAuth().start()
    yield server
    server.stop()


def _config(mock: MockOAuth) -> str:
    return json.dumps({"mcpServers": {"remote": {"type": "http", "url": mock.mcp_url}}})


def test_list_login_list_logout(mock: MockOAuth, tmp_path: Path) -> None:
    script = tmp_path / "browser.py"
    script.write_text(FETCH)
    env = clean_env(tmp_path, BROWSER=f"{PYTHON} {script} %s")
    cfg = ["--mcp-config", _config(mock)]

    before = cli(["mcp", "list", *cfg], cwd=tmp_path, env=env)
    assert before.returncode == 0, before.stderr
    assert "needs auth" in before.stdout and "mini-claude mcp login remote" in before.stdout

    login = cli(["mcp", "login", "remote", *cfg], cwd=tmp_path, env=env)
    assert login.returncode == 0, login.stderr
    assert "Logged in" in login.stdout and "http://" in login.stdout  # the URL is printed as a fallback
    store = tmp_path / "state" / "mcp-oauth.json"
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    for token in mock.tokens:
        assert token not in login.stdout + login.stderr

    after = cli(["mcp", "list", *cfg], cwd=tmp_path, env=env)
    assert after.returncode == 0, after.stderr
    assert "ready" in after.stdout and "1 tool" in after.stdout

    out = cli(["mcp", "logout", "remote", *cfg], cwd=tmp_path, env=env)
    assert out.returncode == 0 and "Logged out" in out.stdout
    again = cli(["mcp", "logout", "remote", *cfg], cwd=tmp_path, env=env)
    assert again.returncode == 0 and "No stored login" in again.stdout


def test_login_errors(mock: MockOAuth, tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    unknown = cli(["mcp", "login", "nope", "--mcp-config", _config(mock)], cwd=tmp_path, env=env)
    assert unknown.returncode == 3 and "no MCP server named 'nope'" in unknown.stderr
    stdio = json.dumps({"mcpServers": {"local": {"command": "true"}}})
    refused = cli(["mcp", "login", "local", "--mcp-config", stdio], cwd=tmp_path, env=env)
    assert refused.returncode == 3 and "http and sse" in refused.stderr
    mock.options["metadata_issuer"] = "https://attacker.example.com"
    bad = cli(["mcp", "login", "remote", "--no-browser", "--mcp-config", _config(mock)], cwd=tmp_path, env=env)
    assert bad.returncode == 2 and "issuer" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
