"""Regressions found while writing the agent/CLI acceptance tests (each test names the bug it pins)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from mini_claude.agent.loop import MAX_TURNS_NOTE, Agent
from mini_claude.cli.main import main
from mini_claude.cli.terminal.render import TerminalUI
from mini_claude.models.anthropic import AnthropicModel
from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.retry import RetryPolicy
from mini_claude.models.scenario import parse_scenario
from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.session.start import report_config_problems, report_rule_problems
from mini_claude.settings import load_settings
from mini_claude.tools.base import ToolContext, ToolResult
from mini_claude.tools.builtins import builtin_tools
from tests.helpers import anthropic_env, clean_env, run_cli

pytestmark = pytest.mark.timeout(30)
FAST_RETRY = RetryPolicy(max_attempts=1, base_delay_s=0.001, max_delay_s=0.01)


class RecordingUI:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, Any]] = []

    def text_delta(self, text: str) -> None:
        pass

    def assistant_done(self, turn: Any) -> None:
        pass

    def tool_started(self, name: str, args: dict[str, Any]) -> None:
        self.events.append(("started", name, args))

    def tool_finished(self, name: str, result: ToolResult) -> None:
        self.events.append(("finished", name, result.is_error))


def _agent(url: str, cwd: Path, *, ui: Any = None, max_turns: int = 50) -> Agent:
    gate = PermissionGate(PermissionMode.DEFAULT, RuleSet(), ask=None, cwd=cwd)
    tools = builtin_tools()
    return Agent(model=AnthropicModel("m", api_key="x", base_url=url, stream=False, retry=FAST_RETRY),
                 tools=lambda: tools, gate=gate, ctx=ToolContext(cwd=cwd, spill_dir=cwd / ".spill"), system="s",
                 ui=ui, max_turns=max_turns)


@contextmanager
def _mock(turns: list[dict[str, Any]]) -> Iterator[MockModelServer]:
    with MockModelServer(parse_scenario({"turns": turns})) as server:
        yield server


async def test_unknown_tool_is_shown_to_the_user(tmp_path: Path) -> None:
    # bug: a call to an unknown tool produced a tool_result but no `→` line, so the user never saw it
    ui = RecordingUI()
    turns = [{"content": [{"type": "tool_use", "name": "nope", "input": {"a": 1}}]},
             {"content": [{"type": "text", "text": "ok"}]}]
    with _mock(turns) as mock:
        await _agent(mock.url, tmp_path, ui=ui).run("go")
    assert ui.events == [("started", "nope", {"a": 1}), ("finished", "nope", True)]


async def test_after_max_turns_the_model_is_not_told_the_user_interrupted(tmp_path: Path) -> None:
    # bug: the next run after a --max-turns stop said "[The previous request was interrupted by the user.]"
    turns = [{"content": [{"type": "tool_use", "name": "Glob", "input": {"pattern": "*"}}]},
             {"content": [{"type": "text", "text": "ok"}]}]
    with _mock(turns) as mock:
        agent = _agent(mock.url, tmp_path, max_turns=1)
        assert (await agent.run("one")).stop == "max_turns"
        assert (await agent.run("two")).text == "ok"
        last = mock.requests[1]["body"]["messages"][-1]["content"]
    assert [b["type"] for b in last] == ["tool_result", "text", "text"]
    assert last[1]["text"] == MAX_TURNS_NOTE and last[2]["text"] == "two"


@pytest.mark.parametrize("value", ["0", "-3", "x"])
def test_max_turns_must_be_positive(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    # bug: --max-turns 0 was accepted and answered with an empty "final answer" without asking the model
    with pytest.raises(SystemExit) as exc:
        main(["-p", "--max-turns", value, "hi"])
    assert exc.value.code == 2
    assert "--max-turns" in capsys.readouterr().err


def test_empty_prompt_on_stdin_is_a_usage_error(tmp_path: Path) -> None:
    # bug: `mini-claude -p < /dev/null` sent an empty user message, which the API rejects
    proc = run_cli(["-p"], cwd=tmp_path, env=anthropic_env(tmp_path, "http://127.0.0.1:9"), timeout=30)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "prompt" in proc.stderr


def test_bad_permission_rules_are_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # bug: RuleSet.errors (malformed rules, dropped) were never shown: a typo in a deny rule went unnoticed
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Bash(rm"]}}))
    settings = load_settings(cwd=tmp_path, home=tmp_path / "home")
    rules = RuleSet.from_settings(settings)
    assert rules.errors
    ui = TerminalUI(print_mode=True)
    config = type("Config", (), {"errors": [], "warnings": []})()
    report_config_problems(ui, settings, config, rules)
    report_rule_problems(ui, rules)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all('invalid permission rule "Bash(rm"' in line for line in err)


class _RawAnthropic:
    """Answers the first Messages request with a tool_use whose input is a JSON array, then with text."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                outer.bodies.append(json.loads(self.rfile.read(int(self.headers["content-length"]))))
                if len(outer.bodies) == 1:
                    content: list[dict[str, Any]] = [{"type": "tool_use", "id": "toolu_1", "name": "Read",
                                                      "input": [1, 2]}]
                    stop = "tool_use"
                else:
                    content, stop = [{"type": "text", "text": "recovered"}], "end_turn"
                data = json.dumps({"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
                                   "content": content, "stop_reason": stop, "stop_sequence": None,
                                   "usage": {"input_tokens": 1, "output_tokens": 1}}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"


async def test_anthropic_non_object_tool_input_gets_a_tool_result(tmp_path: Path) -> None:
    server = _RawAnthropic()
    thread = threading.Thread(target=server.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        outcome = await _agent(server.url, tmp_path).run("go")
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()
    assert outcome.text == "recovered"
    result = server.bodies[1]["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result["is_error"] is True


def test_repl_without_a_terminal_is_one_line(tmp_path: Path) -> None:
    """Regression: without a TTY the REPL printed prompt_toolkit's warning and then an error (two lines)."""
    proc = run_cli([], cwd=tmp_path, env=clean_env(tmp_path), timeout=30)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "-p" in proc.stderr
