"""The Python API as a program calls it (`mini_claude.api`): `query` and `Client` against the mock model over real
HTTP, real files, the real gate. Every session is isolated by its Options (setting_sources None, env given)."""

from __future__ import annotations

import asyncio
import json
import os

import pytest

from mini_claude.api import (
    AssistantMessage,
    Client,
    Options,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    query,
)
from mini_claude.errors import ConfigError
from tests.api.conftest import ApiWorld, call, collect, text


async def test_query_reads_a_file_and_ends_with_its_result(world: ApiWorld, mock_model) -> None:
    (world.project / "notes.txt").write_text("the answer is 42\n")
    mock = mock_model([call("Read", file_path=str(world.project / "notes.txt")),
                       text("Found: {{last_tool_result}}")])
    messages = await collect("read notes.txt", world.options(mock.url))
    init, use, result_of_tool, answer, result = messages
    assert isinstance(init, SystemMessage) and init.subtype == "init"
    assert init.data["cwd"] == str(world.project) and "Read" in init.data["tools"]
    assert isinstance(use, AssistantMessage) and isinstance(use.content[0], ToolUseBlock)
    assert use.content[0].name == "Read"
    assert isinstance(result_of_tool, UserMessage) and isinstance(result_of_tool.content[0], ToolResultBlock)
    assert isinstance(answer, AssistantMessage) and isinstance(answer.content[0], TextBlock)
    assert "the answer is 42" in answer.content[0].text
    assert isinstance(result, ResultMessage) and result.subtype == "success" and not result.is_error
    assert result.num_turns == 2 and result.session_id == init.data["session_id"]
    assert "the answer is 42" in (result.result or "")


async def test_the_session_env_is_the_options_not_os_environ(world: ApiWorld, mock_model) -> None:
    mock = mock_model([call("Bash", command="echo $ONLY_IN_OPTIONS"), text("{{last_tool_result}}")])
    assert "ONLY_IN_OPTIONS" not in os.environ
    options = world.options(mock.url, env={"ONLY_IN_OPTIONS": "from-options"}, permission_mode="bypassPermissions")
    result = (await collect("echo", options))[-1]
    assert isinstance(result, ResultMessage) and "from-options" in (result.result or "")
    assert "ONLY_IN_OPTIONS" not in os.environ


async def test_an_isolated_session_reads_no_project_files(world: ApiWorld, mock_model) -> None:
    (world.project / "CLAUDE.md").write_text("PROJECT MEMORY MARKER\n")
    claude = world.project / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Read"]}}))
    (world.project / "notes.txt").write_text("readable\n")
    mock = mock_model([call("Read", file_path=str(world.project / "notes.txt")), text("{{last_tool_result}}")])
    result = (await collect("read", world.options(mock.url)))[-1]
    assert isinstance(result, ResultMessage) and "readable" in (result.result or "")  # the deny rule was not read
    assert "PROJECT MEMORY MARKER" not in json.dumps(mock.requests)


async def test_can_use_tool_allows_one_call_and_denies_another(world: ApiWorld, mock_model) -> None:
    (world.project / "first.txt").write_text("1\n")
    mock = mock_model([call("Bash", command="ls first.txt"), call("Bash", command="ls second.txt"),
                       text("done: {{last_tool_result}}")])
    asked: list[tuple[str, dict[str, object]]] = []

    async def can_use_tool(name: str, tool_input: dict[str, object], context: object) -> object:
        asked.append((name, tool_input))
        if "first" in str(tool_input.get("command")):
            return PermissionResultAllow()
        return PermissionResultDeny(message="the second listing is not wanted")

    messages = await collect("echo twice", world.options(mock.url, can_use_tool=can_use_tool))
    assert [name for name, _ in asked] == ["Bash", "Bash"]
    results = [block for m in messages if isinstance(m, UserMessage) for block in m.content
               if isinstance(block, ToolResultBlock)]
    assert "first" in json.dumps(results[0].content)
    assert results[1].is_error and "the second listing is not wanted" in json.dumps(results[1].content)
    final = messages[-1]
    assert isinstance(final, ResultMessage) and final.permission_denials
    assert final.permission_denials[0]["tool_name"] == "Bash"


