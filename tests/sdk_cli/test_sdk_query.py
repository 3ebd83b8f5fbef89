"""The Claude Agent SDK's own `query()` and `ClaudeSDKClient`, with `cli_path` at mini-claude, against the mock
model: the SDK's flags are accepted, its `initialize` answered, our stream-json lines parsed as its typed messages,
its permission callback asked through `can_use_tool`, its interrupt and mode / model changes honoured."""

from __future__ import annotations

import json

import pytest

from tests.sdk_cli.conftest import SdkRun

pytestmark = pytest.mark.timeout(150)


def answer(text: str) -> dict[str, object]:
    return {"content": [{"type": "text", "text": text}]}


def bash(command: str) -> dict[str, object]:
    return {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": command}}]}


def test_query_answers_with_assistant_and_result_messages(sdk: SdkRun) -> None:
    mock = sdk.mock([answer("hello from the mock")])
    got = sdk.drive("""
        seen = []
        async for message in query(prompt="hi", options=options()):
            seen.append(show(message))
        report(seen)
    """)
    kinds = [m["kind"] for m in got]
    assert kinds == ["SystemMessage", "AssistantMessage", "ResultMessage"]
    assert got[0]["subtype"] == "init"
    assert got[1]["text"] == "hello from the mock"
    result = got[2]
    assert (result["subtype"], result["is_error"], result["result"]) == ("success", False, "hello from the mock")
    assert result["session_id"] == got[0]["data"]["session_id"]
    assert mock.requests[0]["body"]["messages"][0]["content"][-1]["text"] == "hi"
    assert "system" not in mock.requests[0]["body"]  # the SDK's default system prompt: none (`--system-prompt=`)


def test_can_use_tool_allows_and_denies(sdk: SdkRun) -> None:
    (sdk.work / "marker").write_text("")
    sdk.mock([bash("touch allowed.txt"), bash("touch denied.txt"), answer("done")])
    got = sdk.drive("""
        asked = []
        async def can_use_tool(name, tool_input, context):
            asked.append([name, tool_input.get("command")])
            if "denied" in tool_input.get("command", ""):
                return PermissionResultDeny(message="not that file")
            return PermissionResultAllow()
        async def prompts():
            yield {"type": "user", "message": {"role": "user", "content": "make files"}}
        results = []
        async for message in query(prompt=prompts(), options=options(can_use_tool=can_use_tool)):
            if isinstance(message, UserMessage):
                for block in message.content:
                    if isinstance(block, ToolResultBlock):
                        results.append([block.is_error, str(block.content)])
            if isinstance(message, ResultMessage):
                results.append(["result", message.result])
        report({"asked": asked, "results": results})
    """)
    assert got["asked"] == [["Bash", "touch allowed.txt"], ["Bash", "touch denied.txt"]]
    assert (sdk.work / "allowed.txt").exists() and not (sdk.work / "denied.txt").exists()
    denied = got["results"][1]
    assert denied[0] is True and "not that file" in denied[1]
    assert got["results"][-1] == ["result", "done"]


def test_client_interrupt_ends_the_turn_and_the_session_goes_on(sdk: SdkRun) -> None:
    mock = sdk.mock([bash("sleep 30"), answer("second answer")])
    got = sdk.drive("""
        out = []
        async with ClaudeSDKClient(options=options(allowed_tools=["Bash(sleep:*)"])) as client:
            await client.query("first")
            async for message in client.receive_messages():
                if isinstance(message, AssistantMessage) and any(isinstance(b, ToolUseBlock) for b in message.content):
                    await client.interrupt()  # the command runs: the turn is cancelled under it
                if isinstance(message, UserMessage) and isinstance(message.content, list):
                    out.extend(["tool_result", str(b.content)] for b in message.content if isinstance(b, ToolResultBlock))
                if isinstance(message, ResultMessage):
                    out.append([message.subtype, message.is_error])
                    break
            await client.query("second")
            async for message in client.receive_response():
                if isinstance(message, ResultMessage):
                    out.append([message.subtype, message.result])
        report(out)
    """)
    assert got[0][0] == "tool_result" and "interrupted" in got[0][1]
    assert got[1:] == [["error_during_execution", True], ["success", "second answer"]]
    assert len(mock.requests) == 2
    second = mock.requests[1]["body"]["messages"]
    assert any(b.get("type") == "tool_result" for m in second if isinstance(m["content"], list) for b in m["content"])


def test_set_permission_mode_and_set_model(sdk: SdkRun) -> None:
    mock = sdk.mock([answer("one"), answer("two")])
    got = sdk.drive("""
        out = {}
        async with ClaudeSDKClient(options=options(model="claude-sonnet-4-5")) as client:
            info = await client.get_server_info()
            out["info"] = {k: info[k] for k in ("current_permission_mode", "output_style", "hooks_applied")}
            out["agents"] = [a["name"] for a in info["agents"]]
            await client.query("first")
            async for message in client.receive_response():
                pass
            await client.set_permission_mode("plan")
            await client.set_model("claude-haiku-4-5")
            await client.query("second")
            async for message in client.receive_response():
                if isinstance(message, SystemMessage):
                    out["mode"] = message.data["permissionMode"]
            out["status"] = await client.get_mcp_status()
            usage = await client.get_context_usage()
            out["usage"] = {k: usage[k] for k in ("totalTokens", "maxTokens", "model")}
            out["categories"] = [c["name"] for c in usage["categories"]]
            try:
                await client._query._send_control_request({"subtype": "rewind_files", "user_message_id": "x"})
            except Exception as exc:
                out["unknown"] = str(exc)
        report(out)
    """)
    assert [r["body"]["model"] for r in mock.requests] == ["claude-sonnet-4-5", "claude-haiku-4-5"]
    assert got["mode"] == "plan"
    assert got["info"] == {"current_permission_mode": "default", "output_style": "default", "hooks_applied": True}
    assert "general-purpose" in got["agents"]
    assert got["status"] == {"mcpServers": []}
    assert got["usage"]["model"] == "claude-haiku-4-5" and 0 < got["usage"]["totalTokens"] < got["usage"]["maxTokens"]
    assert "System prompt" in got["categories"] and "Messages" in got["categories"]
    assert "rewind_files" in got["unknown"]


def test_an_sdk_in_process_tool_is_called_through_mcp_message(sdk: SdkRun) -> None:
    mock = sdk.mock([{"content": [{"type": "tool_use", "name": "mcp__calc__add", "input": {"a": 40, "b": 2}}]},
                     answer("the sum is in")])
    got = sdk.drive("""
        calls = []
        @tool("add", "Add two numbers", {"a": int, "b": int})
        async def add(args):
            calls.append(args)
            return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}
        server = create_sdk_mcp_server("calc", tools=[add])
        out = {}
        opts = options(mcp_servers={"calc": server}, allowed_tools=["mcp__calc__add"])
        async for message in query(prompt="add them", options=opts):
            if isinstance(message, SystemMessage) and message.subtype == "init":
                out["servers"] = message.data["mcp_servers"]
                out["has_tool"] = "mcp__calc__add" in message.data["tools"]
            if isinstance(message, ResultMessage):
                out["result"] = message.result
        out["calls"] = calls
        report(out)
    """)
    assert got["calls"] == [{"a": 40, "b": 2}]
    assert got["has_tool"] and got["servers"] == [{"name": "calc", "status": "connected", "source": "dynamic"}]
    assert got["result"] == "the sum is in"
    sent = [b for m in mock.requests[1]["body"]["messages"] if isinstance(m["content"], list) for b in m["content"]
            if b.get("type") == "tool_result"]
    assert "42" in json.dumps(sent)


def test_setting_sources_choose_which_files_load(sdk: SdkRun) -> None:
    (sdk.work / "CLAUDE.md").write_text("PROJECT-MEMORY-MARKER")
    (sdk.work / ".claude" / "commands").mkdir(parents=True)
    (sdk.work / ".claude" / "commands" / "hello.md").write_text("Say hello.")
    (sdk.home / ".claude").mkdir()
    (sdk.home / ".claude" / "CLAUDE.md").write_text("USER-MEMORY-MARKER")
    mock = sdk.mock([answer("none"), answer("project only"), answer("default")])
    got = sdk.drive("""
        out = []
        for sources in ([], ["project"], None):
            async for message in query(prompt="hi", options=options(setting_sources=sources)):
                if isinstance(message, SystemMessage) and message.subtype == "init":
                    out.append(message.data["slash_commands"])
        report(out)
    """)
    sent = [json.dumps(r["body"]) for r in mock.requests]
    assert "PROJECT-MEMORY-MARKER" not in sent[0] and "USER-MEMORY-MARKER" not in sent[0]
    assert "PROJECT-MEMORY-MARKER" in sent[1] and "USER-MEMORY-MARKER" not in sent[1]
    assert "PROJECT-MEMORY-MARKER" in sent[2] and "USER-MEMORY-MARKER" in sent[2]
    assert got == [[], ["hello"], ["hello"]]


def test_partial_messages_stream_the_text_as_it_comes(sdk: SdkRun) -> None:
    sdk.mock([answer("streamed words here")])
    got = sdk.drive("""
        events = []
        async for message in query(prompt="hi", options=options(include_partial_messages=True)):
            if isinstance(message, StreamEvent):
                events.append(message.event)
            elif isinstance(message, AssistantMessage):
                events.append({"type": "assistant"})
        report(events)
    """)
    kinds = [e["type"] for e in got]
    stop = kinds.index("message_stop")
    assert kinds[0] == "message_start" and kinds[1] == "content_block_start"
    assert kinds[stop - 2:stop + 2] == ["content_block_stop", "message_delta", "message_stop", "assistant"]
    text = "".join(e["delta"]["text"] for e in got if e["type"] == "content_block_delta")
    assert text == "streamed words here"
    assert next(e for e in got if e["type"] == "message_delta")["delta"]["stop_reason"] == "end_turn"


def test_a_hook_callback_denies_a_pre_tool_use(sdk: SdkRun) -> None:
    sdk.mock([bash("touch hooked.txt"), answer("done")])
    got = sdk.drive("""
        seen = []
        async def guard(input_data, tool_use_id, context):
            seen.append([input_data["tool_name"], input_data["tool_input"]["command"], tool_use_id is not None])
            return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                           "permissionDecisionReason": "hooks say no"}}
        opts = options(allowed_tools=["Bash"], hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[guard])]})
        results = []
        async for message in query(prompt="touch it", options=opts):
            if isinstance(message, UserMessage) and isinstance(message.content, list):
                results += [str(b.content) for b in message.content if isinstance(b, ToolResultBlock)]
        report({"seen": seen, "results": results})
    """)
    assert got["seen"] == [["Bash", "touch hooked.txt", True]]
    assert not (sdk.work / "hooked.txt").exists()
    assert "hooks say no" in got["results"][0]


def test_agents_defined_in_the_sdk_are_sub_agent_types(sdk: SdkRun) -> None:
    mock = sdk.mock([{"content": [{"type": "tool_use", "name": "Agent", "input": {
                         "subagent_type": "reviewer", "description": "review", "prompt": "look at it"}}]},
                     answer("child report"), answer("done")])
    got = sdk.drive("""
        agents = {"reviewer": AgentDefinition(description="Reviews code", prompt="REVIEWER-PROMPT", tools=["Read"])}
        out = {}
        async with ClaudeSDKClient(options=options(agents=agents, allowed_tools=["Agent"])) as client:
            out["agents"] = [a["name"] for a in (await client.get_server_info())["agents"]]
            await client.query("review please")
            async for message in client.receive_response():
                if isinstance(message, ResultMessage):
                    out["result"] = message.result
        report(out)
    """)
    assert "reviewer" in got["agents"] and got["result"] == "done"
    child = mock.requests[1]["body"]
    assert "REVIEWER-PROMPT" in json.dumps(child["system"])
    assert [t["name"] for t in child["tools"]] == ["Read"]


def test_a_denial_with_interrupt_stops_the_run(sdk: SdkRun) -> None:
    mock = sdk.mock([bash("touch one.txt"), answer("never asked for")])
    got = sdk.drive("""
        async def can_use_tool(name, tool_input, context):
            return PermissionResultDeny(message="stop everything", interrupt=True)
        async def prompts():
            yield {"type": "user", "message": {"role": "user", "content": "go"}}
        out = []
        try:
            async for message in query(prompt=prompts(), options=options(can_use_tool=can_use_tool)):
                if isinstance(message, UserMessage) and isinstance(message.content, list):
                    out += [["tool_result", str(b.content)] for b in message.content
                            if isinstance(b, ToolResultBlock)]
                if isinstance(message, ResultMessage):
                    out.append([message.subtype, message.is_error])
        except ResultError as exc:  # the run ended in an error result: exit 1, as Claude Code's does
            out.append(["raised", exc.exit_code])
        report(out)
    """)
    assert got[0][0] == "tool_result" and "stop everything" in got[0][1]
    assert got[1:] == [["error_during_execution", True], ["raised", 1]]
    assert len(mock.requests) == 1 and not (sdk.work / "one.txt").exists()


def test_mcp_status_toggle_and_reconnect_of_an_sdk_server(sdk: SdkRun) -> None:
    sdk.mock([answer("one")])
    got = sdk.drive("""
        @tool("add", "Add two numbers", {"a": int, "b": int})
        async def add(args):
            return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}
        server = create_sdk_mcp_server("calc", tools=[add])
        out = []
        async with ClaudeSDKClient(options=options(mcp_servers={"calc": server})) as client:
            await client.query("hi")
            async for message in client.receive_response():
                pass
            def state(status):
                return [(s["name"], s["status"], [t["name"] for t in s.get("tools", [])]) for s in status["mcpServers"]]
            out.append(state(await client.get_mcp_status()))
            await client.toggle_mcp_server("calc", False)
            out.append(state(await client.get_mcp_status()))
            await client.toggle_mcp_server("calc", True)
            out.append(state(await client.get_mcp_status()))
            await client.reconnect_mcp_server("calc")
            out.append(state(await client.get_mcp_status()))
            try:
                await client.reconnect_mcp_server("nowhere")
            except Exception as exc:
                out.append(str(exc))
        report(out)
    """)
    connected = [["calc", "connected", ["add"]]]
    assert got[:4] == [connected, [["calc", "disabled", []]], connected, connected]
    assert "nowhere" in got[4]
