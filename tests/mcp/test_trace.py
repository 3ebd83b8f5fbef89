"""Issue 19: `--mcp-trace FILE` round-trips a session. A real `-p` run (the mock model calls an MCP tool of a real
stdio server) writes every JSON-RPC message both ways, one timestamped JSON line each; read back, the trace holds
the initialize, tools/list and tools/call exchanges in order, matched by id, and no secret."""

from __future__ import annotations

import json
import stat
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from mini_claude.mcp.trace import redact_message
from tests.integration.conftest import Cli, answer, probe_entry, tool_use

pytestmark = pytest.mark.timeout(90)

SECRET = "SECRETVALUE42"
ARGS = {"text": f"see https://user:{SECRET}@example.com/x?token={SECRET} with Bearer {SECRET}",
        "authorization": f"Basic {SECRET}"}



def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _index(lines: list[dict[str, Any]], direction: str, method: str | None = None,
           answer_to: int | None = None) -> int:
    for i, line in enumerate(lines):
        message = line["message"]
        if line["dir"] != direction:
            continue
        if method is not None and message.get("method") == method:
            return i
        if answer_to is not None and "method" not in message and message.get("id") == answer_to:
            return i
    raise AssertionError(f"no {direction} {method or answer_to} in the trace")


def test_a_session_round_trips_through_the_trace(cli: Cli) -> None:
    trace = cli.tmp / "trace.jsonl"
    config = cli.config_file({"probe": probe_entry()})
    cli.mock([tool_use("mcp__probe__echo", ARGS), answer("done")])
    r = cli.run("-p", "go", "--yolo", "--mcp-config", config, "--mcp-trace", str(trace))
    assert r.rc == 0, r.stderr
    assert stat.S_IMODE(trace.stat().st_mode) == 0o600
    text = trace.read_text()
    assert SECRET not in text
    lines = _read(trace)
    assert {line["server"] for line in lines} == {"probe"}
    stamps = [datetime.fromisoformat(line["ts"].replace("Z", "+00:00")) for line in lines]
    assert stamps == sorted(stamps)
    order = []
    for method in ("initialize", "tools/list", "tools/call"):
        sent = _index(lines, "send", method)
        request_id = lines[sent]["message"]["id"]
        order += [sent, _index(lines, "recv", answer_to=request_id)]
        if method == "initialize":
            order.append(_index(lines, "send", "notifications/initialized"))
    assert order == sorted(order), order
    call = lines[_index(lines, "send", "tools/call")]["message"]
    assert call["params"]["name"] == "echo"
    assert call["params"]["arguments"]["authorization"] == "***"
    assert "https://***@example.com/x?token=***" in call["params"]["arguments"]["text"]
    result = lines[_index(lines, "recv", answer_to=call["id"])]["message"]
    assert result["result"]["content"][0]["text"].startswith("probe-echo:echo:see https://***@example.com")


def test_mcp_subcommands_take_the_flag_and_append(cli: Cli) -> None:
    trace = cli.tmp / "trace.jsonl"
    config = cli.config_file({"probe": probe_entry()})
    assert cli.run("mcp", "call", "probe", "echo", '{"text": "one"}', "--mcp-config", config,
                   "--mcp-trace", str(trace)).rc == 0
    first = len(_read(trace))
    assert cli.run("--mcp-trace", str(trace), "mcp", "tools", "probe", "--mcp-config", config).rc == 0
    lines = _read(trace)
    assert len(lines) > first
    assert lines[_index(lines, "send", "tools/call")]["message"]["params"]["arguments"] == {"text": "one"}
    r = cli.run("mcp", "list", "--mcp-config", config, "--mcp-trace", str(cli.tmp / "no" / "dir" / "t.jsonl"))
    assert r.rc == 3 and "--mcp-trace" in r.stderr and "cannot open" in r.stderr


def test_redaction_keeps_counts_and_names() -> None:
    message = {"params": {"progressToken": 7, "_meta": {"maxTokens": 10}, "api_key": "k", "token": None,
                          "nested": [{"client_secret": "s", "note": f"Bearer {SECRET}"}]}}
    assert redact_message(message) == {"params": {"progressToken": 7, "_meta": {"maxTokens": 10}, "api_key": "***",
                                                  "token": None,
                                                  "nested": [{"client_secret": "***", "note": "Bearer ***"}]}}
