"""OpenAICompatModel: history conversion, and the real `openai` SDK against the mock server over loopback."""

from __future__ import annotations

import json

import pytest
from model_helpers import FAST_RETRY, tool_result, user

from mini_claude.errors import ModelError
from mini_claude.models.base import ToolSpec
from mini_claude.models.openai_compat import OpenAICompatModel, from_openai_message, to_openai_messages
from tests.helpers import refused_port

ADD_TOOL = ToolSpec("mcp__demo__add", "Add two numbers",
                    {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}})


def model_for(url: str, *, stream: bool = True) -> OpenAICompatModel:
    return OpenAICompatModel("mock-gpt", api_key="sk-openai-secret", base_url=f"{url}/v1", stream=stream,
                             retry=FAST_RETRY)


# ---- conversion ---------------------------------------------------------------------------------------------


def test_history_conversion() -> None:
    history = [
        {"role": "user", "content": [
            {"type": "text", "text": "what is in this picture?"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
        ]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "two checks", "signature": "sig"},  # Anthropic's own: not sent
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "text", "text": "Let me check two things."},
            {"type": "tool_use", "id": "call_1", "name": "Read", "input": {"file_path": "a.txt"}},
            {"type": "tool_use", "id": "call_2", "name": "screenshot", "input": {}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "call_1", "content": [{"type": "text", "text": "no such file"}],
             "is_error": True},
            {"type": "tool_result", "tool_use_id": "call_2", "content": [
                {"type": "text", "text": "captured"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "BBBB"}},
            ]},
            {"type": "text", "text": "keep going"},
        ]},
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
        {"role": "user", "content": "plain string content"},
    ]
    assert to_openai_messages("you are helpful", history) == [
        {"role": "system", "content": "you are helpful"},
        {"role": "user", "content": [
            {"type": "text", "text": "what is in this picture?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        ]},
        {"role": "assistant", "content": "Let me check two things.", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "Read", "arguments": '{"file_path": "a.txt"}'}},
            {"id": "call_2", "type": "function", "function": {"name": "screenshot", "arguments": "{}"}},
        ]},
        {"role": "tool", "tool_call_id": "call_1", "content": "Error: no such file"},
        {"role": "tool", "tool_call_id": "call_2", "content": "captured"},
        {"role": "user", "content": [
            {"type": "text", "text": "(image output of tool call call_2)"},
            {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,BBBB"}},
            {"type": "text", "text": "keep going"},
        ]},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "plain string content"},
    ]


def test_no_system_message_when_empty_and_tool_only_assistant() -> None:
    history = [user("go"), {"role": "assistant", "content": [
        {"type": "tool_use", "id": "c1", "name": "ls", "input": {}}]}, tool_result("c1", "a b c")]
    assert to_openai_messages("", history) == [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "a b c"},
    ]


@pytest.mark.parametrize(("finish", "stop"), [("tool_calls", "tool_use"), ("stop", "end_turn"),
                                              ("length", "max_tokens"), ("content_filter", "content_filter")])
def test_finish_reason_mapping(finish: str, stop: str) -> None:
    assert from_openai_message("hi", [], finish).stop_reason == stop


def test_answer_conversion_and_bad_arguments() -> None:
    turn = from_openai_message("", [("call_9", "add", '{"a": 1}'), (None, "noargs", ""), ("c", "bad", "{oops")],
                               "stop")
    assert turn.content == [
        {"type": "tool_use", "id": "call_9", "name": "add", "input": {"a": 1}},
        {"type": "tool_use", "id": "call_2", "name": "noargs", "input": {}},
        {"type": "tool_use", "id": "c", "name": "bad", "input": "{oops"},  # the agent reports it to the model
    ]
    assert turn.stop_reason == "tool_use"  # "stop" with tool calls still means the model wants tools


