"""Input-schema sanitising: exact outputs, and the input is never mutated."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mini_claude.mcp.schema import sanitize_input_schema

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
