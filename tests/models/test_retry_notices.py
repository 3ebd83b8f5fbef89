"""A model request that fails and will be sent again says so before each wait: the cause, classified from the real
exception (a closed port, a TLS port that is plain HTTP, a certificate nobody trusts, a proxy, a timeout, the mock
model's 529 / 429 / 500), the retry's number of how many, the delay — and the final error says what to change.
No credential of a base URL or a proxy URL is ever in a notice or an error."""

from __future__ import annotations

import asyncio
import datetime
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from model_helpers import user

from mini_claude.errors import ModelError
from mini_claude.models.anthropic import AnthropicModel
from mini_claude.models.anthropic_http import AnthropicHttpModel
from mini_claude.models.base import RetryNotice
from mini_claude.models.openai_compat import OpenAICompatModel
from mini_claude.models.retry import RetryPolicy, run_with_retry
from mini_claude.models.retry_cause import Endpoint, classify, host_port

CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens there
QUICK = RetryPolicy(max_attempts=4, base_delay_s=0.001, max_delay_s=0.01)
BACKENDS = [AnthropicModel, AnthropicHttpModel]
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy",
              "no_proxy")


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARS:  # the machine's own proxy settings would change every cause
        monkeypatch.delenv(name, raising=False)


async def _fail(model: Any, **kwargs: Any) -> tuple[list[RetryNotice], ModelError]:
    notices: list[RetryNotice] = []
    with pytest.raises(ModelError) as info:
        await model.complete(system="", messages=[user("hi")], tools=[], on_retry=notices.append, **kwargs)
    return notices, info.value


@pytest.mark.parametrize("backend", BACKENDS, ids=["sdk", "http"])
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "json"])
async def test_a_closed_port_is_connection_refused_each_retry_then_the_error_says_what_to_change(
        backend: Any, stream: bool) -> None:
    model = backend("x", api_key="k", base_url=CLOSED, retry=QUICK, stream=stream)
    notices, error = await _fail(model)
    assert [n.attempt for n in notices] == [1, 2, 3]
    assert {(n.kind, n.cause, n.max_retries, n.status) for n in notices} == {
        ("connection_refused", "connection refused (127.0.0.1:9)", 3, None)}
    assert all(0 < n.delay_s <= 0.0125 for n in notices)
    text = str(error)
    assert "connection refused (gave up after 4 attempts)" in text
    assert "nothing is listening at 127.0.0.1:9: start the server, or fix ANTHROPIC_BASE_URL" in text


async def test_the_openai_backend_names_its_own_variable() -> None:
    model = OpenAICompatModel("x", api_key="k", base_url=CLOSED + "/v1", retry=QUICK)
    notices, error = await _fail(model)
    assert [n.kind for n in notices] == ["connection_refused"] * 3
    assert "fix OPENAI_BASE_URL" in str(error)


async def test_no_listener_means_the_same_retries_in_silence() -> None:
    model = AnthropicHttpModel("x", api_key="k", base_url=CLOSED, retry=QUICK)
    with pytest.raises(ModelError, match="gave up after 4 attempts"):
        await model.complete(system="", messages=[user("hi")], tools=[])


@pytest.mark.parametrize("backend", BACKENDS, ids=["sdk", "http"])
async def test_https_to_a_plain_http_port_is_a_tls_handshake_failure(backend: Any, mock_server: Any) -> None:
    plain = mock_server([{"content": [{"type": "text", "text": "never read"}]}])
    port = plain.url.rsplit(":", 1)[1]
    model = backend("x", api_key="k", base_url=f"https://127.0.0.1:{port}", retry=QUICK)
    notices, error = await _fail(model)
    assert {(n.kind, n.cause) for n in notices} == {("tls", f"TLS handshake failed (127.0.0.1:{port})")}
    assert f"is 127.0.0.1:{port} a TLS server? If it speaks plain HTTP, use http:// in ANTHROPIC_BASE_URL" in str(
        error)


def _self_signed(folder: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


class _Quiet(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.send_response(500)
        self.end_headers()


@pytest.fixture
def untrusted_tls(tmp_path: Path) -> Iterator[int]:
    """An HTTPS server whose certificate is self-signed (trusted by nobody here); yields its port."""
    cert, key = _self_signed(tmp_path)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Quiet)
    httpd.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True, do_handshake_on_connect=False)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize("backend", BACKENDS, ids=["sdk", "http"])
async def test_a_certificate_nobody_trusts_is_named(backend: Any, untrusted_tls: int) -> None:
    model = backend("x", api_key="k", base_url=f"https://localhost:{untrusted_tls}", retry=QUICK)
    notices, error = await _fail(model)
    assert {(n.kind, n.cause) for n in notices} == {("tls", f"TLS certificate not trusted (localhost:{untrusted_tls})")}
    assert "add its CA with SSL_CERT_FILE" in str(error)


async def test_a_refused_proxy_is_named_by_host_and_port_without_its_password(
        monkeypatch: pytest.MonkeyPatch, mock_server: Any) -> None:
    target = mock_server([{"content": [{"type": "text", "text": "never reached"}]}])
    monkeypatch.setenv("HTTP_PROXY", "http://me:hunter2-proxy-secret@127.0.0.1:9")
    model = AnthropicHttpModel("x", api_key="k", base_url=target.url, retry=QUICK)  # the client reads the proxy now
    notices, error = await _fail(model)
    assert {(n.kind, n.cause) for n in notices} == {("proxy", "proxy 127.0.0.1:9 refused the connection")}
    assert "check the proxy settings (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY; NO_PROXY to bypass one)" in str(error)
    assert "hunter2" not in str(error)
    assert target.requests == []