async def test_a_two_turn_client_session_with_an_interrupt(world: ApiWorld, mock_model) -> None:
    mock = mock_model([text("first answer"), {"content": [{"type": "text", "text": "never"}], "delay_ms": 20000},
                       text("third answer, after the interruption")])
    async with Client(world.options(mock.url)) as client:
        await client.query("one")
        first = [m async for m in client.receive_response()]
        assert isinstance(first[-1], ResultMessage) and first[-1].result == "first answer"
        await client.query("two")
        async for message in client.receive_messages():
            if isinstance(message, SystemMessage):  # the turn began: its model request is on its way
                await _wait_for_requests(mock, 2)
                await client.interrupt()
            if isinstance(message, ResultMessage):
                interrupted = message
                break
        assert interrupted.is_error and interrupted.terminal_reason == "aborted_streaming"
        await client.query("three")
        third = [m async for m in client.receive_response()]
        assert isinstance(third[-1], ResultMessage) and third[-1].result == "third answer, after the interruption"
        assert third[-1].session_id == first[-1].session_id


async def _wait_for_requests(mock, count: int) -> None:
    from tests.helpers import eventually

    await eventually(lambda: len(mock.requests) >= count, f"{count} model requests")


async def test_streaming_input_is_a_turn_per_message(world: ApiWorld, mock_model) -> None:
    mock = mock_model([text("one"), text("two")])

    async def prompts():
        for words in ("first", "second"):
            yield {"type": "user", "message": {"role": "user", "content": words}}

    results = [m for m in [m async for m in query(prompt=prompts(), options=world.options(mock.url))]
               if isinstance(m, ResultMessage)]
    assert [r.result for r in results] == ["one", "two"]


async def test_a_bad_streaming_message_is_a_clear_error(world: ApiWorld, mock_model) -> None:
    mock = mock_model([text("unused")])

    async def prompts():
        yield {"type": "assistant", "message": {"content": "no"}}

    with pytest.raises(ConfigError, match="must be"):
        [m async for m in query(prompt=prompts(), options=world.options(mock.url))]


async def test_resume_and_fork(world: ApiWorld, mock_model) -> None:
    mock = mock_model([text("remembered: blue"), text("resumed answer"), text("forked answer")])
    first = (await collect("my colour is blue", world.options(mock.url)))[-1]
    assert isinstance(first, ResultMessage)
    resumed = (await collect("what colour?", world.options(mock.url, resume=first.session_id)))[-1]
    assert isinstance(resumed, ResultMessage) and resumed.session_id == first.session_id
    assert "my colour is blue" in json.dumps(mock.requests[1]["body"]["messages"])
    forked = (await collect("and now?", world.options(mock.url, resume=first.session_id, fork_session=True)))[-1]
    assert isinstance(forked, ResultMessage) and forked.session_id != first.session_id
    sent = json.dumps(mock.requests[2]["body"]["messages"])
    assert "my colour is blue" in sent and "what colour?" in sent


async def test_options_errors_name_the_field(world: ApiWorld, mock_model) -> None:
    mock = mock_model([text("unused")])
    with pytest.raises(ConfigError, match=r"Options\.setting_sources"):
        await collect("x", world.options(mock.url, setting_sources=["everything"]))
    with pytest.raises(ConfigError, match=r"Options\.cwd"):
        await collect("x", Options(cwd=world.project / "missing"))
    client = Client(world.options(mock.url))
    with pytest.raises(ConfigError, match="not connected"):
        await client.query("x")


async def test_sixteen_sessions_at_once_in_one_process(world: ApiWorld, mock_model) -> None:
    mocks = [mock_model([text(f"answer {n}")]) for n in range(16)]

    async def one(n: int) -> ResultMessage:
        result = (await collect(f"question {n}", world.options(mocks[n].url)))[-1]
        assert isinstance(result, ResultMessage)
        return result

    results = await asyncio.gather(*(one(n) for n in range(16)))
    assert [r.result for r in results] == [f"answer {n}" for n in range(16)]
    assert len({r.session_id for r in results}) == 16
    for n, mock in enumerate(mocks):  # each session's conversation is its own
        assert f"question {n}" in json.dumps(mock.requests[0]["body"]["messages"])


SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}, "people": {"type": "integer", "minimum": 0}},
          "required": ["city", "people"], "additionalProperties": False}


