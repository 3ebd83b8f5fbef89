"""Input-schema sanitising: exact outputs, and the input is never mutated; schemas nested too deep are refused
(and their tool withheld by the tool reader) without recursion."""

from __future__ import annotations

import copy
import logging
from typing import Any

import pytest

from mini_claude.errors import ProtocolError
from mini_claude.mcp.protocol import WITHHELD_LOG_KEY, WithheldTool, read_tools
from mini_claude.mcp.schema import MAX_SCHEMA_DEPTH, sanitize_input_schema, schema_depth_problem

EMPTY = {"type": "object", "properties": {}}


@pytest.mark.parametrize("schema", [None, "x", 3, [], True])
def test_missing_or_not_a_dict(schema: Any) -> None:
    assert sanitize_input_schema(schema) == EMPTY


def test_valid_object_schema_passes_through_unchanged() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]},
            "mode": {"anyOf": [{"const": "a"}, {"const": "b"}]},
            "item": {"$ref": "#/$defs/Item"},
        },
        "required": ["pair"],
        "additionalProperties": False,
        "$defs": {"Item": {"type": "object", "properties": {"id": {"type": "string"}}}},
    }
    assert sanitize_input_schema(schema) == schema


def test_root_without_type_or_properties() -> None:
    assert sanitize_input_schema({}) == EMPTY
    assert sanitize_input_schema({"properties": {"x": {"type": "string"}}}) == {
        "type": "object", "properties": {"x": {"type": "string"}}}
    assert sanitize_input_schema({"type": "object"}) == EMPTY


def test_nullable_object_root_becomes_object() -> None:
    assert sanitize_input_schema({"type": ["object", "null"], "properties": {}}) == EMPTY


def test_non_object_root_is_wrapped() -> None:
    assert sanitize_input_schema({"type": "string", "description": "a path"}) == {
        "type": "object",
        "properties": {"value": {"type": "string", "description": "a path"}},
        "required": ["value"],
    }
    assert sanitize_input_schema({"enum": ["a", "b"]}) == {
        "type": "object", "properties": {"value": {"enum": ["a", "b"]}}, "required": ["value"]}


def test_bad_required_is_cleaned() -> None:
    assert sanitize_input_schema({"type": "object", "properties": {}, "required": "x"}) == EMPTY
    assert sanitize_input_schema({"type": "object", "properties": {}, "required": ["a", 1, "a"]}) == {
        "type": "object", "properties": {}, "required": ["a"]}


def test_root_anyof_is_merged_and_described() -> None:
    schema = {
        "description": "Find a user.",
        "anyOf": [
            {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]},
            {"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"]},
        ],
    }
    assert sanitize_input_schema(schema) == {
        "type": "object",
        "description": 'Find a user.\n\nThe arguments must match at least one of these schemas: '
                       '(1) {"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}; '
                       '(2) {"type":"object","properties":{"email":{"type":"string"}},"required":["email"]}',
        "properties": {"id": {"type": "integer"}, "email": {"type": "string"}},
    }


def test_root_oneof_required_is_the_intersection_plus_the_roots_own() -> None:
    schema = {
        "type": "object",
        "properties": {"verbose": {"type": "boolean"}},
        "required": ["verbose"],
        "oneOf": [
            {"properties": {"a": {"type": "string"}, "n": {"type": "integer"}}, "required": ["a", "n"]},
            {"properties": {"b": {"type": "string"}, "n": {"type": "number"}}, "required": ["n", "b"]},
        ],
    }
    assert sanitize_input_schema(schema) == {
        "type": "object",
        "properties": {
            "verbose": {"type": "boolean"},
            "a": {"type": "string"},
            "n": {"anyOf": [{"type": "integer"}, {"type": "number"}]},
            "b": {"type": "string"},
        },
        "required": ["verbose", "n"],
        "description": 'The arguments must match exactly one of these schemas: '
                       '(1) {"properties":{"a":{"type":"string"},"n":{"type":"integer"}},"required":["a","n"]}; '
                       '(2) {"properties":{"b":{"type":"string"},"n":{"type":"number"}},"required":["n","b"]}',
    }


