"""Deferred MCP tools through `mini-claude -p` (real subprocess, real servers, the mock model): with
`MINI_CLAUDE_TOOL_SEARCH=true` the first request carries `tool_search` and the tools' names but no MCP definitions;
what the search finds is sent from the next request on and can be called; a deferred tool called by name without
a search is loaded and run; `auto` keeps a small set loaded; compaction forgets what was found; a `list_changed` refresh
reaches the index."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from mini_claude.models.base import SUMMARY_SYSTEM_PROMPT
from tests.helpers import ROOT, system_text
from tests.integration.conftest import Cli, answer, result_text, tool_results, tool_use
from tests.peers import peer_command

CORPUS_SERVER = ROOT / "bench" / "corpus_server.py"


def everything() -> dict[str, Any]:
    argv = peer_command("PEER_EVERYTHING")
    return {"command": argv[0], "args": argv[1:]}


def _mcp_tools(request: dict[str, Any]) -> list[str]:
    return [t["name"] for t in request["body"].get("tools", []) if t["name"].startswith("mcp__")]


def test_deferred_tools_are_found_and_called(cli: Cli) -> None:
    mock = cli.mock([
        tool_use("ToolSearch", {"query": "total of two numbers"}),
        tool_use("mcp__everything__get-sum", {"a": 17, "b": 25}),
        tool_use("mcp__everything__echo", {"message": "not searched"}),  # loaded on the spot
        answer("done"),
    ])
    config = cli.config_file({"everything": everything()})
    result = cli.run("-p", "add 17 and 25", "--mcp-config", config, "--allowedTools", "mcp__everything",
                     env={"MINI_CLAUDE_TOOL_SEARCH": "true"})
    assert result.rc == 0, result.stderr
    first = mock.requests[0]["body"]
    assert _mcp_tools(mock.requests[0]) == [] and "ToolSearch" in [t["name"] for t in first["tools"]]
    assert "mcp__everything__get-sum" in system_text(first) and "ToolSearch" in system_text(first)
    # what a search loads goes into `tools`; the system prompt stays the same (its cache stays valid)
    assert all(r["body"]["system"] == first["system"] for r in mock.requests[1:])
    found, summed, echoed = (result_text(b) for b in tool_results(mock))
    assert found.splitlines()[0].startswith("mcp__everything__get-sum: ")
    assert "mcp__everything__get-sum" in _mcp_tools(mock.requests[1])
    assert "The sum of 17 and 25 is 42." in summed and "Echo: not searched" in echoed
    assert "mcp__everything__echo" in _mcp_tools(mock.requests[3])


def test_auto_keeps_a_small_tool_set_loaded(cli: Cli) -> None:
    mock = cli.mock([answer("hi"), answer("hi"), answer("hi")])
    config = cli.config_file({"everything": everything()})
    assert cli.run("-p", "hi", "--mcp-config", config).rc == 0  # 17 tools: far below 10% of the window
    assert len(_mcp_tools(mock.requests[0])) == 17 and "ToolSearch" not in str(mock.requests[0]["body"]["tools"])
    small = cli.run("-p", "hi", "--mcp-config", config, env={"MINI_CLAUDE_CONTEXT_TOKENS": "5000"})
    assert small.rc == 0  # the same definitions are over 10% of a 5k window: deferred
    assert _mcp_tools(mock.requests[1]) == []
    everything_sent = cli.run("-p", "hi", "--mcp-config", config,
                              env={"MINI_CLAUDE_CONTEXT_TOKENS": "5000", "MINI_CLAUDE_TOOL_SEARCH": "false"})
    assert everything_sent.rc == 0 and len(_mcp_tools(mock.requests[2])) == 17


def test_near_the_threshold_the_count_endpoint_decides(cli: Cli) -> None:
    """The local estimate (JSON characters / 4) decides far from the threshold; within a factor of 1.5 of it the
    API's count-tokens endpoint is asked, and its count decides (the mock counts `chars_per_token` to a token)."""
    mock = cli.mock([answer("hi")] * 3)
    config = cli.config_file({"everything": everything()})
    assert cli.run("-p", "hi", "--mcp-config", config).rc == 0  # far below 10% of 200k: nothing asked
    assert [r["path"] for r in mock.requests] == ["/v1/messages"] and len(_mcp_tools(mock.requests[0])) == 17
    estimate = sum(len(json.dumps(t, ensure_ascii=False)) for t in mock.requests[0]["body"]["tools"]
                   if t["name"].startswith("mcp__")) // 4
    near = {"MINI_CLAUDE_CONTEXT_TOKENS": str(estimate * 12)}  # the threshold is 1.2 × the estimate: "send them"

    def run() -> dict[str, Any]:
        before = len(mock.requests)
        assert cli.run("-p", "hi", "--mcp-config", config, env=near).rc == 0
        paths = [r["path"] for r in mock.requests[before:]]
        assert paths == ["/v1/messages/count_tokens"] * 2 + ["/v1/messages"], paths
        return mock.requests[-1]

    assert len(_mcp_tools(run())) == 17  # counted as the estimate: still sent
    mock.scenario = replace(mock.scenario, chars_per_token=2.0)  # a tokenizer that counts twice as many
    deferred = run()
    assert _mcp_tools(deferred) == [] and "ToolSearch" in [t["name"] for t in deferred["body"]["tools"]]


