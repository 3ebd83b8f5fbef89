"""`-p` for scripts (a real subprocess, the real SDK, the mock model): piped stdin, `--output-format json` and
`stream-json` in Claude Code's shapes, the exit codes, `--system-prompt` / `--append-system-prompt`, an unknown
flag, and a failed request that leaves the history as it was."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any
from unittest.mock import ANY

from mini_claude.agent.loop import Agent
from mini_claude.errors import ModelError
from mini_claude.models.base import AssistantTurn
from mini_claude.tools.base import ToolContext
from tests.helpers import system_text
from tests.integration.conftest import Cli, answer, tool_use

# the keys Claude Code 2.1.328 prints that mini-claude has (checked against its binary run offline on the mock)
RESULT_KEYS = {"type", "subtype", "is_error", "api_error_status", "duration_ms", "duration_api_ms", "num_turns",
               "result", "stop_reason", "session_id", "total_cost_usd", "usage", "modelUsage", "permission_denials",
               "terminal_reason", "uuid"}
MESSAGE_KEYS = {"type", "message", "parent_tool_use_id", "session_id", "uuid", "timestamp"}
ASSISTANT_KEYS = {"id", "type", "role", "model", "content", "stop_reason", "stop_sequence"}
MODEL_USAGE_KEYS = {"inputTokens", "outputTokens", "cacheReadInputTokens", "cacheCreationInputTokens", "costUSD"}


def run_piped(cli: Cli, stdin: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mini_claude", *args], cwd=cli.work, env=cli.env, input=stdin,
                          capture_output=True, text=True, timeout=60)


def test_piped_stdin_is_appended_to_the_prompt_or_is_the_prompt(cli: Cli) -> None:
    mock = cli.mock([answer("explained"), answer("answered")])
    first = run_piped(cli, "def main(): pass\n", "-p", "explain this")
    assert first.returncode == 0 and first.stdout == "explained\n", first.stderr
    assert mock.requests[0]["body"]["messages"][0]["content"][0]["text"] == "explain this\n\ndef main(): pass\n"
    second = run_piped(cli, "what is 2+2?", "-p")
    assert second.returncode == 0, second.stderr
    assert mock.requests[1]["body"]["messages"][0]["content"][0]["text"] == "what is 2+2?"


def test_json_output_has_claude_codes_shape(cli: Cli) -> None:
    cli.mock([tool_use("Glob", {"pattern": "*"}), answer("two files")])
    result = cli.run("-p", "list", "--output-format", "json", "--model", "claude-sonnet-4-5")
    assert result.rc == 0, result.stderr
    record = json.loads(result.stdout)
    assert set(record) == RESULT_KEYS
    assert record["type"] == "result" and record["subtype"] == "success" and record["is_error"] is False
    assert record["result"] == "two files" and record["num_turns"] == 2 and record["permission_denials"] == []
    assert len(record["session_id"]) == 36 and record["usage"]["input_tokens"] > 0
    assert record["total_cost_usd"] > 0 and record["duration_ms"] >= record["duration_api_ms"] >= 0
    assert record["terminal_reason"] == "completed" and record["api_error_status"] is None
    [(model, spent)] = record["modelUsage"].items()
    assert model == "claude-sonnet-4-5" and set(spent) >= MODEL_USAGE_KEYS  # the model table adds the limits
    assert spent["inputTokens"] == record["usage"]["input_tokens"] and spent["costUSD"] == record["total_cost_usd"]


def test_stream_json_writes_each_block_then_the_result(cli: Cli) -> None:
    """As Claude Code: one assistant line per content block (the turn's blocks share one message id), one user
    line per tool result, then the result."""
    cli.mock([{"content": [{"type": "text", "text": "Looking."}, {"type": "tool_use", "name": "Glob",
                                                                  "input": {"pattern": "*"}},
                           {"type": "tool_use", "name": "Glob", "input": {"pattern": "*.md"}}]}, answer("done")])
    result = cli.run("-p", "list", "--output-format", "stream-json")
    assert result.rc == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["type"], r.get("subtype")) for r in lines] == [
        ("system", "init"), ("assistant", None), ("assistant", None), ("assistant", None), ("user", None),
        ("user", None), ("assistant", None), ("result", "success")]
    assert "Glob" in lines[0]["tools"] and {r["session_id"] for r in lines} == {lines[0]["session_id"]}
    assert lines[0]["permissionMode"] == "default" and all(set(r) == MESSAGE_KEYS for r in lines[1:7])
    turn = [r["message"] for r in lines[1:4]]
    assert all(set(m) == ASSISTANT_KEYS and len(m["content"]) == 1 for m in turn)
    assert len({m["id"] for m in turn}) == 1 and turn[0]["id"] != lines[6]["message"]["id"]
    assert [m["content"][0]["type"] for m in turn] == ["text", "tool_use", "tool_use"]
    uses = [m["content"][0]["id"] for m in turn[1:]]
    assert [r["message"]["content"] for r in lines[4:6]] == [[{"type": "tool_result", "tool_use_id": use,
                                                               "content": ANY}] for use in uses]
    assert lines[6]["message"]["content"] == [{"type": "text", "text": "done"}]
    assert set(lines[-1]) == RESULT_KEYS and lines[-1]["result"] == "done"


def test_stream_json_writes_each_message_once_through_resume_and_compaction(cli: Cli) -> None:
    """A resumed conversation is not written again (as in Claude Code); a compaction, which shortens the history
    in place, neither repeats nor loses a message."""
    cli.mock([answer("first")])
    assert cli.run("-p", "one").rc == 0
    cli.mock([answer("second")])
    resumed = cli.run("-p", "two", "--continue", "--output-format", "stream-json")
    assert resumed.rc == 0, resumed.stderr
    assert [r["message"]["content"] for r in map(json.loads, resumed.stdout.splitlines()) if r["type"] == "assistant"] \
        == [[{"type": "text", "text": "second"}]]

    (cli.work / "big.txt").write_text("x" * 3000)
    musing = {"type": "text", "text": "y" * 3000}  # text is never cleared: the history must be compacted
    mock = cli.mock([{"content": [musing, {"type": "tool_use", "name": "Read", "input": {"file_path": "big.txt"}}]}
                     for _ in range(40)] + [answer("read")])
    mock.scenario = type(mock.scenario)(mock.scenario.turns, "test", 12_000)  # a 12k-token context window
    result = cli.run("-p", "read it 40 times", "--output-format", "stream-json",
                     env={"MINI_CLAUDE_CONTEXT_TOKENS": "12000"}, timeout=180)
    assert result.rc == 0 and "compacted the conversation" in result.stderr, result.stderr[-2000:]
    blocks = [b for r in map(json.loads, result.stdout.splitlines()) if r["type"] in ("assistant", "user")
              for b in r["message"]["content"]]
    ids = [f"toolu_mock_{n}" for n in range(1, 41)]
    assert [b["id"] for b in blocks if b["type"] == "tool_use"] == ids
    assert [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"] == ids
    assert blocks[-1] == {"type": "text", "text": "read"}


def test_exit_codes_and_result_subtypes_are_claude_codes(cli: Cli) -> None:
    """0 answered (a denied call too), 1 an error, --max-turns or a cut answer; the json result says which."""
    cli.mock([{"content": [{"type": "text", "text": "cut"}], "stop_reason": "max_tokens"}])
    truncated = cli.run("-p", "long", "--output-format", "json")
    record = json.loads(truncated.stdout)
    assert truncated.rc == 1 and (record["subtype"], record["is_error"]) == ("success", True)
    assert record["result"] == "cut" and record["stop_reason"] == "max_tokens"
    assert record["api_error"] == "max_output_tokens" and "cut at the model's output token limit" in truncated.stderr
    cli.mock([tool_use("Glob", {"pattern": "*"})] * 2)
    stopped = cli.run("-p", "loop", "--max-turns", "1", "--output-format", "json")
    record = json.loads(stopped.stdout)
    assert stopped.rc == 1 and (record["subtype"], record["is_error"]) == ("error_max_turns", True)
    assert record["terminal_reason"] == "max_turns" and record["stop_reason"] == "tool_use"
    assert "maximum number of turns (1)" in record["errors"][0] and "--max-turns 1" in stopped.stderr
    cli.mock([tool_use("Bash", {"command": "touch x", "description": "make x"}), answer("could not")])
    denied = cli.run("-p", "go", "--output-format", "json")
    record = json.loads(denied.stdout)
    assert denied.rc == 0 and (record["subtype"], record["is_error"]) == ("success", False), denied.stderr
    assert record["permission_denials"] == [{"tool_name": "Bash", "tool_use_id": "toolu_mock_1",
                                             "tool_input": {"command": "touch x", "description": "make x"}}]
    assert not (cli.work / "x").exists() and "1 tool call was denied on the way\n" in denied.stderr
    cli.mock([{"error": {"status": 400, "message": "bad request"}}])
    failed = cli.run("-p", "go", "--output-format", "json")
    record = json.loads(failed.stdout)
    assert failed.rc == 1 and (record["subtype"], record["is_error"]) == ("success", True)
    assert record["api_error_status"] == 400 and record["terminal_reason"] == "api_error"
    assert "bad request" in record["result"]


def test_detailed_exit_codes_tell_the_endings_apart(cli: Cli) -> None:
    cli.mock([{"content": [{"type": "text", "text": "cut"}], "stop_reason": "max_tokens"}])
    truncated = cli.run("-p", "long", "--detailed-exit-codes")
    assert truncated.rc == 4 and truncated.stdout == "cut\n" and "(exit code 4)" in truncated.stderr
    cli.mock([tool_use("Glob", {"pattern": "*"})] * 2)
    stopped = cli.run("-p", "loop", "--max-turns", "1", "--detailed-exit-codes", "--output-format", "json")
    assert stopped.rc == 3 and json.loads(stopped.stdout)["subtype"] == "error_max_turns"
    cli.mock([tool_use("Bash", {"command": "touch x"}), answer("could not")])
    denied = cli.run("-p", "go", "--detailed-exit-codes")
    assert denied.rc == 5 and denied.stdout == "could not\n" and "denied on the way (exit code 5)" in denied.stderr
    cli.mock([answer("fine")])
    assert cli.run("-p", "go", "--detailed-exit-codes").rc == 0
    cli.mock([{"error": {"status": 400, "message": "bad request"}}])
    assert cli.run("-p", "go", "--detailed-exit-codes").rc == 1
    assert "--detailed-exit-codes" in cli.run("--help").stdout


def test_system_prompt_flags(cli: Cli) -> None:
    mock = cli.mock([answer("a"), answer("b")])
    assert cli.run("-p", "x", "--append-system-prompt", "Answer in haiku.").rc == 0
    assert system_text(mock.requests[0]["body"]).endswith("\n\nAnswer in haiku.")
    assert "You are mini-claude" in system_text(mock.requests[0]["body"])
    assert cli.run("-p", "x", "--system-prompt", "You are a pirate.").rc == 0
    assert system_text(mock.requests[1]["body"]) == "You are a pirate."


def test_an_unknown_flag_names_the_closest_one(cli: Cli) -> None:
    result = cli.run("-p", "x", "--output-formt", "json")
    assert result.rc == 2
    assert result.stderr.strip().splitlines()[-1] == "mini-claude: unknown option --output-formt (did you mean " \
                                                     "--output-format?)"


async def test_a_failed_request_leaves_the_history_as_it_was(tmp_path: Any) -> None:
    class Flaky:
        name = "flaky"
        fail = True

        async def complete(self, **kwargs: Any) -> AssistantTurn:
            if self.fail:
                raise ModelError("the API is down")
            return AssistantTurn([{"type": "text", "text": "fine"}], "end_turn")

    class Allow:
        async def check(self, tool: Any, args: Any) -> Any:
            raise AssertionError("no tools here")

    model = Flaky()
    agent = Agent(model=model, tools=list, gate=Allow(), ctx=ToolContext(cwd=tmp_path, spill_dir=tmp_path / "s"),
                  system="s")
    try:
        await agent.run("first")
    except ModelError:
        pass
    assert agent.history == []
    model.fail = False
    await agent.run("second")
    assert [m["content"][0].get("text") for m in agent.history] == ["second", "fine"]


def test_openai_base_url_alone_and_provider_prefixed_models(cli: Cli) -> None:
    mock = cli.mock([answer("from the local server"), answer("forced")])
    local = {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "", "OPENAI_BASE_URL": cli.env["ANTHROPIC_BASE_URL"] + "/v1"}
    result = cli.run("-p", "hi", "--model", "llama3:8b", env=local)
    assert result.rc == 0 and result.stdout == "from the local server\n", result.stderr
    assert mock.requests[0]["path"].endswith("/chat/completions") and mock.requests[0]["body"]["model"] == "llama3:8b"
    forced = cli.run("-p", "hi", "--model", "openai:gpt-4o", env={"OPENAI_BASE_URL": local["OPENAI_BASE_URL"]})
    assert forced.rc == 0, forced.stderr
    assert mock.requests[1]["path"].endswith("/chat/completions") and mock.requests[1]["body"]["model"] == "gpt-4o"


def test_custom_slash_commands(cli: Cli) -> None:
    commands = cli.work / ".claude" / "commands"
    (commands / "git").mkdir(parents=True)
    (commands / "review.md").write_text("---\ndescription: Review a file\nallowed-tools: Bash\n---\n"
                                        "Review $1 carefully, then say $ARGUMENTS.\n")
    (commands / "git" / "summary.md").write_text("Summarise the git log.")
    user_commands = cli.home / ".claude" / "commands"
    user_commands.mkdir(parents=True)
    (user_commands / "touch.md").write_text("---\nallowed-tools: Bash(touch:*)\n---\nMake the file $1.")
    mock = cli.mock([answer("reviewed"), answer("summarised"),
                     tool_use("Bash", {"command": "touch made.txt"}), answer("made"),
                     tool_use("Bash", {"command": "touch other.txt"}), answer("refused")])
    assert cli.run("-p", '/review main.py "twice"').rc == 0
    assert mock.requests[0]["body"]["messages"][0]["content"][0]["text"] == \
        'Review main.py carefully, then say main.py "twice".'
    assert cli.run("-p", "/git:summary").rc == 0
    assert mock.requests[1]["body"]["messages"][0]["content"][0]["text"] == "Summarise the git log."
    # the user's command may allow tools while it runs; the project's `allowed-tools: Bash` is ignored
    assert cli.run("-p", "/touch made.txt").rc == 0 and (cli.work / "made.txt").exists()
    denied = cli.run("-p", "/review x")
    assert denied.rc == 0 and "denied on the way" in denied.stderr and not (cli.work / "other.txt").exists()


def test_shared_options_go_before_or_after_mcp(cli: Cli) -> None:
    config = cli.config_file({"demo": {"command": sys.executable, "args": ["-m", "mini_claude.mcp.demo_server"]}})
    before = cli.run("--mcp-config", config, "--debug", "mcp", "list")
    after = cli.run("mcp", "list", "--mcp-config", config, "--debug")
    assert before.rc == after.rc == 0, before.stderr + after.stderr
    assert "demo" in before.stdout and before.stdout.split()[:2] == after.stdout.split()[:2]
    assert "DEBUG" in before.stderr and "DEBUG" in after.stderr


def test_print_mode_shows_the_whole_diff_of_an_edit(cli: Cli) -> None:
    (cli.work / "app.py").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    cli.mock([tool_use("Read", {"file_path": "app.py"}),
              tool_use("Edit", {"file_path": "app.py", "old_string": "line 8\n", "new_string": "changed 8\n"}),
              answer("edited")])
    result = cli.run("-p", "edit it", "--allowedTools", "Edit")
    assert result.rc == 0, result.stderr
    edit = result.stderr.split("● Edit(app.py)", 1)[1]
    assert "-line 8" in edit and "+changed 8" in edit and "line 10" in edit and "… +" not in edit


def test_max_budget_stops_the_run(cli: Cli) -> None:
    mock = cli.mock([tool_use("Glob", {"pattern": "*"})] * 5 + [answer("never")])
    result = cli.run("-p", "loop", "--max-budget-usd", "0.000001", "--model", "claude-sonnet-4-5",
                     "--output-format", "json")
    record = json.loads(result.stdout)
    assert result.rc == 1 and record["subtype"] == "error_max_budget_usd" and record["is_error"]
    assert record["terminal_reason"] == "budget_exhausted" and "--max-budget-usd" in record["errors"][0]
    assert len(mock.requests) == 1 and "--max-budget-usd" in result.stderr


def test_stream_json_input_runs_one_turn_per_line(cli: Cli) -> None:
    mock = cli.mock([answer("first"), answer("second")])
    lines = [json.dumps({"type": "user", "message": {"role": "user", "content": "one"}}),
             json.dumps({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "two"}]}})]
    result = run_piped(cli, "\n".join(lines) + "\n", "-p", "--input-format", "stream-json",
                       "--output-format", "stream-json")
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["type"], r.get("subtype")) for r in records] == [
        ("system", "init"), ("assistant", None), ("result", "success"),
        ("system", "init"), ("assistant", None), ("result", "success")]
    assert [r["result"] for r in records if r["type"] == "result"] == ["first", "second"]
    assert [m["content"][0]["text"] for m in mock.requests[1]["body"]["messages"]] == ["one", "first", "two"]
    bad = run_piped(cli, "not json\n", "-p", "--input-format", "stream-json", "--output-format", "stream-json")
    assert bad.returncode == 1 and "a line is not JSON" in bad.stderr
    wrong = run_piped(cli, "", "-p", "--input-format", "stream-json")
    assert wrong.returncode == 2 and "needs --output-format stream-json" in wrong.stderr
