"""Self-healing end to end (issue 19): in a `-p` session a stdio server that crashes keeps its tools in the next
model request, and the model's next call to it waits for the background restart and succeeds; the call that
crashed it failed once and reached the server once."""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.conftest import Cli, answer, probe_entry, result_text, tool_results, tool_use


def test_a_crashed_server_keeps_its_tools_and_the_next_call_reaches_it(cli: Cli, tmp_path: Path) -> None:
    calls = tmp_path / "calls.jsonl"
    config = cli.config_file({"a": probe_entry("--calls", str(calls))})
    mock = cli.mock([tool_use("mcp__a__crash"), tool_use("mcp__a__echo", {"text": "again"}), answer("done")])
    result = cli.run("-p", "go", "--mcp-config", config, "--yolo")
    assert result.rc == 0 and result.stdout == "done\n", result.stderr
    crashed, after = tool_results(mock)
    assert crashed.get("is_error") is True and "exited" in result_text(crashed)
    assert {t["name"] for t in mock.requests[1]["body"]["tools"]} >= {"mcp__a__echo", "mcp__a__crash"}
    assert not after.get("is_error") and result_text(after) == "probe-echo:echo:again"
    assert [json.loads(line)["name"] for line in calls.read_text().splitlines()] == ["crash", "echo"]