# ---- against the mock server ----------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False])
async def test_text_and_tool_calls_round_trip(mock_server, stream: bool) -> None:
    mock = mock_server([
        {"content": [{"type": "text", "text": "Adding the numbers now, one moment."},
                     {"type": "tool_use", "name": "mcp__demo__add", "input": {"a": 17, "b": 25}},
                     {"type": "tool_use", "name": "mcp__demo__add", "input": {"a": 1, "b": 2}}]},
        {"expect_tool_result_contains": "42",
         "content": [{"type": "text", "text": "17 + 25 = {{last_tool_result}}; error={{last_tool_result_is_error}}"}]},
    ])
    model = model_for(mock.url, stream=stream)
    deltas: list[str] = []
    first = await model.complete(system="sys", messages=[user("add")], tools=[ADD_TOOL], on_text=deltas.append)
    assert first.content == [
        {"type": "text", "text": "Adding the numbers now, one moment."},
        {"type": "tool_use", "id": "call_mock_1", "name": "mcp__demo__add", "input": {"a": 17, "b": 25}},
        {"type": "tool_use", "id": "call_mock_2", "name": "mcp__demo__add", "input": {"a": 1, "b": 2}},
    ]
    assert first.stop_reason == "tool_use"
    assert first.usage.input_tokens > 0
    if stream:
        assert len(deltas) > 1 and "".join(deltas) == first.text
    else:
        assert deltas == []

    history = [user("add"), {"role": "assistant", "content": first.content},
               {"role": "user", "content": [
                   {"type": "tool_result", "tool_use_id": "call_mock_1", "content": [{"type": "text", "text": "3"}]},
                   {"type": "tool_result", "tool_use_id": "call_mock_2", "content": [{"type": "text", "text": "42"}]},
               ]}]
    second = await model.complete(system="sys", messages=history, tools=[ADD_TOOL])
    assert second.text == "17 + 25 = 42; error=false"
    assert second.stop_reason == "end_turn"

    body = mock.requests[1]["body"]
    assert mock.requests[1]["path"] == "/v1/chat/completions"
    assert body["tools"] == [{"type": "function", "function": {"name": "mcp__demo__add",
                                                               "description": "Add two numbers",
                                                               "parameters": ADD_TOOL.input_schema}}]
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "tool", "tool"]
    assert [c["id"] for c in body["messages"][2]["tool_calls"]] == ["call_mock_1", "call_mock_2"]
    assert json.loads(body["messages"][2]["tool_calls"][0]["function"]["arguments"]) == {"a": 17, "b": 25}
    assert "sk-openai-secret" not in json.dumps(mock.requests[0]["headers"])


async def test_error_tool_result_is_prefixed(mock_server) -> None:
    mock = mock_server([{"content": [{"type": "text", "text": "[{{last_tool_result}}] {{last_tool_result_is_error}}"}]}])
    turn = await model_for(mock.url).complete(system="", messages=[tool_result("c1", "boom", is_error=True)],
                                              tools=[])
    assert turn.text == "[Error: boom] true"


@pytest.mark.parametrize("stream", [True, False])
async def test_429_then_success_is_retried(mock_server, stream: bool) -> None:
    mock = mock_server([{"error": {"status": 429, "message": "rate limited", "headers": {"retry-after": "0"}}},
                        {"content": [{"type": "text", "text": "fine"}]}])
    turn = await model_for(mock.url, stream=stream).complete(system="", messages=[user("hi")], tools=[])
    assert turn.text == "fine"
    assert len(mock.requests) == 2


async def test_400_is_not_retried(mock_server) -> None:
    mock = mock_server([{"error": {"status": 400, "message": "tools[0] is invalid"}},
                        {"content": [{"type": "text", "text": "never"}]}])
    with pytest.raises(ModelError) as info:
        await model_for(mock.url).complete(system="", messages=[user("hi")], tools=[])
    assert str(info.value) == "model API error 400: tools[0] is invalid"
    assert info.value.status == 400
    assert len(mock.requests) == 1


async def test_connection_refused() -> None:
    url = f"http://127.0.0.1:{refused_port()}"
    with pytest.raises(ModelError) as info:
        await model_for(url).complete(system="", messages=[user("hi")], tools=[])
    assert str(info.value).startswith(f"cannot reach the model API at {url}/v1: connection refused")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("stream", [True, False])
async def test_scenario_exhausted(mock_server, stream: bool) -> None:
    mock = mock_server([])
    with pytest.raises(ModelError) as info:
        await model_for(mock.url, stream=stream).complete(system="", messages=[user("hi")], tools=[])
    assert "scenario exhausted after 0 turns" in str(info.value)
    assert len(mock.requests) == 1


def test_a_search_result_that_loads_tools_by_reference_reads_as_text() -> None:
    """A history from Anthropic's native tool loading (tool_reference blocks, the listing beside them) converts to
    a `tool` message naming what was loaded, then the listing as user text."""
    history = [user("add"), {"role": "assistant", "content": [
        {"type": "tool_use", "id": "call_1", "name": "ToolSearch", "input": {"query": "sum"}}]},
               {"role": "user", "content": [
                   {"type": "tool_result", "tool_use_id": "call_1", "content": [
                       {"type": "tool_reference", "tool_name": "mcp__e__get-sum"}]},
                   {"type": "text", "text": "mcp__e__get-sum: adds two numbers"}]}]
    converted = to_openai_messages("s", history)
    assert converted[-2] == {"role": "tool", "tool_call_id": "call_1", "content": "Loaded tool mcp__e__get-sum."}
    assert converted[-1]["role"] == "user" and "adds two numbers" in json.dumps(converted[-1])
