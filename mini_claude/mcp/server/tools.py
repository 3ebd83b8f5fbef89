"""A server's tools as plain data (`ServerTool`), and the three steps of one call around its handler: check the
arguments against the input schema (`check_arguments`), call the handler with or without its context
(`call_handler`), and turn what it returned into a `CallToolResult` dict (`to_call_result`).

A handler is `async def h(args)` or `async def h(args, ctx)` (a plain function returning a value works too). It
returns the Claude Agent SDK's shape `{"content": [...], "is_error": bool}` (`isError`, `structuredContent` /
`structured_content` and `_meta` are read too), or a string (one text block), or None (no content). Anything it
raises (SystemExit included: argparse on the model's arguments) becomes an `isError` result carrying the exception's
text: a tool never crashes its server, nor the program it lives in.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mini_claude.mcp.transports.inprocess import NotJsonError, json_copy

__all__ = ["ServerTool", "ToolHandler", "call_handler", "check_arguments", "error_result", "takes_context",
           "to_call_result"]

ToolHandler = Callable[..., Any]  # (args) or (args, ctx) -> result, or an awaitable of it

_JSON_TYPES: Mapping[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,), "array": (list,),
    "object": (dict,), "null": (type(None),),
}


@dataclass(frozen=True)
class ServerTool:
    """One tool as `tools/list` shows it, and the handler `tools/call` runs."""

    name: str
    description: str
    input_schema: dict[str, Any]
    handler: ToolHandler
    annotations: dict[str, Any] | None = None
    output_schema: dict[str, Any] | None = None
    title: str | None = None
    meta: dict[str, Any] | None = None
    with_context: bool = field(default=False)  # the handler takes the ToolCallContext as its second argument

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError("a tool needs a non-empty name")
        if not isinstance(self.input_schema, dict) or self.input_schema.get("type") != "object":
            raise ValueError(f"tool {self.name!r}: the input schema must be a JSON Schema object with "
                             f"\"type\": \"object\"")
        if not callable(self.handler):
            raise ValueError(f"tool {self.name!r}: the handler is not callable")

    @classmethod
    def of(cls, name: str, description: str, input_schema: dict[str, Any], handler: ToolHandler,
           **extra: Any) -> ServerTool:
        """A tool whose `with_context` is read from the handler's signature (see `takes_context`)."""
        return cls(name, description, input_schema, handler, with_context=takes_context(handler), **extra)

    def wire(self) -> dict[str, Any]:
        """The tool's entry in a `tools/list` result."""
        entry: dict[str, Any] = {"name": self.name, "description": self.description,
                                 "inputSchema": self.input_schema}
        if self.title is not None:
            entry["title"] = self.title
        if self.output_schema is not None:
            entry["outputSchema"] = self.output_schema
        if self.annotations:
            entry["annotations"] = self.annotations
        if self.meta:
            entry["_meta"] = self.meta
        return entry


def takes_context(handler: ToolHandler) -> bool:
    """Whether `handler` accepts a second positional argument (the call's context)."""
    try:
        params = list(inspect.signature(handler).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in params)


def check_arguments(schema: Mapping[str, Any], arguments: Any) -> str | None:
    """What is wrong with `arguments` for this input schema (its top level: an object, the required keys, the
    JSON types of the declared properties), or None. Deeper checks are the handler's."""
    if not isinstance(arguments, dict):
        return "the arguments are not an object"
    required = schema.get("required")
    for key in required if isinstance(required, list) else []:
        if isinstance(key, str) and key not in arguments:
            return f"{key!r} is a required property"
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return None
    for key, value in arguments.items():
        spec = properties.get(key)
        declared = spec.get("type") if isinstance(spec, dict) else None
        names = [declared] if isinstance(declared, str) else declared if isinstance(declared, list) else []
        kinds = [_JSON_TYPES[n] for n in names if isinstance(n, str) and n in _JSON_TYPES]
        if kinds and not any(_is(value, n, k) for n, k in zip(names, kinds, strict=False)):
            return f"{key!r}: {_type_name(value)} is not of type {' or '.join(map(str, names))}"
    if schema.get("additionalProperties") is False:
        extra = sorted(k for k in arguments if k not in properties)
        if extra:
            return f"unexpected propert{'y' if len(extra) == 1 else 'ies'} {', '.join(map(repr, extra))}"
    return None


def _is(value: Any, name: str, kinds: tuple[type, ...]) -> bool:
    if isinstance(value, bool) and name != "boolean":
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, kinds)


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    for name, kinds in _JSON_TYPES.items():
        if _is(value, name, kinds):
            return name
    return type(value).__name__


async def call_handler(tool: ServerTool, arguments: dict[str, Any], ctx: Any) -> Any:
    """Run the handler with `(arguments)` or `(arguments, ctx)`, awaiting what it returns when awaitable."""
    result = tool.handler(arguments, ctx) if tool.with_context else tool.handler(arguments)
    if inspect.isawaitable(result):
        result = await result
    return result


def error_result(text: str) -> dict[str, Any]:
    """A failed call's result: one text block, `isError`."""
    return {"content": [{"type": "text", "text": text}], "isError": True}


def to_call_result(value: Any) -> dict[str, Any]:
    """What a handler returned → a `CallToolResult` (an `isError` one saying what is wrong when it is no result)."""
    if value is None:
        return {"content": []}
    if isinstance(value, str):
        return {"content": [{"type": "text", "text": value}]}
    if not isinstance(value, Mapping):
        return error_result(f"the tool returned {type(value).__name__}; expected a dict with \"content\"")
    content = value.get("content", [])
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list | tuple) or not all(
            isinstance(block, Mapping) and isinstance(block.get("type"), str) for block in content):
        return error_result("the tool returned \"content\" that is not a list of blocks with a \"type\"")
    result: dict[str, Any] = {"content": list(content)}
    if bool(value.get("is_error", value.get("isError", False))):
        result["isError"] = True
    structured = value.get("structuredContent", value.get("structured_content"))
    if structured is not None:
        result["structuredContent"] = structured
    if isinstance(value.get("_meta"), Mapping):
        result["_meta"] = value["_meta"]
    try:
        copied: dict[str, Any] = json_copy(result)
    except NotJsonError as exc:
        return error_result(f"the tool returned a value that is not JSON ({exc})")
    return copied
