"""Red-team round 6: `mini-claude mcp serve --port` (Streamable HTTP), attacked as another local client, a local
web page and a DNS-rebinding page would. All held; see /work/review/round6/REPORT.md."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import mcp.types as mt
import pytest

from tests.mcp_serve.test_http import INIT, official, post, server
from tests.mcp_serve.test_mcp_serve import project

pytestmark = pytest.mark.timeout(120)


async def test_a_second_client_cannot_answer_another_sessions_permission_question(tmp_path: Path) -> None:
    """HELD. While session A's Bash call waits on its elicitation (the gate's question), session B posts "accept"
    answers for every id the question could have. They are B's, so they answer nothing of A's: A's own "decline"
    decides and the command never runs. (Meaningful: A's own accept runs it, test_http.py's elicitation test.)"""
    work, env = project(tmp_path, trusted=True)
    asked = asyncio.Event()
    hijacked = asyncio.Event()

    async def decline(context: Any, params: mt.ElicitRequestParams) -> mt.ElicitResult:
        asked.set()
        await asyncio.wait_for(hijacked.wait(), 30)
        return mt.ElicitResult(action="decline")

    with server(work, env) as (_proc, url):
        status, headers, _ = await asyncio.to_thread(post, url, INIT)
        assert status == 200
        other = {"Mcp-Session-Id": headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
        async with official(url, decline) as session:
            call = asyncio.ensure_future(session.call_tool("Bash", {"command": "touch pwned"}))
            await asyncio.wait_for(asked.wait(), 60)
            for request_id in [*range(0, 8), "0", "1"]:
                answer = {"jsonrpc": "2.0", "id": request_id,
                          "result": {"action": "accept", "content": {"allow": True}}}
                assert (await asyncio.to_thread(post, url, answer, other))[0] == 202
            assert not call.done()  # every forged answer was taken (202) and A's question is still open
            hijacked.set()
            ran = await asyncio.wait_for(call, 60)
    assert ran.is_error and not (work / "pwned").exists()


def test_local_pages_and_rebinding_get_nothing_readable(tmp_path: Path) -> None:
    """HELD. A cross-site page's "simple" POST (text/plain with `application/json` in a parameter) is refused by its
    Origin; a loopback page's request is answered without any CORS header, so the browser hides the session id from
    it (and a preflight is refused); a Host that merely starts with a loopback name is DNS rebinding (421); a
    client cannot choose its own session id."""
    work, env = project(tmp_path, trusted=True)
    with server(work, env) as (_proc, url):
        sneaky = {"Content-Type": "text/plain; charset=application/json"}
        assert post(url, INIT, {**sneaky, "Origin": "https://evil.example"})[0] == 403
        status, headers, _ = post(url, INIT, {"Origin": "http://localhost:3000"})
        assert status == 200 and not any(name.startswith("access-control-") for name in headers)
        assert post(url, INIT, {"Origin": "http://localhost:3000",
                                "Access-Control-Request-Method": "POST"}, method="OPTIONS")[0] == 405
        for host in ("localhost.evil.example", "127.0.0.1.nip.io", "evil.example:80"):
            assert post(url, INIT, {"Host": host})[0] == 421, host
        status, headers, body = post(url, INIT, {"Mcp-Session-Id": "chosen-by-attacker"})
        assert status != 200 or headers.get("mcp-session-id") != "chosen-by-attacker", json.loads(body)
