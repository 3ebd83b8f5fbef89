"""Issue 26, scripting: the same `-p` runs against mini-claude and Claude Code's own binary (tests/parity.py: CI's
2.1.197, or `$CLAUDE_CODE_BIN`; also checked by hand against 2.1.328) end the same way: the exit code, the json
result's `subtype`, `is_error` and `permission_denials`, stream-json's init keys and its one line per content block.

Differences, kept on purpose or not Claude Code's to give us:

* an answer cut at `max_tokens`: Claude Code asks the model to go on, up to three times, before it fails (four
  requests; `result` is its own "API Error: … output token maximum" text); mini-claude fails at once with the cut
  text as `result`. Both: exit 1, `subtype` "success", `is_error` true.
* `terminal_reason` of a failed model request: 2.1.197 says "completed", 2.1.328 and mini-claude "api_error".
* `num_turns` at --max-turns 1: Claude Code counts 2, mini-claude 1 (the requests made).
* the init line: Claude Code's version is `claude_code_version`, ours `mini_claude_version`; `mcp_servers` entries
  carry `source` from 2.1.328 on (and here); Claude Code lists its own built-in slash commands, skills and plugins,
  mini-claude the custom commands and server prompts `-p` runs; keys of features mini-claude does not have are left
  out (mini_claude/session/init_record.py lists them).
* stream-json tool results: Claude Code writes each as its tool finishes, mini-claude in the order of the calls
  once all have finished; Claude Code adds `tool_use_result` (its tools' own structured result) and each
  assistant line's streaming `usage`.
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

from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from tests.integration.conftest import PROBE
from tests.parity import CLIENTS, RUN_TIMEOUT_S, client_argv

pytestmark = pytest.mark.timeout(180)

# the init keys both clients print (Claude Code prints more of its own; so does mini-claude: mini_claude_version,
# original_cwd, additional_directories, which 2.1.328 has too)
INIT_KEYS = {"type", "subtype", "cwd", "session_id", "tools", "mcp_servers", "model", "permissionMode",
             "slash_commands", "apiKeySource", "output_style", "agents", "skills", "plugins", "uuid"}
RESULT_KEYS = {"type", "subtype", "is_error", "duration_ms", "duration_api_ms", "num_turns", "stop_reason",
               "session_id", "total_cost_usd", "usage", "modelUsage", "permission_denials", "uuid"}


@dataclass
class Run:
    rc: int
    stdout: str
    stderr: str
    work: Path
    requests: int

    def record(self) -> dict[str, Any]:
        result: dict[str, Any] = json.loads(self.stdout)
        return result

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]


def answer(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def call(name: str, **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": tool_input}


def run(client: str, tmp: Path, turns: list[dict[str, Any]], *args: str, fmt: str = "json") -> Run:
    home, work = tmp / "home", tmp / "work"
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    work.mkdir(exist_ok=True)
    (work / "a.txt").write_text("A\n")
    (work / "b.txt").write_text("B\n")
    mock = MockModelServer(parse_scenario({"turns": [*turns, answer("(unused)")]}, source="parity"))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "ANTHROPIC_BASE_URL": mock.start(),
           "ANTHROPIC_API_KEY": "sk-parity"}
    argv = client_argv(client, env, tmp)
    verbose = ["--verbose"] if fmt == "stream-json" else []  # Claude Code needs it for stream-json
    try:
        proc = subprocess.run([*argv, "-p", "--output-format", fmt, *verbose, *args, "--", "go"], cwd=work,
                              env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S,
                              stdin=subprocess.DEVNULL)
    finally:
        mock.stop()
    return Run(proc.returncode, proc.stdout, proc.stderr, work,
               sum(r["path"] == "/v1/messages" for r in mock.requests))


@CLIENTS
def test_an_answer_exits_0(client: str, tmp_path: Path) -> None:
    r = run(client, tmp_path, [answer("hello")])
    record = r.record()
    assert r.rc == 0, r.stderr
    assert set(record) >= RESULT_KEYS
    assert (record["type"], record["subtype"], record["is_error"]) == ("result", "success", False)
    assert record["result"] == "hello" and record["permission_denials"] == []
    assert record["terminal_reason"] == "completed" and record["api_error_status"] is None
    [spent] = record["modelUsage"].values()
    assert set(spent) >= {"inputTokens", "outputTokens", "cacheReadInputTokens", "cacheCreationInputTokens", "costUSD"}
    assert spent["inputTokens"] == record["usage"]["input_tokens"] > 0


@CLIENTS
def test_a_denied_tool_call_still_exits_0_and_is_listed(client: str, tmp_path: Path) -> None:
    r = run(client, tmp_path, [{"content": [call("Bash", command="touch made.txt", description="make a file")]},
                               answer("could not")])
    record = r.record()
    assert r.rc == 0, r.stderr
    assert (record["subtype"], record["is_error"], record["result"]) == ("success", False, "could not")
    assert record["permission_denials"] == [{"tool_name": "Bash", "tool_use_id": "toolu_mock_1",
                                             "tool_input": {"command": "touch made.txt",
                                                            "description": "make a file"}}]
    assert not (r.work / "made.txt").exists()


@CLIENTS
def test_max_turns_exits_1(client: str, tmp_path: Path) -> None:
    r = run(client, tmp_path, [{"content": [call("Read", file_path="a.txt")]}] * 2, "--max-turns", "1")
    record = r.record()
    assert r.rc == 1, r.stderr
    assert (record["subtype"], record["is_error"]) == ("error_max_turns", True)
    assert record["terminal_reason"] == "max_turns" and record["stop_reason"] == "tool_use"
    assert len(record["errors"]) == 1 and "(1)" in record["errors"][0]
    assert r.requests == 1


@CLIENTS
def test_a_failed_model_request_exits_1(client: str, tmp_path: Path) -> None:
    r = run(client, tmp_path, [{"error": {"status": 403, "message": "not for you"}}])
    record = r.record()
    assert r.rc == 1, r.stderr
    assert (record["subtype"], record["is_error"]) == ("success", True)  # Claude Code's shape for an API error
    assert record["api_error_status"] == 403 and "not for you" in record["result"]
    if client == "mini-claude":  # Claude Code 2.1.197 says "completed", 2.1.328 "api_error"
        assert record["terminal_reason"] == "api_error"


@CLIENTS
def test_an_answer_cut_at_max_tokens_exits_1(client: str, tmp_path: Path) -> None:
    cut = {"content": [{"type": "text", "text": "cut"}], "stop_reason": "max_tokens"}
    r = run(client, tmp_path, [cut] * 4)  # Claude Code asks the model to go on three times before it gives up
    record = r.record()
    assert r.rc == 1, r.stderr
    assert (record["subtype"], record["is_error"]) == ("success", True)
    assert r.requests == (4 if client == "claude-code" else 1)


@CLIENTS
def test_stream_json_init_and_one_line_per_content_block(client: str, tmp_path: Path) -> None:
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"probe": {"command": sys.executable, "args": [str(PROBE)]}}}))
    commands = tmp_path / "work" / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("Review $1.")
    turns = [{"content": [{"type": "text", "text": "Two reads."}, call("Read", file_path="a.txt"),
                          call("Read", file_path="b.txt")]}, answer("done")]
    r = run(client, tmp_path, turns, "--mcp-config", str(config), fmt="stream-json")
    assert r.rc == 0, r.stderr
    lines = r.lines()
    init = lines[0]
    assert set(init) >= INIT_KEYS, INIT_KEYS - set(init)
    assert (init["type"], init["subtype"]) == ("system", "init")
    assert init["cwd"] == str(r.work) and init["session_id"] == lines[-1]["session_id"]
    assert {"Bash", "Read", "Edit", "Write", "mcp__probe__echo"} <= set(init["tools"])
    assert [{k: s[k] for k in ("name", "status")} for s in init["mcp_servers"]] == [
        {"name": "probe", "status": "connected"}]
    assert init["permissionMode"] == "default" and init["apiKeySource"] == "ANTHROPIC_API_KEY"
    assert "review" in init["slash_commands"] and init["output_style"] == "default"
    assert {"general-purpose", "Explore"} <= set(init["agents"])
    assert isinstance(init["skills"], list) and isinstance(init["plugins"], list)

    # one line per content block; Claude Code may write a result before the turn's next block (it runs a tool as
    # soon as its call is complete), so only each result's place after its call is asserted
    kinds = [line["type"] for line in lines]
    assert (kinds[0], kinds[-2:], sorted(kinds[1:-2])) == ("system", ["assistant", "result"], ["assistant"] * 3
                                                           + ["user"] * 2)
    turn = [line["message"] for line in lines if line["type"] == "assistant"]
    assert [[b["type"] for b in m["content"]] for m in turn] == [["text"], ["tool_use"], ["tool_use"], ["text"]]
    assert len({m["id"] for m in turn[:3]}) == 1 and turn[3]["id"] != turn[0]["id"]
    assert {m["role"] for m in turn} == {"assistant"} and all(m["type"] == "message" for m in turn)
    called = {line["message"]["content"][0].get("id"): n for n, line in enumerate(lines) if line["type"] == "assistant"}
    answered = {b["tool_use_id"]: n for n, line in enumerate(lines) if line["type"] == "user"
                for b in line["message"]["content"]}
    assert sorted(answered) == sorted(m["content"][0]["id"] for m in turn[1:3])
    assert all(answered[use] > called[use] for use in answered)
    assert all(len(line["message"]["content"]) == 1 for line in lines if line["type"] == "user")
    assert turn[3]["content"] == [{"type": "text", "text": "done"}]
    assert lines[-1]["subtype"] == "success" and lines[-1]["result"] == "done"
