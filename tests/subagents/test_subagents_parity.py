"""Sub-agents end to end (issue 21, acceptance 1 and 2): each scenario runs `-p --output-format json` against the
scripted mock model, once with mini-claude and once with Claude Code's own binary, with the same assertions —
what each model request offered, what the child ran (real files, a real MCP server subprocess, real bash), what
the parent received, and the json result.

The mock serves one list of turns to every request in arrival order, parent and children alike; where two children
run at once, their turns are identical, so the order they arrive in does not matter.

Differences found (the assertions branch on `client` only there):

* num_turns: mini-claude counts the sub-agents' model requests in it (the issue asks for that); Claude Code 2.1.197
  counts the main agent's turns only. Both count the children's usage in `total_cost_usd`, not in `usage`.
* the tool result: Claude Code adds a second text block (`agentId: …` for its SendMessage tool, and token counts);
  mini-claude sends the child's report alone.
* a restricted child's refused tool: the same words ("No such tool available: X. X exists but is not enabled …").
* nesting: Claude Code 2.1.197 offers `Agent` to a general-purpose child, and a child's call of it runs a grandchild;
  mini-claude keeps one level (a sub-agent cannot start another: no unbounded recursion of agents), so the general-purpose child's tools are compared without it (`test_a_subagent_cannot_start_another`).
* Explore: Claude Code's keeps Bash; mini-claude's is offered read-only tools only and its gate refuses any other
  (`test_explore_is_offered_read_only_tools_only`).
* SubagentStop's payload: both add `agent_id` and `agent_type` (the matcher is the agent type); Claude Code also
  sends `agent_transcript_path`, a child transcript mini-claude does not keep.
* trust: Claude Code's `-p` loads a repository's agent files with their `model`; mini-claude loads them in an
  untrusted folder too but ignores their `model` until the folder is trusted (`test_an_untrusted_repositorys_...`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mini_claude.models.base import Usage
from mini_claude.models.factory import resolve_alias
from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.pricing import cost_usd
from mini_claude.models.scenario import parse_scenario
from tests.hooks.test_hooks_claude_code_parity import hooks, logged, recorder, result_text
from tests.integration.conftest import PROBE, sent_tool_results
from tests.parity import CLIENTS, RUN_TIMEOUT_S, client_argv

pytestmark = pytest.mark.timeout(180)

# a barrier both children must reach: each waits (bounded) until the other has arrived
BARRIER = ("mkdir -p arrivals && touch arrivals/$$ && for i in $(seq 300); do "
           "[ $(ls arrivals | wc -l) -ge 2 ] && echo met && exit 0; sleep 0.05; done; echo alone")


@dataclass
class Run:
    result: dict[str, Any]
    requests: list[dict[str, Any]]
    work: Path
    stderr: str

    def tools_of(self, index: int) -> list[str]:
        return [t["name"] for t in self.requests[index]["body"].get("tools", [])]

    def tool_results(self) -> list[dict[str, Any]]:
        return sent_tool_results(self.requests)

    def system_text(self, index: int) -> str:
        system = self.requests[index]["body"].get("system", "")
        return system if isinstance(system, str) else "".join(b.get("text", "") for b in system)


def call(client: str, *blocks: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """A scripted turn calling tools (both clients have Claude Code's tool names and input keys)."""
    content = []
    for tool, args in blocks:
        content.append({"type": "tool_use", "name": tool, "input": args})
    return {"content": content}


def answer(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def agent(prompt: str, kind: str | None = None, description: str = "a task") -> tuple[str, dict[str, Any]]:
    args = {"description": description, "prompt": prompt}
    return ("Agent", {**args, "subagent_type": kind} if kind else args)


def run(client: str, tmp: Path, turns: list[dict[str, Any]], *args: str, agents: dict[str, str] | None = None,
        servers: dict[str, Any] | None = None, settings: dict[str, Any] | None = None,
        files: dict[str, str] | None = None, env_extra: dict[str, str] | None = None) -> Run:
    home, work = tmp / "home", tmp / "work"
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    for name, text in (files or {}).items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text)
    (work / ".claude" / "agents").mkdir(parents=True, exist_ok=True)
    (home / ".claude" / "settings.json").write_text(json.dumps(settings or {}))
    for name, text in (agents or {}).items():
        (work / ".claude" / "agents" / f"{name}.md").write_text(text)
    extra: list[str] = []
    if servers:
        (tmp / "servers.json").write_text(json.dumps({"mcpServers": servers}))
        extra = ["--mcp-config", str(tmp / "servers.json")]
    mock = MockModelServer(parse_scenario({"turns": [*turns, answer("(unused)")]}, source="subagents"))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "ANTHROPIC_API_KEY": "x",
           "ANTHROPIC_BASE_URL": mock.start(), "MCP_TIMEOUT": "20000", **(env_extra or {})}
    argv = client_argv(client, env, tmp)
    try:
        proc = subprocess.run([*argv, "-p", "go", "--output-format", "json", *extra, *args], cwd=work, env=env,
                              capture_output=True, text=True, timeout=RUN_TIMEOUT_S, stdin=subprocess.DEVNULL)
    finally:
        mock.stop()
    assert proc.stdout.strip(), f"{client} printed no result (exit {proc.returncode}): {proc.stderr[-2000:]}"
    return Run(json.loads(proc.stdout), mock.requests, work, proc.stderr)


