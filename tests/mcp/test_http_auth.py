"""The HTTP transports' auth hook (`HttpAuth`), per-message headers and JSON-RPC error bodies on HTTP errors, with a
fake auth provider against scripted stdlib servers on loopback."""

from __future__ import annotations

import json
import queue
import time
from collections.abc import Mapping
from typing import Any

import pytest
from test_http_transport import FAST_S, ScriptedHandler, init_result, is_notification, scripted

from mini_claude.errors import AuthError, AuthRequiredError, HttpStatusError, JsonRpcError
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.transports.http import StreamableHttpTransport
from mini_claude.mcp.transports.sse import SseTransport

pytestmark = pytest.mark.timeout(60)

PINNED = "2025-06-18"
CHALLENGE = 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"'


class FakeAuth:
    """An `HttpAuth` that holds no token until a challenge, then `good` (or does what the test says)."""

    def __init__(self, *, fixes: bool = True, error: Exception | None = None,
                 headers_error: dict[str, Exception] | None = None) -> None:
        self.token: str | None = None
        self.fixes = fixes
        self.error = error
        self.headers_error = headers_error or {}
        self.asked: list[str] = []
        self.challenges: list[tuple[str, int, str | None]] = []

    async def request_headers(self, method: str, url: str) -> dict[str, str]:
        self.asked.append(method)
        if method in self.headers_error:
            raise self.headers_error[method]
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    async def handle_challenge(self, method: str, url: str, status: int, headers: Mapping[str, str]) -> bool:
        self.challenges.append((method, status, headers.get("www-authenticate")))
        if self.error is not None:
            raise self.error
        if self.fixes:
            self.token = "good"
        return self.fixes


def guarded(get_stream: bool = True):
    """A Streamable HTTP server that wants `Bearer good` on every request (GET: an SSE stream that closes)."""
    def behaviour(handler: ScriptedHandler, verb: str, body: Any) -> None:
        if handler.headers.get("Authorization") != "Bearer good":
            handler.reply(401, b"unauthorized", headers={"WWW-Authenticate": CHALLENGE})
        elif verb == "GET":
            if get_stream:
                handler.start_sse()
                handler.sse(": hello\n\n")
            else:
                handler.reply(405)
        elif verb == "DELETE":
            handler.reply(200)
        elif is_notification(body):
            handler.reply(202)
        elif body["method"] == "initialize":
            handler.reply_json(init_result(body), {"Mcp-Session-Id": "sid"})
        else:
            handler.reply_json({"jsonrpc": "2.0", "id": body["id"], "result": {"tools": []}})

    return behaviour


def pinned_client(url: str, auth: FakeAuth) -> McpClient:
    return McpClient(StreamableHttpTransport(url, server="s", auth=auth), name="s", protocol_version=PINNED)


async def list_tools_once(url: str, auth: FakeAuth) -> None:
    client = pinned_client(url, auth)
    await client.connect(timeout_s=10)
    assert await client.list_tools() == []
    await client.close()


async def test_every_request_asks_auth_and_a_401_is_retried() -> None:
    auth = FakeAuth()
    with scripted(guarded()) as server:
        await list_tools_once(server.url, auth)
    assert auth.challenges == [("POST", 401, CHALLENGE)]
    assert {"POST", "GET", "DELETE"} <= set(auth.asked)
    verbs = [(verb, headers.get("Authorization")) for verb, headers, _ in server.log]
    assert verbs[0] == ("POST", None) and verbs[1] == ("POST", "Bearer good")
    assert all(token == "Bearer good" for _, token in verbs[1:])
    assert ("GET", "Bearer good") in verbs and ("DELETE", "Bearer good") in verbs


async def test_challenge_declined_is_the_usual_http_error_at_once() -> None:
    auth = FakeAuth(fixes=False)
    with scripted(guarded()) as server:
        client = pinned_client(server.url, auth)
        started = time.monotonic()
        with pytest.raises(HttpStatusError) as info:
            await client.connect(timeout_s=10)
        assert time.monotonic() - started < FAST_S
        assert info.value.status == 401 and info.value.www_authenticate == CHALLENGE
        assert len(server.log) == 1


