"""Retry policy, retry loop and SDK error mapping."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anthropic
import httpx2
import openai
import pytest
from model_helpers import FAST_RETRY, user

from mini_claude.errors import ModelError
from mini_claude.models.anthropic import AnthropicModel
from mini_claude.models.anthropic_http import AnthropicHttpModel
from mini_claude.models.retry import RetryPolicy, is_retryable_status, retry_after_s, run_with_retry
from mini_claude.models.sdk_errors import map_anthropic_error, map_openai_error

BASE = "http://127.0.0.1:9"


def test_backoff_is_exponential_and_capped() -> None:
    policy = RetryPolicy(base_delay_s=0.5, max_delay_s=20, jitter=False)
    assert [policy.delay_s(n) for n in range(1, 8)] == [0.5, 1, 2, 4, 8, 16, 20]


def test_jitter_adds_up_to_a_quarter_as_claude_code_does() -> None:
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=5)
    for attempt in range(1, 6):
        backoff = min(5, 2 ** (attempt - 1))
        assert all(backoff <= policy.delay_s(attempt) <= backoff * 1.25 for _ in range(50))


def test_a_longer_retry_after_wins_over_the_backoff() -> None:
    policy = RetryPolicy(max_delay_s=20, jitter=0)
    assert policy.delay_s(1, retry_after_s({"retry-after": "3"})) == 3
    assert policy.delay_s(5, retry_after_s({"retry-after": "3"})) == 8  # the backoff is longer by then
    assert retry_after_s({"retry-after-ms": "250"}) == 0.25
    assert retry_after_s({"retry-after": "soon"}) is None
    assert retry_after_s({}) is None
    assert retry_after_s({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0  # a date in the past


def test_policy_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    assert RetryPolicy.from_env({"MINI_CLAUDE_RETRY_BASE_S": "0.01"}).base_delay_s == 0.01
    assert RetryPolicy.from_env({"MINI_CLAUDE_RETRY_BASE_S": "nope"}).base_delay_s == 0.5
    assert RetryPolicy.from_env({}) == RetryPolicy()
    monkeypatch.setenv("MINI_CLAUDE_RETRY_BASE_S", "0.002")
    assert RetryPolicy.from_env().base_delay_s == 0.002


@pytest.mark.parametrize(("status", "retryable"), [
    (400, False), (401, False), (403, False), (404, False), (422, False),
    (408, True), (409, True), (429, True), (500, True), (502, True), (503, True), (529, True), (418, False),
])
def test_retryable_statuses(status: int, retryable: bool) -> None:
    assert is_retryable_status(status) is retryable


async def test_no_retry_once_text_was_emitted() -> None:
    calls = 0

    async def attempt() -> str:
        nonlocal calls
        calls += 1
        raise ModelError("stream broke", retryable=True)

    with pytest.raises(ModelError, match="stream broke"):
        await run_with_retry(attempt, policy=FAST_RETRY, map_error=lambda e: None, may_retry=lambda: calls == 0)
    assert calls == 1


async def test_foreign_exceptions_pass_through() -> None:
    async def attempt() -> str:
        raise KeyError("a bug, not a model error")

    with pytest.raises(KeyError):
        await run_with_retry(attempt, policy=FAST_RETRY, map_error=lambda e: None)


# ---- mapping --------------------------------------------------------------------------------------------------


def _response(status: int, headers: dict[str, str] | None = None) -> httpx2.Response:
    return httpx2.Response(status, headers=headers, request=httpx2.Request("POST", f"{BASE}/v1/messages"))


def test_map_anthropic_status_error() -> None:
    exc = anthropic.RateLimitError("Error code: 429 - {...}", response=_response(429),
                                   body={"type": "error", "error": {"type": "rate_limit_error",
                                                                    "message": "Too many\nrequests"}})
    err = map_anthropic_error(exc, base_url=BASE)
    assert err is not None
    assert (str(err), err.status, err.retryable) == ("model API error 429: Too many requests", 429, True)


def test_map_anthropic_mid_stream_overloaded_event() -> None:
    # an `error` event inside a 200 SSE stream: the error type says what happened
    exc = anthropic.APIStatusError("{...}", response=_response(200),
                                   body={"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    err = map_anthropic_error(exc, base_url=BASE)
    assert err is not None
    assert (err.status, err.retryable) == (529, True)


def test_x_should_retry_header_is_honoured() -> None:
    exc = anthropic.InternalServerError("x", response=_response(500, {"x-should-retry": "false"}),
                                        body={"type": "error", "error": {"type": "api_error", "message": "no"}})
    err = map_anthropic_error(exc, base_url=BASE)
    assert err is not None and not err.retryable


def test_map_connection_and_timeout_errors() -> None:
    request = httpx2.Request("POST", f"{BASE}/v1/messages")
    refused = anthropic.APIConnectionError(request=request)
    refused.__cause__ = httpx2.ConnectError("All connection attempts failed")
    refused.__cause__.__cause__ = ConnectionRefusedError(111, "Connection refused")
    err = map_anthropic_error(refused, base_url=BASE)
    assert err is not None and str(err) == f"cannot reach the model API at {BASE}: connection refused"
    assert err.retryable
    timeout = map_openai_error(openai.APITimeoutError(request=request), base_url=BASE)
    assert timeout is not None and str(timeout) == f"the model API at {BASE} timed out" and timeout.retryable
    broken = map_anthropic_error(httpx2.RemoteProtocolError("peer closed connection"), base_url=BASE)
    assert broken is not None and broken.retryable and "broke" in str(broken)
    assert map_anthropic_error(ValueError("ours"), base_url=BASE) is None


def test_map_openai_status_error() -> None:
    exc = openai.AuthenticationError("Error code: 401", response=_response(401),
                                     body={"message": "Incorrect API key provided", "type": "invalid_request_error"})
    err = map_openai_error(exc, base_url=BASE)
    assert err is not None
    assert (str(err), err.status, err.retryable) == ("model API error 401: Incorrect API key provided", 401, False)


# ---- streaming: a stream that breaks ----------------------------------------------------------------------------


class _BreakingHandler(BaseHTTPRequestHandler):
    """Starts an Anthropic SSE stream and hangs up before message_stop; with_text says whether text came first."""

    protocol_version = "HTTP/1.0"
    with_text = True
    count = 0

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        type(self).count += 1
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        events = ['event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message",'
                  '"role":"assistant","model":"x","content":[],"stop_reason":null,"stop_sequence":null,'
                  '"usage":{"input_tokens":1,"output_tokens":1}}}\n\n']
        if self.with_text:
            events.append('event: content_block_start\ndata: {"type":"content_block_start","index":0,'
                          '"content_block":{"type":"text","text":""}}\n\n')
            events.append('event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
                          '"delta":{"type":"text_delta","text":"partial answ"}}\n\n')
        self.wfile.write("".join(events).encode())
        self.wfile.flush()


@pytest.fixture
def breaking_server() -> Iterator[type[_BreakingHandler]]:
    handler = type("Handler", (_BreakingHandler,), {"count": 0})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    handler.url = f"http://127.0.0.1:{httpd.server_address[1]}"  # type: ignore[attr-defined]
    yield handler
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize("backend", [AnthropicModel, AnthropicHttpModel], ids=["sdk", "http"])
@pytest.mark.parametrize("with_text", [True, False])
async def test_broken_stream_is_retried_only_before_text(breaking_server: Any, with_text: bool,
                                                         backend: Any) -> None:
    breaking_server.with_text = with_text
    model = backend("x", api_key="k", base_url=breaking_server.url, retry=FAST_RETRY)
    seen: list[str] = []
    with pytest.raises(ModelError) as info:
        await model.complete(system="", messages=[user("hi")], tools=[], on_text=seen.append)
    assert "ended the stream before message_stop" in str(info.value)
    if with_text:
        assert seen == ["partial answ"]
        assert breaking_server.count == 1
    else:
        assert seen == []
        assert breaking_server.count == FAST_RETRY.max_attempts
