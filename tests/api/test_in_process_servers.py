"""In-process MCP servers through the public API: `tool` + `create_sdk_mcp_server` in `Options.mcp_servers`, beside a
real subprocess server, called by the model (the mock) through the session's own host — permission rules, progress,
logging, elicitation and sampling included."""

from __future__ import annotations

import json
import sys

from mini_claude.api import (
    Client,
    PermissionResultAllow,
    ResultMessage,
    SystemMessage,
    create_sdk_mcp_server,
    tool,
)
from mini_claude.mcp.host import FormAnswer, FormRequest
from tests.api.conftest import ApiWorld, call, collect, text, tool_results


@tool("add", "Add two numbers", {"a": float, "b": float})
async def add(args):
    return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}




async def test_an_in_process_tool_beside_a_subprocess_server(world: ApiWorld, mock_model) -> None:
    demo = {"command": sys.executable, "args": ["-m", "mini_claude.mcp.demo_server"]}
    mock = mock_model([call("mcp__calc__add", a=2, b=3), text("sum: {{last_tool_result}}")])
    options = world.options(mock.url, mcp_servers={"calc": create_sdk_mcp_server("calc", tools=[add]), "demo": demo},
                            allowed_tools=["mcp__calc__add"])
    messages = await collect("add 2 and 3", options)
    init = messages[0]
    assert isinstance(init, SystemMessage)
    assert "mcp__calc__add" in init.data["tools"]
    assert {s["name"]: s["status"] for s in init.data["mcp_servers"]} == {"calc": "connected", "demo": "connected"}
    assert any(name.startswith("mcp__demo__") for name in init.data["tools"])
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "sum: 5"


async def test_an_in_process_tool_asks_like_any_mcp_tool(world: ApiWorld, mock_model) -> None:
    mock = mock_model([call("mcp__calc__add", a=1, b=1), text("{{last_tool_result}}")])
    asked: list[str] = []

    async def can_use_tool(name, tool_input, context):
        asked.append(name)
        return PermissionResultAllow()

    options = world.options(mock.url, mcp_servers={"calc": create_sdk_mcp_server("calc", tools=[add])},
                            can_use_tool=can_use_tool)
    result = (await collect("add", options))[-1]
    assert asked == ["mcp__calc__add"]
    assert isinstance(result, ResultMessage) and result.result == "2"


async def test_a_tool_reports_progress_logs_elicits_and_samples(world: ApiWorld, mock_model) -> None:
    seen: dict[str, object] = {}

    @tool("survey", "Ask and summarise", {"topic": str})
    async def survey(args, ctx):
        await ctx.log("warning", f"surveying {args['topic']}")
        await ctx.progress(1, 2, "asking")
        answer = await ctx.elicit("Your opinion?", {"type": "object",
                                                    "properties": {"opinion": {"type": "string"}}})
        seen["answer"] = answer
        sampled = await ctx.sample([{"role": "user", "content": {"type": "text", "text": "summarise"}}],
                                   max_tokens=50)
        seen["sampled"] = sampled
        await ctx.progress(2, 2, "done")
        return {"content": [{"type": "text", "text": f"summary: {json.dumps(sampled)}"}]}

    progress: list[tuple[str, float, float | None, str | None]] = []

    async def opinion(request: FormRequest) -> FormAnswer:
        seen["form"] = request.message
        return FormAnswer("accept", {"opinion": "tabs"})

    mock = mock_model([call("mcp__poll__survey", topic="indentation"),
                       text("people like tabs"),  # the sampling request, answered by the session's model
                       text("final: {{last_tool_result}}")])
    options = world.options(mock.url, mcp_servers={"poll": create_sdk_mcp_server("poll", tools=[survey])},
                            allowed_tools=["mcp__poll__survey"], on_elicitation=opinion,
                            on_progress=lambda *args: progress.append(args))
    result = (await collect("run a survey", options))[-1]
    assert isinstance(result, ResultMessage) and "people like tabs" in (result.result or "")
    assert seen["form"] == "Your opinion?"
    assert isinstance(seen["answer"], dict) and seen["answer"]["content"] == {"opinion": "tabs"}
    assert [(done, total, words) for _, done, total, words in progress] == [(1, 2, "asking"), (2, 2, "done")]
    assert any("surveying indentation" in line for line in world.lines)  # a warning-level log reaches stderr
    sampling_request = mock.requests[1]["body"]
    assert "summarise" in json.dumps(sampling_request["messages"])