async def test_retries_per_request_are_bounded() -> None:
    class Stubborn(FakeAuth):
        async def handle_challenge(self, method: str, url: str, status: int, headers: Mapping[str, str]) -> bool:
            self.challenges.append((method, status, None))
            return True  # "try again", forever

    auth = Stubborn()
    with scripted(guarded()) as server:
        client = pinned_client(server.url, auth)
        with pytest.raises(HttpStatusError, match="HTTP 401"):
            await client.connect(timeout_s=10)
        assert len(server.log) == 4 and len(auth.challenges) == 3


@pytest.mark.parametrize("error", [AuthRequiredError("needs a login", server="s"), AuthError("bad iss", server="s")])
async def test_auth_errors_fail_the_request_unchanged(error: Exception) -> None:
    auth = FakeAuth(error=error)
    with scripted(guarded()) as server:
        client = pinned_client(server.url, auth)
        started = time.monotonic()
        with pytest.raises(type(error)) as info:
            await client.connect(timeout_s=10)
        assert time.monotonic() - started < FAST_S
        assert info.value is error or info.value.message == error.message  # type: ignore[attr-defined]


async def test_auth_error_on_the_get_stream_ends_nothing() -> None:
    auth = FakeAuth(headers_error={"GET": AuthRequiredError("login needed for the stream", server="s")})
    auth.token = "good"
    with scripted(guarded()) as server:
        await list_tools_once(server.url, auth)
    assert "GET" in auth.asked and all(verb != "GET" for verb, _, _ in server.log)


async def test_dpop_nonce_400_goes_to_auth() -> None:
    seen: list[str | None] = []

    def behaviour(handler: ScriptedHandler, verb: str, body: Any) -> None:
        seen.append(handler.headers.get("Authorization"))
        if verb != "POST":
            handler.reply(405)
        elif handler.headers.get("Authorization") != "Bearer good":
            handler.reply(400, b'{"error":"use_dpop_nonce"}', "application/json", {"DPoP-Nonce": "n1"})
        elif is_notification(body):
            handler.reply(202)
        else:
            handler.reply_json(init_result(body))

    auth = FakeAuth()
    with scripted(behaviour) as server:
        client = pinned_client(server.url, auth)
        await client.connect(timeout_s=10)
        await client.close()
    assert auth.challenges[0][:2] == ("POST", 400)
    assert seen[:2] == [None, "Bearer good"]


async def test_sse_transport_asks_auth_for_its_stream_and_posts() -> None:
    replies: queue.Queue[str | None] = queue.Queue()

    def behaviour(handler: ScriptedHandler, verb: str, body: Any) -> None:
        if handler.headers.get("Authorization") != "Bearer good":
            handler.reply(401, b"unauthorized", headers={"WWW-Authenticate": CHALLENGE})
        elif verb == "GET":
            handler.start_sse()
            handler.sse("event: endpoint\ndata: /messages\n\n")
            while (item := replies.get()) is not None:
                handler.sse(f"event: message\ndata: {item}\n\n")
        else:
            handler.reply(202, b"Accepted")
            if not is_notification(body):
                replies.put(json.dumps(init_result(body, "2024-11-05")))

    auth = FakeAuth()
    with scripted(behaviour) as server:
        client = McpClient(SseTransport(server.url, server="s", auth=auth), name="s", protocol_version="2024-11-05")
        try:
            await client.connect(timeout_s=10)
        finally:
            await client.close()
            replies.put(None)
    assert auth.challenges == [("GET", 401, CHALLENGE)]
    assert [verb for verb, _, _ in server.log] == ["GET", "GET", "POST", "POST"]
    assert all(headers.get("Authorization") == "Bearer good" for _, headers, _ in server.log[1:])


# ---- per-message headers and JSON-RPC error bodies -------------------------------------------------------------


