"""A session starts its servers before it imports and builds its agent half (session/start.py, issue 19's fleet
start): a server that samples while the agent does not exist yet is answered by the session's model, and an error
while the agent half is built stops the servers already started, each child reaped."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

import mini_claude.session.agent_half as session_agent
import mini_claude.session.start as session_module
from mini_claude.cli.main import build_parser
from mini_claude.cli.session_args import options_from_args
from mini_claude.cli.terminal.render import TerminalUI
from mini_claude.mcp.manager import McpManager, ServerStatus
from tests.helpers import assert_pid_gone, eventually, session_home
from tests.integration.conftest import PROBE, Cli, answer

pytestmark = pytest.mark.timeout(90)

# Samples as soon as it is initialized and answers tools/list only once the sample is back, so the session's first
# model request cannot leave before the sampling request was answered (or refused).
SAMPLES_AT_START = r'''
import json, sys
out = sys.argv[1]
listing, sampled = None, False

def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()

def tools(request_id):
    send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": [
        {"name": "noop", "description": "does nothing", "inputSchema": {"type": "object"}}]}})

for line in sys.stdin:
    message = json.loads(line)
    method = message.get("method")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": message["id"], "result": {
            "protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
            "serverInfo": {"name": "early", "version": "1"}}})
    elif method == "notifications/initialized":
        send({"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage", "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": "say hello"}}], "maxTokens": 50}})
    elif method == "tools/list":
        if sampled:
            tools(message["id"])
        else:
            listing = message["id"]
    elif method is None and message.get("id") == "s1":
        with open(out, "w") as handle:
            json.dump(message, handle)
        sampled = True
        if listing is not None:
            tools(listing)
    elif method is not None and "id" in message:
        send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no " + method}})
'''


def test_a_server_sampling_while_the_agent_half_is_imported_is_answered_by_the_model(cli: Cli,
                                                                                     tmp_path: Path) -> None:
    script, sampled = tmp_path / "samples_at_start.py", tmp_path / "sampled.json"
    script.write_text(SAMPLES_AT_START)
    config = cli.config_file({"early": {"command": sys.executable, "args": [str(script), str(sampled)],
                                        "sampling": "allow"}})
    mock = cli.mock([answer("hello from the model"), answer("done")])
    result = cli.run("-p", "hi", "--mcp-config", config)
    assert result.rc == 0 and result.stdout == "done\n", result.stderr
    reply = json.loads(sampled.read_text())
    assert "error" not in reply, reply
    assert reply["result"]["content"] == {"type": "text", "text": "hello from the model"}
    sampling_request, first_turn = (request["body"] for request in mock.requests)
    assert not sampling_request.get("tools") and "mcp__early__noop" in {t["name"] for t in first_turn["tools"]}


async def test_an_error_while_the_agent_half_is_built_stops_the_started_servers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pids = tmp_path / "pids"
    session_home(tmp_path, monkeypatch,
                 {"probe": {"command": sys.executable, "args": [str(PROBE), "--pidfile", str(pids)]}})
    managers: list[McpManager] = []
    start = McpManager.start

    def recording_start(self: McpManager) -> None:
        managers.append(self)
        start(self)

    async def imported_once_the_server_is_up(*modules: str, **_: Any) -> None:
        # the agent half's import, stretched until the server is ready, so it did start before the failure
        await eventually(lambda: managers[0].states["probe"].status is ServerStatus.READY, "the server ready",
                         within_s=30)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the agent half could not be built")

    monkeypatch.setattr(McpManager, "start", recording_start)
    monkeypatch.setattr("mini_claude.session.preload.import_in_background", imported_once_the_server_is_up)
    monkeypatch.setattr(session_agent, "rest_of_session", broken)
    ui = TerminalUI(print_mode=True, out=io.StringIO(), err=io.StringIO())
    with pytest.raises(RuntimeError, match="could not be built"):
        await session_module.start_session(options_from_args(build_parser().parse_args([]), Path.cwd()), ui)
    [pid] = [int(line) for line in pids.read_text().split()]
    assert_pid_gone(pid, within_s=5)
