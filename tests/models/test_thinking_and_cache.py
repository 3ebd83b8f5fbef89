"""Extended thinking, the output budget and prompt caching on both Anthropic backends (the real `anthropic` SDK and
our httpx client) against the mock model, which refuses thinking that does not come back unchanged and reports
cache reads and writes from the request's breakpoints."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from model_helpers import FAST_RETRY, tool_result, user

from mini_claude.errors import ModelError
from mini_claude.models.anthropic import AnthropicModel
from mini_claude.models.anthropic_http import AnthropicHttpModel
from mini_claude.models.base import AssistantTurn, ToolSpec
from mini_claude.models.catalog import ThinkingPrefs

WRITE = ToolSpec("Write", "Write a file", {"type": "object", "properties": {"file_path": {"type": "string"}}})
READ = ToolSpec("Read", "Read a file", {"type": "object", "properties": {"file_path": {"type": "string"}}})
FIRST_THOUGHT = {"type": "thinking", "thinking": "Read the notes first.", "signature": "sig-one=="}
SECOND_THOUGHT = {"type": "thinking", "thinking": "Now write the answer.", "signature": "sig-two=="}
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBEgy-opaque"}
TWO_TOOL_TURNS = [
    {"content": [FIRST_THOUGHT, {"type": "tool_use", "name": "Read", "input": {"file_path": "notes.txt"}}]},
    {"content": [SECOND_THOUGHT, REDACTED, {"type": "text", "text": "Writing."},
                 {"type": "tool_use", "name": "Write", "input": {"file_path": "out.txt"}}]},
    {"content": [{"type": "text", "text": "done"}]},
]
Backend = type[AnthropicModel] | type[AnthropicHttpModel]


@pytest.fixture(params=[AnthropicModel, AnthropicHttpModel], ids=["sdk", "http"])
def backend(request: pytest.FixtureRequest) -> Backend:
    return request.param  # type: ignore[no-any-return]


def model_for(backend: Backend, url: str, name: str = "claude-opus-5-5", *, stream: bool = True,
              thinking: ThinkingPrefs | None = None) -> AnthropicModel | AnthropicHttpModel:
    return backend(name, api_key="sk-test", base_url=url, stream=stream, retry=FAST_RETRY, thinking=thinking)


def messages_of(mock: Any) -> list[dict[str, Any]]:
    return [r["body"] for r in mock.requests if r["path"] == "/v1/messages"]


async def tool_loop(model: AnthropicModel | AnthropicHttpModel) -> tuple[list[dict[str, Any]], list[AssistantTurn]]:
    """Run TWO_TOOL_TURNS as the agent does: each answer kept as it came, each tool call answered."""
    history: list[dict[str, Any]] = [user("write the notes out")]
    turns: list[AssistantTurn] = []
    for _ in range(3):
        turn = await model.complete(system="be brief", messages=history, tools=[READ, WRITE])
        turns.append(turn)
        history.append({"role": "assistant", "content": turn.content})
        for call in turn.tool_uses:
            history.append(tool_result(call["id"], "ok"))
    return history, turns


@pytest.mark.parametrize("stream", [True, False])
async def test_thinking_comes_back_unchanged_across_two_tool_turns(mock_server, backend: Backend,
                                                                    stream: bool) -> None:
    mock = mock_server(copy.deepcopy(TWO_TOOL_TURNS))
    _, turns = await tool_loop(model_for(backend, mock.url, stream=stream))

    assert turns[0].content[0] == FIRST_THOUGHT  # thinking_delta and signature_delta assembled (stream)
    assert turns[1].thinking == [SECOND_THOUGHT, REDACTED] and turns[1].text == "Writing."
    assert turns[2].text == "done"
    first, second, third = messages_of(mock)
    assert second["messages"][1]["content"][0] == FIRST_THOUGHT
    assert third["messages"][1]["content"][0] == FIRST_THOUGHT
    assert third["messages"][3]["content"][:2] == [SECOND_THOUGHT, REDACTED]
    for body in (first, second, third):  # Claude Code 2.1.328's shape for its default model
        assert body["thinking"] == {"type": "adaptive"} and body["output_config"] == {"effort": "medium"}
        assert body["max_tokens"] == 128_000
        assert body["context_management"] == {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]}
    betas = mock.requests[0]["headers"]["anthropic-beta"].split(",")
    assert {"interleaved-thinking-2025-05-14", "context-management-2025-06-27", "effort-2025-11-24"} <= set(betas)


@pytest.mark.parametrize("change", ["altered", "dropped"])
async def test_the_mock_refuses_thinking_that_does_not_come_back(mock_server, backend: Backend,
                                                                 change: str) -> None:
    mock = mock_server(copy.deepcopy(TWO_TOOL_TURNS))
    model = model_for(backend, mock.url)
    turn = await model.complete(system="", messages=[user("go")], tools=[READ])
    content = copy.deepcopy(turn.content)
    if change == "altered":
        content[0]["signature"] = "forged"
    else:
        del content[0]
    history = [user("go"), {"role": "assistant", "content": content}, tool_result(turn.tool_uses[0]["id"], "x")]
    with pytest.raises(ModelError) as info:
        await model.complete(system="", messages=history, tools=[READ])
    assert info.value.status == 400 and f"were {change if change == 'dropped' else 'changed'}" in str(info.value)
    assert mock.turns_used == 1  # the refused request used no turn


async def test_a_tool_call_cut_at_max_tokens_arrives_cut(mock_server, backend: Backend) -> None:
    mock = mock_server([{"content": [{"type": "tool_use", "name": "Write",
                                      "input": {"file_path": "big.txt", "content": "x" * 200}}],
                         "stop_reason": "max_tokens"}])
    turn = await model_for(backend, mock.url).complete(system="", messages=[user("go")], tools=[WRITE])
    assert turn.stop_reason == "max_tokens"
    [call] = turn.tool_uses
    assert isinstance(call["input"], str) and call["input"].startswith('{"file_path": "big.txt"')  # half its JSON


async def test_cache_breakpoints_and_reads(mock_server, backend: Backend) -> None:
    mock = mock_server(copy.deepcopy(TWO_TOOL_TURNS))
    _, turns = await tool_loop(model_for(backend, mock.url))

    for body in messages_of(mock):
        marked = [b for b in [*body["tools"], *body["system"], *(c for m in body["messages"] for c in m["content"])]
                  if "cache_control" in b]
        assert len(marked) == 3 and "cache_control" not in body  # the last tool, the system, the tail; no more
        assert "cache_control" in body["tools"][-1] and "cache_control" in body["system"][-1]
        assert "cache_control" in body["messages"][-1]["content"][-1]
    first, second, third = (t.usage for t in turns)
    assert first.cache_read_tokens == 0 and first.cache_write_tokens > 0
    assert second.cache_read_tokens >= first.cache_write_tokens  # the whole first request read back
    assert third.cache_read_tokens > second.cache_read_tokens
    assert all(t.usage.prompt_tokens > t.usage.input_tokens for t in turns)


async def test_history_is_never_marked_for_the_cache(mock_server, backend: Backend) -> None:
    mock = mock_server([{"content": [{"type": "text", "text": "a"}]}])
    history = [user("hi")]
    await model_for(backend, mock.url).complete(system="s", messages=history, tools=[READ])
    assert history == [user("hi")]


@pytest.mark.parametrize(("name", "thinking", "expected", "max_tokens"), [
    ("claude-opus-5-5", ThinkingPrefs(budget=5000), {"type": "enabled", "budget_tokens": 5000}, 128_000),
    ("claude-opus-5-5", ThinkingPrefs(budget=0), {"type": "disabled"}, 128_000),
    ("claude-sonnet-5-5", ThinkingPrefs(enabled=False), {"type": "disabled"}, 128_000),
    ("claude-sonnet-4-5", None, {"type": "enabled", "budget_tokens": 31_999}, 32_000),
    ("claude-haiku-4-5-20251001", ThinkingPrefs(budget=10**6), {"type": "enabled", "budget_tokens": 31_999}, 32_000),
    ("my-gateway-model", None, None, 32_000),
])
async def test_thinking_and_output_budget_follow_the_model(mock_server, backend: Backend, name: str,
                                                           thinking: ThinkingPrefs | None,
                                                           expected: dict[str, Any] | None, max_tokens: int) -> None:
    mock = mock_server([{"content": [{"type": "text", "text": "a"}]}])
    await model_for(backend, mock.url, name, thinking=thinking).complete(system="", messages=[user("hi")], tools=[])
    [body] = messages_of(mock)
    assert body.get("thinking") == expected and body["max_tokens"] == max_tokens
    assert ("context_management" in body) == (expected is not None and expected["type"] != "disabled")


async def test_effort_level_and_a_sampling_request(mock_server, backend: Backend) -> None:
    from mini_claude.models.base import GenerationOptions

    mock = mock_server([{"content": [{"type": "text", "text": "a"}]}] * 2)
    model = model_for(backend, mock.url, "claude-opus-4-8", thinking=ThinkingPrefs(effort="max"))
    await model.complete(system="", messages=[user("hi")], tools=[])
    await model.complete(system="server", messages=[user("hi")], tools=[], options=GenerationOptions(max_tokens=50))
    thinking, sampling = messages_of(mock)
    assert thinking["output_config"] == {"effort": "max"} and thinking["max_tokens"] == 64_000
    # a one-off request with its own limit (MCP sampling, a summary): no thinking, no breakpoints
    assert sampling["max_tokens"] == 50 and sampling["system"] == "server"
    assert not {"thinking", "output_config", "context_management"} & set(sampling)


async def test_opusplan_follows_plan_mode_and_switch_follows_the_table(mock_server, backend: Backend) -> None:
    mock = mock_server([{"content": [{"type": "text", "text": "a"}]}] * 3)
    model = model_for(backend, mock.url, "claude-sonnet-5-5")
    model.switch("opusplan", {})
    await model.complete(system="", messages=[user("1")], tools=[])
    model.set_planning(True)
    await model.complete(system="", messages=[user("2")], tools=[])
    model.switch("claude-sonnet-4-5", {})
    await model.complete(system="", messages=[user("3")], tools=[])
    assert [(b["model"], b["max_tokens"]) for b in messages_of(mock)] == [
        ("claude-sonnet-5-5", 128_000), ("claude-opus-5-5", 128_000), ("claude-sonnet-4-5", 32_000)]


async def test_a_request_without_thinking_sends_no_thinking_blocks(mock_server, backend: Backend) -> None:
    mock = mock_server([copy.deepcopy(TWO_TOOL_TURNS[0]), {"content": [{"type": "text", "text": "ok"}]}])
    model = model_for(backend, mock.url)
    turn = await model.complete(system="", messages=[user("go")], tools=[READ])
    model.switch("my-gateway-model", {})  # no thinking there
    history = [user("go"), {"role": "assistant", "content": turn.content}, tool_result(turn.tool_uses[0]["id"], "x")]
    assert (await model.complete(system="", messages=history, tools=[READ])).text == "ok"
    sent = messages_of(mock)[1]
    assert "thinking" not in sent and [b["type"] for b in sent["messages"][1]["content"]] == ["tool_use"]
    assert history[1]["content"][0] == FIRST_THOUGHT  # the history keeps it
