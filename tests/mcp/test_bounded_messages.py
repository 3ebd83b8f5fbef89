"""Issue 18, finding 14: a stdio server's line had no length limit (a 1.2 GB line without a newline cost 1.27 GB of
memory, then the call hung) and HTTP bodies were read whole. Now one message is capped (64 MB by default,
`MINI_CLAUDE_MCP_MAX_MESSAGE_BYTES`): the call it answers fails at once with `MessageTooLargeError` naming the
server, the limit and the size; memory stays bounded; the connection (and every other server) goes on. A message over
the cap that names no request closes that one connection (`MessageOverflowError`), failing its pending calls at once.

Real processes throughout: a stdio server script that floods its stdout, a loopback Streamable HTTP server (JSON and
SSE answers), the real CLI (`python -m mini_claude -p`) against the mock model, its peak RSS read from `wait4`."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from mini_claude.errors import MessageOverflowError, MessageTooLargeError
from mini_claude.mcp.jsonrpc import JsonRpcSession
from mini_claude.mcp.transports.http import StreamableHttpTransport
from mini_claude.mcp.transports.limits import (
    DEFAULT_MAX_MESSAGE_BYTES,
    MAX_MESSAGE_BYTES_ENV,
    max_message_bytes,
)
from mini_claude.mcp.transports.stdio import StdioParams, StdioTransport
from tests.integration.conftest import Cli, answer, probe_entry, result_text, tool_results, tool_use

pytestmark = pytest.mark.timeout(120)

MB = 1024 * 1024
LIMIT = 16 * MB
FLOOD = 200 * MB  # each oversized message: 12x the cap
CALL_TIMEOUT_S = 60.0  # far above what a refusal needs: a failure must come from the cap, at once
FAST_S = 10.0

FLOOD_SERVER = r'''
import json, sys, time
out = sys.stdout.buffer
TOOLS = [{"name": n, "description": n, "inputSchema": {"type": "object"}} for n in ("flood", "echo")]
def send(message):
    out.write(json.dumps(message).encode() + b"\n")
    out.flush()
for line in sys.stdin.buffer:
    message = json.loads(line)
    method, rid = message.get("method"), message.get("id")
    if rid is None:
        continue
    args = (message.get("params") or {}).get("arguments") or {}
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {"protocolVersion": message["params"]["protocolVersion"],
              "capabilities": {"tools": {}}, "serverInfo": {"name": "flood", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": TOOLS}})
    elif method == "tools/call" and message["params"]["name"] == "flood":
        id_last = args.get("id_last", False)
        out.write(b'{"jsonrpc":"2.0",' + (b"" if id_last else b'"id":%d,' % rid)
                  + b'"result":{"content":[{"type":"text","text":"')
        chunk, left = b"x" * (1 << 20), args["bytes"]
        while left > 0:
            out.write(chunk[:left])
            left -= len(chunk)
        out.flush()
        if not args.get("end", True):
            time.sleep(3600)  # the line never ends
        out.write(b'"}]}' + (b',"id":%d' % rid if id_last else b"") + b"}\n")
        out.flush()
    elif method == "tools/call":
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "echo: " +
              str(args.get("text"))}]}})
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no such method"}})
'''


# ---- a loopback Streamable HTTP server that floods on demand ----------------------------------------------------

class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # bodies without a length end with the connection

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._reply(405, b"", "text/plain")

    def do_DELETE(self) -> None:
        self._reply(200, b"", "text/plain")

    def do_POST(self) -> None:
        message = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
        method, rid = message.get("method"), message.get("id")
        if rid is None:
            self._reply(202, b"", "text/plain")
            return
        params = message.get("params") or {}
        args = params.get("arguments") or {}
        if method == "initialize":
            result: Any = {"protocolVersion": params["protocolVersion"], "capabilities": {"tools": {}},
                           "serverInfo": {"name": "web", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": [{"name": n, "description": n, "inputSchema": {"type": "object"}}
                                for n in ("flood", "flood_sse", "flood_declared", "echo")]}
        elif method == "tools/call" and params["name"].startswith("flood"):
            self._flood(rid, params["name"], args["bytes"])
            return
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": f"web echo: {args.get('text')}"}]}
        else:
            body = json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}}).encode()
            self._reply(200, body, "application/json")
            return
        self._reply(200, json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode(), "application/json")

    def _reply(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _flood(self, rid: int, name: str, size: int) -> None:
        head = b'{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"' % rid
        self.send_response(200)
        if name == "flood_sse":
            self.send_header("Content-Type", "text/event-stream")
            head = b"event: message\ndata: " + head
        else:
            self.send_header("Content-Type", "application/json")
        if name == "flood_declared":
            self.send_header("Content-Length", str(len(head) + size + 8))
        self.end_headers()
        try:
            self.wfile.write(head)
            if name == "flood_declared":
                return  # a client that believed the length would wait for bytes that never come
            chunk, left = b"x" * MB, size
            while left > 0:
                self.wfile.write(chunk[:left])
                left -= MB
        except OSError:
            pass  # the client stopped reading: what we want


@pytest.fixture
def web() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="flood-web", daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
    server.shutdown()
    server.server_close()


def _flood_params(tmp_path: Path) -> StdioParams:
    script = tmp_path / "flood_server.py"
    script.write_text(FLOOD_SERVER)
    return StdioParams(command=sys.executable, args=[str(script)])


@pytest.fixture
async def stdio_session(tmp_path: Path) -> AsyncIterator[tuple[JsonRpcSession, StdioTransport]]:
    transport = StdioTransport(_flood_params(tmp_path), server="flood", max_message_bytes=LIMIT)
    await transport.start()
    session = JsonRpcSession(transport, name="flood")
    session.start()
    await session.request("initialize", {"protocolVersion": "2025-06-18"}, timeout=CALL_TIMEOUT_S)
    yield session, transport
    async with asyncio.timeout(15):
        await session.close()


async def _call(session: JsonRpcSession, name: str, **arguments: Any) -> Any:
    return await session.request("tools/call", {"name": name, "arguments": arguments}, timeout=CALL_TIMEOUT_S)


# ---- stdio --------------------------------------------------------------------------------------------------------

async def test_stdio_oversized_reply_fails_its_call_and_the_line_is_skipped(
        stdio_session: tuple[JsonRpcSession, StdioTransport]) -> None:
    session, _ = stdio_session
    with pytest.raises(MessageTooLargeError) as info:
        await _call(session, "flood", bytes=FLOOD)
    error = info.value
    assert error.server == "flood" and error.limit_bytes == LIMIT and error.size_bytes > LIMIT
    assert str(error).startswith("MCP server 'flood': a message larger than the 16 MB limit (over ")
    assert MAX_MESSAGE_BYTES_ENV in str(error)
    # the rest of the line was skipped up to its newline: the next reply on this connection is read as usual
    assert (await _call(session, "echo", text="framed"))["content"][0]["text"] == "echo: framed"


async def test_stdio_endless_line_fails_the_call_at_once(stdio_session: tuple[JsonRpcSession, StdioTransport]
                                                         ) -> None:
    session, _ = stdio_session
    started = time.monotonic()
    with pytest.raises(MessageTooLargeError):
        await _call(session, "flood", bytes=2 * LIMIT, end=False)  # then the server sleeps, line unfinished
    assert time.monotonic() - started < FAST_S


async def test_stdio_oversized_line_naming_no_request_closes_the_connection(
        stdio_session: tuple[JsonRpcSession, StdioTransport]) -> None:
    session, _ = stdio_session
    pending = asyncio.ensure_future(session.request("ping", timeout=CALL_TIMEOUT_S))
    started = time.monotonic()
    with pytest.raises(MessageOverflowError) as info:
        await _call(session, "flood", bytes=2 * LIMIT, id_last=True, end=False)
    assert time.monotonic() - started < FAST_S
    assert "no request id could be read from it: the connection was closed" in str(info.value)
    with pytest.raises(MessageOverflowError):
        await pending  # every pending call fails with the reason, at once
    assert session.closed


def test_the_cap_comes_from_the_environment() -> None:
    assert max_message_bytes({}) == DEFAULT_MAX_MESSAGE_BYTES == 64 * MB
    assert max_message_bytes({MAX_MESSAGE_BYTES_ENV: "2048"}) == 2048
    assert max_message_bytes({MAX_MESSAGE_BYTES_ENV: "lots"}) == DEFAULT_MAX_MESSAGE_BYTES
    assert max_message_bytes({MAX_MESSAGE_BYTES_ENV: "10"}) == DEFAULT_MAX_MESSAGE_BYTES  # could not even initialize


# ---- Streamable HTTP ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("tool", ["flood", "flood_sse", "flood_declared"])
async def test_http_oversized_body_fails_its_call_and_the_session_goes_on(web: str, tool: str) -> None:
    transport = StreamableHttpTransport(web, server="web", max_message_bytes=LIMIT)
    await transport.start()
    session = JsonRpcSession(transport, name="web")
    session.start()
    try:
        await session.request("initialize", {"protocolVersion": "2025-06-18"}, timeout=CALL_TIMEOUT_S)
        started = time.monotonic()
        with pytest.raises(MessageTooLargeError) as info:
            await _call(session, tool, bytes=FLOOD)
        assert time.monotonic() - started < FAST_S
        assert info.value.limit_bytes == LIMIT and info.value.size_bytes > LIMIT
        assert "MCP server 'web'" in str(info.value) and "16 MB limit" in str(info.value)
        if tool == "flood_declared":  # refused from its Content-Length, before reading a byte
            assert info.value.complete and info.value.size_bytes > FLOOD
        assert (await _call(session, "echo", text="hi"))["content"][0]["text"] == "web echo: hi"
    finally:
        async with asyncio.timeout(15):
            await session.close()


# ---- end to end: the CLI, its memory, the other servers -----------------------------------------------------------

def _run_wait4(cli: Cli, *args: str, timeout_s: float) -> tuple[int, str, str, int]:
    """Run the CLI and reap it: (exit code, stdout, stderr, its own peak RSS in bytes).

    The peak is the CLI's `VmHWM` (/proc/PID/status), read every 20 ms while it runs: that
    high-water mark belongs to the memory the program itself mapped. `wait4`'s `ru_maxrss` is not: it keeps the
    peak from before `exec`, when the child was still a copy of this test process — a pytest grown to 250 MB in a
    full run made every CLI look 250 MB big."""
    out, err = cli.tmp / "stdout.txt", cli.tmp / "stderr.txt"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "mini_claude", *args], cwd=cli.work, env=cli.env,
                                stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout_s
    peak = 0
    while True:
        peak = max(peak, _high_water(proc.pid))
        pid, status, _usage = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            break
        if time.monotonic() > deadline:
            proc.kill()
            os.wait4(proc.pid, 0)
            raise AssertionError(f"the CLI did not finish within {timeout_s}s")
        time.sleep(0.02)
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: keep Popen from waiting again
    assert peak > 0, "the CLI's VmHWM was never read"
    return proc.returncode, out.read_text(), err.read_text(), peak


def _high_water(pid: int) -> int:
    """The process's peak resident set (VmHWM) in bytes, 0 when it cannot be read (gone, or a zombie)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def test_cli_refuses_oversized_messages_with_bounded_memory(tmp_path: Path, web: str) -> None:
    cli = Cli(tmp_path)
    try:
        script = tmp_path / "flood_server.py"
        script.write_text(FLOOD_SERVER)
        config = cli.config_file({"flood": {"command": sys.executable, "args": [str(script)]},
                                  "web": {"type": "http", "url": web},
                                  "probe": probe_entry()})
        cli.env[MAX_MESSAGE_BYTES_ENV] = str(LIMIT)
        mock = cli.mock([tool_use("mcp__flood__flood", {"bytes": FLOOD}),
                         tool_use("mcp__flood__echo", {"text": "framed"}),
                         tool_use("mcp__web__flood", {"bytes": FLOOD}),
                         tool_use("mcp__web__flood_sse", {"bytes": FLOOD}),
                         tool_use("mcp__web__echo", {"text": "web"}),
                         tool_use("mcp__probe__echo", {"text": "probe"}),
                         answer("done")])
        rc, stdout, stderr, peak = _run_wait4(cli, "-p", "go", "--mcp-config", config, "--yolo", timeout_s=90)
        assert rc == 0, stderr
        assert stdout.strip() == "done"
        results = [result_text(block) for block in tool_results(mock)]
        assert len(results) == 6, [text[:300] for text in results]
        for refused, server in ((results[0], "flood"), (results[2], "web"), (results[3], "web")):
            assert f"MCP server '{server}'" in refused and "larger than the 16 MB limit" in refused, refused[:300]
        assert results[1] == "echo: framed"  # the same stdio server, still framed
        assert results[4] == "web echo: web"
        assert "probe" in results[5]
        # 600 MB went past the cap; the CLI's peak stays far below even one flood
        assert peak < 200 * MB, f"peak RSS {peak / MB:.0f} MB"
        print(f"peak RSS of the CLI after refusing 3 x {FLOOD // MB} MB messages: {peak / MB:.0f} MB")
    finally:
        cli.close()