async def test_a_password_in_the_base_url_never_shows() -> None:
    model = AnthropicHttpModel("x", api_key="k", base_url="http://me:base-url-secret@127.0.0.1:9", retry=QUICK)
    notices, error = await _fail(model)
    assert notices and all("secret" not in n.cause for n in notices)
    assert "base-url-secret" not in str(error)
    assert "http://***@127.0.0.1:9" in str(error)


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    yield server.getsockname()[1]
    server.close()


async def test_a_server_that_never_answers_is_a_timeout(silent_port: int) -> None:
    url = f"http://127.0.0.1:{silent_port}"
    async with httpx.AsyncClient(timeout=httpx.Timeout(0.2)) as client:
        with pytest.raises(httpx.ReadTimeout) as info:
            await client.post(url + "/v1/messages", json={})
    cause = classify(info.value, ModelError("timed out", retryable=True), Endpoint(url, "ANTHROPIC_BASE_URL"))
    assert (cause.kind, cause.text) == ("timeout", f"timed out (127.0.0.1:{silent_port})")
    assert "check the network, and that ANTHROPIC_BASE_URL is right" in cause.hint


def test_a_name_that_does_not_resolve_is_a_dns_failure() -> None:
    # built, not looked up: a real lookup would ask this machine's resolver, which is not ours to send to
    error = httpx.ConnectError("[Errno -2] Name or service not known")
    error.__cause__ = socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    cause = classify(error, ModelError("x", retryable=True), Endpoint("https://api.example.invalid", "ANTHROPIC_BASE_URL"))
    assert (cause.kind, cause.text) == ("dns", "DNS lookup failed (api.example.invalid)")
    assert "check the host name in ANTHROPIC_BASE_URL" in cause.hint


def test_a_proxy_refusing_the_tunnel_is_a_proxy_error() -> None:
    cause = classify(httpx.ProxyError("407 Proxy Authentication Required"), ModelError("x", retryable=True),
                     Endpoint("https://api.anthropic.com"))
    assert cause.kind == "proxy"


def test_host_port_never_shows_userinfo_path_or_query() -> None:
    assert host_port("https://u:p@gateway.example:8443/v1?key=abc") == "gateway.example:8443"
    assert host_port("https://api.anthropic.com") == "api.anthropic.com"
    assert host_port("http://[::1]:9") == "[::1]:9"


@pytest.mark.parametrize("backend", BACKENDS, ids=["sdk", "http"])
async def test_the_mock_models_529_429_and_500_are_classified_and_the_answer_comes(backend: Any,
                                                                                    mock_server: Any) -> None:
    mock = mock_server([
        {"error": {"status": 529, "message": "Overloaded"}},
        {"error": {"status": 429, "message": "slow down", "headers": {"retry-after-ms": "30"}}},
        {"error": {"status": 500, "message": "boom"}},
        {"content": [{"type": "text", "text": "at last"}]},
    ])
    model = backend("x", api_key="k", base_url=mock.url, retry=QUICK)
    notices: list[RetryNotice] = []
    turn = await model.complete(system="", messages=[user("hi")], tools=[], on_retry=notices.append)
    assert turn.text == "at last"
    assert [(n.attempt, n.kind, n.cause, n.status) for n in notices] == [
        (1, "overloaded", "overloaded (529)", 529),
        (2, "rate_limited", "rate limited (429)", 429),
        (3, "server_error", "server error (500)", 500),
    ]
    assert notices[1].retry_after_s == pytest.approx(0.03)
    assert notices[1].delay_s >= 0.03  # the server's wait wins over a shorter backoff
    assert notices[0].retry_after_s is None


async def test_429s_that_never_end_say_to_wait(mock_server: Any) -> None:
    mock = mock_server([{"error": {"status": 429, "message": "slow down"}}] * 4)
    _, error = await _fail(AnthropicHttpModel("x", api_key="k", base_url=mock.url, retry=QUICK))
    assert "gave up after 4 attempts" in str(error) and "the API is limiting requests" in str(error)


async def test_each_notice_comes_before_its_wait() -> None:
    heard: list[RetryNotice] = []
    waits: list[tuple[float, int]] = []

    async def sleep(delay: float) -> None:
        waits.append((delay, len(heard)))

    async def attempt() -> str:
        raise ModelError("model API error 503: down", status=503, retryable=True)

    policy = RetryPolicy(max_attempts=3, base_delay_s=0.001, sleep=sleep)
    with pytest.raises(ModelError):
        await run_with_retry(attempt, policy=policy, map_error=lambda e: None, on_retry=heard.append)
    assert [count for _, count in waits] == [1, 2]  # told first, then the wait
    assert [delay for delay, _ in waits] == [n.delay_s for n in heard]


async def test_cancelling_during_the_backoff_wait_stops_at_once() -> None:
    """What Ctrl+C / Esc do in the REPL: the task is cancelled mid-wait and ends now, not after the wait."""
    model = AnthropicHttpModel("x", api_key="k", base_url=CLOSED,
                               retry=RetryPolicy(base_delay_s=30, max_delay_s=30, jitter=0))
    heard = asyncio.Event()
    task = asyncio.ensure_future(model.complete(system="", messages=[user("hi")], tools=[],
                                                on_retry=lambda notice: heard.set()))
    await asyncio.wait_for(heard.wait(), timeout=10)
    began = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - began < 1.0
