"""Faulty servers as real processes, driven through JsonRpcSession + StdioTransport.

Each fault must end in a clear error well within its timeout; the session must stay usable when the server does;
and after close no process of the server (nor of its process group) may survive.
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from procs import faulty_params

from mini_claude.errors import JsonRpcError, McpTimeoutError, ServerExitedError, TransportError
from mini_claude.mcp.jsonrpc import METHOD_NOT_FOUND, JsonRpcSession
from mini_claude.mcp.transports.stdio import EXIT_GRACE_S, StdioTransport
from tests.helpers import assert_group_gone, assert_pid_gone, read_pidfile

pytestmark = pytest.mark.timeout(30)

CALL_TIMEOUT_S = 20.0  # far above what any call here needs: failures must come from the fault, at once
Opener = Callable[..., Awaitable[tuple[JsonRpcSession, StdioTransport]]]


@pytest.fixture
async def open_server() -> AsyncIterator[Opener]:
    """Start a faulty server in a mode; at teardown close everything and check nothing survived."""
    opened: list[tuple[JsonRpcSession, StdioTransport]] = []

    async def opener(mode: str, *extra: str, initialize: bool = True, **kwargs: Any
                     ) -> tuple[JsonRpcSession, StdioTransport]:
        transport = StdioTransport(faulty_params(mode, *extra), server=mode, **kwargs)
        await transport.start()
        session = JsonRpcSession(transport, name=mode)
        session.start()
        opened.append((session, transport))
        if initialize:
            await session.request("initialize", {"protocolVersion": "2025-06-18"}, timeout=CALL_TIMEOUT_S)
        return session, transport

    yield opener
    for session, transport in opened:
        async with asyncio.timeout(10):
            await session.close()
        assert transport.pid is not None
        assert_pid_gone(transport.pid)
        assert_group_gone(transport.pid)


async def wait_closed(session: JsonRpcSession, timeout: float) -> None:
    """Wait until the session ends by itself (the transport reported the end)."""
    closed = asyncio.Event()
    session.on_closed = lambda _error: closed.set()
    if not session.closed:
        async with asyncio.timeout(timeout):
            await closed.wait()


async def echo(session: JsonRpcSession, timeout: float = CALL_TIMEOUT_S, **arguments: Any) -> str:
    result = await session.request("tools/call", {"name": "echo", "arguments": arguments}, timeout=timeout)
    return result["content"][0]["text"]


async def test_normal_server_lists_calls_and_pings(open_server: Opener) -> None:
    session, _ = await open_server("normal")
    tools = await session.request("tools/list", {}, timeout=CALL_TIMEOUT_S)
    assert [t["name"] for t in tools["tools"]] == ["echo"]
    assert await echo(session, text="hi") == "hi"
    assert await session.request("ping", timeout=CALL_TIMEOUT_S) == {}
    with pytest.raises(JsonRpcError) as info:
        await session.request("resources/list", {}, timeout=CALL_TIMEOUT_S)
    assert info.value.code == METHOD_NOT_FOUND


async def test_crash_at_start_fails_initialize_at_once(open_server: Opener) -> None:
    started = time.monotonic()
    with pytest.raises(ServerExitedError) as info:
        await open_server("crash_at_start")
    assert time.monotonic() - started < 2
    assert info.value.exit_code == 3
    assert "exit code 3" in str(info.value) and "fatal: cannot load config" in str(info.value)
    assert info.value.server == "crash_at_start"


async def test_exit_during_a_call_fails_it_at_once_with_code_and_stderr(open_server: Opener) -> None:
    session, _ = await open_server("crash_mid_call")
    started = time.monotonic()
    with pytest.raises(ServerExitedError) as info:
        await echo(session, text="x")
    elapsed = time.monotonic() - started
    assert elapsed < 1.0 and elapsed < CALL_TIMEOUT_S / 10
    assert info.value.exit_code == 5
    assert "exit code 5" in str(info.value) and "fatal: tool exploded" in str(info.value)
    assert session.closed
    later = session.request("ping", timeout=CALL_TIMEOUT_S)
    with pytest.raises(ServerExitedError):  # and every later call, at once: on its first step, before any wait
        later.send(None)  # (a clock's "under 0.1 s" let a loaded machine's stall decide; this has no clock)


async def test_every_pending_request_fails_when_the_server_dies(open_server: Opener) -> None:
    session, _ = await open_server("crash_mid_call")
    slow = [asyncio.ensure_future(session.request("ping", timeout=CALL_TIMEOUT_S)) for _ in range(3)]
    results = await asyncio.gather(echo(session, text="boom"), *slow, return_exceptions=True)
    assert isinstance(results[0], ServerExitedError)
    assert all(isinstance(r, (ServerExitedError, dict)) for r in results)


async def test_hang_times_out_and_the_session_stays_usable(open_server: Opener) -> None:
    session, _ = await open_server("hang")
    abandoned: list[tuple[int, str, str]] = []
    session.on_abandoned = lambda *args: abandoned.append(args)
    started = time.monotonic()
    with pytest.raises(McpTimeoutError) as info:
        await echo(session, timeout=0.4, text="x")
    assert 0.35 < time.monotonic() - started < 2
    assert "tools/call timed out after 0.4s" in str(info.value)
    assert [a[1:] for a in abandoned] == [("tools/call", "timed out after 0.4s")]
    assert await session.request("ping", timeout=CALL_TIMEOUT_S) == {}


async def test_deaf_server_cannot_block_a_request_past_its_timeout(open_server: Opener) -> None:
    session, _ = await open_server("deaf", close_grace_s=0.2, term_grace_s=1.0)
    with pytest.raises(McpTimeoutError):
        await echo(session, timeout=0.3)  # the server stops reading stdin from here on
    started = time.monotonic()
    with pytest.raises(McpTimeoutError):  # 8 MB cannot fit in the pipe: send() itself blocks
        await echo(session, timeout=0.5, text="x" * 8_000_000)
    assert time.monotonic() - started < 2


async def test_progress_touch_keeps_a_slow_call_alive(open_server: Opener) -> None:
    session, _ = await open_server("normal")
    request_id = session.next_request_id()
    touched: list[Any] = []

    def on_progress(method: str, params: Any) -> None:
        if params.get("progressToken") == request_id:
            touched.append(session.touch(request_id))

    session.set_notification_handler("notifications/progress", on_progress)
    started = time.monotonic()
    result = await session.request("tools/call", {
        "name": "echo", "arguments": {"text": "slow", "delay": 2.4, "progress_every": 0.15},
        "_meta": {"progressToken": request_id}}, timeout=1.0)  # 0.85 s of room for a late progress on a busy CI
    assert result["content"][0]["text"] == "slow"
    assert time.monotonic() - started >= 2.4
    assert touched and all(touched)


async def test_without_progress_the_same_call_times_out(open_server: Opener) -> None:
    session, _ = await open_server("normal")
    with pytest.raises(McpTimeoutError):
        await echo(session, timeout=1.0, text="slow", delay=2.4)


async def test_cancel_calls_on_abandoned_and_the_late_reply_is_ignored(open_server: Opener) -> None:
    session, _ = await open_server("normal")
    abandoned: list[tuple[int, str, str]] = []
    session.on_abandoned = lambda *args: abandoned.append(args)
    request_id = session.next_request_id()
    sent = asyncio.Event()
    task = asyncio.ensure_future(session.request("tools/call", {"name": "echo", "arguments": {
        "text": "late", "delay": 0.4}}, timeout=CALL_TIMEOUT_S, on_sent=sent.set))
    async with asyncio.timeout(5):
        await sent.wait()  # in the pipe: the server will read it, and answer late
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert abandoned == [(request_id, "tools/call", "cancelled by the client")]
    # the server is sequential: this reply comes after the late one, which must have been dropped harmlessly
    assert await echo(session, text="next") == "next"
    assert not session.closed


async def test_garbage_between_replies(open_server: Opener) -> None:
    session, transport = await open_server("garbage")
    assert await echo(session, text="one") == "one"
    assert await echo(session, text="two") == "two"
    assert "INFO server: handling tools/call" in transport.diagnostics()


async def test_huge_result(open_server: Opener) -> None:
    session, _ = await open_server("normal")
    assert len(await echo(session, size=20_000_000)) == 20_000_000
    assert await echo(session, text="small after big") == "small after big"


async def test_stderr_flood_while_serving(open_server: Opener) -> None:
    session, transport = await open_server("stderr_flood", stderr_limit_bytes=8192)
    assert await echo(session, text="a") == "a"  # 50 MB of stderr before this reply
    assert await echo(session, text="b") == "b"
    assert len(transport.diagnostics()) <= 8192


async def test_colliding_ids_both_directions_work(open_server: Opener) -> None:
    session, _ = await open_server("normal")
    request_id = session.next_request_id()
    text = await echo(session, server_requests=[{"method": "ping"}, {"method": "roots/list", "params": {}}],
                      collide=True)
    ping_reply, roots_reply = json.loads(text)
    assert ping_reply == {"jsonrpc": "2.0", "id": request_id, "result": {}}
    assert roots_reply["id"] == request_id and roots_reply["error"]["code"] == METHOD_NOT_FOUND


async def test_server_requests_are_served_by_handlers(open_server: Opener) -> None:
    session, _ = await open_server("normal")

    async def roots(params: Any) -> Any:
        return {"roots": [{"uri": "file:///work", "name": "work"}]}

    session.set_request_handler("roots/list", roots)
    text = await echo(session, server_requests=[{"method": "roots/list"}, {"method": "elicitation/create"}])
    roots_reply, unknown_reply = json.loads(text)
    assert roots_reply["result"] == {"roots": [{"uri": "file:///work", "name": "work"}]}
    assert unknown_reply["error"]["code"] == METHOD_NOT_FOUND


async def test_half_a_line_then_exit(open_server: Opener) -> None:
    session, _ = await open_server("half_line_exit")
    started = time.monotonic()
    with pytest.raises(ServerExitedError) as info:
        await echo(session, text="x")
    assert time.monotonic() - started < 1
    assert info.value.exit_code == 4


async def test_last_reply_without_newline_then_exit(open_server: Opener) -> None:
    session, _ = await open_server("no_newline_exit")
    assert await echo(session, text="bye") == "bye"
    await wait_closed(session, 5)
    assert isinstance(session.closed_error, ServerExitedError) and session.closed_error.exit_code == 0


async def test_server_ignoring_sigterm_ends_by_sigkill_within_the_bound(open_server: Opener) -> None:
    session, transport = await open_server("ignore_sigterm", close_grace_s=0.3, term_grace_s=0.3)
    assert await echo(session, text="x") == "x"
    started = time.monotonic()
    await session.close()
    assert time.monotonic() - started < 0.6 + 1.5
    assert transport.exit_code == -signal.SIGKILL


async def test_grandchild_holding_stdout(open_server: Opener, tmp_path: Path) -> None:
    pidfile = tmp_path / "sleeper.pid"
    started = time.monotonic()
    session, _ = await open_server("grandchild", "--pidfile", str(pidfile))
    sleeper = read_pidfile(pidfile)
    await wait_closed(session, 5)  # the server exited after initialize; its child still holds stdout
    assert time.monotonic() - started < EXIT_GRACE_S + 2
    with pytest.raises(ServerExitedError):
        await session.request("ping", timeout=CALL_TIMEOUT_S)
    await session.close()
    assert_pid_gone(sleeper, within_s=1)


async def test_invalid_utf8_in_a_reply(open_server: Opener) -> None:
    session, _ = await open_server("invalid_utf8")
    assert await echo(session, text="t") == "t \ufffd\ufffd\ufffd end"
    assert await echo(session, text="u") == "u \ufffd\ufffd\ufffd end"


async def test_non_objects_batches_duplicates_and_unknown_ids(open_server: Opener) -> None:
    session, _ = await open_server("odd_json")
    notes: list[Any] = []
    session.set_notification_handler("notifications/message", lambda m, p: notes.append(p))
    assert await echo(session, text="real") == "real"  # not the bool-id decoy, not the unknown id
    assert await session.request("ping", timeout=CALL_TIMEOUT_S) == {}
    assert await echo(session, text="again") == "again"
    assert len(notes) == 2  # the notification inside each batch was delivered
    assert not session.closed


async def test_server_closing_its_pipes_during_a_call(open_server: Opener) -> None:
    session, _ = await open_server("stdin_closer")
    with pytest.raises(ServerExitedError) as info:
        await echo(session)
    assert info.value.exit_code == 2


async def test_close_with_requests_in_flight(open_server: Opener) -> None:
    session, _ = await open_server("hang")
    sent = asyncio.Event()
    task = asyncio.ensure_future(session.request("tools/call", {"name": "echo", "arguments": {"text": "never"}},
                                                 timeout=CALL_TIMEOUT_S, on_sent=sent.set))
    async with asyncio.timeout(5):
        await sent.wait()  # in flight when the session closes
    await session.close()
    with pytest.raises(TransportError, match="closed by the client"):
        await task