def test_always_load_keeps_a_servers_tools(cli: Cli) -> None:
    mock = cli.mock([answer("hi")])
    config = cli.config_file({"everything": {**everything(), "alwaysLoad": True}})
    assert cli.run("-p", "hi", "--mcp-config", config, env={"MINI_CLAUDE_TOOL_SEARCH": "true"}).rc == 0
    assert len(_mcp_tools(mock.requests[0])) == 17


def test_found_tools_are_forgotten_when_the_conversation_is_compacted(cli: Cli) -> None:
    """After compaction a found tool the kept history no longer calls is sent again only once found again."""
    (cli.work / "big.txt").write_text(("x " * 50 + "\n") * 80)  # ~2k tokens a read: clearing results is not enough
    reads = [tool_use("Read", {"file_path": "big.txt"}) for _ in range(12)]
    mock = cli.mock([tool_use("ToolSearch", {"query": "total of two numbers"}),
                     tool_use("mcp__everything__get-sum", {"a": 1, "b": 2}), *reads, answer("done")])
    mock.scenario = type(mock.scenario)(mock.scenario.turns, "test", 12_000)
    config = cli.config_file({"everything": everything()})
    result = cli.run("-p", "sum then read", "--mcp-config", config, "--allowedTools", "mcp__everything",
                     "--max-turns", "50", env={"MINI_CLAUDE_TOOL_SEARCH": "true",
                                               "MINI_CLAUDE_CONTEXT_TOKENS": "12000"}, timeout=120)
    assert result.rc == 0 and result.stdout == "done\n", result.stderr[-2000:]
    worked = [r for r in mock.requests if r["body"].get("system") != SUMMARY_SYSTEM_PROMPT]
    summary_at = next(i for i, r in enumerate(mock.requests) if r["body"].get("system") == SUMMARY_SYSTEM_PROMPT)
    assert "mcp__everything__get-sum" in _mcp_tools(worked[2])  # found: sent from then on
    after = [r for r in mock.requests[summary_at + 1:] if r["body"].get("system") != SUMMARY_SYSTEM_PROMPT]
    assert after and all(_mcp_tools(r) == [] for r in after)  # from the very request after the summary


def _tool(name: str, description: str) -> dict[str, Any]:
    return {"name": name, "description": description, "inputSchema": {"type": "object", "properties": {
        "where": {"type": "string", "description": "A city"}}}}


def test_a_list_changed_refresh_updates_the_index(cli: Cli, tmp_path: Path) -> None:
    first, later = tmp_path / "first.json", tmp_path / "later.json"
    first.write_text(json.dumps({"tools": [_tool("lookup_weather", "Current weather for a city")]}))
    later.write_text(json.dumps({"tools": [_tool("book_flight", "Reserve a seat on an airline flight")]}))
    mock = cli.mock([
        tool_use("mcp__travel__lookup_weather", {"where": "Oslo"}),  # its call makes the server add book_flight
        tool_use("ToolSearch", {"query": "book a flight to Rome"}),
        tool_use("mcp__travel__book_flight", {"where": "Rome"}),
        answer("booked"),
    ])
    config = cli.config_file({"travel": {"command": sys.executable,
                                         "args": [str(CORPUS_SERVER), str(first), "--later", str(later)]}})
    result = cli.run("-p", "weather, then a flight", "--mcp-config", config, "--allowedTools", "mcp__travel",
                     env={"MINI_CLAUDE_TOOL_SEARCH": "true"})
    assert result.rc == 0 and result.stdout == "booked\n", result.stderr
    weather, found, booked = (result_text(b) for b in tool_results(mock))
    assert "Oslo" in weather and found.splitlines()[0].startswith("mcp__travel__book_flight: ")
    assert booked == 'book_flight called with {"where": "Rome"}'
    assert "mcp__travel__book_flight" not in system_text(mock.requests[0]["body"])


