"""Elicitation helpers: SEP-1034 schema defaults and validating an answer against a requestedSchema."""

from __future__ import annotations

from mini_claude.mcp.elicitation import schema_defaults, validate_content

SEP1034 = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
        "verified": {"type": "boolean", "default": True},
        "nodefault": {"type": "string"},
    },
    "required": [],
}


def test_schema_defaults_sep1034() -> None:
    assert schema_defaults(SEP1034) == {"name": "John Doe", "age": 30, "score": 95.5, "status": "active",
                                        "verified": True}


def test_defaults_that_do_not_fit_are_skipped() -> None:
    schema = {"type": "object", "properties": {
        "a": {"type": "integer", "default": "x"},
        "b": {"type": "string", "enum": ["p", "q"], "default": "z"},
        "c": {"type": "boolean", "default": 1},
        "d": {"type": "array", "items": {"enum": ["x", "y"]}, "default": ["x"]},
        "e": {"type": "string", "oneOf": [{"const": "k", "title": "K"}], "default": "k"},
    }}
    assert schema_defaults(schema) == {"d": ["x"], "e": "k"}
    assert schema_defaults(None) == {} and schema_defaults({"properties": []}) == {}


def test_validate_content() -> None:
    schema = {"type": "object", "required": ["name", "age"], "properties": {
        "name": {"type": "string", "minLength": 2, "maxLength": 5},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "email": {"type": "string", "format": "email"},
        "color": {"type": "string", "enum": ["red", "blue"]},
        "ok": {"type": "boolean"},
        "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 1},
    }}
    assert validate_content(schema, {"name": "Ann", "age": 30, "email": "a@b.io", "color": "red", "ok": False,
                                     "tags": ["a"]}) == []
    errors = validate_content(schema, {"name": "A", "age": 30.5, "email": "nope", "color": "green", "ok": "yes",
                                       "tags": ["a", "c"], "extra": 1})
    assert errors == ["name: must be at least 2 characters", "age: expected an integer", "email: not a valid email",
                      "color: must be one of red, blue", "ok: expected true or false",
                      "tags: c not among a, b", "tags: choose at most 1", "extra: not asked for"]
    assert validate_content(schema, {"name": "Ann"}) == ["age: required"]
    assert validate_content(schema, {"age": 200, "name": "Ann"}) == ["age: must be at most 150"]
    assert validate_content(schema, ["x"]) == ["the answer is not an object"]
    assert validate_content(SEP1034, schema_defaults(SEP1034)) == []
