"""Deferred MCP tools through `mini-claude -p` (real subprocess, real servers, the mock model): with
`MINI_CLAUDE_TOOL_SEARCH=true` the first request carries `tool_search` and the tools' names but no MCP definitions;
what the search finds is sent from the next request on and can be called; a deferred tool called by name without
a search is loaded and run; `auto` keeps a small set loaded."""

from __future__ import annotations

from typing import Any

from tests.integration.conftest import Cli, answer, result_text, tool_results, tool_use
from tests.peers import peer_command


def everything() -> dict[str, Any]:
    argv = peer_command("PEER_EVERYTHING")
    return {"command": argv[0], "args": argv[1:]}


def _mcp_tools(request: dict[str, Any]) -> list[str]:
    return [t["name"] for t in request["body"].get("tools", []) if t["name"].startswith("mcp__")]


def test_deferred_tools_are_found_and_called(cli: Cli) -> None:
    mock = cli.mock([
        tool_use("tool_search", {"query": "total of two numbers"}),
        tool_use("mcp__everything__get-sum", {"a": 17, "b": 25}),
        tool_use("mcp__everything__echo", {"message": "not searched"}),  # loaded on the spot
        answer("done"),
    ])
    config = cli.config_file({"everything": everything()})
    result = cli.run("-p", "add 17 and 25", "--mcp-config", config, "--allowedTools", "mcp__everything",
                     env={"MINI_CLAUDE_TOOL_SEARCH": "true"})
    assert result.rc == 0, result.stderr
    first = mock.requests[0]["body"]
    assert _mcp_tools(mock.requests[0]) == [] and "tool_search" in [t["name"] for t in first["tools"]]
    assert "mcp__everything__get-sum" in first["system"] and "tool_search" in first["system"]
    found, summed, echoed = (result_text(b) for b in tool_results(mock))
    assert found.splitlines()[0].startswith("mcp__everything__get-sum: ")
    assert "mcp__everything__get-sum" in _mcp_tools(mock.requests[1])
    assert "The sum of 17 and 25 is 42." in summed and "Echo: not searched" in echoed
    assert "mcp__everything__echo" in _mcp_tools(mock.requests[3])


def test_auto_keeps_a_small_tool_set_loaded(cli: Cli) -> None:
    mock = cli.mock([answer("hi"), answer("hi")])
    config = cli.config_file({"everything": everything()})
    assert cli.run("-p", "hi", "--mcp-config", config).rc == 0  # 17 tools: far below 10% of the window
    assert len(_mcp_tools(mock.requests[0])) == 17 and "tool_search" not in str(mock.requests[0]["body"]["tools"])
    small = cli.run("-p", "hi", "--mcp-config", config, env={"MINI_CLAUDE_CONTEXT_TOKENS": "5000"})
    assert small.rc == 0  # the same definitions are over 10% of a 5k window: deferred
    assert _mcp_tools(mock.requests[1]) == []


def test_always_load_keeps_a_servers_tools(cli: Cli) -> None:
    mock = cli.mock([answer("hi")])
    config = cli.config_file({"everything": {**everything(), "alwaysLoad": True}})
    assert cli.run("-p", "hi", "--mcp-config", config, env={"MINI_CLAUDE_TOOL_SEARCH": "true"}).rc == 0
    assert len(_mcp_tools(mock.requests[0])) == 17