NATIVE = {"MINI_CLAUDE_TOOL_SEARCH": "true", "MINI_CLAUDE_TOOL_SEARCH_NATIVE": "1"}
BETA = "advanced-tool-use-2025-11-20"


def _deferred(request: dict[str, Any]) -> list[str]:
    return [t["name"] for t in request["body"].get("tools", []) if t.get("defer_loading")]


def _upfront(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for t in request["body"].get("tools", []) if not t.get("defer_loading")]


def test_native_loading_references_found_tools_and_keeps_the_prefix(cli: Cli) -> None:
    """On Anthropic's API (forced here against the mock) a search answers with `tool_reference` blocks and its
    listing beside them, the found tool is sent with `defer_loading` and the beta header, as Claude Code sends
    them; the tools sent up front and the system prompt stay the same (the prompt cache stays valid)."""
    mock = cli.mock([tool_use("ToolSearch", {"query": "total of two numbers", "max_results": 2}),
                     tool_use("mcp__everything__get-sum", {"a": 17, "b": 25}), answer("done")])
    config = cli.config_file({"everything": everything()})
    result = cli.run("-p", "add 17 and 25", "--mcp-config", config, "--allowedTools", "mcp__everything", env=NATIVE)
    assert result.rc == 0, result.stderr
    first, second, third = mock.requests
    assert _deferred(first) == [] and BETA not in first["headers"].get("anthropic-beta", "")
    for later in (second, third):
        assert "mcp__everything__get-sum" in _deferred(later) and len(_deferred(later)) == 2
        assert BETA in later["headers"]["anthropic-beta"]
        assert _upfront(later) == _upfront(first) and later["body"]["system"] == first["body"]["system"]
    searched = second["body"]["messages"][-1]["content"]
    assert searched[0]["type"] == "tool_result"
    assert sorted(b["tool_name"] for b in searched[0]["content"]) == sorted(_deferred(second))
    assert all(b["type"] == "tool_reference" for b in searched[0]["content"])
    assert searched[1]["type"] == "text" and searched[1]["text"].startswith("mcp__everything__get-sum: ")
    summed = third["body"]["messages"][-1]["content"][0]
    assert "The sum of 17 and 25 is 42." in result_text(summed)


def test_native_loading_refused_falls_back_to_sending_definitions(cli: Cli) -> None:
    """A proxy or API that refuses deferred loading costs one refused request: the same request goes again with the
    found tool sent in full and the references as text, and the session goes on that way."""
    refusal = {"error": {"status": 400, "message": "tools.17.defer_loading: Extra inputs are not permitted"}}
    mock = cli.mock([tool_use("ToolSearch", {"query": "total of two numbers", "max_results": 1}), refusal,
                     tool_use("mcp__everything__get-sum", {"a": 1, "b": 2}), answer("done")])
    config = cli.config_file({"everything": everything()})
    result = cli.run("-p", "add 1 and 2", "--mcp-config", config, "--allowedTools", "mcp__everything", env=NATIVE)
    assert result.rc == 0, result.stderr
    assert "refused deferred tool loading" in result.stderr
    refused, retried, last = mock.requests[1:]
    assert _deferred(refused) == ["mcp__everything__get-sum"]
    for request in (retried, last):
        assert _deferred(request) == [] and "mcp__everything__get-sum" in _mcp_tools(request)
        assert BETA not in request["headers"].get("anthropic-beta", "")
        searched = request["body"]["messages"][2]["content"][0]
        assert searched["content"] == [{"type": "text", "text": "Loaded tool mcp__everything__get-sum."}]
    assert "The sum of 1 and 2 is 3." in result_text(last["body"]["messages"][-1]["content"][0])
