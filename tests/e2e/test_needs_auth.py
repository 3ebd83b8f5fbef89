"""Acceptance point 3 of issue 5, end to end through the real CLI: a project `.mcp.json` declares a remote server
whose OAuth needs a login (the loopback mock OAuth server + protected MCP endpoint) and a working stdio server
(the probe server), both approved for the project the way a user approves them (the approval store).

* `mcp list` shows the remote one `needs auth` with the login hint and the stdio one ready (exit 0, no traceback);
* `-p` with the mock model calls the stdio server's tool while the remote one needs auth;
* the REPL's `/mcp` shows `needs auth` with the `/mcp login NAME` hint; `/mcp login NAME` can be cancelled with
  Ctrl+C and, run again, logs in and restarts the server in the running session so `/mcp` shows it ready (driven
  through a real terminal under tmux; the "browser" is a $BROWSER command that follows the mock's redirect);
* after `mini-claude mcp login NAME` (the same headless browser), `mcp list` shows it ready with its tools.

The `/mcp` handler is also exercised in-process (list, usage errors, a cancelled login closing its listener).
"""

from __future__ import annotations

import asyncio
import io
import json
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pytest

from mini_claude.cli.mcp.panel import MCP_USAGE, mcp_command
from mini_claude.cli.terminal.render import TerminalUI
from mini_claude.mcp.approval import ApprovalStore
from mini_claude.mcp.auth import BrowserAuthorizer
from mini_claude.mcp.config import ServerConfig, load_mcp_config
from mini_claude.mcp.manager import McpManager, ServerStatus
from tests.helpers import eventually, require_program, server_env
from tests.integration.conftest import Cli, answer, probe_entry, result_text, tool_results, tool_use
from tests.mcp.auth.mock_oauth import HeadlessAuthorizer, MockOAuth

pytestmark = pytest.mark.timeout(90)

ROOT = Path(__file__).resolve().parents[2]
# a $BROWSER that follows the authorization URL's redirects (so the loopback listener gets its callback); while
# the file named by HOLD exists it only records the call and does nothing (a user who never finishes logging in)
BROWSER = """\
import sys, pathlib, urllib.request
calls = pathlib.Path(sys.argv[1]); hold = pathlib.Path(sys.argv[2])
calls.write_text(calls.read_text() + "call\\n" if calls.exists() else "call\\n")
if not hold.exists():
    urllib.request.urlopen(sys.argv[3], timeout=10).read()
"""


