"""Tools written as Python functions, served by an MCP server living in this process — the Claude Agent SDK's
`tool` decorator and `create_sdk_mcp_server`, on our own server (mini_claude.mcp.server).

    @tool("add", "Add two numbers", {"a": float, "b": float})
    async def add(args):
        return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}

    calc = create_sdk_mcp_server("calc", tools=[add])      # {"type": "sdk", "name": "calc", "instance": ...}
    # mcp_servers={"calc": calc}: its tools are mcp__calc__add, with the permission rules, hooks and pins of
    # every MCP tool

A handler is `async def h(args)` or `async def h(args, ctx)`: `ctx` (a `ToolCallContext`) reports progress, logs,
asks the user (`ctx.elicit`) or the model (`ctx.sample`), and shows a cancellation. It returns
`{"content": [...], "is_error": bool}` (or `isError`, `structuredContent`); an exception it raises becomes an error
result with its text. A plain async function is a tool too (`function_tool`): its name, the first line of its
docstring and its typed parameters make the definition.

`input_schema` is what the SDK takes: a dict of parameter names to Python types (`{"text": str}`; every one
required), a TypedDict class (its required keys required), or a JSON Schema (a dict whose "type" is a string and
that has "properties"). Types map as str → string, int → integer, float → number, bool → boolean, list[X] → array
of X, dict → object, `X | None` → X, a union → anyOf, `Annotated[X, "text"]` → X with that description, a
TypedDict → its object schema; anything else → string.
"""

from __future__ import annotations

import inspect
import json
import types
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import (
    Annotated,
    Any,
    Literal,
    TypedDict,
    Union,
    get_args,
    get_origin,
    get_type_hints,
    is_typeddict,
)

from mini_claude.mcp.server import McpServerCore, ServerTool, ToolCallContext
from mini_claude.mcp.server.tools import takes_context

__all__ = ["McpSdkServerConfig", "SdkMcpTool", "ToolCallContext", "create_sdk_mcp_server", "function_tool",
           "input_json_schema", "tool", "type_json_schema"]

ToolHandler = Callable[..., Awaitable[Any]]

# the SDK's snake_case spellings of the annotation hints → the wire names
_HINT_NAMES = {"read_only_hint": "readOnlyHint", "destructive_hint": "destructiveHint",
               "idempotent_hint": "idempotentHint", "open_world_hint": "openWorldHint",
               "max_result_size_chars": "maxResultSizeChars"}
MAX_RESULT_META_KEY = "anthropic/maxResultSizeChars"


class McpSdkServerConfig(TypedDict):
    """An in-process server's entry for `mcp_servers` (what `create_sdk_mcp_server` returns)."""

    type: Literal["sdk"]
    name: str
    instance: McpServerCore


@dataclass(frozen=True)
class SdkMcpTool:
    """A tool for an in-process server: what `@tool` makes of a handler."""

    name: str
    description: str
    input_schema: Any  # a {name: type} dict, a TypedDict class or a JSON Schema dict
    handler: ToolHandler
    annotations: Mapping[str, Any] | None = None

    def server_tool(self) -> ServerTool:
        """The tool as the server core serves it (its schema converted, its annotations in wire form)."""
        given = dict(self.annotations or {})
        wire = {k: v for k, v in given.items() if k not in _HINT_NAMES}
        for snake, name in _HINT_NAMES.items():  # given both spellings, the wire name wins
            if snake in given:
                wire.setdefault(name, given[snake])
        max_chars = wire.pop("maxResultSizeChars", None)
        annotations = {k: v for k, v in wire.items() if v is not None}
        return ServerTool(self.name, self.description, input_json_schema(self.input_schema), self.handler,
                          annotations=annotations or None, with_context=takes_context(self.handler),
                          meta={MAX_RESULT_META_KEY: max_chars} if max_chars is not None else None)

    async def __call__(self, args: dict[str, Any], ctx: ToolCallContext | None = None) -> Any:
        """Call the handler directly (tests, reuse): with `ctx` when it takes one."""
        if takes_context(self.handler):
            return await self.handler(args, ctx)
        return await self.handler(args)


def tool(name: str, description: str, input_schema: Any, annotations: Mapping[str, Any] | None = None
         ) -> Callable[[ToolHandler], SdkMcpTool]:
    """Decorate an async handler `(args)` or `(args, ctx)` into an `SdkMcpTool`."""
    def decorate(handler: ToolHandler) -> SdkMcpTool:
        if not callable(handler):
            raise TypeError(f"@tool({name!r}) must decorate a function")
        return SdkMcpTool(name, description, input_schema, handler, annotations)
    return decorate