def test_root_anyof_of_required_only_variants() -> None:
    # A common shape: properties at the root, anyOf only says "one of these must be present".
    schema = {"type": "object", "properties": {"a": {}, "b": {}}, "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}
    assert sanitize_input_schema(schema) == {
        "type": "object",
        "properties": {"a": {}, "b": {}},
        "description": 'The arguments must match at least one of these schemas: (1) {"required":["a"]}; '
                       '(2) {"required":["b"]}',
    }


def test_root_allof_is_merged_with_union_required() -> None:
    schema = {
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"$ref": "#/$defs/Paging"},
            {"properties": {"a": {"maxLength": 3}}},
        ],
        "$defs": {"Paging": {"type": "object", "properties": {"page": {"type": "integer"}}, "required": ["page"]}},
    }
    assert sanitize_input_schema(schema) == {
        "type": "object",
        "properties": {"a": {"allOf": [{"type": "string"}, {"maxLength": 3}]}, "page": {"type": "integer"}},
        "required": ["a", "page"],
        "$defs": {"Paging": {"type": "object", "properties": {"page": {"type": "integer"}}, "required": ["page"]}},
    }


def test_input_is_never_mutated() -> None:
    schemas = [
        {"anyOf": [{"properties": {"x": {}}}, {"properties": {"y": {}}}], "description": "d"},
        {"type": "string"},
        {"properties": {"x": {}}, "required": "x"},
        {"allOf": [{"properties": {"x": {"type": "string"}}}]},
    ]
    for schema in schemas:
        before = copy.deepcopy(schema)
        out = sanitize_input_schema(schema)
        assert schema == before
        # and the output shares nothing mutable with the input
        out.setdefault("properties", {})["new"] = {}
        assert schema == before


# ---- depth (issue 10, hole 7: a schema nested 300 levels deep ended the process) ------------------------------

def _nested(depth: int) -> dict[str, Any]:
    """An object schema `depth` JSON levels deep, built without recursion."""
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth - 1):
        schema = {"type": "object", "additionalProperties": schema}
    return schema


def test_schema_depth_limit_is_exact() -> None:
    assert schema_depth_problem(_nested(MAX_SCHEMA_DEPTH)) is None
    assert schema_depth_problem(_nested(MAX_SCHEMA_DEPTH + 1)) == "input schema nested deeper than 64 levels"
    assert schema_depth_problem(_nested(100_000), "output schema") == "output schema nested deeper than 64 levels"


def test_sanitize_refuses_a_deep_schema_with_a_protocol_error_not_a_recursion_error() -> None:
    with pytest.raises(ProtocolError, match="input schema nested deeper than 64 levels"):
        sanitize_input_schema(_nested(300))


def test_read_tools_withholds_only_the_deep_tool_and_says_why(caplog: pytest.LogCaptureFixture) -> None:
    listed = [{"name": "ok", "inputSchema": {"type": "object"}},
              {"name": "deep_tool", "inputSchema": _nested(300)},
              {"name": "deep_out", "inputSchema": {"type": "object"}, "outputSchema": _nested(10_000)},
              {"name": "deep_meta", "inputSchema": {"type": "object"}, "_meta": _nested(10_000)},
              {"name": "after", "inputSchema": _nested(MAX_SCHEMA_DEPTH)}]
    with caplog.at_level(logging.WARNING, logger="mini_claude.mcp.protocol"):
        tools, _headers = read_tools(listed, server="srv")
    assert [t.name for t in tools] == ["ok", "after"]
    withheld = [getattr(r, WITHHELD_LOG_KEY) for r in caplog.records if hasattr(r, WITHHELD_LOG_KEY)]
    assert withheld == [WithheldTool("srv", "deep_tool", "input schema nested deeper than 64 levels"),
                        WithheldTool("srv", "deep_out", "output schema nested deeper than 64 levels"),
                        WithheldTool("srv", "deep_meta", "tool definition nested deeper than 65 levels")]
    assert str(withheld[0]) == "deep_tool: input schema nested deeper than 64 levels"
    assert tools[0].input_schema == {"type": "object"}
    assert sanitize_input_schema(tools[1].input_schema)["type"] == "object"  # 64 levels: fine
