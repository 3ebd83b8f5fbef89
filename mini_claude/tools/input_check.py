"""One reading of every built-in tool's input: the call is checked against the tool's own input schema before the
permission gate sees it, so the gate and the tool can never read two different things out of one input (a second
path key the gate checks while the tool opens the first, a number where a path belongs).

`input_problem(schema, args)` answers with one line for the model, or None. It understands the JSON Schema subset
our built-in tools declare — `type` (object, string, integer, number, boolean, array), `properties`, `required`,
`additionalProperties: false`, `enum`, `minimum` / `maximum`, `minLength`, `items` — and treats any other keyword
as a reason to refuse: a schema it cannot fully check is a bug in the tool, never a way past the gate. Strings may
not hold NUL (no path, command or pattern does). MCP tools' inputs belong to their servers (`ServerSchema`): the
server checks them, the gate reads nothing from them but the tool's name.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ["input_problem"]

_KNOWN_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "enum", "minimum", "maximum", "minLength", "items",
    "description", "default", "title", "examples",
})
_TYPE_NAMES = {"object": "an object", "string": "a string", "integer": "an integer", "number": "a number",
               "boolean": "true or false", "array": "a list"}
_SHOWN_VALUE_CHARS = 60


def input_problem(schema: Mapping[str, Any], args: Any) -> str | None:
    """Why `args` does not fit `schema` (one line naming the key), or None when it fits."""
    return _check(schema, args, "")


def _check(schema: Mapping[str, Any], value: Any, where: str) -> str | None:
    unknown = set(schema) - _KNOWN_KEYWORDS
    if unknown:
        return f"the input schema{_at(where)} uses {', '.join(sorted(unknown))}, which cannot be checked"
    expected = schema.get("type")
    if expected is not None and not _has_type(value, expected):
        return f"{_name(where)} must be {_TYPE_NAMES.get(str(expected), str(expected))}, not {_shown(value)}"
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(repr(v) for v in schema["enum"])
        return f"{_name(where)} must be one of {allowed}, not {_shown(value)}"
    if isinstance(value, str):
        if "\0" in value:
            return f"{_name(where)} must not contain a NUL character"
        if len(value) < schema.get("minLength", 0):
            return f"{_name(where)} must not be empty"
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            return f"{_name(where)} must be at least {schema['minimum']}, not {value}"
        if "maximum" in schema and value > schema["maximum"]:
            return f"{_name(where)} must be at most {schema['maximum']}, not {value}"
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for index, item in enumerate(value):
            problem = _check(schema["items"], item, f"{where}[{index}]")
            if problem:
                return problem
    if isinstance(value, dict):
        return _check_object(schema, value, where)
    return None


def _check_object(schema: Mapping[str, Any], value: dict[Any, Any], where: str) -> str | None:
    properties: Mapping[str, Any] = schema.get("properties") or {}
    for key in schema.get("required") or ():
        if key not in value:
            return f"missing required {_name(_join(where, key))}"
    if schema.get("additionalProperties") is False:
        extra = [k for k in value if k not in properties]
        if extra:
            known = ", ".join(properties) or "no keys"
            return (f"unknown key{'s' if len(extra) > 1 else ''} {', '.join(repr(str(k)) for k in extra)}"
                    f"{_at(where)} (this tool takes: {known}); nothing was run")
    for key, item in value.items():
        sub = properties.get(key)
        if isinstance(sub, Mapping):
            problem = _check(sub, item, _join(where, key))
            if problem:
                return problem
    return None


def _has_type(value: Any, expected: Any) -> bool:
    if isinstance(expected, list):
        return any(_has_type(value, e) for e in expected)
    if expected == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer())
    if expected == "number":  # NaN and the infinities are no JSON number (Python's parsers accept them)
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and math.isfinite(value))
    return isinstance(value, {"object": dict, "string": str, "boolean": bool, "array": list,
                              "null": type(None)}.get(expected, ()))


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _name(where: str) -> str:
    return f"`{where}`" if where else "the input"


def _at(where: str) -> str:
    return f" in `{where}`" if where else ""


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN_VALUE_CHARS else text[:_SHOWN_VALUE_CHARS] + "…"
