"""Red-team round 5 on `mini-claude mcp serve`: what a hostile client sends on the raw wire must get an error reply
and leave the server serving — never end it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import clean_env
from tests.mcp_serve.test_stdio_server import INIT, Raw

pytestmark = pytest.mark.timeout(60)


def test_a_line_nested_too_deeply_is_a_parse_error_not_the_server_s_end(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    raw = Raw(work, clean_env(tmp_path, MINI_CLAUDE_MCP_MAX_MESSAGE_BYTES=str(1 << 20)))
    try:
        raw.send(json.dumps(INIT).encode() + b"\n")
        assert raw.message()["result"]["serverInfo"]["name"] == "mini-claude"
        depth = 100_000  # deeper than the JSON decoder's recursion limit, well under the size cap
        raw.send(b"[" * depth + b"]" * depth + b"\n")
        assert raw.message()["error"]["code"] == -32700
        raw.send(b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n')
        assert raw.message() == {"jsonrpc": "2.0", "id": 2, "result": {}}
        assert raw.proc.stdin is not None
        raw.proc.stdin.close()
        assert raw.proc.wait(timeout=20) == 0
    finally:
        if raw.proc.poll() is None:
            raw.proc.kill()
            raw.proc.wait()
