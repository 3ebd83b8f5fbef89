"""The Python API's in-process tools (mini_claude/api/tools.py), with the Claude Agent SDK's names: `@tool` and
`create_sdk_mcp_server` make the SDK's config shape; `input_schema` converts as the SDK converts it (exact dicts);
plain async functions are tools too; annotations are folded into their wire names; and a server made this way is
served to our own McpClient over the in-process transport, handlers with and without a context."""

from __future__ import annotations

from typing import Annotated, Any, NotRequired, Optional, TypedDict, Union

import pytest

from mini_claude.api.tools import (
    McpSdkServerConfig,
    SdkMcpTool,
    create_sdk_mcp_server,
    function_tool,
    input_json_schema,
    tool,
    type_json_schema,
)
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.config_entry import sdk_server_config
from mini_claude.mcp.connect import build_transport
from mini_claude.mcp.server import McpServerCore, ToolCallContext
from mini_claude.mcp.transports.inprocess import InProcessTransport

pytestmark = pytest.mark.timeout(30)


class Point(TypedDict):
    x: float
    y: float


class Search(TypedDict):
    query: Annotated[str, "What to look for"]
    limit: NotRequired[int]
    where: Point


# ---- schema conversion -----------------------------------------------------------------------------------------


def test_a_dict_of_types_becomes_an_object_with_every_key_required() -> None:
    assert input_json_schema({"text": str, "count": int, "ratio": float, "loud": bool, "tags": list,
                              "extra": dict}) == {
        "type": "object",
        "properties": {"text": {"type": "string"}, "count": {"type": "integer"}, "ratio": {"type": "number"},
                       "loud": {"type": "boolean"}, "tags": {"type": "array"}, "extra": {"type": "object"}},
        "required": ["text", "count", "ratio", "loud", "tags", "extra"],
    }


def test_a_parameter_named_type_is_still_a_parameter() -> None:
    assert input_json_schema({"type": str}) == {"type": "object", "properties": {"type": {"type": "string"}},
                                                "required": ["type"]}


def test_a_json_schema_is_kept_as_written() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "number", "minimum": 0}}, "required": []}
    assert input_json_schema(schema) == schema


def test_a_typeddict_gives_its_required_keys_sorted() -> None:
    assert input_json_schema(Search) == {
        "type": "object",
        "properties": {"query": {"type": "string", "description": "What to look for"},
                       "limit": {"type": "integer"},
                       "where": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                                 "required": ["x", "y"]}},
        "required": ["query", "where"],
    }


def test_type_annotations_map_like_the_sdk() -> None:
    assert type_json_schema(list[int]) == {"type": "array", "items": {"type": "integer"}}
    assert type_json_schema(dict[str, int]) == {"type": "object"}
    assert type_json_schema(Optional[str]) == {"type": "string"}  # noqa: UP045 - the typing spelling on purpose
    assert type_json_schema(int | None) == {"type": "integer"}
    assert type_json_schema(Union[int, str]) == {"anyOf": [{"type": "integer"}, {"type": "string"}]}  # noqa: UP007
    assert type_json_schema(Annotated[float, "Degrees"]) == {"type": "number", "description": "Degrees"}
    assert type_json_schema(bytes) == {"type": "string"}  # anything else: a string
    assert input_json_schema(42) == {"type": "object", "properties": {}}


# ---- tool, create_sdk_mcp_server, function_tool -------------------------------------------------------------------


@tool("greet", "Greet someone by name", {"name": str}, annotations={"read_only_hint": True, "title": "Greeter",
                                                                   "maxResultSizeChars": 5000})
async def greet(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"Hello, {args['name']}!"}]}


@tool("divide", "Divide a by b", {"a": float, "b": float})
async def divide(args: dict[str, Any], ctx: ToolCallContext) -> dict[str, Any]:
    await ctx.progress(1, 1)
    if args["b"] == 0:
        return {"content": [{"type": "text", "text": "cannot divide by zero"}], "is_error": True}
    return {"content": [{"type": "text", "text": str(args["a"] / args["b"])}]}


async def weather(city: str, units: Annotated[str, "metric or imperial"] = "metric") -> dict[str, Any]:
    """Look up the weather in a city.

    A longer explanation that is not the description.
    """
    return {"city": city, "units": units, "temp": 21}


