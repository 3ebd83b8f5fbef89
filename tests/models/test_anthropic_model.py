"""The Anthropic backends against the mock model server over loopback HTTP: every test runs twice, with the real
`anthropic` SDK (AnthropicModel) and with our own httpx client (AnthropicHttpModel, the default), which must
behave the same (requests, streaming, errors in the same words, retries)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from model_helpers import FAST_RETRY, tool_result, user

from mini_claude.errors import ModelError
from mini_claude.models.anthropic import AnthropicModel
from mini_claude.models.anthropic_http import AnthropicHttpModel
from mini_claude.models.base import ToolSpec
from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from tests.helpers import refused_port

READ_TOOL = ToolSpec("Read", "Read a file", {"type": "object", "properties": {"file_path": {"type": "string"}}})
TEXT_AND_TOOL = {"content": [
    {"type": "text", "text": "Let me read the file first, then I will answer."},
    {"type": "tool_use", "name": "Read", "input": {"file_path": "notes.txt", "limit": 3, "nested": {"a": [1, 2]}}},
]}


_BACKEND: list[type[AnthropicModel] | type[AnthropicHttpModel]] = [AnthropicModel]


@pytest.fixture(autouse=True, params=[AnthropicModel, AnthropicHttpModel], ids=["sdk", "http"])
def backend(request: pytest.FixtureRequest) -> None:
    _BACKEND[0] = request.param


def model_for(url: str, *, stream: bool = True) -> AnthropicModel | AnthropicHttpModel:
    return _BACKEND[0]("mock-claude", api_key="sk-test-secret", base_url=url, stream=stream, retry=FAST_RETRY)


@pytest.mark.parametrize("stream", [True, False])
async def test_text_and_tool_use(mock_server, stream: bool) -> None:
    mock = mock_server([TEXT_AND_TOOL])
    deltas: list[str] = []
    turn = await model_for(mock.url, stream=stream).complete(
        system="be brief", messages=[user("fix it")], tools=[READ_TOOL], on_text=deltas.append)

    assert turn.content == [
        {"type": "text", "text": "Let me read the file first, then I will answer."},
        {"type": "tool_use", "id": "toolu_mock_1", "name": "Read",
         "input": {"file_path": "notes.txt", "limit": 3, "nested": {"a": [1, 2]}}},
    ]
    assert turn.stop_reason == "tool_use"
    assert turn.usage.input_tokens > 0 and turn.usage.output_tokens > 0
    if stream:
        assert len(deltas) > 1, "text should arrive in several deltas"
        assert "".join(deltas) == turn.text
    else:
        assert deltas == []
    [request] = mock.requests
    assert request["path"] == "/v1/messages"
    assert request["body"].get("stream", False) is stream
    # prompt-cache breakpoints: the last tool, the system prompt, the last block of the conversation
    assert request["body"]["system"] == [{"type": "text", "text": "be brief", "cache_control": {"type": "ephemeral"}}]
    assert request["body"]["tools"] == [{"name": "Read", "description": "Read a file",
                                         "input_schema": READ_TOOL.input_schema,
                                         "cache_control": {"type": "ephemeral"}}]
    assert request["body"]["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "fix it", "cache_control": {"type": "ephemeral"}}]}]
    assert "cache_control" not in request["body"]
    assert "sk-test-secret" not in json.dumps(request["headers"])


@pytest.mark.parametrize("stream", [True, False])
async def test_last_tool_result_placeholder(mock_server, stream: bool) -> None:
    mock = mock_server([TEXT_AND_TOOL, {
        "expect_tool_result_contains": "quick",
        "content": [{"type": "text", "text": "The file says: {{last_tool_result}} (error: {{last_tool_result_is_error}})"}],
    }])
    model = model_for(mock.url, stream=stream)
    first = await model.complete(system="", messages=[user("read")], tools=[READ_TOOL])
    history = [user("read"), {"role": "assistant", "content": first.content},
               tool_result(first.tool_uses[0]["id"], "the quick brown fox")]
    second = await model.complete(system="", messages=history, tools=[READ_TOOL])
    assert second.text == "The file says: the quick brown fox (error: false)"
    assert second.stop_reason == "end_turn"
    assert len(mock.requests) == 2


async def test_expectation_not_met_is_a_clear_unretried_error(mock_server) -> None:
    mock = mock_server([{"expect_tool_result_contains": "jumsp", "content": [{"type": "text", "text": "ok"}]}])
    with pytest.raises(ModelError) as info:
        await model_for(mock.url).complete(system="", messages=[tool_result("toolu_x", "nothing here")], tools=[])
    assert "expected the last tool_result to contain 'jumsp'" in str(info.value)
    assert len(mock.requests) == 1
    assert mock.turns_used == 0  # a failed expectation does not consume the turn


@pytest.mark.parametrize("stream", [True, False])
async def test_429_then_success_is_retried(mock_server, tmp_path: Path, stream: bool) -> None:
    log = tmp_path / "requests.jsonl"
    mock = mock_server([
        {"error": {"status": 429, "message": "slow down", "headers": {"retry-after": "0"}}},
        {"content": [{"type": "text", "text": "done"}]},
    ], log_path=log)
    deltas: list[str] = []
    turn = await model_for(mock.url, stream=stream).complete(
        system="", messages=[user("hi")], tools=[], on_text=deltas.append)
    assert turn.text == "done"
    lines = log.read_text().splitlines()
    assert len(lines) == 2
    assert all(json.loads(line)["path"] == "/v1/messages" for line in lines)


@pytest.mark.parametrize("status", [529, 500, 503])
async def test_server_errors_are_retried(mock_server, status: int) -> None:
    mock = mock_server([{"error": {"status": status, "message": "busy"}}, {"content": [{"type": "text", "text": "ok"}]}])
    turn = await model_for(mock.url).complete(system="", messages=[user("hi")], tools=[])
    assert turn.text == "ok"
    assert len(mock.requests) == 2


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
async def test_client_errors_are_not_retried(mock_server, status: int) -> None:
    mock = mock_server([{"error": {"status": status, "message": "bad things"}},
                        {"content": [{"type": "text", "text": "never"}]}])
    with pytest.raises(ModelError) as info:
        await model_for(mock.url).complete(system="", messages=[user("hi")], tools=[])
    assert info.value.status == status
    assert not info.value.retryable
    hint = {401: " — the credentials from ANTHROPIC_API_KEY were refused: check or replace them",
            403: " — the credentials from ANTHROPIC_API_KEY are not allowed to do this: check their permissions"}
    assert str(info.value) == f"model API error {status}: bad things{hint.get(status, '')}"
    assert len(mock.requests) == 1


async def test_retries_give_up_after_max_attempts(mock_server) -> None:
    mock = mock_server([{"error": {"status": 529, "message": "Overloaded"}}] * 5)
    with pytest.raises(ModelError) as info:
        await model_for(mock.url).complete(system="", messages=[user("hi")], tools=[])
    assert str(info.value) == ("model API error 529: Overloaded (gave up after 4 attempts); "
                              "the API is overloaded: try again in a few minutes, or choose another model with /model")
    assert info.value.status == 529
    assert len(mock.requests) == 4


async def test_connection_refused_is_one_line() -> None:
    url = f"http://127.0.0.1:{refused_port()}"
    with pytest.raises(ModelError) as info:
        await model_for(url).complete(system="", messages=[user("hi")], tools=[])
    message = str(info.value)
    assert message.startswith(f"cannot reach the model API at {url}: connection refused")
    assert "\n" not in message
    assert info.value.status is None


@pytest.mark.parametrize("stream", [True, False])
async def test_scenario_exhausted(mock_server, stream: bool) -> None:
    mock = mock_server([{"content": [{"type": "text", "text": "only one"}]}])
    model = model_for(mock.url, stream=stream)
    await model.complete(system="", messages=[user("one")], tools=[])
    with pytest.raises(ModelError) as info:
        await model.complete(system="", messages=[user("two")], tools=[])
    assert "mock-model: scenario exhausted after 1 turns" in str(info.value)
    assert info.value.status == 500
    assert len(mock.requests) == 2  # x-should-retry: false keeps us from hammering an exhausted script


async def test_tool_only_turn_and_empty_input(mock_server) -> None:
    mock = mock_server([{"content": [{"type": "tool_use", "name": "list", "input": {}},
                                     {"type": "tool_use", "name": "Read", "input": {"file_path": "ü.txt"}}]}])
    turn = await model_for(mock.url).complete(system="", messages=[user("go")], tools=[READ_TOOL])
    assert turn.text == ""
    assert [(b["id"], b["name"], b["input"]) for b in turn.tool_uses] == [
        ("toolu_mock_1", "list", {}), ("toolu_mock_2", "Read", {"file_path": "ü.txt"})]


async def test_client_is_kept_across_calls(mock_server) -> None:
    mock = mock_server([{"content": [{"type": "text", "text": "a"}]}, {"content": [{"type": "text", "text": "b"}]}])
    model = model_for(mock.url)
    client = model._client
    assert (await model.complete(system="", messages=[user("1")], tools=[])).text == "a"
    assert (await model.complete(system="", messages=[user("2")], tools=[])).text == "b"
    assert model._client is client


def test_importing_the_module_does_not_import_the_sdk() -> None:
    code = ("import sys, mini_claude.models.anthropic, mini_claude.models.openai_compat, "
            "mini_claude.models.factory, mini_claude.models.mock_server; "
            "print(sorted(m for m in ('anthropic', 'openai', 'httpx', 'httpx2') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True)
    assert out.stdout.strip() == "[]"


async def test_empty_text_blocks_are_not_sent(mock_server) -> None:
    mock = mock_server([{"content": [{"type": "text", "text": "ok"}]}])
    history = [user("1"), {"role": "assistant", "content": [{"type": "text", "text": ""}]},
               user("2"), {"role": "assistant", "content": [{"type": "text", "text": ""},
                                                            {"type": "tool_use", "id": "t", "name": "x", "input": {}}]},
               tool_result("t", "r")]
    await model_for(mock.url).complete(system="", messages=history, tools=[])
    sent = mock.requests[0]["body"]["messages"]
    assert sent[1]["content"] == [{"type": "text", "text": "(no response)"}]
    assert sent[3]["content"] == [{"type": "tool_use", "id": "t", "name": "x", "input": {}}]
    assert history[1]["content"] == [{"type": "text", "text": ""}]  # the caller's history is untouched


async def test_count_tool_tokens_asks_the_count_endpoint() -> None:
    """What the tools add to a request, by `/v1/messages/count_tokens` with them and without, both with a one-line
    baseline tool (the API's tool-use preamble is in both); the mock divides a request's JSON characters by the
    scenario's `chars_per_token`."""
    with MockModelServer(parse_scenario({"turns": [], "chars_per_token": 2})) as mock:
        model = model_for(mock.url)
        try:
            counted = await model.count_tool_tokens([READ_TOOL])
        finally:
            await model.aclose()
        baseline, with_tools = sorted((r["body"] for r in mock.requests), key=lambda body: len(body["tools"]))
    assert [r["path"] for r in mock.requests] == ["/v1/messages/count_tokens"] * 2
    assert [t["name"] for t in with_tools["tools"]] == ["Read", "noop"]
    assert with_tools["tools"][0] == {"name": "Read", "description": "Read a file",
                                      "input_schema": READ_TOOL.input_schema}
    assert [t["name"] for t in baseline["tools"]] == ["noop"]
    assert with_tools["model"] == baseline["model"] == "mock-claude"
    size = len(json.dumps(with_tools, ensure_ascii=False)) // 2 - len(json.dumps(baseline, ensure_ascii=False)) // 2
    assert counted == size > 0


async def test_a_failed_count_cancels_the_other() -> None:
    """`tools_cost`: when one of its two counts fails, the error comes out and the other count is cancelled, not
    left running for minutes."""
    import asyncio

    from mini_claude.models.anthropic_messages import tools_cost

    cancelled = asyncio.Event()

    async def count(params: dict[str, object]) -> int:
        if len(params["tools"]) == 1:  # type: ignore[arg-type]
            raise ModelError("count_tokens: 404")
        try:
            await asyncio.Event().wait()  # a count that never answers
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return 0

    with pytest.raises(ModelError, match="404"):
        await asyncio.wait_for(tools_cost(count, "m", [READ_TOOL]), 5)
    await asyncio.wait_for(cancelled.wait(), 5)


async def test_deferred_tools_go_with_the_beta_header_and_foreign_references_as_text(mock_server) -> None:
    """A `defer_loading` tool is sent with the flag and the request with the tool-search beta header; a
    `tool_reference` to a tool the request does not defer becomes a line of text (the API would refuse it)."""
    mock = mock_server([{"content": [{"type": "text", "text": "ok"}]}] * 2)
    history = [user("add"), {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "ToolSearch", "input": {"query": "sum"}}]},
               {"role": "user", "content": [
                   {"type": "tool_result", "tool_use_id": "t1", "content": [
                       {"type": "tool_reference", "tool_name": "get_sum"},
                       {"type": "tool_reference", "tool_name": "gone"}]},
                   {"type": "text", "text": "get_sum: adds"}]}]
    model = model_for(mock.url)
    deferred = ToolSpec("get_sum", "Add two numbers", {"type": "object"}, defer_loading=True)
    await model.complete(system="s", messages=history, tools=[READ_TOOL, deferred])
    await model.complete(system="s", messages=history, tools=[READ_TOOL])
    await model.aclose()
    native, plain = mock.requests
    assert native["headers"]["anthropic-beta"] == "advanced-tool-use-2025-11-20"
    assert [t.get("defer_loading") for t in native["body"]["tools"]] == [None, True]
    assert native["body"]["messages"][2]["content"][0]["content"] == [
        {"type": "tool_reference", "tool_name": "get_sum"}, {"type": "text", "text": "Loaded tool gone."}]
    assert "anthropic-beta" not in plain["headers"]
    assert plain["body"]["messages"][2]["content"][0]["content"] == [
        {"type": "text", "text": "Loaded tool get_sum."}, {"type": "text", "text": "Loaded tool gone."}]
    assert history[2]["content"][0]["content"][1] == {"type": "tool_reference", "tool_name": "gone"}  # not mutated


