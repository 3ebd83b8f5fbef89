"""The MCP host through `mini-claude -p` (a real subprocess, the real SDK against the mock model, server-everything
as a real subprocess): sampling answered by the mock model when the user's config allows it, declined with one
line when nobody can be asked, progress lines on stderr, a task tool driven to completion."""

from __future__ import annotations

import json
import shlex
import sys
from typing import Any

import pytest

from tests.helpers import uncached
from tests.integration.conftest import ROOT, Cli, answer, result_text, tool_results, tool_use
from tests.peers import peer_command

pytestmark = pytest.mark.timeout(120)


def everything(**fields: Any) -> dict[str, Any]:
    argv = peer_command("PEER_EVERYTHING")
    return {"command": argv[0], "args": argv[1:], **fields}


def test_sampling_allowed_by_the_users_config_is_answered_by_the_model(cli: Cli) -> None:
    mock = cli.mock([
        tool_use("mcp__everything__trigger-sampling-request", {"prompt": "capital of France?", "maxTokens": 30}),
        answer("Paris, said the sampled model"),  # this turn answers the server's sampling request
        answer("done"),
    ])
    config = cli.config_file({"everything": everything(sampling="allow")})
    result = cli.run("-p", "ask the server", "--mcp-config", config, "--allowedTools", "mcp__everything")
    assert result.rc == 0, result.stderr
    assert result.stdout.strip() == "done"
    [block] = tool_results(mock)
    assert "Paris, said the sampled model" in result_text(block) and not block.get("is_error")
    sampling = mock.requests[1]["body"]
    assert sampling["system"] == "You are a helpful test server." and sampling["max_tokens"] == 30
    assert "tools" not in sampling  # the server offered none: the agent's own tools are never sent
    assert sampling["messages"][0]["content"][0]["text"].endswith("capital of France?")


def test_sampling_that_would_need_asking_is_declined_in_print_mode_with_one_line(cli: Cli) -> None:
    mock = cli.mock([
        tool_use("mcp__everything__trigger-sampling-request", {"prompt": "x", "maxTokens": 5}),
        answer("ok"),
    ])
    config = cli.config_file({"everything": everything()})  # "sampling" defaults to "ask"
    result = cli.run("-p", "go", "--mcp-config", config, "--allowedTools", "mcp__everything")
    assert result.rc == 0, result.stderr
    assert len(mock.requests) == 2  # the model was never asked to sample
    assert "rejected" in result_text(tool_results(mock)[0]).lower()
    lines = [line for line in result.stderr.splitlines() if "asked the model to answer" in line]
    assert lines == ["MCP server 'everything' asked the model to answer a request; declined (no one to ask in -p; "
                     "set \"sampling\": \"allow\" for it in your MCP config to allow it)"]


def test_progress_lines_and_a_task_in_print_mode(cli: Cli) -> None:
    mock = cli.mock([
        tool_use("mcp__everything__trigger-long-running-operation", {"duration": 4, "steps": 2}),
        tool_use("mcp__everything__simulate-research-query", {"topic": "tides"}),
        answer("done"),
    ])
    config = cli.config_file({"everything": everything()})
    result = cli.run("-p", "go", "--mcp-config", config, "--allowedTools", "mcp__everything", env={"MCP_TOOL_TIMEOUT": "3000"})
    assert result.rc == 0, result.stderr
    long_run, task = tool_results(mock)
    assert "Long running operation completed" in result_text(long_run)
    assert "Research Report: tides" in result_text(task)
    assert "mcp__everything__trigger-long-running-operation [##########..........] 1/2" in result.stderr
    assert "simulate-research-query: task completed" in result.stderr


