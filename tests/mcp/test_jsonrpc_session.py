"""JsonRpcSession semantics over an in-memory transport (fast, deterministic), plus its hot path on a real pipe.

Why this module is long: it is the one place the session's rules (ids, deadlines, cancellation, progress, inbound
requests) are pinned, each a short test over the same in-memory transport."""

from __future__ import annotations

import asyncio
import json
import logging
import time
import traceback
from typing import Any

import pytest

from mini_claude.errors import JsonRpcError, McpTimeoutError, ServerExitedError, TransportError
from mini_claude.mcp.jsonrpc import INTERNAL_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, JsonRpcSession
from tests.helpers import eventually

pytestmark = pytest.mark.timeout(20)


class FakeTransport:
    """A Transport whose peer is the test: `push()` a message to us, read what we sent from `sent`."""

    def __init__(self) -> None:
        self.incoming: asyncio.Queue[Any] = asyncio.Queue()
        self.sent: list[dict[str, Any]] = []
        self.sent_event = asyncio.Event()
        self.block_sends = False  # like a pipe whose reader stopped reading
        self.closed = False
        self._error: TransportError | None = None

    def push(self, message: Any) -> None:
        self.incoming.put_nowait(message)

    def end(self, error: TransportError) -> None:
        self._error = error
        self.incoming.put_nowait(None)

    async def start(self) -> None:
        pass

    async def send(self, message: dict[str, Any]) -> None:
        if self._error is not None:
            raise self._error
        json.dumps(message, allow_nan=False)  # what a real transport would refuse
        self.sent.append(message)
        self.sent_event.set()
        if self.block_sends:
            await asyncio.Event().wait()

    async def receive(self) -> Any:
        if self._error is None:
            message = await self.incoming.get()
            if self._error is None:
                return message
        raise self._error

    async def close(self) -> None:
        self.closed = True
        if self._error is None:
            self.end(TransportError("closed"))

    def diagnostics(self) -> str:
        return ""

    async def next_sent(self, predicate: Any = None, timeout: float = 5) -> dict[str, Any]:
        """Wait for (and return) the first sent message not yet returned that matches `predicate`."""
        async with asyncio.timeout(timeout):
            while True:
                for index, message in enumerate(self.sent):
                    if predicate is None or predicate(message):
                        return self.sent.pop(index)
                self.sent_event.clear()
                await self.sent_event.wait()


@pytest.fixture
async def peer() -> Any:
    transport = FakeTransport()
    session = JsonRpcSession(transport, name="fake")
    session.start()
    yield transport, session
    await session.close()