def child_requests(r: Run) -> list[int]:
    """The indexes of the requests a sub-agent made (its first message is its prompt, not the user's `go`)."""
    return [i for i, req in enumerate(r.requests) if _is_child(req)]


def _is_child(request: dict[str, Any]) -> bool:
    first = request["body"]["messages"][0]["content"]
    texts = [first] if isinstance(first, str) else [b.get("text", "") for b in first if isinstance(b, dict)]
    return not any(t.strip() == "go" for t in texts)


RESTRICTED = ("---\nname: pinger\ndescription: Pings the probe server\ntools: Read, mcp__probe__echo\n---\n"
              "You are PINGER. Call the echo tool and report what it said.\n")


@CLIENTS
def test_restricted_type_calls_the_parents_mcp_server(client: str, tmp_path: Path) -> None:
    calls = tmp_path / "calls.log"
    servers = {"probe": {"command": sys.executable, "args": [str(PROBE), "--calls", str(calls)]}}
    r = run(client, tmp_path, [
        call(client, agent("ping the server", "pinger")),
        call(client, ("mcp__probe__echo", {"text": "from-child"})),
        call(client, ("Bash", {"command": "touch escaped"})),
        answer("CHILD SAYS {{last_tool_result}}"),
        answer("parent done"),
    ], "--allowedTools", "mcp__probe__echo", agents={"pinger": RESTRICTED}, servers=servers)
    assert r.result["result"] == "parent done"
    children = child_requests(r)
    assert len(children) == 3
    offered = {t for i in children for t in r.tools_of(i)}
    ours = {"Read", "mcp__probe__echo"}
    assert offered == ours  # exactly its list: no Bash, no Agent, no other server tool
    assert "You are PINGER." in r.system_text(children[0])
    # the MCP tool really ran in the parent's server process
    assert [json.loads(line) for line in calls.read_text().splitlines()] == [
        {"name": "echo", "arguments": {"text": "from-child"}}]
    results = r.tool_results()
    echo, refused, report = results
    assert result_text(echo) == "probe-echo:echo:from-child" and not echo.get("is_error")
    bash = "Bash"
    assert refused.get("is_error") is True
    assert f"No such tool available: {bash}. {bash} exists but is not enabled" in result_text(refused)
    assert not (r.work / "escaped").exists()
    assert result_text(report).startswith("CHILD SAYS ")
    assert "exists but is not enabled" in result_text(report)  # the child's last tool result, relayed


@CLIENTS
def test_two_subagents_run_in_parallel(client: str, tmp_path: Path) -> None:
    r = run(client, tmp_path, [
        call(client, agent("first half", "general-purpose", "one"), agent("second half", None, "two")),
        call(client, ("Bash", {"command": BARRIER})),
        call(client, ("Bash", {"command": BARRIER})),
        answer("REPORT {{last_tool_result}}"),
        answer("REPORT {{last_tool_result}}"),
        answer("parent done"),
    ], "--allowedTools", "Bash")
    assert r.result["result"] == "parent done"
    # both children reached the barrier while the other was there: they ran at the same time
    barrier = [b for b in r.tool_results() if result_text(b).strip() in ("met", "alone")]
    assert [result_text(b).strip() for b in barrier] == ["met", "met"]
    reports = [b for b in r.tool_results() if result_text(b).startswith("REPORT")]
    assert len(reports) == 2 and all(result_text(b).startswith("REPORT met") for b in reports)
    assert len(list((r.work / "arrivals").iterdir())) == 2
    # a general-purpose child: the parent's tools, but for the Agent tool where mini-claude never nests
    children = child_requests(r)
    assert len(children) == 4
    parent_tools = set(r.tools_of(0))
    for i in children:
        assert set(r.tools_of(i)) - {"Agent"} <= parent_tools
        assert ("Agent" in r.tools_of(i)) is (client == "claude-code")


