"""`mini-claude mcp serve --port 0` (Streamable HTTP) as a real process in a tmp project: the official `mcp`
client (`mcp.client.streamable_http`) and our own client list and call the tools over HTTP; the folder's gate holds
as it does over stdio (a deny rule, an untrusted folder, an elicitation question answered by the official client's
callback); the transport's own rules hold on the raw wire (a foreign Origin or Host, a wrong or ended session id);
SIGTERM ends the server cleanly and reaps a command still running."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import mcp.types as mt
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from mini_claude.mcp.client import McpClient
from mini_claude.mcp.transports.http import StreamableHttpTransport
from tests.helpers import PYTHON, assert_pid_gone, read_pidfile, wait_until
from tests.mcp_serve.test_mcp_serve import LAUNCH_CODE, project, text

pytestmark = pytest.mark.timeout(120)

ACCEPT = "application/json, text/event-stream"
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}


@contextmanager
def server(work: Path, env: dict[str, str], *extra: str) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """The server process and its URL (read from the `listening on` line on stderr)."""
    log = work.parent / "serve.stderr"
    with log.open("wb") as err:
        proc = subprocess.Popen([PYTHON, "-m", "mini_claude", "mcp", "serve", "--port", "0", *extra], cwd=work,
                                env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    found: list[str] = []

    def listening() -> bool:
        match = re.search(r"listening on (http://\S+/mcp)", log.read_text(errors="replace"))
        if match:
            found.append(match[1])
        assert proc.poll() is None, f"mcp serve exited: {log.read_text(errors='replace')}"
        return bool(match)

    try:
        wait_until(listening, "mcp serve to print its URL", within_s=60)
        yield proc, found[0]
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@asynccontextmanager
async def official(url: str, elicit: Any = None) -> AsyncIterator[ClientSession]:
    async with streamable_http_client(url) as (read, write), \
            ClientSession(read, write, read_timeout_seconds=60, elicitation_callback=elicit) as session:
        await session.initialize()
        yield session


def post(url: str, message: dict[str, Any], headers: dict[str, str] | None = None,
         method: str = "POST") -> tuple[int, dict[str, str], bytes]:
    """One raw request: status, headers (lower-case names) and body."""
    data = json.dumps(message).encode() if method == "POST" else None
    request = urllib.request.Request(url, data=data, method=method, headers={
        "Content-Type": "application/json", "Accept": ACCEPT, **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read()


async def test_official_client_lists_and_calls_over_http(tmp_path: Path) -> None:
    work, env = project(tmp_path, trusted=True)
    with server(work, env) as (_proc, url):
        assert url.startswith("http://127.0.0.1:")
        async with official(url) as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert {"Read", "Write", "Edit", "Glob", "Grep", "Bash"} <= set(tools)
            assert tools["Read"].annotations is not None and tools["Read"].annotations.read_only_hint is True
            read = await session.call_tool("Read", {"file_path": str(work / "notes.txt")})
            assert not read.is_error and "second line" in text(read)
            refused = await session.call_tool("Bash", {"command": "touch x"})  # no elicitation declared
            assert refused.is_error and "elicitation" in text(refused)
    assert not (work / "x").exists()


async def test_our_own_client_over_http(tmp_path: Path) -> None:
    work, env = project(tmp_path, trusted=True)
    with server(work, env) as (_proc, url):
        client = McpClient(StreamableHttpTransport(url, server="mini"), name="mini")
        await client.connect(timeout_s=30)
        try:
            tools = {tool.name: tool for tool in await client.list_tools()}
            assert tools["Read"].read_only_hint and not tools["Bash"].read_only_hint
            result = await client.call_tool("Glob", {"pattern": "*.txt"})
            assert not result.is_error and "notes.txt" in result.content[0]["text"]
        finally:
            await client.close()


async def test_deny_rule_holds_over_http(tmp_path: Path) -> None:
    work, env = project(tmp_path, {"permissions": {"deny": ["Read(secret.txt)"]}}, trusted=True)
    with server(work, env) as (_proc, url):
        async with official(url) as session:
            refused = await session.call_tool("Read", {"file_path": str(work / "secret.txt")})
    assert refused.is_error and LAUNCH_CODE not in text(refused)


async def test_untrusted_folder_holds_over_http(tmp_path: Path) -> None:
    """The folder's `allow: Bash` widens nothing until it is trusted: the call still needs the user's approval."""
    work, env = project(tmp_path, {"permissions": {"allow": ["Bash"]}}, trusted=False)
    with server(work, env) as (_proc, url):
        async with official(url) as session:
            refused = await session.call_tool("Bash", {"command": "touch x"})
    assert refused.is_error and "approval" in text(refused)
    assert not (work / "x").exists()


async def test_elicitation_round_trips_over_http(tmp_path: Path) -> None:
    """The question rides the tools/call POST's SSE stream; the answer comes back on a POST of its own."""
    work, env = project(tmp_path, trusted=True)
    asked: list[str] = []

    async def accept(context: Any, params: mt.ElicitRequestParams) -> mt.ElicitResult:
        asked.append(params.message)
        return mt.ElicitResult(action="accept", content={"allow": True})

    with server(work, env) as (_proc, url):
        async with official(url, accept) as session:
            ran = await session.call_tool("Bash", {"command": "touch x"})
    assert not ran.is_error, text(ran)
    assert (work / "x").exists()
    assert asked and "Bash" in asked[0] and "touch x" in asked[0]