async def test_a_raising_tool_is_an_error_result(world: ApiWorld, mock_model) -> None:
    @tool("explode", "Fails", {})
    async def explode(args):
        raise RuntimeError("kaboom")

    mock = mock_model([call("mcp__bad__explode"), text("{{last_tool_result_is_error}}")])
    options = world.options(mock.url, mcp_servers={"bad": create_sdk_mcp_server("bad", tools=[explode])},
                            allowed_tools=["mcp__bad__explode"])
    messages = await collect("explode", options)
    (block,) = tool_results(messages)
    assert block.is_error and "kaboom" in json.dumps(block.content)
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "true"


async def test_hooks_see_an_in_process_tool_under_its_mcp_name(world: ApiWorld, mock_model) -> None:
    from mini_claude.api import HookMatcher

    seen: list[str] = []

    async def guard(input_data, tool_use_id, context):
        seen.append(input_data["tool_name"])
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                       "permissionDecisionReason": "no sums today"}}

    mock = mock_model([call("mcp__calc__add", a=1, b=2), text("{{last_tool_result}}")])
    options = world.options(mock.url, mcp_servers={"calc": create_sdk_mcp_server("calc", tools=[add])},
                            allowed_tools=["mcp__calc__add"],
                            hooks={"PreToolUse": [HookMatcher(matcher="mcp__calc__.*", hooks=[guard])]})
    messages = await collect("add", options)
    assert seen == ["mcp__calc__add"]
    (block,) = tool_results(messages)
    assert block.is_error and "no sums today" in json.dumps(block.content)


async def test_closing_sessions_reaps_their_servers(world: ApiWorld, mock_model, tmp_path) -> None:
    """Sixteen sessions at once, each with its own subprocess server: every server runs while its session does,
    and none outlives it."""
    import asyncio

    from tests.helpers import assert_pid_gone, read_pidfile

    async def one(n: int) -> int:
        pidfile = tmp_path / f"server-{n}.pid"
        server = {"command": "sh", "args": ["-c", f"echo $$ > {pidfile}; exec {sys.executable} -m "
                                                  "mini_claude.mcp.demo_server"]}
        mock = mock_model([text(f"answer {n}")])
        async with Client(world.options(mock.url, mcp_servers={"demo": server})) as client:
            status = await client.get_mcp_status()
            assert [s["status"] for s in status["mcpServers"]] == ["connected"]
            await client.query("hi")
            [m async for m in client.receive_response()]
            return read_pidfile(pidfile)

    pids = await asyncio.gather(*(one(n) for n in range(16)))
    assert len(set(pids)) == 16
    for pid in pids:
        assert_pid_gone(pid, within_s=5)


async def test_an_interrupt_cancels_a_running_in_process_tool(world: ApiWorld, mock_model) -> None:
    import asyncio

    started, cancelled = asyncio.Event(), asyncio.Event()

    @tool("slow", "Takes its time", {})
    async def slow(args, ctx):
        started.set()
        try:
            await asyncio.Event().wait()  # until cancelled
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return {"content": [{"type": "text", "text": "finished"}]}

    mock = mock_model([call("mcp__w__slow"), text("after")])
    options = world.options(mock.url, mcp_servers={"w": create_sdk_mcp_server("w", tools=[slow])},
                            allowed_tools=["mcp__w__slow"])
    async with Client(options) as client:
        await client.query("wait")
        await asyncio.wait_for(started.wait(), 10)
        await client.interrupt()
        messages = [m async for m in client.receive_response()]
        await asyncio.wait_for(cancelled.wait(), 10)
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.terminal_reason == "aborted_streaming"
    assert tool_results(messages), "the interrupted call still got its tool_result"