@CLIENTS
def test_denial_inside_a_subagent(client: str, tmp_path: Path) -> None:
    r = run(client, tmp_path, [
        call(client, agent("make a file", "general-purpose")),
        call(client, ("Bash", {"command": "touch made"})),
        answer("could not: {{last_tool_result}}"),
        answer("parent done"),
    ])
    assert not (r.work / "made").exists()
    denied, report = r.tool_results()
    assert denied.get("is_error") is True
    assert result_text(report).startswith("could not: ")
    bash = "Bash"
    [denial] = r.result["permission_denials"]
    assert denial["tool_name"] == bash and denial["tool_use_id"] == denied["tool_use_id"]
    assert denial["tool_input"] == {"command": "touch made"}
    if client == "mini-claude":  # the user sees whose call it was
        assert "general-purpose › Bash" in r.stderr and "permission denied for Bash" in r.stderr


# the ids Claude Code 2.1.197 (the parity binary) sends for its aliases; ours are 2.1.328's (models/catalog.py)
CLAUDE_CODE_197_IDS = {"opus": "claude-opus-4-8", "sonnet": "claude-sonnet-5", "haiku": "claude-haiku-4-5-20251001"}


def alias_id(client: str, alias: str) -> str:
    return resolve_alias(alias, {}) if client == "mini-claude" else CLAUDE_CODE_197_IDS[alias]


def usage_of(usage: dict[str, Any]) -> Usage:
    """A json result's `usage` as Usage (cache reads and writes included)."""
    return Usage(usage["input_tokens"], usage["output_tokens"], usage.get("cache_read_input_tokens", 0),
                 usage.get("cache_creation_input_tokens", 0))