async def test_structured_output_is_validated_and_retried_once(world: ApiWorld, mock_model) -> None:
    mock = mock_model([
        call("StructuredOutput", city="Lyon", people="many"),  # wrong type: the model hears why
        text("I think it is Lyon."),  # ends without the tool: reminded once
        call("StructuredOutput", city="Lyon", people=520000),
        text("done"),
    ])
    options = world.options(mock.url, output_format={"type": "json_schema", "schema": SCHEMA})
    messages = await collect("which city?", options)
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "success"
    assert result.structured_output == {"city": "Lyon", "people": 520000}
    first_result = json.dumps(mock.requests[1]["body"]["messages"][-1])
    assert "people" in first_result and "is not of type" in first_result
    assert "StructuredOutput" in json.dumps(mock.requests[2]["body"]["messages"][-1])  # the reminder
    tools = [tool["name"] for tool in mock.requests[0]["body"]["tools"]]
    assert "StructuredOutput" in tools


async def test_structured_output_never_given_is_an_error_result(world: ApiWorld, mock_model) -> None:
    mock = mock_model([text("no shape"), text("still no shape")])
    options = world.options(mock.url, output_format={"type": "json_schema", "schema": SCHEMA})
    result = (await collect("which city?", options))[-1]
    assert isinstance(result, ResultMessage) and result.is_error
    assert result.subtype == "error_max_structured_output_retries" and result.structured_output is None


async def test_an_invalid_schema_is_refused_at_the_start(world: ApiWorld, mock_model) -> None:
    mock = mock_model([text("unused")])
    with pytest.raises(ConfigError, match="not a valid JSON Schema"):
        await collect("x", world.options(mock.url, output_format={"type": "json_schema",
                                                               "schema": {"type": "nonsense"}}))


async def test_agents_given_in_code_are_sub_agent_types(world: ApiWorld, mock_model) -> None:
    from mini_claude.api import AgentDefinition

    mock = mock_model([call("Agent", description="greet", prompt="say hello", subagent_type="greeter"),
                       text("hello from the greeter"), text("child said: {{last_tool_result}}")])
    agents = {"greeter": AgentDefinition(description="Greets people", prompt="You greet people warmly.",
                                         tools=["Read"])}
    messages = await collect("greet me", world.options(mock.url, agents=agents))
    init, result = messages[0], messages[-1]
    assert isinstance(init, SystemMessage) and "greeter" in init.data["agents"]
    assert isinstance(result, ResultMessage) and "hello from the greeter" in (result.result or "")
    child = mock.requests[1]["body"]
    assert "You greet people warmly." in json.dumps(child["system"])
    assert [tool["name"] for tool in child["tools"]] == ["Read"]


async def test_leaving_a_client_mid_turn_ends_it(world: ApiWorld, mock_model) -> None:
    mock = mock_model([{"content": [{"type": "text", "text": "slow"}], "delay_ms": 20000}])
    async with Client(world.options(mock.url)) as client:
        await client.query("take your time")
        async for message in client.receive_response():
            assert isinstance(message, SystemMessage)  # the init: leave before the answer
            break
    messages = [m async for m in client.receive_messages()]  # the stream ended with the session
    assert not any(isinstance(m, ResultMessage) for m in messages)


async def test_an_isolated_session_reads_no_dotenv_even_in_a_trusted_folder(world: ApiWorld, mock_model) -> None:
    """Outside review: a trusted folder's `.env` redirected an isolated session (and the program's own key) to the
    repository's URL, and an untrusted one's still chose the model."""
    from mini_claude.trust import TrustStore

    decoy = mock_model([text("the repository's server")])
    (world.project / ".env").write_text(f"ANTHROPIC_BASE_URL={decoy.url}\nANTHROPIC_MODEL=claude-repo-model\n"
                                        "ANTHROPIC_API_KEY=sk-from-dotenv\n")
    TrustStore.in_state_dir(world.state).record(world.project)
    mock = mock_model([text("the program's server")])
    result = (await collect("hi", world.options(mock.url)))[-1]
    assert isinstance(result, ResultMessage) and result.result == "the program's server"
    assert decoy.requests == []
    assert mock.requests[0]["body"]["model"] != "claude-repo-model"
    with pytest.raises(ConfigError, match=r"Options\.trust"):
        await collect("hi", world.options(mock.url, trust=True))