def test_the_decorator_makes_an_sdk_tool_and_the_server_config_has_the_sdks_shape() -> None:
    assert isinstance(greet, SdkMcpTool) and greet.name == "greet" and greet.input_schema == {"name": str}
    config: McpSdkServerConfig = create_sdk_mcp_server("util", "3.1.0", tools=[greet, divide, weather])
    assert set(config) == {"type", "name", "instance"} and config["type"] == "sdk" and config["name"] == "util"
    server = config["instance"]
    assert isinstance(server, McpServerCore) and server.version == "3.1.0"
    assert [t.wire() for t in server.tools] == [
        {"name": "greet", "description": "Greet someone by name",
         "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
         "annotations": {"readOnlyHint": True, "title": "Greeter"},
         "_meta": {"anthropic/maxResultSizeChars": 5000}},
        {"name": "divide", "description": "Divide a by b",
         "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                         "required": ["a", "b"]}},
        {"name": "weather", "description": "Look up the weather in a city.",
         "inputSchema": {"type": "object", "properties": {
             "city": {"type": "string"}, "units": {"type": "string", "description": "metric or imperial"}},
             "required": ["city"]}},
    ]
    assert create_sdk_mcp_server("empty")["instance"].tools == []


def test_two_tools_of_one_name_are_refused() -> None:
    with pytest.raises(ValueError, match="two tools are named 'greet'"):
        create_sdk_mcp_server("dup", tools=[greet, greet])


async def test_a_decorated_tool_can_be_called_directly() -> None:
    assert await greet({"name": "Ada"}) == {"content": [{"type": "text", "text": "Hello, Ada!"}]}


async def test_the_server_serves_our_client_in_process() -> None:
    config = create_sdk_mcp_server("util", tools=[greet, divide, weather])
    transport = build_transport(sdk_server_config("util", config["instance"]), {})
    assert isinstance(transport, InProcessTransport)
    client = McpClient(transport, name="util")
    await client.connect(timeout_s=5)
    try:
        assert client.server_info == {"name": "util", "version": "1.0.0"}
        hello = await client.call_tool("greet", {"name": "Ada"})
        assert hello.content == [{"type": "text", "text": "Hello, Ada!"}] and not hello.is_error
        seen: list[tuple[float, float | None]] = []
        half = await client.call_tool("divide", {"a": 1, "b": 4}, on_progress=lambda p, t, _m: seen.append((p, t)))
        assert half.content == [{"type": "text", "text": "0.25"}] and seen == [(1, 1)]
        zero = await client.call_tool("divide", {"a": 1, "b": 0})
        assert zero.is_error and zero.content == [{"type": "text", "text": "cannot divide by zero"}]
        sunny = await client.call_tool("weather", {"city": "Oslo"})
        assert sunny.structured_content == {"city": "Oslo", "units": "metric", "temp": 21}
        assert sunny.content == [{"type": "text", "text": '{"city": "Oslo", "units": "metric", "temp": 21}'}]
        missing = await client.call_tool("weather", {})
        assert missing.is_error and missing.content == [
            {"type": "text", "text": "invalid arguments for weather: 'city' is a required property"}]
    finally:
        await client.close()


async def test_function_tool_passes_the_context_to_a_parameter_typed_for_it() -> None:
    async def count_to(n: int, ctx: ToolCallContext) -> str:
        """Count, reporting progress."""
        for i in range(1, n + 1):
            await ctx.progress(i, n)
        return f"counted to {n}"

    made = function_tool(count_to)
    assert made.name == "count_to" and made.description == "Count, reporting progress."
    assert input_json_schema(made.input_schema) == {"type": "object", "properties": {"n": {"type": "integer"}},
                                                    "required": ["n"]}
    client = McpClient(InProcessTransport(create_sdk_mcp_server("c", tools=[made])["instance"]), name="c")
    await client.connect(timeout_s=5)
    try:
        seen: list[float] = []
        result = await client.call_tool("count_to", {"n": 3}, on_progress=lambda p, _t, _m: seen.append(p))
        assert result.content == [{"type": "text", "text": "counted to 3"}] and seen == [1, 2, 3]
    finally:
        await client.close()