@dataclass
class Project:
    cli: Cli
    mock: MockOAuth
    browser_calls: Path
    browser_hold: Path

    @property
    def env(self) -> dict[str, str]:
        return self.cli.env


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    mock = MockOAuth().start()
    cli = Cli(tmp_path)
    servers = {"remote": {"type": "http", "url": mock.mcp_url}, "probe": probe_entry()}
    (cli.work / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    # approve both project servers as a user would (the approval store, keyed by the entries' fingerprints)
    loaded = load_mcp_config(cwd=cli.work, home=cli.home, env={"HOME": str(cli.home), "PATH": cli.env["PATH"]})
    store = ApprovalStore.default({"MINI_CLAUDE_STATE_DIR": str(cli.state)})
    for name in servers:
        store.record(cli.work, loaded.servers[name], "approved")
    script = tmp_path / "browser.py"
    script.write_text(BROWSER)
    calls, hold = tmp_path / "browser-calls", tmp_path / "browser-hold"
    cli.env["BROWSER"] = f"{sys.executable} {script} {calls} {hold} %s"
    try:
        yield Project(cli, mock, calls, hold)
    finally:
        cli.close()
        mock.stop()


def _list_rows(p: Project) -> dict[str, dict[str, object]]:
    r = p.cli.run("mcp", "list", "--json")
    assert r.rc == 0, r.stderr
    return {row["name"]: row for row in r.json()}


def _line_of(text: str, name: str) -> str:
    lines = [line for line in text.splitlines() if line.split()[:1] == [name]]
    assert len(lines) == 1, text
    return lines[0]


def test_mcp_list_shows_needs_auth_and_the_other_server_ready(project: Project) -> None:
    r = project.cli.run("mcp", "list")
    assert r.rc == 0, r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    remote = _line_of(r.stdout, "remote")
    assert "needs auth" in remote and "mini-claude mcp login remote" in remote
    probe = _line_of(r.stdout, "probe")
    assert "ready" in probe and "tools" in probe
    rows = _list_rows(project)
    assert rows["remote"]["status"] == "needs-auth" and rows["remote"]["tools"] is None
    assert rows["probe"]["status"] == "ready"


def test_print_mode_uses_the_stdio_server_while_the_remote_one_needs_auth(project: Project) -> None:
    model = project.cli.mock([tool_use("mcp__probe__echo", {"text": "hello"}), answer("done")])
    r = project.cli.run("-p", "--allowedTools", "mcp__probe__echo", "echo hello")
    assert r.rc == 0, r.stderr
    assert r.stdout.strip() == "done"
    assert "Traceback" not in r.stderr
    [result] = tool_results(model)
    assert not result.get("is_error") and "hello" in result_text(result)
    offered = [t["name"] for t in model.requests[0]["body"]["tools"]]
    assert "mcp__probe__echo" in offered
    assert not any(name.startswith("mcp__remote__") for name in offered)


def test_cli_login_then_list_shows_it_ready_with_its_tools(project: Project) -> None:
    r = project.cli.run("mcp", "login", "remote")
    assert r.rc == 0, r.stderr
    assert "Logged in" in r.stdout
    for token in project.mock.tokens:
        assert token not in r.stdout + r.stderr
    r = project.cli.run("mcp", "list")
    assert r.rc == 0, r.stderr
    remote = _line_of(r.stdout, "remote")
    assert "ready" in remote and "1 tool" in remote
    assert "ready" in _line_of(r.stdout, "probe")
    tools = project.cli.run("mcp", "tools", "remote")
    assert tools.rc == 0, tools.stderr
    assert "mcp__remote__whoami" in tools.stdout
    # and the agent can use it now
    model = project.cli.mock([tool_use("mcp__remote__whoami"), answer("done")])
    r = project.cli.run("-p", "--allowedTools", "mcp__remote__whoami", "who am i")
    assert r.rc == 0, r.stderr
    [result] = tool_results(model)
    assert not result.get("is_error") and result_text(result) == "ok"


# ---- the REPL, through a real terminal ---------------------------------------------------------------------------

class Terminal:
    """The REPL under tmux on its own socket in tmp_path (so nothing else's tmux sessions are touched)."""

    def __init__(self, p: Project, tmp_path: Path) -> None:
        self.socket = str(tmp_path / "tmux.sock")
        run = tmp_path / "repl.sh"
        exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in p.env.items())
        run.write_text(f"{exports}cd {shlex.quote(str(p.cli.work))}\nexec {shlex.quote(sys.executable)} "
                       f"-m mini_claude 2>&1\n")
        subprocess.run(["tmux", "-S", self.socket, "new-session", "-d", "-s", "repl", "-x", "160", "-y", "50",
                        f"sh {shlex.quote(str(run))}"], check=True, timeout=10)

    def screen(self) -> str:
        return subprocess.run(["tmux", "-S", self.socket, "capture-pane", "-p", "-J", "-S", "-1000", "-t", "repl"],
                              capture_output=True, text=True, timeout=10).stdout

    def keys(self, *keys: str) -> None:
        subprocess.run(["tmux", "-S", self.socket, "send-keys", "-t", "repl", *keys], check=True, timeout=10)

    def wait_for(self, predicate: Callable[[str], bool], timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            text = self.screen()
            if predicate(text):
                return text
            if time.monotonic() >= deadline:
                raise AssertionError(f"timed out; the screen:\n{text}")
            time.sleep(0.1)

    def close(self) -> None:
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], capture_output=True, timeout=10)


def test_repl_mcp_shows_needs_auth_and_login_restarts_the_server(project: Project, tmp_path: Path) -> None:
    require_program("tmux", "drives the REPL in a real terminal")
    project.cli.mock([answer("unused")])
    project.browser_hold.touch()  # the first login attempt never completes: it is cancelled with Ctrl+C
    term = Terminal(project, tmp_path)
    try:
        term.wait_for(lambda s: "/help for commands" in s)
        term.wait_for(lambda s: "MCP probe: ready" in s and "MCP remote: needs auth" in s)
        term.keys("/mcp", "Enter")
        screen = term.wait_for(lambda s: "/mcp login remote" in s)
        assert "remote: needs auth" in screen and "probe: ready" in screen

        term.keys("/mcp login remote", "Enter")
        term.wait_for(lambda s: project.browser_calls.exists() and "http://" in s and "(Ctrl+C cancels)" in s)
        term.keys("C-c")
        term.wait_for(lambda s: "cancelled" in s)
        assert "Traceback" not in term.screen()

        project.browser_hold.unlink()
        term.keys("/mcp login remote", "Enter")
        term.wait_for(lambda s: "MCP remote: ready (1 tool)" in s)
        term.keys("/mcp", "Enter")

        def last_listing(s: str) -> str:
            return s.rpartition("> /mcp\n")[2]

        # the listing is drawn line by line: wait for both servers' lines before judging it
        screen = term.wait_for(lambda s: "  remote: ready (1 tool)" in last_listing(s)
                               and "  probe: ready" in last_listing(s))
        assert "needs auth" not in last_listing(screen) and "  probe: ready" in last_listing(screen)
        assert project.browser_calls.read_text().count("call") == 2
        for token in project.mock.tokens:
            assert token not in screen

        term.keys("/exit", "Enter")
        term.wait_for(lambda s: "[exited]" in s or subprocess.run(
            ["tmux", "-S", term.socket, "has-session", "-t", "repl"], capture_output=True).returncode != 0,
            timeout=15)
        assert "Traceback" not in screen
    finally:
        term.close()