def plain_server(extra: Any = None, *, session: bool = True):
    def behaviour(handler: ScriptedHandler, verb: str, body: Any) -> None:
        if verb != "POST":
            handler.reply(405)
        elif is_notification(body):
            handler.reply(202)
        elif body["method"] == "initialize":
            handler.reply_json(init_result(body), {"Mcp-Session-Id": "sid"} if session else None)
        elif extra is not None:
            extra(handler, body)
        else:
            handler.reply_json({"jsonrpc": "2.0", "id": body["id"], "result": {"tools": []}})

    return behaviour


async def test_message_headers_are_merged_and_bad_values_dropped(caplog: pytest.LogCaptureFixture) -> None:
    def produce(message: dict[str, Any]) -> dict[str, str]:
        return {"Mcp-Method": str(message.get("method")), "Mcp-Name": "bad\r\nInjected: 1", "Mcp-Param-X": "ünï",
                "Mcp-Param-Y": "日本", "Bad Name": "x"}

    with scripted(plain_server()) as server:
        transport = StreamableHttpTransport(server.url, server="s")
        client = McpClient(transport, name="s", protocol_version=PINNED)
        await client.connect(timeout_s=10)
        transport.message_headers = produce
        assert await client.list_tools() == []
        await client.close()
    headers = next(h for verb, h, body in server.log if verb == "POST" and body.get("method") == "tools/list")
    assert headers["Mcp-Method"] == "tools/list"
    assert headers["Mcp-Param-X"].encode("latin-1") == "ünï".encode("latin-1")  # Latin-1 is valid on the wire
    assert "Mcp-Name" not in headers and "Injected" not in headers and "Mcp-Param-Y" not in headers
    assert "Injected: 1" not in caplog.text and "日本" not in caplog.text  # dropped by name, never by value


@pytest.mark.parametrize("session", [True, False])
async def test_json_rpc_error_body_on_http_400_is_the_reply(session: bool) -> None:
    def answer(handler: ScriptedHandler, body: dict[str, Any]) -> None:
        if body["method"] == "wrong/id":
            reply = {"jsonrpc": "2.0", "id": 999, "error": {"code": -32600, "message": "not yours"}}
        else:  # without a session a null id stands for "your request" too
            reply = {"jsonrpc": "2.0", "id": body["id"] if session else None, "error": {
                "code": -32022, "message": "Unsupported protocol version", "data": {"supported": ["2026-07-28"]}}}
        handler.reply(400, json.dumps(reply).encode(), "application/json")

    with scripted(plain_server(answer, session=session)) as server:
        client = McpClient(StreamableHttpTransport(server.url, server="s"), name="s", protocol_version=PINNED)
        await client.connect(timeout_s=10)
        started = time.monotonic()
        with pytest.raises(JsonRpcError) as info:
            await client.request("tools/list")
        assert time.monotonic() - started < FAST_S
        assert info.value.code == -32022 and info.value.data == {"supported": ["2026-07-28"]}
        with pytest.raises(HttpStatusError, match="HTTP 400") as status:  # a body that answers another request
            await client.request("wrong/id")
        assert "not yours" in status.value.body_excerpt
        await client.close()


async def test_null_id_error_body_with_a_session_keeps_the_http_status() -> None:
    """With a session, `{"id": null}` on a 400 is the server refusing the session (server-everything's answer to an
    unknown one): it stays an HttpStatusError so the manager can start a new session."""
    def answer(handler: ScriptedHandler, body: dict[str, Any]) -> None:
        handler.reply(400, b'{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID '
                      b'provided"},"id":null}', "application/json")

    with scripted(plain_server(answer)) as server:
        transport = StreamableHttpTransport(server.url, server="s")
        client = McpClient(transport, name="s", protocol_version=PINNED)
        await client.connect(timeout_s=10)
        assert transport.session_id == "sid"
        with pytest.raises(HttpStatusError) as info:
            await client.request("tools/list")
        assert info.value.status == 400 and "No valid session ID" in info.value.body_excerpt
        await client.close()
