"""MCP Apps tools (`_meta.ui`, extension `io.modelcontextprotocol/ui`) as the npm example servers list them: a tool
whose visibility leaves out "model" is for the server's own view and never reaches the model — not in a request's
tools, not callable by name — whether or not the Apps host half is on (servers list such tools to every client).
A real stdio server (tests/mcp/servers/apps_server.py) and the real CLI against the mock model."""

from __future__ import annotations

import sys

from tests.integration.conftest import ROOT, Cli, answer, result_text, tool_results, tool_use

SERVER = {"apps": {"command": sys.executable, "args": [str(ROOT / "tests" / "mcp" / "servers" / "apps_server.py")]}}


def test_an_app_only_tool_never_reaches_the_model(cli: Cli) -> None:
    mock = cli.mock([tool_use("mcp__apps__refresh"), tool_use("mcp__apps__show_board"), answer("done")])
    result = cli.run("-p", "show the board", "--mcp-config", cli.config_file(SERVER),
                     "--allowedTools", "mcp__apps__refresh", "mcp__apps__show_board")
    assert result.rc == 0, result.stderr
    names = [tool["name"] for tool in mock.requests[0]["body"]["tools"]]
    assert "mcp__apps__show_board" in names and "mcp__apps__plain" in names
    assert "mcp__apps__refresh" not in names
    refused, shown = tool_results(mock)
    assert refused["is_error"] is True and "refreshed" not in result_text(refused)
    assert shown.get("is_error") is not True and result_text(shown) == "board shown"