def test_roots_include_add_dir(cli: Cli) -> None:
    extra = cli.tmp / "extra"
    extra.mkdir()
    mock = cli.mock([tool_use("mcp__everything__get-roots-list"), answer("done")])
    config = cli.config_file({"everything": everything()})
    result = cli.run("-p", "go", "--mcp-config", config, "--allowedTools", "mcp__everything", "--add-dir", str(extra))
    assert result.rc == 0, result.stderr
    listed = result_text(tool_results(mock)[0])
    assert cli.work.resolve().as_uri() in listed and extra.resolve().as_uri() in listed, json.dumps(listed)


def test_a_tool_announced_with_a_result_is_offered_in_the_very_next_request(cli: Cli) -> None:
    """`tools/list_changed` sent just before a tool result is applied before the next model request (a bounded
    wait for the refresh, not a background race), so the model can call the new tool at once."""
    defs = cli.work / "defs.json"
    defs.write_text("[]")
    fresh = [{"name": "fresh", "description": "A new tool.", "inputSchema": {"type": "object"}}]
    mock = cli.mock([
        tool_use("Bash", {"command": f"echo {shlex.quote(json.dumps(fresh))} > defs.json"}),
        tool_use("mcp__pins__announce"),
        tool_use("mcp__pins__fresh", {"n": 1}),
        answer("done"),
    ])
    server = {"command": sys.executable, "args": [str(ROOT / "tests" / "mcp" / "servers" / "pinning_server.py"),
                                                  str(defs)]}
    result = cli.run("-p", "go", "--mcp-config", cli.config_file({"pins": server}), "--yolo")
    assert result.rc == 0, result.stderr
    offered = [[t["name"] for t in r["body"].get("tools", []) if t["name"].startswith("mcp__")]
               for r in mock.requests]
    assert "mcp__pins__fresh" in offered[2], (offered, [result_text(b) for b in tool_results(mock)], result.stderr)
    assert result_text(tool_results(mock)[2]) == 'fresh:{"n": 1}'


ARCHITECTURE = "demo://resource/static/document/architecture.md"


def test_a_prompt_command_sends_the_prompts_messages(cli: Cli) -> None:
    mock = cli.mock([answer("sunny")])
    config = cli.config_file({"everything": everything()})
    result = cli.run("-p", "/mcp__everything__args-prompt city=Paris", "--mcp-config", config)
    assert result.rc == 0, result.stderr
    assert result.stdout.strip() == "sunny"
    assert uncached(mock.requests[0]["body"]["messages"]) == [
        {"role": "user", "content": [{"type": "text", "text": "What's weather in Paris?"}]}]


def test_a_prompt_with_an_embedded_resource_and_positional_arguments(cli: Cli) -> None:
    mock = cli.mock([answer("read it")])
    config = cli.config_file({"everything": everything()})
    result = cli.run("-p", "/mcp__everything__resource-prompt Text 3", "--mcp-config", config)
    assert result.rc == 0, result.stderr
    sent = json.dumps(mock.requests[0]["body"]["messages"])
    assert "Text resource with id: 3" in sent and "Resource 3: This is a plaintext resource" in sent


@pytest.mark.parametrize(("line", "says"), [
    ("/mcp__everything__args-prompt", "missing required argument city (usage: /mcp__everything__args-prompt "
                                      "city [state])"),
    ("/mcp__everything__args-prompt a b c", "too many arguments"),
    ("/mcp__everything__nope", "no MCP prompt /mcp__everything__nope (available: /mcp__everything__simple-prompt"),
])
def test_a_bad_prompt_command_is_refused_before_the_model_is_asked(cli: Cli, line: str, says: str) -> None:
    mock = cli.mock([answer("never")])
    result = cli.run("-p", line, "--mcp-config", cli.config_file({"everything": everything()}))
    assert result.rc == 1 and says in result.stderr and not mock.requests


