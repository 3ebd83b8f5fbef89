"""SEP-2243 headers as pure functions: value encoding, x-mcp-header validation, headers per message."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from mini_claude.errors import InvalidToolHeadersError
from mini_claude.mcp.headers import (
    HeaderParam,
    encode_header_value,
    message_headers,
    tool_header_params,
)


def b64(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


@pytest.mark.parametrize(("value", "expected"), [
    ("us-west1", "us-west1"),
    ("us west 1", "us west 1"),  # internal spaces are fine
    ("", ""),
    ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),  # the spec's examples
    (" padded ", "=?base64?IHBhZGRlZCA=?="),
    ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
    ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
    (" us-west1", b64(" us-west1")),
    ("us-west1 ", b64("us-west1 ")),
    ("\tindented", b64("\tindented")),
    ("line1\r\nline2", b64("line1\r\nline2")),
    (42, "42"),
    (-7, "-7"),
    (42.0, "42"),
    (True, "true"),
    (False, "false"),
    (None, None),
    (2**53, None),  # outside JavaScript's safe integer range
    ({"a": 1}, None),
])
def test_encode_header_value(value: Any, expected: str | None) -> None:
    assert encode_header_value(value) == expected


def schema(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


def test_valid_annotations_at_any_depth() -> None:
    params = tool_header_params(schema(
        region={"type": "string", "x-mcp-header": "Region"},
        query={"type": "string"},
        opts={"type": "object", "properties": {"tenant": {"type": "integer", "x-mcp-header": "Tenant-Id"}}},
        flag={"type": ["boolean", "null"], "x-mcp-header": "Flag"},
    ))
    assert params == (HeaderParam(("region",), "Region"), HeaderParam(("opts", "tenant"), "Tenant-Id"),
                      HeaderParam(("flag",), "Flag"))
    assert params[0].header == "Mcp-Param-Region"
    assert tool_header_params({"type": "object"}) == ()


@pytest.mark.parametrize(("props", "reason"), [
    ({"v": {"type": "string", "x-mcp-header": ""}}, "non-empty"),
    ({"v": {"type": "string", "x-mcp-header": 5}}, "non-empty string"),
    ({"v": {"type": "object", "x-mcp-header": "Data"}}, "only string, integer and boolean"),
    ({"v": {"type": "array", "items": {"type": "string"}, "x-mcp-header": "Items"}}, "only string"),
    ({"v": {"type": "null", "x-mcp-header": "Nil"}}, "only string"),
    ({"v": {"type": "number", "x-mcp-header": "Score"}}, "only string"),
    ({"v": {"x-mcp-header": "NoType"}}, "only string"),
    ({"a": {"type": "string", "x-mcp-header": "Region"}, "b": {"type": "string", "x-mcp-header": "Region"}},
     "unique"),
    ({"a": {"type": "string", "x-mcp-header": "MyField"}, "b": {"type": "string", "x-mcp-header": "myfield"}},
     "unique"),
    ({"v": {"type": "string", "x-mcp-header": "My Region"}}, "not allowed"),
    ({"v": {"type": "string", "x-mcp-header": "Region:Primary"}}, "not allowed"),
    ({"v": {"type": "string", "x-mcp-header": "Région"}}, "not allowed"),
    ({"v": {"type": "string", "x-mcp-header": "Region\t1"}}, "not allowed"),
    ({"v": {"type": "string", "x-mcp-header": "Region\r\n"}}, "not allowed"),
])
def test_invalid_annotations_are_rejected(props: dict[str, Any], reason: str) -> None:
    with pytest.raises(InvalidToolHeadersError, match=reason):
        tool_header_params(schema(**props))


def test_message_headers_standard() -> None:
    assert message_headers({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}) == {
        "Mcp-Method": "tools/list"}
    assert message_headers({"jsonrpc": "2.0", "method": "notifications/cancelled"}) == {
        "Mcp-Method": "notifications/cancelled"}
    assert message_headers({"jsonrpc": "2.0", "id": 1, "result": {}}) == {}
    assert message_headers({"id": 2, "method": "resources/read", "params": {"uri": "file:///a%20b.txt"}}) == {
        "Mcp-Method": "resources/read", "Mcp-Name": "file:///a%20b.txt"}
    assert message_headers({"id": 3, "method": "prompts/get", "params": {"name": "p"}}) == {
        "Mcp-Method": "prompts/get", "Mcp-Name": "p"}
    assert message_headers({"id": 4, "method": "tools/call", "params": {"name": "my-hyphenated-tool"}}) == {
        "Mcp-Method": "tools/call", "Mcp-Name": "my-hyphenated-tool"}


def test_message_headers_mirror_tool_params() -> None:
    params = {"sql": tool_header_params(schema(
        region={"type": "string", "x-mcp-header": "Region"},
        priority={"type": "integer", "x-mcp-header": "Priority"},
        verbose={"type": "boolean", "x-mcp-header": "Verbose"},
        method_val={"type": "string", "x-mcp-header": "Method"},
        greeting={"type": "string", "x-mcp-header": "Greeting"},
        missing={"type": "string", "x-mcp-header": "Missing"},
        query={"type": "string"},
    ))}
    message = {"id": 5, "method": "tools/call", "params": {"name": "sql", "arguments": {
        "region": "us-west1", "priority": 42, "verbose": None, "method_val": "m", "greeting": "Hello, 世界",
        "query": "SELECT 1"}}}
    assert message_headers(message, params) == {
        "Mcp-Method": "tools/call", "Mcp-Name": "sql", "Mcp-Param-Region": "us-west1", "Mcp-Param-Priority": "42",
        "Mcp-Param-Method": "m", "Mcp-Param-Greeting": "=?base64?SGVsbG8sIOS4lueVjA==?="}
    # another tool's annotations never apply; a tool without known schema gets no Mcp-Param-*
    other = {"id": 6, "method": "tools/call", "params": {"name": "other", "arguments": {"region": "x"}}}
    assert message_headers(other, params) == {"Mcp-Method": "tools/call", "Mcp-Name": "other"}
