"""What a server switched off saves, through the real CLI: once a session has listed its tools (pinned), `mcp list`
shows the switched-off server with what its tools would cost (`tokens_saved` in --json, the same as its
`tool_tokens` when it ran); a server never listed is shown off without a number."""

from __future__ import annotations

import json

from tests.integration.conftest import Cli, answer, probe_entry


def test_mcp_list_shows_what_a_switched_off_server_saves(cli: Cli) -> None:
    entry = probe_entry()
    assert cli.run("mcp", "add", "-s", "user", "probe", "--", entry["command"], *entry["args"]).rc == 0
    never = cli.run("mcp", "disable", "probe", "-s", "project")
    assert never.rc == 0
    [row] = json.loads(cli.run("mcp", "list", "--json").stdout)
    assert row["status"] == "disabled" and "tokens_saved" not in row  # never listed: not known
    assert "server off" in cli.run("mcp", "list").stdout
    assert cli.run("mcp", "enable", "probe", "-s", "project").rc == 0
    cli.mock([answer("hi")])
    assert cli.run("-p", "hi", env={"MINI_CLAUDE_TOOL_SEARCH": "false"}).rc == 0  # a session lists (and pins) them
    [running] = json.loads(cli.run("mcp", "list", "--json", env={"MINI_CLAUDE_TOOL_SEARCH": "false"}).stdout)
    assert cli.run("mcp", "disable", "probe", "-s", "local").rc == 0
    [off] = json.loads(cli.run("mcp", "list", "--json").stdout)
    assert off["status"] == "disabled" and off["tokens_saved"] == running["tool_tokens"], (off, running)
    text = cli.run("mcp", "list").stdout
    assert f"server off (saves ~{off['tokens_saved']} tokens, as last listed)" in text, text