def function_tool(fn: Callable[..., Any], *, name: str | None = None,
                  description: str | None = None) -> SdkMcpTool:
    """A plain async function as a tool: named after it, described by its docstring's first line, its
    parameters (by their type hints) the input schema — one with a default is optional; one typed
    `ToolCallContext` gets the call's context. Called with the arguments as keywords; a result that is not a
    tool result dict becomes text (a dict without "content" also its `structuredContent`)."""
    hints = get_type_hints(fn, include_extras=True)
    properties: dict[str, Any] = {}
    required: list[str] = []
    context_param: str | None = None
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        hint = hints.get(param.name, str)
        if hint is ToolCallContext:
            context_param = param.name
            continue
        properties[param.name] = type_json_schema(hint)
        if param.default is param.empty:
            required.append(param.name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    doc = inspect.getdoc(fn) or ""

    async def handler(args: dict[str, Any], ctx: ToolCallContext) -> Any:
        keywords = dict(args)
        if context_param is not None:
            keywords[context_param] = ctx
        result = fn(**keywords)
        return _as_result(await result if inspect.isawaitable(result) else result)

    return SdkMcpTool(name or fn.__name__, description or (doc.splitlines()[0] if doc else fn.__name__), schema,
                      handler)


def _as_result(value: Any) -> Any:
    if value is None or isinstance(value, str) or (isinstance(value, Mapping) and "content" in value):
        return value
    text = json.dumps(value, ensure_ascii=False, default=str)
    if isinstance(value, Mapping):
        return {"content": [{"type": "text", "text": text}], "structuredContent": dict(value)}
    return {"content": [{"type": "text", "text": text}]}


def create_sdk_mcp_server(name: str, version: str = "1.0.0", tools: list[Any] | None = None, *,
                          instructions: str | None = None) -> McpSdkServerConfig:
    """An MCP server in this process serving `tools` (`SdkMcpTool`s, or plain async functions), as the entry
    `mcp_servers` takes: `{"type": "sdk", "name": name, "instance": server}`."""
    served = []
    for item in tools or []:
        if not isinstance(item, SdkMcpTool) and not inspect.isfunction(item):
            raise TypeError(f"server {name!r}: {item!r} is not a tool (use @tool, or pass an async function)")
        served.append((item if isinstance(item, SdkMcpTool) else function_tool(item)).server_tool())
    return McpSdkServerConfig(type="sdk", name=name,
                              instance=McpServerCore(name, version, served, instructions=instructions))


# ---- input schemas -----------------------------------------------------------------------------------------------


def input_json_schema(input_schema: Any) -> dict[str, Any]:
    """A tool's `input_schema` as the SDK takes it → the JSON Schema sent in `tools/list`."""
    if isinstance(input_schema, Mapping):
        if isinstance(input_schema.get("type"), str) and "properties" in input_schema:
            return dict(input_schema)  # already a JSON Schema
        properties = {key: dict(value) if isinstance(value, Mapping) else type_json_schema(value)
                      for key, value in input_schema.items()}
        return {"type": "object", "properties": properties, "required": list(properties)}
    if is_typeddict(input_schema):
        return _typeddict_schema(input_schema)
    return {"type": "object", "properties": {}}


def type_json_schema(hint: Any) -> dict[str, Any]:
    """One Python type annotation → its JSON Schema (see the module docstring)."""
    origin = get_origin(hint)
    if origin is Annotated:
        base, *extras = get_args(hint)
        schema = type_json_schema(base)
        text = next((extra for extra in extras if isinstance(extra, str)), None)
        if text is not None:
            schema["description"] = text
        return schema
    if getattr(origin, "_name", None) in ("Required", "NotRequired", "ReadOnly"):
        return type_json_schema(get_args(hint)[0])
    simple = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array", dict: "object"}
    if isinstance(hint, type) and hint in simple:
        return {"type": simple[hint]}
    if origin is Union or isinstance(hint, types.UnionType):
        members = [arg for arg in get_args(hint) if arg is not type(None)]
        if len(members) == 1:
            return type_json_schema(members[0])
        return {"anyOf": [type_json_schema(arg) for arg in members]}
    if origin is list:
        items = get_args(hint)
        return {"type": "array", "items": type_json_schema(items[0])} if items else {"type": "array"}
    if origin is dict:
        return {"type": "object"}
    if is_typeddict(hint):
        return _typeddict_schema(hint)
    return {"type": "string"}


def _typeddict_schema(cls: Any) -> dict[str, Any]:
    hints = get_type_hints(cls, include_extras=True)
    schema: dict[str, Any] = {"type": "object",
                              "properties": {key: type_json_schema(value) for key, value in hints.items()}}
    required_keys = set(getattr(cls, "__required_keys__", hints))
    for key, hint in hints.items():  # a string annotation (PEP 563) hides NotRequired from __required_keys__
        qualifier = getattr(get_origin(hint), "_name", None)
        if qualifier == "NotRequired":
            required_keys.discard(key)
        elif qualifier == "Required":
            required_keys.add(key)
    required = sorted(required_keys)
    if required:
        schema["required"] = required
    return schema
