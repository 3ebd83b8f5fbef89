"""SEP-2243 HTTP request headers for the 2026-07-28 protocol: `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*`.

Pure functions, no I/O. `tool_header_params()` reads and validates a tool's `x-mcp-header` annotations (a tool
whose annotations break the rules is dropped by the client, with a warning); `message_headers()` computes the
headers one outgoing JSON-RPC message needs; `encode_header_value()` applies the value-encoding rules (plain
visible ASCII as is, anything else as `=?base64?...?=`).

Annotations are followed along `properties` chains at any depth (the path of property names is where the value
sits inside `arguments`); annotations under `items`, `anyOf`, `$defs` and the like are not mirrored.
"""

from __future__ import annotations

import base64
import math
import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mini_claude.errors import InvalidToolHeadersError

__all__ = [
    "HEADER_ANNOTATION",
    "MAX_SAFE_INTEGER",
    "HeaderParam",
    "encode_header_value",
    "message_headers",
    "param_headers",
    "tool_header_params",
]

HEADER_ANNOTATION = "x-mcp-header"
MAX_SAFE_INTEGER = 2**53 - 1  # JavaScript's safe integer range bounds integer header values
_TCHAR = frozenset("!#$%&'*+-.^_`|~" + string.ascii_letters + string.digits)  # RFC 9110 token characters
_PRIMITIVE_TYPES = frozenset({"string", "integer", "boolean"})  # `number` is not allowed
_B64_PREFIX = "=?base64?"
_B64_SUFFIX = "?="
_NAMED_METHODS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


@dataclass(frozen=True)
class HeaderParam:
    """One mirrored parameter: where it sits in `arguments` and the `{name}` of its `Mcp-Param-{name}` header."""

    path: tuple[str, ...]
    name: str

    @property
    def header(self) -> str:
        return f"Mcp-Param-{self.name}"


def tool_header_params(input_schema: Mapping[str, Any]) -> tuple[HeaderParam, ...]:
    """The mirrored parameters a tool's input schema declares. Raises InvalidToolHeadersError when any
    annotation is empty, not a token, not unique (case-insensitively) or on a non-primitive parameter."""
    found: list[HeaderParam] = []
    _collect(input_schema, (), found)
    seen: dict[str, str] = {}
    for param in found:
        key = param.name.lower()
        if key in seen:
            raise InvalidToolHeadersError(
                f"{HEADER_ANNOTATION} {param.name!r} on {'.'.join(param.path)} repeats {seen[key]!r} "
                "(header names must be unique, ignoring case)")
        seen[key] = param.name
    return tuple(found)


def _collect(schema: Any, path: tuple[str, ...], out: list[HeaderParam]) -> None:
    if not isinstance(schema, Mapping):
        return
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return
    for prop, sub in properties.items():
        if not isinstance(sub, Mapping):
            continue
        where = (*path, str(prop))
        if HEADER_ANNOTATION in sub:
            out.append(HeaderParam(where, _checked_name(sub[HEADER_ANNOTATION], sub, where)))
        _collect(sub, where, out)


def _checked_name(value: Any, sub: Mapping[str, Any], where: tuple[str, ...]) -> str:
    label = ".".join(where)
    if not isinstance(value, str) or not value:
        raise InvalidToolHeadersError(f"{HEADER_ANNOTATION} on {label} must be a non-empty string")
    bad = sorted({ch for ch in value if ch not in _TCHAR})
    if bad:
        raise InvalidToolHeadersError(
            f"{HEADER_ANNOTATION} {value!r} on {label} has characters not allowed in a header name: "
            + ", ".join(repr(ch) for ch in bad))
    kind = sub.get("type")
    kinds = [kind] if isinstance(kind, str) else [k for k in kind if k != "null"] if isinstance(kind, list) else []
    if len(kinds) != 1 or kinds[0] not in _PRIMITIVE_TYPES:
        raise InvalidToolHeadersError(
            f"{HEADER_ANNOTATION} {value!r} on {label}: only string, integer and boolean parameters may be "
            f"mirrored (type is {kind!r})")
    return value


def encode_header_value(value: Any) -> str | None:
    """A parameter value as a header value; None when it must be omitted (null, or not a primitive)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if abs(value) <= MAX_SAFE_INTEGER else None
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) <= MAX_SAFE_INTEGER:
            return str(int(value))
        return None
    if isinstance(value, str):
        return _b64(value) if _needs_base64(value) else value
    return None


def _needs_base64(text: str) -> bool:
    if any(not 0x20 <= ord(ch) <= 0x7E for ch in text):  # non-ASCII, tab and other control characters
        return True
    if text != text.strip(" "):  # leading or trailing whitespace would be stripped by HTTP
        return True
    return text.startswith(_B64_PREFIX) and text.endswith(_B64_SUFFIX)  # would be read as encoded


def _b64(text: str) -> str:
    return _B64_PREFIX + base64.b64encode(text.encode("utf-8")).decode("ascii") + _B64_SUFFIX


def param_headers(params: tuple[HeaderParam, ...], arguments: Any) -> dict[str, str]:
    """The `Mcp-Param-*` headers for one call's `arguments` (absent or null values are omitted)."""
    headers: dict[str, str] = {}
    for param in params:
        value: Any = arguments
        for key in param.path:
            value = value.get(key) if isinstance(value, Mapping) else None
        encoded = encode_header_value(value)
        if encoded is not None:
            headers[param.header] = encoded
    return headers


def message_headers(message: Mapping[str, Any],
                    tool_params: Mapping[str, tuple[HeaderParam, ...]] | None = None) -> dict[str, str]:
    """Headers for one outgoing message: `Mcp-Method` for requests and notifications, `Mcp-Name` for
    tools/call, prompts/get and resources/read, and `Mcp-Param-*` for a tools/call of a tool in `tool_params`
    (name -> what `tool_header_params()` returned). Responses get none."""
    method = message.get("method")
    if not isinstance(method, str):
        return {}
    headers = {"Mcp-Method": encode_header_value(method) or ""}
    params = message.get("params")
    params = params if isinstance(params, Mapping) else {}
    field = _NAMED_METHODS.get(method)
    name = params.get(field) if field is not None else None
    if isinstance(name, str):
        headers["Mcp-Name"] = encode_header_value(name) or ""
        if method == "tools/call" and tool_params and name in tool_params:
            headers.update(param_headers(tool_params[name], params.get("arguments")))
    return headers