@CLIENTS
def test_turns_and_cost_count_the_subagent(client: str, tmp_path: Path) -> None:
    r = run(client, tmp_path, [
        call(client, agent("read it", "general-purpose")),
        call(client, ("Read", {"file_path": str(tmp_path / "work" / "notes.txt")})),
        answer("the notes say {{last_tool_result}}"),
        answer("parent done"),
    ], files={"notes.txt": "forty-two\n"})
    assert "forty-two" in result_text(r.tool_results()[-1])
    children = child_requests(r)
    assert len(children) == 2
    assert r.result["num_turns"] == (2 + 2 if client == "mini-claude" else 2)
    model = r.requests[0]["body"]["model"]
    parent_cost = cost_usd(model, usage_of(r.result["usage"]))
    # the mock counts a request's input as its JSON characters / 4 (mock_server.py), part of it maybe read from
    # the prompt cache or written to it: the cost lies between all of it read and all of it written
    child_inputs = sum(max(1, len(json.dumps(r.requests[i]["body"])) // 4) for i in children)
    low = cost_usd(model, Usage(0, 2, child_inputs, 0))
    high = cost_usd(model, Usage(0, 2000, 0, child_inputs))
    assert parent_cost + low <= r.result["total_cost_usd"] + 1e-6 <= parent_cost + high + 2e-6


@CLIENTS
def test_subagent_stop_fires_and_the_childs_prompt_is_no_user_prompt(client: str, tmp_path: Path) -> None:
    settings = {"hooks": {**hooks("SubagentStop", recorder(tmp_path, "substop")),
                          **hooks("Stop", recorder(tmp_path, "stop")),
                          **hooks("UserPromptSubmit", recorder(tmp_path, "prompt"))}}
    r = run(client, tmp_path, [call(client, agent("say hi", "general-purpose")), answer("CHILD: hi"),
                               answer("parent done")], settings=settings)
    assert r.result["result"] == "parent done"
    [sub] = logged(tmp_path, "substop")
    assert sub["hook_event_name"] == "SubagentStop" and sub["stop_hook_active"] is False
    assert sub["agent_type"] == "general-purpose" and isinstance(sub["agent_id"], str) and sub["agent_id"]
    [stop] = logged(tmp_path, "stop")
    assert stop["hook_event_name"] == "Stop"
    [prompt] = logged(tmp_path, "prompt")  # the user's `go` only, not the prompt the model gave the child
    assert prompt["prompt"] == "go"


@CLIENTS
def test_a_types_model_is_the_childs(client: str, tmp_path: Path) -> None:
    (tmp_path / "home" / ".claude" / "agents").mkdir(parents=True)
    (tmp_path / "home" / ".claude" / "agents" / "quick.md").write_text(
        "---\nname: quick\ndescription: a quick one\nmodel: haiku\n---\nBe quick.\n")
    r = run(client, tmp_path, [call(client, agent("be quick", "quick")), answer("quick report"),
                               answer("parent done")])
    [child] = child_requests(r)
    haiku, main = alias_id(client, "haiku"), r.requests[0]["body"]["model"]
    assert r.requests[child]["body"]["model"] == haiku != main
    # the child's request is priced at its own model's rates (its input read from the cache or written to it)
    parent_cost = cost_usd(main, usage_of(r.result["usage"]))
    child_input = max(1, len(json.dumps(r.requests[child]["body"])) // 4)
    low, high = cost_usd(haiku, Usage(0, 2, child_input, 0)), cost_usd(haiku, Usage(0, 2000, 0, child_input))
    assert parent_cost + low <= r.result["total_cost_usd"] + 1e-6 <= parent_cost + high + 2e-6


def test_an_untrusted_repositorys_model_is_not_used(tmp_path: Path) -> None:
    costly = "---\nname: costly\ndescription: picks its model\nmodel: opus\n---\nSpend.\n"
    r = run("mini-claude", tmp_path, [call("mini-claude", agent("spend", "costly")), answer("spent"),
                                      answer("parent done")], "--model", "sonnet",  # the default is opus
            agents={"costly": costly})
    [child] = child_requests(r)
    assert r.requests[child]["body"]["model"] == r.requests[0]["body"]["model"] != resolve_alias("opus", {})
    assert "costly.md: `model: opus` ignored (the session's model is used) until the folder is trusted" in r.stderr


def test_a_listed_mcp_tool_is_offered_whole_while_the_parent_defers_it(tmp_path: Path) -> None:
    calls = tmp_path / "calls.log"
    servers = {"probe": {"command": sys.executable, "args": [str(PROBE), "--calls", str(calls)]}}
    r = run("mini-claude", tmp_path, [
        call("mini-claude", agent("ping the server", "pinger")),
        call("mini-claude", ("mcp__probe__echo", {"text": "deferred"})),
        answer("CHILD SAYS {{last_tool_result}}"),
        answer("parent done"),
    ], "--allowedTools", "mcp__probe__echo", agents={"pinger": RESTRICTED}, servers=servers,
        env_extra={"MINI_CLAUDE_TOOL_SEARCH": "true"})
    assert "mcp__probe__echo" not in r.tools_of(0) and "ToolSearch" in r.tools_of(0)  # the parent defers it
    [first, _] = child_requests(r)
    assert sorted(r.tools_of(first)) == ["Read", "mcp__probe__echo"]
    specs = {t["name"]: t for t in r.requests[first]["body"]["tools"]}
    assert "defer_loading" not in specs["mcp__probe__echo"] and specs["mcp__probe__echo"]["input_schema"]
    assert [json.loads(line)["arguments"] for line in calls.read_text().splitlines()] == [{"text": "deferred"}]
    assert r.result["result"] == "parent done"


def test_a_subagent_cannot_start_another(tmp_path: Path) -> None:
    """A deliberate difference: Claude Code 2.1.197 offers Agent to a general-purpose child and runs the grandchild
    (measured on its binary); mini-claude keeps one level, so a child's call of it is refused like any tool outside
    its set."""
    r = run("mini-claude", tmp_path, [
        call("mini-claude", agent("delegate", "general-purpose")),
        call("mini-claude", agent("deeper", "general-purpose")),
        answer("CHILD: {{last_tool_result}}"),
        answer("parent done"),
    ])
    children = child_requests(r)
    assert len(children) == 2 and all("Agent" not in r.tools_of(i) for i in children)
    refused, report = r.tool_results()
    assert refused.get("is_error") is True
    assert result_text(refused).startswith("No such tool available: Agent. Agent exists but is not enabled")
    assert result_text(report).startswith("CHILD: No such tool available: Agent.")
    assert len(r.requests) == 4  # the parent's two and the child's two: no grandchild


def test_explore_is_offered_read_only_tools_only(tmp_path: Path) -> None:
    """A deliberate difference: Claude Code's Explore keeps Bash (its prompt asks it not to change anything);
    mini-claude's is offered only read-only tools and its gate refuses any other, even under --yolo."""
    r = run("mini-claude", tmp_path, [
        call("mini-claude", agent("look around", "Explore")),
        call("mini-claude", ("Bash", {"command": "touch made"})),
        answer("EXPLORED {{last_tool_result}}"),
        answer("parent done"),
    ], "--yolo")
    [first, _] = child_requests(r)
    assert sorted(r.tools_of(first)) == ["Glob", "Grep", "Read", "TaskOutput", "TodoWrite", "WebFetch", "WebSearch"]
    refused, _report = r.tool_results()
    assert refused.get("is_error") is True and "not enabled for the Explore agent" in result_text(refused)
    assert not (r.work / "made").exists()


@CLIENTS
def test_the_calls_model_wins(client: str, tmp_path: Path) -> None:
    r = run(client, tmp_path, [call(client, ("Agent", {"description": "quick", "prompt": "be quick",
                                                        "subagent_type": "general-purpose", "model": "haiku"})),
                               answer("quick report"), answer("parent done")])
    [child] = child_requests(r)
    assert r.requests[child]["body"]["model"] == alias_id(client, "haiku") != r.requests[0]["body"]["model"]
    assert r.result["result"] == "parent done"
