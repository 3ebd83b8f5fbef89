"""What the model sees, end to end: the real CLI (`python -m mini_claude -p`) against the mock model, which refuses
thinking that does not come back unchanged and counts cache reads from the request's breakpoints. Model ids,
output budget, thinking and effort as Claude Code 2.1.328 sends them (measured on the same mock)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mini_claude.agent.calls import CUT_TEXT
from mini_claude.models.mock_server import MockModelServer
from tests.integration.conftest import answer, result_text, tool_results, tool_use
from tests.settings.conftest import SettingsCli, models_sent

pytestmark = pytest.mark.timeout(120)

THOUGHT = {"type": "thinking", "thinking": "The notes first.", "signature": "c2lnLW9uZQ=="}
LATER_THOUGHT = {"type": "thinking", "thinking": "Then the copy.", "signature": "c2lnLXR3bw=="}


def bodies(mock: MockModelServer) -> list[dict[str, Any]]:
    return [r["body"] for r in mock.requests if r["path"] == "/v1/messages"]


def test_thinking_goes_back_unchanged_through_two_tool_turns(cli: SettingsCli) -> None:
    (cli.work / "notes.txt").write_text("remember the milk\n")
    mock = cli.mock([
        {"content": [THOUGHT, {"type": "tool_use", "name": "Read", "input": {"file_path": "notes.txt"}}]},
        {"content": [LATER_THOUGHT, {"type": "redacted_thinking", "data": "b3BhcXVl"},
                     {"type": "tool_use", "name": "Write", "input": {"file_path": "copy.txt", "content": "milk"}}]},
        answer("copied"),
    ])
    r = cli.run("-p", "copy the notes", "--output-format", "json", "--dangerously-skip-permissions")
    assert r.rc == 0, r.stderr  # the mock answers 400 to thinking altered or dropped mid-loop
    assert r.json()["result"] == "copied" and (cli.work / "copy.txt").read_text() == "milk"
    last = bodies(mock)[-1]["messages"]
    assert last[1]["content"][0] == THOUGHT and last[3]["content"][:2] == [
        LATER_THOUGHT, {"type": "redacted_thinking", "data": "b3BhcXVl"}]
    assert "The notes first." not in r.stdout + r.stderr  # -p shows no thinking


def test_a_tool_call_cut_at_the_output_limit_never_runs(cli: SettingsCli) -> None:
    mock = cli.mock([
        {"content": [{"type": "text", "text": "Writing it all."},
                     {"type": "tool_use", "name": "Write", "input": {"file_path": "big.txt", "content": "x" * 500}}],
         "stop_reason": "max_tokens"},
        answer("I will write it in parts."),
    ])
    cut = cli.run("-p", "write a big file", "--output-format", "json", "--dangerously-skip-permissions")
    record = cut.json()
    assert cut.rc != 0 and record["stop_reason"] == "max_tokens" and record["is_error"]  # -p reports the cut
    assert not (cli.work / "big.txt").exists()
    assert len(bodies(mock)) == 1
    again = cli.run("-p", "go on", "--continue", "--dangerously-skip-permissions")
    assert again.rc == 0, again.stderr
    [result] = tool_results(mock)
    assert result["is_error"] is True and result_text(result) == CUT_TEXT
    assert not (cli.work / "big.txt").exists()


def test_cache_breakpoints_and_reads_in_the_json_result(cli: SettingsCli) -> None:
    mock = cli.mock([tool_use("Glob", {"pattern": "*.txt"}), answer("none")])
    r = cli.run("-p", "list", "--output-format", "json")
    assert r.rc == 0, r.stderr
    for body in bodies(mock):
        assert "cache_control" in body["tools"][-1] and "cache_control" in body["system"][-1]
        assert "cache_control" in body["messages"][-1]["content"][-1] and "cache_control" not in body
    record = r.json()
    usage, [(model, per_model)] = record["usage"], record["modelUsage"].items()
    assert usage["cache_creation_input_tokens"] > 0 and usage["cache_read_input_tokens"] > 0
    assert model == "claude-opus-5-5" and per_model["cacheReadInputTokens"] == usage["cache_read_input_tokens"]
    assert per_model["contextWindow"] == 1_000_000 and per_model["maxOutputTokens"] == 128_000
    assert 0 < record["total_cost_usd"] == per_model["costUSD"]


@pytest.mark.parametrize(("flag", "sent", "max_tokens"), [
    (None, "claude-opus-5-5", 128_000), ("sonnet", "claude-sonnet-5-5", 128_000),
    ("opus", "claude-opus-5-5", 128_000), ("haiku", "claude-haiku-5-5", 128_000),
    ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5-20250929", 32_000),
])
def test_model_ids_and_output_budget(cli: SettingsCli, flag: str | None, sent: str, max_tokens: int) -> None:
    mock = cli.mock([answer("hi")])
    r = cli.run("-p", *(("--model", flag) if flag else ()), "hi")
    assert r.rc == 0 and r.stderr == "", r.stderr
    [body] = bodies(mock)
    assert models_sent(mock) == [sent] and body["max_tokens"] == max_tokens


def test_an_unknown_model_id_goes_through_with_a_warning(cli: SettingsCli) -> None:
    mock = cli.mock([answer("hi")])
    r = cli.run("-p", "--model", "claude-prototype-9", "hi")
    assert r.rc == 0 and r.stdout.strip() == "hi"
    [line] = r.stderr.splitlines()
    assert "claude-prototype-9" in line and "not one this version knows" in line
    [body] = bodies(mock)
    assert body["model"] == "claude-prototype-9" and body["max_tokens"] == 32_000 and "thinking" not in body


@pytest.mark.parametrize(("env", "settings", "args", "thinking", "effort"), [
    ({}, {}, (), {"type": "adaptive"}, "medium"),
    ({"MAX_THINKING_TOKENS": "5000"}, {}, (), {"type": "enabled", "budget_tokens": 5000}, "medium"),
    ({"MAX_THINKING_TOKENS": "0"}, {}, (), {"type": "disabled"}, "medium"),
    ({}, {"alwaysThinkingEnabled": False}, (), {"type": "disabled"}, "medium"),
    ({}, {"effortLevel": "low"}, (), {"type": "adaptive"}, "low"),
    ({"CLAUDE_CODE_EFFORT_LEVEL": "high"}, {"effortLevel": "low"}, (), {"type": "adaptive"}, "high"),
    ({"CLAUDE_CODE_EFFORT_LEVEL": "high"}, {}, ("--effort", "max"), {"type": "adaptive"}, "max"),
])
def test_thinking_settings(cli: SettingsCli, env: dict[str, str], settings: dict[str, Any], args: tuple[str, ...],
                           thinking: dict[str, Any], effort: str) -> None:
    if settings:
        cli.user_settings(settings)
    mock = cli.mock([answer("hi")])
    r = cli.run("-p", *args, "hi", env=env)
    assert r.rc == 0, r.stderr
    [body] = bodies(mock)
    assert body["thinking"] == thinking and body["output_config"] == {"effort": effort}
    assert ("context_management" in body) == (thinking["type"] != "disabled")


def test_the_openai_backend_sends_no_thinking(cli: SettingsCli) -> None:
    mock = cli.mock([{"content": [THOUGHT, {"type": "text", "text": "plain"}]}])
    env = {"MINI_CLAUDE_BACKEND": "openai", "OPENAI_BASE_URL": f"{mock.url}/v1", "MINI_CLAUDE_MODEL": "gpt-4o"}
    r = cli.run("-p", "hi", env=env)
    assert r.rc == 0 and r.stdout.strip() == "plain", r.stderr
    [request] = [q for q in mock.requests if q["path"].endswith("/chat/completions")]
    assert not {"thinking", "output_config", "context_management", "reasoning_effort"} & set(request["body"])
    assert "cache_control" not in json.dumps(request["body"])


def test_hooks_never_see_the_thinking(cli: SettingsCli) -> None:
    seen = cli.tmp / "hooks.jsonl"
    hook = {"hooks": [{"type": "command", "command": f"cat >> {seen}; echo >> {seen}"}]}
    cli.user_settings({"hooks": {"PreToolUse": [{"matcher": "*", **hook}], "PostToolUse": [{"matcher": "*", **hook}],
                                 "Stop": [hook]}})
    cli.mock([{"content": [THOUGHT, {"type": "tool_use", "name": "Glob", "input": {"pattern": "*"}}]},
              {"content": [LATER_THOUGHT, {"type": "text", "text": "nothing here"}]}])
    r = cli.run("-p", "look", "--debug")
    assert r.rc == 0, r.stderr
    events = [json.loads(line)["hook_event_name"] for line in seen.read_text().splitlines() if line.strip()]
    assert events == ["PreToolUse", "PostToolUse", "Stop"]
    for secret in ("The notes first.", "Then the copy.", THOUGHT["signature"]):
        assert secret not in seen.read_text() and secret not in r.stderr  # nor in the debug log


def test_the_repl_shows_thinking_folded() -> None:
    import io

    from mini_claude.cli.terminal.render import THINKING_FOLDED, TerminalUI
    from mini_claude.models.base import AssistantTurn

    turn = AssistantTurn([THOUGHT, {"type": "text", "text": "answer"}])
    out = io.StringIO()
    TerminalUI(out=out, rich_output=False).assistant_done(turn)
    assert THINKING_FOLDED in out.getvalue() and "The notes first." not in out.getvalue()
    shown = TerminalUI(out=(out := io.StringIO()), rich_output=False)
    shown.show_thinking = True
    shown.assistant_done(turn)
    assert "✻ The notes first." in out.getvalue()
    printed = io.StringIO()
    TerminalUI(print_mode=True, out=printed, err=printed).assistant_done(turn)
    assert printed.getvalue() == ""


async def test_cost_counts_cache_reads_and_writes(capsys: pytest.CaptureFixture[str]) -> None:
    import argparse
    from types import SimpleNamespace

    from mini_claude.cli.repl import Repl
    from mini_claude.models.anthropic_http import AnthropicHttpModel
    from mini_claude.models.base import Usage

    model = AnthropicHttpModel("claude-opus-5-5", api_key="k", base_url="http://127.0.0.1:9")
    repl = Repl(argparse.Namespace())
    # Claude Code 2.1.328 reported $0.067833 for these counts on the mock model
    repl.parts = SimpleNamespace(agent=SimpleNamespace(model=model, usage=Usage(609, 44, 12260, 12413)), env={})
    await repl._slash("/cost")
    out = capsys.readouterr().out
    assert "input tokens: 609 (+ 12260 read from the cache, 12413 written to it), output tokens: 44" in out
    assert "about $0.0678 at claude-opus-5-5's list prices" in out
    await repl._slash("/model")  # off a terminal the picker is a numbered list (nothing typed: nothing changes)
    listing = capsys.readouterr().out.splitlines()
    assert listing[0] == "  Select model (in use: claude-opus-5-5) — the choice is saved for new sessions"
    assert "   2. opus      claude-opus-5-5 · Opus 5.5, 1000k context, 128k output · $4/$20 per Mtok" in listing
    assert "   3. sonnet    claude-sonnet-5-5 · Sonnet 5.5, 1000k context, 128k output · $2/$10 per Mtok" in listing
    assert any(line.split()[1:3] == ["opusplan", "claude-opus-5-5"] for line in listing)
    assert listing[-1] == "  kept claude-opus-5-5" and model.name == "claude-opus-5-5"