def test_transport_rules_on_the_raw_wire(tmp_path: Path) -> None:
    work, env = project(tmp_path, trusted=True)
    with server(work, env) as (_proc, url):
        status, _, _ = post(url, INIT, {"Origin": "http://evil.example.com"})
        assert status == 403
        status, _, _ = post(url, INIT, {"Host": "evil.example.com"})
        assert 400 <= status < 500
        status, headers, body = post(url, INIT, {"Origin": "http://localhost:3000"})  # a loopback origin is fine
        assert status == 200 and json.loads(body)["result"]["serverInfo"]["name"] == "mini-claude"
        session = headers["mcp-session-id"]
        assert re.fullmatch(r"[\x21-\x7e]+", session)
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        status, _, body = post(url, ping, {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"})
        assert status == 200 and json.loads(body) == {"jsonrpc": "2.0", "id": 2, "result": {}}
        assert post(url, ping, {"Mcp-Session-Id": "not-a-session"})[0] == 404
        assert post(url, ping)[0] == 400  # no session id at all
        assert post(url, ping, {"Mcp-Session-Id": session, "MCP-Protocol-Version": "1999-01-01"})[0] == 400
        assert post(url, ping, {"Mcp-Session-Id": session}, method="DELETE")[0] == 200
        assert post(url, ping, {"Mcp-Session-Id": session})[0] == 404  # DELETE ended it
        assert post(url, ping, {"Mcp-Session-Id": session}, method="PUT")[0] == 405


def test_sigterm_stops_cleanly_and_reaps_a_running_command(tmp_path: Path) -> None:
    work, env = project(tmp_path, {"permissions": {"allow": ["Bash"]}}, trusted=True)
    pid_file = work / "pid"
    with server(work, env) as (proc, url):
        _, headers, _ = post(url, INIT)
        session = {"Mcp-Session-Id": headers["mcp-session-id"]}
        post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "Bash", "arguments": {"command": "echo $$ > pid; exec sleep 300"}}}
        request = urllib.request.Request(url, data=json.dumps(call).encode(), method="POST", headers={
            "Content-Type": "application/json", "Accept": ACCEPT, **session})
        stream = urllib.request.urlopen(request, timeout=30)  # the SSE stream of the running call
        try:
            child = read_pidfile(pid_file, within_s=30)
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=20) == 0
            assert_pid_gone(child, within_s=10)
        finally:
            stream.close()


def raw(url: str, data: bytes) -> bytes:
    """Bytes sent as they are on a fresh connection; what came back until the server closed it."""
    parts = urllib.parse.urlsplit(url)
    with socket.create_connection((parts.hostname or "", parts.port or 80), timeout=30) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_bounds_and_malformed_requests(tmp_path: Path) -> None:
    work, env = project(tmp_path, trusted=True)
    env["MINI_CLAUDE_MCP_MAX_MESSAGE_BYTES"] = "4096"
    with server(work, env) as (_proc, url):
        big = dict(INIT, params={**INIT["params"], "pad": "x" * 5000})  # type: ignore[dict-item]
        assert post(url, big)[0] == 413
        status, _, body = post(url, [INIT])  # type: ignore[arg-type]
        assert status == 400 and json.loads(body)["error"]["code"] == -32600
        status, _, body = post(url, dict(INIT, id=True))  # true is no id: its reply could never be matched
        assert status == 400 and json.loads(body)["error"]["code"] == -32600
        host = urllib.parse.urlsplit(url).netloc
        head = f"POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: {ACCEPT}\r\n"
        assert raw(url, (head + "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n").encode()).startswith(b"HTTP/1.1 411")
        answer = raw(url, (head + "Content-Length: 5\r\n\r\n{nope").encode())
        assert answer.startswith(b"HTTP/1.1 400") and b"-32700" in answer
        assert raw(url, b"POST /mcp HTTP/1.1\r\nX: " + b"y" * 40_000 + b"\r\n\r\n").startswith(b"HTTP/1.1 431")
        status, _, _ = post(url, INIT, {"Accept": "application/json"})
        assert status == 406
        _, headers, _ = post(url, INIT)
        session = headers["mcp-session-id"]
        get_head = f"GET /mcp HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\n\r\n"
        with socket.create_connection((urllib.parse.urlsplit(url).hostname or "", urllib.parse.urlsplit(url).port or 80),
                                      timeout=30) as stream:
            stream.sendall(get_head.encode())
            assert stream.recv(200).startswith(b"HTTP/1.1 200")  # the standalone stream is open
            assert raw(url, get_head.encode()).startswith(b"HTTP/1.1 409")  # and only one at a time
            assert post(url, INIT, {"Mcp-Session-Id": session}, method="DELETE")[0] == 200
            stream.settimeout(5)  # well under the keep-alive interval: ending the session ends its stream at once
            while stream.recv(65536):
                pass


def test_binding_every_interface_warns(tmp_path: Path) -> None:
    work, env = project(tmp_path, trusted=True)
    with server(work, env, "--host", "0.0.0.0") as (_proc, url):
        assert "warning: binding 0.0.0.0" in (work.parent / "serve.stderr").read_text()
        port = urllib.parse.urlsplit(url).port
        status, _, _ = post(f"http://127.0.0.1:{port}/mcp", INIT)
        assert status == 200
        assert post(f"http://127.0.0.1:{port}/mcp", INIT, {"Origin": "http://evil.example.com"})[0] == 403


def test_a_port_in_use_is_a_clear_error(tmp_path: Path) -> None:
    work, env = project(tmp_path, trusted=True)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        done = subprocess.run([PYTHON, "-m", "mini_claude", "mcp", "serve", "--port", port], cwd=work, env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and f"cannot listen on 127.0.0.1:{port}" in done.stderr
    assert "Traceback" not in done.stderr