async def test_a_deferred_tool_no_reference_loads_goes_whole(mock_server) -> None:
    """After a rollback or cleared results no tool_reference loads the tool any more: it goes in full, without the
    beta header, so the model never holds a tool it cannot see."""
    mock = mock_server([{"content": [{"type": "text", "text": "ok"}]}])
    model = model_for(mock.url)
    deferred = ToolSpec("get_sum", "Add two numbers", {"type": "object"}, defer_loading=True)
    await model.complete(system="s", messages=[user("add")], tools=[READ_TOOL, deferred])
    await model.aclose()
    [request] = mock.requests
    assert "anthropic-beta" not in request["headers"]
    assert [t.get("defer_loading") for t in request["body"]["tools"]] == [None, None]


async def test_text_with_unicode_line_breaks_arrives_whole(mock_server) -> None:
    # U+0085 and U+2028 are line breaks to str.splitlines (and so to httpx's aiter_lines), not to server-sent
    # events: a data line holding one was cut there and the rest of the answer lost (the httpx backend)
    text = "one\u0085two\u2028three\u2029four\x1cfive\x0bsix\x0cseven\r\neight"
    mock = mock_server([{"content": [{"type": "text", "text": text}]}])
    deltas: list[str] = []
    turn = await model_for(mock.url).complete(system="s", messages=[user("hi")], tools=[], on_text=deltas.append)
    assert turn.text == text and "".join(deltas) == text
