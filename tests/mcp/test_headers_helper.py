"""`headersHelper`: the command's JSON headers (and its failures), its process group on timeout, its headers on the
wire overriding static ones, and the one re-run after a 401 — real shell commands, loopback servers."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from test_http_transport import ScriptedHandler, init_result, is_notification, scripted

from mini_claude.errors import HttpStatusError, TransportError
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.config import ServerConfig
from mini_claude.mcp.connect import build_transport
from mini_claude.mcp.transports.headers_helper import HeadersHelper
from mini_claude.mcp.transports.http import StreamableHttpTransport
from tests.helpers import wait_gone

pytestmark = pytest.mark.timeout(60)

PY = sys.executable
SECRET = "s3cr3t-value"


def helper(command: str, **kw: Any) -> HeadersHelper:
    return HeadersHelper(command, server="gh", url="https://example.test/mcp", env=dict(os.environ), **kw)


async def test_prints_headers_with_server_name_and_url_in_env() -> None:
    script = ("import json, os; print(json.dumps({'X-Name': os.environ['CLAUDE_CODE_MCP_SERVER_NAME'], "
              "'X-Url': os.environ['CLAUDE_CODE_MCP_SERVER_URL']}))")
    assert await helper(f"{PY} -c \"{script}\"").run() == {"X-Name": "gh", "X-Url": "https://example.test/mcp"}


@pytest.mark.parametrize(("command", "problem"), [
    ("exit 3", "the command exited with code 3"),
    (f"echo 'not json {SECRET}'", "output is not JSON"),
    ("echo '[1, 2]'", "output must be a JSON object of string headers, got array"),
    (f"echo '{{\"A\": \"{SECRET}\", \"B\": 5}}'", "header 'B' must be a string, got number"),
    ("echo '{\"A\": \"line\\\\nbreak\"}'", "the value of header 'A' holds a line break"),
    ("echo '{\"Bad Name\": \"x\"}'", "'Bad Name' is not a valid header name"),
])
async def test_failures_name_the_key_and_never_the_values(command: str, problem: str) -> None:
    with pytest.raises(TransportError) as info:
        await helper(command).run()
    text = str(info.value)
    assert "mcpServers.gh.headersHelper: " in text and problem in text
    assert SECRET not in text and "\n" not in text
    assert info.value.server == "gh"


async def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    started = time.monotonic()
    with pytest.raises(TransportError, match=r"headersHelper: no answer within 0.5s \(killed\)"):
        await helper(f"sleep 30 & echo $! > {pid_file}; wait", timeout_s=0.5).run()
    assert time.monotonic() - started < 3
    child = int(pid_file.read_text())
    assert await wait_gone(child), f"pid {child} survived"  # the kill lands at once; init may reap it later


def recording_server(accept: set[str]):
    """Serves initialize / tools/list to requests whose Authorization is in `accept`, 401 to others."""
    def behaviour(handler: ScriptedHandler, verb: str, body: Any) -> None:
        if handler.headers.get("Authorization") not in accept:
            handler.reply(401, b"unauthorized")
        elif verb != "POST":
            handler.reply(405)
        elif is_notification(body):
            handler.reply(202)
        elif body["method"] == "initialize":
            handler.reply_json(init_result(body))
        else:
            handler.reply_json({"jsonrpc": "2.0", "id": body["id"], "result": {"tools": []}})

    return behaviour


async def test_helper_headers_override_static_ones_on_the_wire(tmp_path: Path) -> None:
    with scripted(recording_server({"Bearer from-helper"})) as server:
        cfg = ServerConfig(name="gh", type="http", url=server.url, headers={"Authorization": "Bearer static",
                                                                             "X-Static": "1"},
                           headers_helper="echo '{\"Authorization\": \"Bearer from-helper\"}'")
        client = McpClient(build_transport(cfg, dict(os.environ)), name="gh", protocol_version="2025-06-18")
        await client.connect(timeout_s=10)
        assert await client.list_tools() == []
        await client.close()
    posts = [headers for verb, headers, _ in server.log if verb == "POST"]
    assert posts and all(h["Authorization"] == "Bearer from-helper" and h["X-Static"] == "1" for h in posts)


async def test_helper_runs_again_once_after_a_401(tmp_path: Path) -> None:
    counter = tmp_path / "runs"
    # the first run prints an expired token, later runs a fresh one
    command = (f"n=$(cat {counter} 2>/dev/null || echo 0); echo $((n+1)) > {counter}; "
               "if [ $n -eq 0 ]; then t=old; else t=new; fi; echo \"{\\\"Authorization\\\": \\\"Bearer $t\\\"}\"")
    with scripted(recording_server({"Bearer new"})) as server:
        transport = StreamableHttpTransport(server.url, server="gh", headers_helper=helper(command))
        client = McpClient(transport, name="gh", protocol_version="2025-06-18")
        await client.connect(timeout_s=10)
        await client.close()
    assert counter.read_text().strip() == "2"
    assert [h.get("Authorization") for _, h, _ in server.log][:2] == ["Bearer old", "Bearer new"]


async def test_a_401_the_rerun_does_not_fix_fails_without_looping(tmp_path: Path) -> None:
    counter = tmp_path / "runs"
    command = f"echo x >> {counter}; echo '{{\"Authorization\": \"Bearer never\"}}'"
    with scripted(recording_server(set())) as server:
        transport = StreamableHttpTransport(server.url, server="gh", headers_helper=helper(command))
        client = McpClient(transport, name="gh", protocol_version="2025-06-18")
        with pytest.raises(HttpStatusError, match="HTTP 401"):
            await client.connect(timeout_s=10)
    assert len(counter.read_text().split()) == 2 and len(server.log) == 2


async def test_a_failing_helper_fails_start_with_its_key() -> None:
    transport = StreamableHttpTransport("http://127.0.0.1:9/mcp", server="gh", headers_helper=helper("exit 1"))
    client = McpClient(transport, name="gh")
    with pytest.raises(TransportError, match=r"mcpServers\.gh\.headersHelper: the command exited with code 1"):
        await client.connect(timeout_s=10)


# ---- review findings 5, 11, 12 -----------------------------------------------------------------------------------


async def test_helper_reruns_before_oauth_on_a_401_through_the_factory(tmp_path: Path) -> None:
    """The factory gives every http server an OAuth provider: a 401 (even with a Bearer challenge) must re-run the
    helper first, and the fresh token must be enough (no OAuth flow, no needs-auth)."""
    counter = tmp_path / "runs"
    command = (f"n=$(cat {counter} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {counter}; "
               "echo \"{\\\"X-Token\\\": \\\"t$n\\\"}\"")

    def behaviour(handler: ScriptedHandler, verb: str, body: Any) -> None:
        if handler.headers.get("X-Token") != "t2":
            handler.reply(401, b"expired", headers={"WWW-Authenticate": 'Bearer error="invalid_token"'})
        elif verb != "POST":
            handler.reply(405)
        elif is_notification(body):
            handler.reply(202)
        elif body["method"] == "initialize":
            handler.reply_json(init_result(body))
        else:
            handler.reply_json({"jsonrpc": "2.0", "id": body["id"], "result": {"tools": []}})

    env = dict(os.environ, MINI_CLAUDE_STATE_DIR=str(tmp_path / "state"))
    with scripted(behaviour) as server:
        cfg = ServerConfig(name="gh", type="http", url=server.url, headers_helper=command,
                           protocol_version="2025-06-18")
        client = McpClient(build_transport(cfg, env), name="gh", protocol_version="2025-06-18")
        await client.connect(timeout_s=10)
        try:
            assert await client.list_tools() == []
        finally:
            await client.close()
    assert counter.read_text().strip() == "2"
    assert [h.get("X-Token") for _, h, _ in server.log][:2] == ["t1", "t2"]
    assert not any(path.startswith("/.well-known") for path in server.paths)  # OAuth was never asked


async def test_timeout_kills_a_background_child_holding_stdout_after_the_shell_exited(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    with pytest.raises(TransportError, match=r"no answer within 0.5s \(killed\)"):
        await helper(f"sleep 30 & echo $! > {pid_file}; echo '{{}}'", timeout_s=0.5).run()
    child = int(pid_file.read_text())
    assert await wait_gone(child), f"pid {child} survived"


async def test_stderr_never_reaches_the_error(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("DEBUG", logger="mini_claude.mcp.transports.headers_helper")
    with pytest.raises(TransportError) as info:
        await helper(f"echo 'token {SECRET} refused' >&2; exit 2").run()
    text = str(info.value)
    assert "the command exited with code 2" in text and "debug log" in text
    assert SECRET not in text
    assert SECRET in caplog.text  # kept for debugging, at debug level only
    assert all(record.levelname == "DEBUG" for record in caplog.records if SECRET in record.getMessage())