def test_a_mention_attaches_the_resource(cli: Cli) -> None:
    mock = cli.mock([answer("summarised")])
    config = cli.config_file({"everything": everything()})
    text = f"summarise @everything:{ARCHITECTURE} please, and @everything:demo://nope too"
    result = cli.run("-p", text, "--mcp-config", config)
    assert result.rc == 0, result.stderr
    [message] = mock.requests[0]["body"]["messages"]
    assert message["content"][0] == {"type": "text", "text": text}
    assert message["content"][1]["text"] == f"[Contents of everything resource {ARCHITECTURE}]"
    assert "# Everything Server – Architecture" in message["content"][2]["text"]
    assert "@everything:demo://nope was not attached" in result.stderr


def test_the_model_lists_and_reads_resources(cli: Cli) -> None:
    mock = cli.mock([tool_use("ListMcpResourcesTool", {"server": "everything"}),
                     tool_use("ReadMcpResourceTool", {"server": "everything", "uri": ARCHITECTURE}),
                     answer("done")])
    # a read sends the model's uri to the server: it is that server's tool call, allowed here by name
    result = cli.run("-p", "go", "--mcp-config", cli.config_file({"everything": everything()}),
                     "--allowedTools", "ReadMcpResourceTool(everything)")
    assert result.rc == 0, result.stderr
    listed, read = (result_text(b) for b in tool_results(mock))
    rows = json.loads(listed)
    assert len(rows) == 7 and rows[0]["uri"] == ARCHITECTURE and rows[0]["server"] == "everything"
    assert "# Everything Server – Architecture" in read
    names = [t["name"] for t in mock.requests[0]["body"]["tools"]]
    assert "ListMcpResourcesTool" in names and "ReadMcpResourceTool" in names


def test_without_resources_the_resource_tools_are_not_offered(cli: Cli) -> None:
    mock = cli.mock([answer("ok")])
    assert cli.run("-p", "hi").rc == 0
    assert not {"ListMcpResourcesTool", "ReadMcpResourceTool"} & {t["name"] for t in mock.requests[0]["body"]["tools"]}


def test_mcp_resources_and_read(cli: Cli) -> None:
    config = cli.config_file({"everything": everything()})
    listed = cli.run("mcp", "resources", "everything", "--mcp-config", config)
    assert listed.rc == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0] == f"@everything:{ARCHITECTURE}  architecture.md (text/markdown)"
    assert sum(line.endswith("(template)") for line in lines) == 2 and len(lines) == 9
    read = cli.run("mcp", "read", "everything", ARCHITECTURE, "--mcp-config", config)
    assert read.rc == 0 and read.stdout.startswith("# Everything Server – Architecture"), read.stderr
    missing = cli.run("mcp", "read", "everything", "demo://nope", "--mcp-config", config)
    assert missing.rc == 2 and "mini-claude mcp:" in missing.stderr


def test_disable_and_enable_a_server_for_this_project(cli: Cli) -> None:
    config = cli.config_file({"everything": everything()})
    off = cli.run("mcp", "disable", "everything")
    assert off.rc == 0 and "Disabled MCP server 'everything' for this project" in off.stdout
    claude_json = json.loads((cli.home / ".claude.json").read_text())
    assert claude_json["projects"][str(cli.work.resolve())]["disabledMcpServers"] == ["everything"]
    listed = cli.run("mcp", "list", "--json", "--mcp-config", config)
    [row] = json.loads(listed.stdout)
    assert row["status"] == "disabled" and "mini-claude mcp enable everything" in row["error"]
    mock = cli.mock([answer("no servers")])
    assert cli.run("-p", "hi", "--mcp-config", config).rc == 0
    assert not any(t["name"].startswith("mcp__") for t in mock.requests[0]["body"]["tools"])
    on = cli.run("mcp", "enable", "everything")
    assert on.rc == 0
    [row] = json.loads(cli.run("mcp", "list", "--json", "--mcp-config", config).stdout)
    assert row["status"] == "ready"
    assert json.loads((cli.home / ".claude.json").read_text())["projects"][str(cli.work.resolve())][
        "disabledMcpServers"] == []
