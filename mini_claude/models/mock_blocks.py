"""The mock model's content blocks as the Messages API sends them: a whole block in a JSON answer
(`ordered_block`), a streamed one as its `content_block_start` and deltas (`stream_pieces`: text, thinking with its
signature, tool input cut short at `max_tokens`, the web search's server blocks), and the ids and usage entry of a
turn's server blocks (`number_server_blocks`). Split from mock_server.py, which serves them."""

from __future__ import annotations

import json
from typing import Any

from mini_claude.models.scenario import SERVER_BLOCK_TYPES

__all__ = ["STREAM_CHUNKS", "chunks", "number_server_blocks", "ordered_block", "server_block_stream",
           "stream_pieces"]

STREAM_CHUNKS = 3  # deltas per text / tool-input block, so clients really assemble pieces


def stream_pieces(block: dict[str, Any], *, cut: bool) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A block's `content_block_start` and its deltas. `cut`: a tool call stopped at max_tokens, so only the first
    half of its input arrives."""
    if block["type"] == "text":
        return {"type": "text", "text": ""}, [{"type": "text_delta", "text": c} for c in chunks(block["text"])]
    if block["type"] == "thinking":
        return ({"type": "thinking", "thinking": "", "signature": ""},
                [*({"type": "thinking_delta", "thinking": c} for c in chunks(block["thinking"])),
                 {"type": "signature_delta", "signature": block["signature"]}])
    if block["type"] == "redacted_thinking":
        return dict(block), []
    if block["type"] in SERVER_BLOCK_TYPES:
        return server_block_stream(block)
    raw = json.dumps(block["input"], ensure_ascii=False)
    if cut:
        raw = raw[: len(raw) // 2]
    return ({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}},
            [{"type": "input_json_delta", "partial_json": c} for c in chunks(raw)])


def ordered_block(block: dict[str, Any]) -> dict[str, Any]:
    if block["type"] == "tool_use":
        return {"type": "tool_use", "id": block["id"], "name": block["name"], "input": block["input"]}
    if block["type"] == "server_tool_use":
        return {"type": "server_tool_use", "id": block["id"], "name": block["name"], "input": block["input"]}
    if block["type"] == "web_search_tool_result":
        return {"type": "web_search_tool_result", "tool_use_id": block["tool_use_id"], "content": block["content"]}
    return block


# ---- server tool blocks (the API's web search) ---------------------------------------------------------------


def number_server_blocks(content: list[dict[str, Any]], new_id: Any) -> dict[str, Any]:
    """Give each server_tool_use an id (`srvtoolu_mock_<n>`) and each web_search_tool_result the id of the search
    before it; returns the usage entry counting the searches (`server_tool_use`), empty when there were none."""
    last_id, searches = None, 0
    for block in content:
        if block["type"] == "server_tool_use":
            block["id"] = last_id = new_id("srvtoolu_mock_")
            searches += block["name"] == "web_search"
        elif block["type"] == "web_search_tool_result":
            block["tool_use_id"] = last_id or new_id("srvtoolu_mock_")
    return {"server_tool_use": {"web_search_requests": searches}} if searches else {}


def server_block_stream(block: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A server block as the API streams it: a server_tool_use starts with an empty input that arrives as
    input_json_delta pieces; a web_search_tool_result arrives whole in its content_block_start."""
    if block["type"] == "server_tool_use":
        start = {"type": "server_tool_use", "id": block["id"], "name": block["name"], "input": {}}
        return start, [{"type": "input_json_delta", "partial_json": c}
                       for c in chunks(json.dumps(block["input"], ensure_ascii=False))]
    return ordered_block(block), []


def chunks(text: str, parts: int = STREAM_CHUNKS) -> list[str]:
    if not text:
        return []
    size = max(1, -(-len(text) // parts))
    return [text[i:i + size] for i in range(0, len(text), size)]