# ---- the /mcp handler in-process ---------------------------------------------------------------------------------

def _configs(tmp_path: Path, mock: MockOAuth) -> list[ServerConfig]:
    servers = {"remote": {"type": "http", "url": mock.mcp_url}, "probe": probe_entry()}
    loaded = load_mcp_config(cwd=tmp_path, home=tmp_path, env={"PATH": "/usr/bin:/bin"}, strict=True,
                             extra=[json.dumps({"mcpServers": servers})])
    return list(loaded.servers.values())


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


async def test_mcp_command_in_process(tmp_path: Path) -> None:
    mock = MockOAuth().start()
    manager = McpManager(_configs(tmp_path, mock), env=server_env(tmp_path))
    ui_err = io.StringIO()
    ui = TerminalUI(out=io.StringIO(), err=ui_err, rich_output=False)
    manager.start()
    try:
        await manager.wait_started()
        out = io.StringIO()
        await mcp_command(manager, "", ui, out=out)
        assert "remote: needs auth" in out.getvalue() and "/mcp login remote" in out.getvalue()
        assert "probe: ready" in out.getvalue()

        for bad in ("login", "frobnicate remote", "login a b"):
            await mcp_command(manager, bad, ui, out=out)
        await mcp_command(manager, "login nope", ui, out=out)
        await mcp_command(manager, "login probe", ui, out=out)
        warnings = ui_err.getvalue()
        assert warnings.count(MCP_USAGE) == 3
        assert "no MCP server named 'nope' (configured: probe, remote)" in warnings
        assert "'probe' is a stdio server" in warnings

        # a login nobody completes: cancelling it (what Ctrl+C does) closes the redirect listener
        authorizers: list[BrowserAuthorizer] = []

        def waiting(cfg: ServerConfig, stream: IO[str]) -> BrowserAuthorizer:
            authorizers.append(BrowserAuthorizer(0, open_browser=None, out=stream))
            return authorizers[-1]

        out = io.StringIO()
        task = asyncio.ensure_future(mcp_command(manager, "login remote", ui, authorizer_for=waiting, out=out))
        await eventually(lambda: "http://" in out.getvalue(), "the login URL")
        port = authorizers[0].port
        assert port and _port_open(port)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not _port_open(port)
        assert manager.states["remote"].status is ServerStatus.NEEDS_AUTH

        # a headless login restarts the server in this manager: its tools appear
        out = io.StringIO()
        await mcp_command(manager, "login remote", ui, authorizer_for=lambda _c, _o: HeadlessAuthorizer(), out=out)
        assert "remote: ready (1 tool)" in out.getvalue()
        assert "mcp__remote__whoami" in [t.name for t in manager.tools()]

        # logout forgets the tokens and reconnects, so the session shows the truth
        await mcp_command(manager, "logout remote", ui, out=out)
        assert "logged out of MCP server 'remote'" in ui_err.getvalue()
        assert manager.states["remote"].status is ServerStatus.NEEDS_AUTH
        assert not any(t.name.startswith("mcp__remote__") for t in manager.tools())
        await mcp_command(manager, "logout remote", ui, out=out)
        assert "no stored login for MCP server 'remote'" in ui_err.getvalue()
    finally:
        await manager.aclose()
        mock.stop()


async def test_repl_login_sends_nothing_to_an_unapproved_project_server(tmp_path: Path) -> None:
    """`/mcp login NAME` of a project server held for approval (issue 18, finding 10, the REPL's half)."""
    mock = MockOAuth().start()
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"remote": {"type": "http",
                                                                               "url": mock.mcp_url}}}))
    loaded = load_mcp_config(cwd=tmp_path, home=tmp_path / "home", env={"PATH": "/usr/bin:/bin"})
    [config] = loaded.servers.values()
    assert config.needs_project_approval()
    manager = McpManager([config], env=server_env(tmp_path),
                         held={"remote": (ServerStatus.NEEDS_APPROVAL, "not approved")})
    err = io.StringIO()
    manager.start()
    try:
        await manager.wait_started()
        await mcp_command(manager, "login remote", TerminalUI(out=io.StringIO(), err=err, rich_output=False),
                          authorizer_for=lambda cfg, stream: HeadlessAuthorizer(), out=io.StringIO())
        assert "'remote' is a project server that is needs approval: nothing was sent to it" in err.getvalue()
        assert mock.requests == []
    finally:
        await manager.aclose()
        mock.stop()
