"""token_request against a real loopback token endpoint (stdlib http.server in a thread): each client auth
method, the grant forms, DPoP proofs with the nonce retry, reply parsing and error mapping without secrets."""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote

import httpx
import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from mini_claude.errors import AuthError
from mini_claude.mcp.auth.dpop import DpopKey
from mini_claude.mcp.auth.jwt import b64url_decode, decode_unverified, jwk_thumbprint
from mini_claude.mcp.auth.tokens import (
    ClientAuth,
    TokenEndpointError,
    authorization_code_form,
    client_credentials_form,
    jwt_bearer_form,
    refresh_form,
    token_exchange_form,
    token_request,
)

Reply = tuple[int, dict[str, str], bytes]


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    form: dict[str, str]


@dataclass
class TokenEndpoint:
    url: str
    requests: list[Seen] = field(default_factory=list)
    # Decides each reply from what was seen so far (the last entry is the current request).
    respond: Callable[[list[Seen]], Reply] = lambda seen: _json(200, {"access_token": "at", "token_type": "Bearer"})


def _json(status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> Reply:
    return status, {"Content-Type": "application/json", **(headers or {})}, json.dumps(body).encode()


@pytest.fixture
def endpoint() -> Iterator[TokenEndpoint]:
    state = TokenEndpoint(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            form = dict(parse_qsl(self.rfile.read(length).decode(), keep_blank_values=True))
            state.requests.append(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, form))
            status, headers, body = state.respond(state.requests)
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    class Server(ThreadingHTTPServer):
        daemon_threads = True

        def handle_error(self, request: Any, client_address: Any) -> None:
            pass  # the timeout test hangs up on a slow handler on purpose: no traceback noise

    server = Server(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/oauth/token"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


async def _request(endpoint: TokenEndpoint, auth: ClientAuth, **kwargs: Any) -> Any:
    async with httpx.AsyncClient() as http:
        return await token_request(http, endpoint.url, client_credentials_form("s1", None), client_auth=auth, **kwargs)


def _verify_es256(token: str, public: ec.EllipticCurvePublicKey) -> None:
    head, body, sig = token.split(".")
    raw = b64url_decode(sig)
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    public.verify(der, f"{head}.{body}".encode(), ec.ECDSA(hashes.SHA256()))


# ---- client authentication -----------------------------------------------------------------------------------


async def test_none_sends_client_id_in_the_form(endpoint: TokenEndpoint) -> None:
    result = await _request(endpoint, ClientAuth("public-client", "none"))
    assert result.access_token == "at"
    (seen,) = endpoint.requests
    assert seen.path == "/oauth/token"
    assert seen.form == {"grant_type": "client_credentials", "scope": "s1", "client_id": "public-client"}
    assert "authorization" not in seen.headers
    assert seen.headers["content-type"] == "application/x-www-form-urlencoded"
    assert seen.headers["accept"] == "application/json"


async def test_client_secret_basic_form_urlencodes_id_and_secret(endpoint: TokenEndpoint) -> None:
    await _request(endpoint, ClientAuth("my client", "client_secret_basic", client_secret="p:w%d+"))
    (seen,) = endpoint.requests
    scheme, _, encoded = seen.headers["authorization"].partition(" ")
    assert scheme == "Basic"
    user, _, password = base64.b64decode(encoded).decode().partition(":")
    assert (unquote(user), unquote(password)) == ("my client", "p:w%d+")
    assert ":" not in password  # the secret's own ':' is escaped, so the split is unambiguous
    assert "client_secret" not in seen.form and "client_id" not in seen.form


async def test_client_secret_post_puts_both_in_the_form(endpoint: TokenEndpoint) -> None:
    await _request(endpoint, ClientAuth("cid", "client_secret_post", client_secret="sek"))
    (seen,) = endpoint.requests
    assert seen.form["client_id"] == "cid" and seen.form["client_secret"] == "sek"
    assert "authorization" not in seen.headers


async def test_private_key_jwt_assertion(endpoint: TokenEndpoint) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    auth = ClientAuth("conformance-test-client", "private_key_jwt", private_key_pem=pem, signing_alg="ES256")
    await _request(endpoint, auth, assertion_audience="http://127.0.0.1:1")
    await _request(endpoint, auth)
    first, second = endpoint.requests
    assert first.form["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    assert first.form["client_id"] == "conformance-test-client"
    assertion = first.form["client_assertion"]
    _verify_es256(assertion, key.public_key())
    header, claims = decode_unverified(assertion)
    assert header["alg"] == "ES256"
    assert claims["iss"] == claims["sub"] == "conformance-test-client"
    assert claims["aud"] == "http://127.0.0.1:1"
    assert claims["exp"] > time.time()
    # Without an explicit audience the token endpoint itself is the audience (RFC 7523 §3).
    assert decode_unverified(second.form["client_assertion"])[1]["aud"] == endpoint.url


async def test_misconfigured_client_auth_fails_before_any_request(endpoint: TokenEndpoint) -> None:
    with pytest.raises(AuthError, match="client_secret_basic needs a client secret"):
        await _request(endpoint, ClientAuth("cid", "client_secret_basic"))
    with pytest.raises(AuthError, match="private_key_jwt needs a private key"):
        await _request(endpoint, ClientAuth("cid", "private_key_jwt"))
    with pytest.raises(AuthError, match="private_key_jwt: signing key is not a readable"):
        await _request(endpoint, ClientAuth("cid", "private_key_jwt", private_key_pem="nope", signing_alg="ES256"))
    with pytest.raises(AuthError, match="unsupported token endpoint auth method 'tls_client_auth'"):
        await _request(endpoint, ClientAuth("cid", "tls_client_auth"))
    assert endpoint.requests == []


# ---- reply parsing -------------------------------------------------------------------------------------------


async def test_reply_is_parsed_and_normalised(endpoint: TokenEndpoint) -> None:
    endpoint.respond = lambda seen: _json(
        200,
        {"access_token": "AT-SECRET", "token_type": "bearer", "expires_in": 3600, "refresh_token": "RT-SECRET",
         "scope": "a b", "extra": 1},
    )
    before = time.time()
    result = await _request(endpoint, ClientAuth("cid", "none"))
    assert result.token_type == "Bearer"
    assert before + 3600 <= result.expires_at <= time.time() + 3600
    assert (result.refresh_token, result.scope, result.issued_token_type) == ("RT-SECRET", "a b", None)
    assert result.raw["extra"] == 1
    assert "SECRET" not in repr(result)
    endpoint.respond = lambda seen: _json(200, {"access_token": "x", "token_type": "N_A", "expires_in": "oops",
                                                "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag"})
    exchanged = await _request(endpoint, ClientAuth("cid", "none"))
    assert exchanged.token_type == "N_A" and exchanged.expires_at is None
    assert exchanged.issued_token_type == "urn:ietf:params:oauth:token-type:id-jag"


@pytest.mark.parametrize(
    ("reply", "error", "fragments"),
    [
        (_json(400, {"error": "invalid_grant", "error_description": "code\nexpired\x1b[31m"}), "invalid_grant",
         ["HTTP 400", "invalid_grant: code expired"]),
        (_json(401, {"error": "invalid_client"}), "invalid_client", ["HTTP 401", "invalid_client"]),
        ((502, {"Content-Type": "text/html"}, b"<html>\n  Bad   gateway</html>"), None,
         ["HTTP 502: <html> Bad gateway</html>"]),
        ((500, {}, b""), None, ["token endpoint answered HTTP 500"]),
        ((200, {"Content-Type": "text/plain"}, b"access_token=LEAK"), None, ["HTTP 200 with a non-JSON body"]),
        (_json(200, {"token_type": "Bearer"}), None, ["without an access_token"]),
    ],
)
async def test_errors_are_one_line_and_carry_the_oauth_code(
    endpoint: TokenEndpoint, reply: Reply, error: str | None, fragments: list[str]
) -> None:
    endpoint.respond = lambda seen: reply
    with pytest.raises(TokenEndpointError) as info:
        await _request(endpoint, ClientAuth("cid", "client_secret_post", client_secret="TOPSECRET"), server="srv")
    text = str(info.value)
    assert text.startswith("MCP server 'srv': ")
    assert info.value.server == "srv" and info.value.error == error and info.value.status == reply[0]
    for fragment in fragments:
        assert fragment in text
    assert "\n" not in text and "\x1b" not in text
    assert "TOPSECRET" not in text and "LEAK" not in text


async def test_timeout_and_unreachable_endpoint(endpoint: TokenEndpoint) -> None:
    def slow(seen: list[Seen]) -> Reply:
        time.sleep(1.5)
        return _json(200, {"access_token": "late"})

    endpoint.respond = slow
    started = time.monotonic()
    with pytest.raises(AuthError, match=r"did not answer within 0\.3s"):
        await _request(endpoint, ClientAuth("cid", "none"), timeout_s=0.3)
    assert time.monotonic() - started < 1.2
    async with httpx.AsyncClient() as http:
        with pytest.raises(AuthError, match=r"token endpoint unreachable: cannot connect to 127\.0\.0\.1:9 "
                                            r"\(connection refused\)"):
            await token_request(http, "http://127.0.0.1:9/token", {}, client_auth=ClientAuth("c", "none"))


# ---- DPoP ------------------------------------------------------------------------------------------------


def _nonce_required(nonce: str) -> Callable[[list[Seen]], Reply]:
    def respond(seen: list[Seen]) -> Reply:
        proof = seen[-1].headers.get("dpop")
        if proof is None or decode_unverified(proof)[1].get("nonce") != nonce:
            return _json(400, {"error": "use_dpop_nonce", "error_description": "need a nonce"}, {"DPoP-Nonce": nonce})
        return _json(200, {"access_token": "bound", "token_type": "dpop", "expires_in": 60}, {"DPoP-Nonce": nonce})

    return respond


async def test_dpop_proof_and_one_nonce_retry(endpoint: TokenEndpoint) -> None:
    endpoint.respond = _nonce_required("as-nonce-1")
    key = DpopKey.generate("ES256")
    form = authorization_code_form("code-1", "http://127.0.0.1:5/cb", "verifier", "http://127.0.0.1:6/mcp")
    async with httpx.AsyncClient() as http:
        result = await token_request(http, endpoint.url, form, client_auth=ClientAuth("cid", "none"), dpop=key)
        assert result.token_type == "DPoP" and result.access_token == "bound"
        first, second = endpoint.requests
        assert first.form == second.form == {**form, "client_id": "cid"}
        claims = [decode_unverified(s.headers["dpop"]) for s in (first, second)]
        for header, body in claims:
            assert header["typ"] == "dpop+jwt" and jwk_thumbprint(header["jwk"]) == key.thumbprint
            assert body["htm"] == "POST" and body["htu"] == endpoint.url and "ath" not in body
        assert "nonce" not in claims[0][1] and claims[1][1]["nonce"] == "as-nonce-1"
        assert claims[0][1]["jti"] != claims[1][1]["jti"]
        # The nonce is remembered: the next grant goes through in one request.
        await token_request(http, endpoint.url, refresh_form("rt", None), client_auth=ClientAuth("cid", "none"),
                            dpop=key)
    assert len(endpoint.requests) == 3


async def test_dpop_nonce_retry_happens_only_once(endpoint: TokenEndpoint) -> None:
    counter = iter(range(100))
    endpoint.respond = lambda seen: _json(400, {"error": "use_dpop_nonce"}, {"DPoP-Nonce": f"n{next(counter)}"})
    with pytest.raises(TokenEndpointError) as info:
        await _request(endpoint, ClientAuth("cid", "none"), dpop=DpopKey.generate())
    assert info.value.error == "use_dpop_nonce"
    assert len(endpoint.requests) == 2


async def test_nonce_challenge_without_a_nonce_is_an_error(endpoint: TokenEndpoint) -> None:
    endpoint.respond = lambda seen: _json(400, {"error": "use_dpop_nonce"})
    with pytest.raises(TokenEndpointError, match="sent no DPoP-Nonce header"):
        await _request(endpoint, ClientAuth("cid", "none"), dpop=DpopKey.generate())
    assert len(endpoint.requests) == 1


async def test_retry_signs_a_fresh_client_assertion(endpoint: TokenEndpoint) -> None:
    endpoint.respond = _nonce_required("n")
    pem = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    auth = ClientAuth("cid", "private_key_jwt", private_key_pem=pem, signing_alg="ES256")
    await _request(endpoint, auth, dpop=DpopKey.generate(), assertion_audience="http://issuer")
    jtis = {decode_unverified(s.form["client_assertion"])[1]["jti"] for s in endpoint.requests}
    assert len(jtis) == 2


async def test_without_dpop_a_nonce_challenge_is_just_an_error(endpoint: TokenEndpoint) -> None:
    endpoint.respond = _nonce_required("n")
    with pytest.raises(TokenEndpointError) as info:
        await _request(endpoint, ClientAuth("cid", "none"))
    assert info.value.error == "use_dpop_nonce" and len(endpoint.requests) == 1
    assert "dpop" not in endpoint.requests[0].headers


# ---- grant forms ---------------------------------------------------------------------------------------------


def test_grant_forms() -> None:
    assert authorization_code_form("c", "http://r/cb", "v", None) == {
        "grant_type": "authorization_code", "code": "c", "redirect_uri": "http://r/cb", "code_verifier": "v"
    }
    assert authorization_code_form("c", "http://r/cb", "v", "http://h/mcp")["resource"] == "http://h/mcp"
    assert refresh_form("rt", "http://h/mcp", "a b") == {
        "grant_type": "refresh_token", "refresh_token": "rt", "resource": "http://h/mcp", "scope": "a b"
    }
    assert refresh_form("rt", None) == {"grant_type": "refresh_token", "refresh_token": "rt"}
    assert client_credentials_form(None, None) == {"grant_type": "client_credentials"}
    assert jwt_bearer_form("jwt", "s", "http://h/mcp") == {
        "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": "jwt", "scope": "s",
        "resource": "http://h/mcp",
    }
    assert token_exchange_form(
        "idt", "urn:ietf:params:oauth:token-type:id_token", "urn:ietf:params:oauth:token-type:id-jag",
        "http://as", "http://h/mcp", None,
    ) == {
        "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
        "subject_token": "idt",
        "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
        "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
        "audience": "http://as",
        "resource": "http://h/mcp",
    }


def test_client_auth_repr_hides_secrets() -> None:
    text = repr(ClientAuth("cid", "client_secret_post", client_secret="S3CRET", private_key_pem="PEMDATA"))
    assert "S3CRET" not in text and "PEMDATA" not in text and "cid" in text


def test_ath_matches_what_servers_compute() -> None:
    proof = DpopKey.generate().proof("POST", "http://127.0.0.1:1/mcp", access_token="eyJ.a.b")
    expected = base64.urlsafe_b64encode(hashlib.sha256(b"eyJ.a.b").digest()).rstrip(b"=").decode()
    assert decode_unverified(proof)[1]["ath"] == expected
