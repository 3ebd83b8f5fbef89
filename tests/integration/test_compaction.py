"""Context management through the real CLI and SDK against a mock model with a small context window: a 200-turn
session completes with automatic compaction and no "prompt is too long" reaching the user; a refusal compacts and
retries once; old tool results are cleared first."""

from __future__ import annotations

import itertools
import json
from typing import Any

from mini_claude.agent.compaction import CLEARED, clear_old_results
from mini_claude.models.base import SUMMARY_SYSTEM_PROMPT
from tests.integration.conftest import Cli, answer, tool_use

BIG = "x" * 3000


def test_a_200_turn_session_fits_a_small_window(cli: Cli) -> None:
    (cli.work / "big.txt").write_text(BIG)
    turns: list[dict[str, Any]] = [tool_use("Read", {"file_path": "big.txt"}) for _ in range(199)]
    turns.append(answer("all 199 reads done"))
    mock = cli.mock(turns)
    mock.scenario = type(mock.scenario)(mock.scenario.turns, "test", 12_000)  # a 12k-token context window
    result = cli.run("-p", "read it 199 times", "--max-turns", "250",
                     env={"MINI_CLAUDE_CONTEXT_TOKENS": "12000"}, timeout=300)
    assert result.rc == 0, result.stderr[-2000:]
    assert result.stdout == "all 199 reads done\n"
    assert "prompt is too long" not in result.stderr
    summaries = [r for r in mock.requests if r["body"].get("system") == SUMMARY_SYSTEM_PROMPT]
    assert summaries and "compacted the conversation" in result.stderr
    worked = [r for r in mock.requests if r["body"].get("system") != SUMMARY_SYSTEM_PROMPT]
    assert len(worked) == 200 and max(len(str(r["body"])) for r in worked) < 12_000 * 4


def test_a_too_long_refusal_compacts_and_retries_once(cli: Cli) -> None:
    (cli.work / "big.txt").write_text(BIG * 4)
    # the window: what a request without history costs (system prompt and tools, measured as the mock counts) plus
    # room for one read of big.txt (~580 tokens) but not two, so the second read is refused
    probe = cli.mock([answer("hi")])
    assert cli.run("-p", "go").rc == 0
    base = probe.requests[0]["body"]
    window = len(json.dumps(base)) // 4 + 1_000
    mock = cli.mock([tool_use("Read", {"file_path": "big.txt"}), tool_use("Read", {"file_path": "big.txt"}),
                     answer("fine")])
    mock.scenario = type(mock.scenario)(mock.scenario.turns, "test", window)
    # the agent believes the window is large: only the model's refusal tells it otherwise
    result = cli.run("-p", "go", env={"MINI_CLAUDE_CONTEXT_TOKENS": "1000000"})
    assert result.rc == 0 and result.stdout == "fine\n", result.stderr
    assert any(r["body"].get("system") == SUMMARY_SYSTEM_PROMPT for r in mock.requests), (
        result.stderr, [len(str(r["body"])) for r in mock.requests])


def test_old_tool_results_are_cleared_first() -> None:
    history: list[dict[str, Any]] = []
    for i in range(10):
        history.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"t{i}", "name": "x",
                                                          "input": {}}]})
        history.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}",
                                                     "content": f"result {i}"}]})
    assert clear_old_results(history)
    contents = [m["content"][0]["content"] for m in history if m["role"] == "user"]
    assert contents[:7] == [CLEARED] * 7 and contents[7:] == ["result 7", "result 8", "result 9"]
    assert not clear_old_results(history)


async def test_compacting_one_long_turn_keeps_every_result_with_its_request() -> None:
    from mini_claude.agent.compaction import ContextWindow
    from mini_claude.models.base import AssistantTurn

    class Summariser:
        name = "s"

        async def complete(self, **kwargs: Any) -> AssistantTurn:
            return AssistantTurn([{"type": "text", "text": "summary"}], "end_turn")

    history: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": "do it all"}]}]
    for i in range(5):
        history.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"t{i}", "name": "x",
                                                          "input": {}}]})
        history.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}",
                                                     "content": "r"}]})
    assert await ContextWindow(100).compact(Summariser(), history)
    assert [m["role"] for m in history] == ["user", "assistant", "user"]
    assert history[1]["content"][0]["id"] == "t4" and history[2]["content"][0]["tool_use_id"] == "t4"
    roles = [m["role"] for m in history]
    assert all(a != b for a, b in itertools.pairwise(roles))