def reply(request: dict[str, Any], result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


async def test_replies_are_matched_by_id_in_any_order(peer: Any) -> None:
    transport, session = peer
    first = asyncio.ensure_future(session.request("a", {"n": 1}, timeout=5))
    second = asyncio.ensure_future(session.request("b", timeout=5))
    sent_a = await transport.next_sent(lambda m: m["method"] == "a")
    sent_b = await transport.next_sent(lambda m: m["method"] == "b")
    assert sent_a == {"jsonrpc": "2.0", "id": sent_a["id"], "method": "a", "params": {"n": 1}}
    assert "params" not in sent_b
    transport.push(reply(sent_b, "B"))
    transport.push(reply(sent_a, "A"))
    assert await first == "A" and await second == "B"


async def test_error_responses(peer: Any) -> None:
    transport, session = peer
    task = asyncio.ensure_future(session.request("x"))
    sent = await transport.next_sent()
    transport.push({"jsonrpc": "2.0", "id": sent["id"], "error": {"code": -32000, "message": "nope", "data": [1]}})
    with pytest.raises(JsonRpcError) as info:
        await task
    assert (info.value.code, info.value.rpc_message, info.value.data, info.value.server) == (-32000, "nope", [1],
                                                                                             "fake")
    task = asyncio.ensure_future(session.request("x"))
    sent = await transport.next_sent()
    transport.push({"jsonrpc": "2.0", "id": sent["id"], "error": "a string"})
    with pytest.raises(JsonRpcError) as info:
        await task
    assert info.value.code == INTERNAL_ERROR
    task = asyncio.ensure_future(session.request("x"))
    sent = await transport.next_sent()
    transport.push({"jsonrpc": "2.0", "id": sent["id"]})
    with pytest.raises(JsonRpcError) as info:
        await task
    assert info.value.code == INVALID_REQUEST


async def test_timeout_calls_on_abandoned_and_a_late_reply_is_ignored(peer: Any) -> None:
    transport, session = peer
    abandoned: list[tuple[int, str, str]] = []
    session.on_abandoned = lambda *args: abandoned.append(args)
    started = time.monotonic()
    with pytest.raises(McpTimeoutError) as info:
        await session.request("slow", timeout=0.2)
    assert 0.15 < time.monotonic() - started < 1
    assert (info.value.method, info.value.seconds) == ("slow", 0.2)
    sent = await transport.next_sent()
    assert abandoned == [(sent["id"], "slow", "timed out after 0.2s")]
    transport.push(reply(sent, "too late"))
    task = asyncio.ensure_future(session.request("next", timeout=5))
    transport.push(reply(await transport.next_sent(), "ok"))
    assert await task == "ok"


async def test_touch_pushes_the_deadline_back(peer: Any) -> None:
    transport, session = peer
    request_id = session.next_request_id()
    task = asyncio.ensure_future(session.request("long", timeout=1.0))  # 0.9 s of room for a busy CI's stalls
    sent = await transport.next_sent()
    assert sent["id"] == request_id
    for _ in range(20):  # 2 s in all: twice the timeout
        await asyncio.sleep(0.1)
        assert session.touch(request_id)
    assert not task.done()
    transport.push(reply(sent, "done"))
    assert await task == "done"
    assert not session.touch(request_id)  # no longer pending
    assert not session.touch(12345)


async def test_touch_only_delays_the_deadline_it_does_not_remove_it(peer: Any) -> None:
    _, session = peer
    request_id = session.next_request_id()
    task = asyncio.ensure_future(session.request("long", timeout=0.2))
    await asyncio.sleep(0.1)
    session.touch(request_id)
    started = time.monotonic()
    with pytest.raises(McpTimeoutError):
        await task
    assert 0.1 < time.monotonic() - started < 0.5


async def test_cancellation_calls_on_abandoned_and_the_late_reply_is_harmless(
        peer: Any, caplog: pytest.LogCaptureFixture) -> None:
    transport, session = peer
    abandoned: list[tuple[int, str, str]] = []
    session.on_abandoned = lambda *args: abandoned.append(args)
    task = asyncio.ensure_future(session.request("tools/call", timeout=5))
    sent = await transport.next_sent()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert abandoned == [(sent["id"], "tools/call", "cancelled by the client")]
    with caplog.at_level(logging.DEBUG, logger="mini_claude.mcp.jsonrpc"):
        transport.push(reply(sent, "late"))
        follow_up = asyncio.ensure_future(session.request("ping", timeout=5))
        transport.push(reply(await transport.next_sent(), {}))
        assert await follow_up == {}
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert not session.closed


async def test_no_abandon_hook_for_a_request_answered_before_the_cancel_landed(
        peer: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    transport, session = peer
    abandoned: list[Any] = []
    session.on_abandoned = lambda *args: abandoned.append(args)
    task = asyncio.ensure_future(session.request("x", timeout=5))
    original = session._on_response

    def deliver_then_cancel(message: dict[str, Any]) -> None:
        original(message)  # the reply is in; the request task has not resumed yet
        task.cancel()

    monkeypatch.setattr(session, "_on_response", deliver_then_cancel)
    sent = await transport.next_sent()
    transport.push(reply(sent, "answered"))
    with pytest.raises(asyncio.CancelledError):
        await task
    assert abandoned == []


async def test_a_send_blocked_by_a_deaf_peer_still_times_out(peer: Any) -> None:
    transport, session = peer
    abandoned: list[Any] = []
    session.on_abandoned = lambda *args: abandoned.append(args)
    transport.block_sends = True
    started = time.monotonic()
    with pytest.raises(McpTimeoutError):
        await session.request("tools/call", {"big": "x"}, timeout=0.2)
    assert time.monotonic() - started < 1
    assert [a[1:] for a in abandoned] == [("tools/call", "timed out after 0.2s")]
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]


async def test_a_cancel_during_a_blocked_send_stays_a_cancel(peer: Any) -> None:
    transport, session = peer
    transport.block_sends = True
    task = asyncio.ensure_future(session.request("x", timeout=30))  # armed, but never reached by a stall
    await transport.next_sent()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_peer_requests_ping_unknown_method_and_colliding_ids(peer: Any) -> None:
    transport, session = peer
    ours = asyncio.ensure_future(session.request("tools/call", timeout=5))
    sent = await transport.next_sent()
    assert sent["id"] == 1
    # the peer uses *our* pending id for its own requests: they must be served, not taken for our reply
    transport.push({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert await transport.next_sent() == {"jsonrpc": "2.0", "id": 1, "result": {}}
    transport.push({"jsonrpc": "2.0", "id": 1, "method": "roots/list", "params": {}})
    answer = await transport.next_sent()
    assert answer["id"] == 1 and answer["error"]["code"] == METHOD_NOT_FOUND
    assert not ours.done()
    transport.push(reply(sent, "mine"))
    assert await ours == "mine"


async def test_request_handlers_results_and_errors(peer: Any) -> None:
    transport, session = peer

    async def roots(params: Any) -> Any:
        return {"roots": [], "echo": params}

    async def failing(params: Any) -> Any:
        raise JsonRpcError(-32602, "bad params", {"field": "x"})

    async def crashing(params: Any) -> Any:
        raise RuntimeError("boom")

    async def unserializable(params: Any) -> Any:
        return {"value": object()}

    for method, handler in [("roots/list", roots), ("a", failing), ("b", crashing), ("c", unserializable)]:
        session.set_request_handler(method, handler)
    transport.push({"jsonrpc": "2.0", "id": "r1", "method": "roots/list", "params": {"p": 1}})
    assert await transport.next_sent() == {"jsonrpc": "2.0", "id": "r1", "result": {"roots": [], "echo": {"p": 1}}}
    transport.push({"jsonrpc": "2.0", "id": 2, "method": "a"})
    assert await transport.next_sent() == {"jsonrpc": "2.0", "id": 2, "error": {
        "code": -32602, "message": "bad params", "data": {"field": "x"}}}
    transport.push({"jsonrpc": "2.0", "id": 3, "method": "b"})
    error = (await transport.next_sent())["error"]
    assert error["code"] == INTERNAL_ERROR and "boom" in error["message"]
    transport.push({"jsonrpc": "2.0", "id": 4, "method": "c"})
    answer = await transport.next_sent()
    assert answer["id"] == 4 and answer["error"]["code"] == INTERNAL_ERROR and "result" not in answer


async def test_notifications_handlers_fallback_and_failures(peer: Any) -> None:
    transport, session = peer
    seen: list[tuple[str, Any]] = []
    done = asyncio.Event()

    async def async_handler(method: str, params: Any) -> None:
        seen.append((method, params))
        done.set()

    def broken(method: str, params: Any) -> None:
        raise RuntimeError("handler bug")

    session.set_notification_handler("notifications/progress", lambda m, p: seen.append((m, p)))
    session.set_notification_handler("notifications/broken", broken)
    session.set_fallback_notification_handler(async_handler)
    transport.push({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}})
    transport.push({"jsonrpc": "2.0", "method": "notifications/broken"})
    transport.push({"jsonrpc": "2.0", "method": "notifications/other", "params": [1]})
    async with asyncio.timeout(5):
        await done.wait()
    assert seen == [("notifications/progress", {"progress": 1}), ("notifications/other", [1])]
    assert not session.closed


async def test_odd_messages_are_logged_and_survived(peer: Any, caplog: pytest.LogCaptureFixture) -> None:
    transport, session = peer
    task = asyncio.ensure_future(session.request("x", timeout=5))
    sent = await transport.next_sent()
    assert sent["id"] == 1
    caplog.set_level(logging.DEBUG, logger="mini_claude.mcp.jsonrpc")
    for odd in [42, "text", None, [1, 2], {"jsonrpc": "2.0", "method": 5},
                {"jsonrpc": "2.0", "id": True, "result": "bool id must not match id 1"},
                {"jsonrpc": "2.0", "id": "1", "result": "string id must not match id 1"},
                {"jsonrpc": "2.0", "id": 999, "result": "unknown id"},
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}]:
        transport.push(odd)
    transport.push([{"jsonrpc": "2.0", "id": 1, "result": "from a batch"}, 7])
    assert await task == "from a batch"
    transport.push({"jsonrpc": "2.0", "id": 1, "result": "duplicate"})
    follow_up = asyncio.ensure_future(session.request("y", timeout=5))
    transport.push(reply(await transport.next_sent(), "fine"))
    assert await follow_up == "fine"
    text = caplog.text
    assert "non-object JSON message" in text and "batch" in text and "error response without id" in text


async def test_a_dispatch_bug_does_not_end_the_session(peer: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    transport, session = peer
    original = session._on_notification
    calls = {"n": 0}

    def buggy(method: str, params: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise KeyError("bug")
        original(method, params)

    monkeypatch.setattr(session, "_on_notification", buggy)
    transport.push({"jsonrpc": "2.0", "method": "notifications/x"})
    task = asyncio.ensure_future(session.request("y", timeout=5))
    transport.push(reply(await transport.next_sent(), "alive"))
    assert await task == "alive"


async def test_transport_end_fails_every_pending_request_at_once(peer: Any) -> None:
    transport, session = peer
    closed: list[Any] = []
    session.on_closed = closed.append
    tasks = [asyncio.ensure_future(session.request(f"m{i}", timeout=30)) for i in range(3)]
    for _ in tasks:
        await transport.next_sent()
    error = ServerExitedError("server exited", exit_code=3, stderr_tail="fatal: boom", server="fake")
    started = time.monotonic()
    transport.end(error)
    for task in tasks:
        with pytest.raises(ServerExitedError) as info:
            await task
        assert info.value is error
    assert time.monotonic() - started < 0.5
    assert session.closed and session.closed_error is error and closed == [error]
    depths = []
    for _ in range(5):  # later calls raise the same error at once, and its traceback does not pile up
        with pytest.raises(ServerExitedError) as info:
            await session.request("again")
        depths.append(len(traceback.extract_tb(info.value.__traceback__)))
        with pytest.raises(ServerExitedError):
            await session.notify("notifications/x")
    assert len(set(depths)) == 1
    await session.close()
    assert closed == [error]  # on_closed fires once


async def test_close_fails_pending_cancels_handlers_and_closes_the_transport(peer: Any) -> None:
    transport, session = peer
    handler_started = asyncio.Event()
    handler_cancelled = asyncio.Event()

    async def slow_handler(params: Any) -> Any:
        handler_started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            handler_cancelled.set()
            raise

    session.set_request_handler("sampling/createMessage", slow_handler)
    transport.push({"jsonrpc": "2.0", "id": 5, "method": "sampling/createMessage"})
    async with asyncio.timeout(5):
        await handler_started.wait()
    task = asyncio.ensure_future(session.request("x", timeout=30))
    await transport.next_sent()
    await session.close()
    with pytest.raises(TransportError, match="closed by the client"):
        await task
    assert handler_cancelled.is_set()
    assert transport.closed
    await session.close()  # idempotent
    with pytest.raises(TransportError):
        await session.request("after close")


async def test_non_serializable_params_fail_the_call_and_leave_no_pending_entry(peer: Any) -> None:
    transport, session = peer
    with pytest.raises(TypeError):
        await session.request("x", {"v": object()}, timeout=5)
    assert session._pending == {}
    task = asyncio.ensure_future(session.request("y", timeout=5))
    transport.push(reply(await transport.next_sent(), 1))
    assert await task == 1


# ---- on a real pipe --------------------------------------------------------------------------------------------

async def test_session_hot_path_over_stdio() -> None:
    """Many sequential calls through session + stdio; prints the per-call cost (see bench/ for the comparison)."""
    from procs import faulty_params

    from mini_claude.mcp.transports.stdio import StdioTransport
    from tests.helpers import assert_pid_gone

    transport = StdioTransport(faulty_params(), server="hot")
    await transport.start()
    session = JsonRpcSession(transport, name="hot")
    session.start()
    try:
        await session.request("initialize", {}, timeout=10)
        calls = 1000
        cpu, wall = time.process_time(), time.perf_counter()
        for i in range(calls):
            result = await session.request("tools/call", {"name": "echo", "arguments": {"text": str(i)}},
                                           timeout=10)
            assert result["content"][0]["text"] == str(i)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        print(f"session+stdio: {cpu / calls * 1e6:.0f} us CPU, {wall / calls * 1e6:.0f} us wall per call")
        assert wall / calls < 0.01
    finally:
        await session.close()
    assert transport.pid is not None
    assert_pid_gone(transport.pid)


async def test_peer_cancel_stops_our_handler_and_sends_no_response(peer: Any) -> None:
    transport, session = peer
    started = asyncio.Event()
    stopped = asyncio.Event()
    seen: list[str] = []

    async def slow(params: Any) -> Any:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            stopped.set()
            raise
        return {}

    session.set_request_handler("elicitation/create", slow)
    session.set_fallback_notification_handler(lambda m, p: seen.append(m))
    transport.push({"jsonrpc": "2.0", "id": "1", "method": "elicitation/create"})
    transport.push({"jsonrpc": "2.0", "id": 1, "method": "elicitation/create"})
    async with asyncio.timeout(5):
        await started.wait()
    # "1" and 1 are different ids: only the int one is cancelled
    transport.push({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
    async with asyncio.timeout(5):
        await stopped.wait()
    transport.push({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}})
    transport.push({"jsonrpc": "2.0", "id": 7, "method": "ping"})
    assert await transport.next_sent() == {"jsonrpc": "2.0", "id": 7, "result": {}}
    assert transport.sent == [] and seen == ["notifications/cancelled", "notifications/cancelled"]
    # the finished ping handler's done-callback drops it; the string-id request is still being served
    await eventually(lambda: list(session._serving) == [(True, "1")], "only the string-id request in service")


async def test_a_null_id_error_answers_the_only_request_that_claims_it(peer: Any) -> None:
    transport, session = peer
    null_id_error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "not initialized"}}
    sent: list[int] = []
    probe = asyncio.ensure_future(session.request("probe", timeout=5, claim_null_id_error=True,
                                                  on_sent=lambda: sent.append(len(transport.sent))))
    await transport.next_sent()
    transport.push(null_id_error)
    with pytest.raises(JsonRpcError) as info:
        await probe
    assert (info.value.code, info.value.rpc_message) == (-32600, "not initialized")
    assert sent == [1]  # on_sent: once, after the transport took the message


async def test_a_null_id_error_is_not_claimed_when_it_may_answer_another_request(
        peer: Any, caplog: pytest.LogCaptureFixture) -> None:
    transport, session = peer
    null_id_error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
    # a request that does not claim such errors
    plain = asyncio.ensure_future(session.request("plain", timeout=5))
    first = await transport.next_sent()
    transport.push(null_id_error)
    # two in flight: the error cannot be told apart
    probe = asyncio.ensure_future(session.request("probe", timeout=5, claim_null_id_error=True))
    second = await transport.next_sent()
    transport.push(null_id_error)
    transport.push(reply(second, "probe answered"))
    transport.push(reply(first, "plain answered"))
    assert await probe == "probe answered" and await plain == "plain answered"
    assert caplog.text.count("error response without id") == 2
