"""The token endpoint client: the one place every grant goes through. Builds the grant forms (authorization code,
refresh, client credentials, RFC 7523 JWT bearer, RFC 8693 token exchange), applies client authentication
(none, client_secret_basic, client_secret_post, private_key_jwt), adds a DPoP proof and retries once on a
`use_dpop_nonce` answer, and turns the reply into a `TokenResponse` or a `TokenEndpointError`. Neither the form
nor any token is ever logged or put in an error message."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import re
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx

from mini_claude.errors import AuthError, TokenEndpointError
from mini_claude.mcp.auth.bodies import read_capped
from mini_claude.mcp.auth.dpop import DpopKey, is_nonce_challenge
from mini_claude.mcp.auth.jwt import client_assertion
from mini_claude.mcp.auth.urls import require_secure_url
from mini_claude.net.errors import describe_http_error

__all__ = [
    "CLIENT_ASSERTION_TYPE_JWT_BEARER",
    "CLIENT_AUTH_METHODS",
    "GRANT_TYPE_JWT_BEARER",
    "GRANT_TYPE_TOKEN_EXCHANGE",
    "TOKEN_REQUEST_TIMEOUT_S",
    "TOKEN_TYPE_ACCESS_TOKEN",
    "TOKEN_TYPE_ID_JAG",
    "TOKEN_TYPE_ID_TOKEN",
    "TOKEN_TYPE_JWT",
    "ClientAuth",
    "TokenResponse",
    "authorization_code_form",
    "client_credentials_form",
    "jwt_bearer_form",
    "refresh_form",
    "token_exchange_form",
    "token_request",
]

log = logging.getLogger(__name__)

TOKEN_REQUEST_TIMEOUT_S = 30.0
GRANT_TYPE_JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
GRANT_TYPE_TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
CLIENT_ASSERTION_TYPE_JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
TOKEN_TYPE_ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
TOKEN_TYPE_ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
TOKEN_TYPE_ACCESS_TOKEN = "urn:ietf:params:oauth:token-type:access_token"
TOKEN_TYPE_JWT = "urn:ietf:params:oauth:token-type:jwt"
CLIENT_AUTH_METHODS = ("none", "client_secret_basic", "client_secret_post", "private_key_jwt")
_MAX_DETAIL_CHARS = 200
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


@dataclass(frozen=True)
class ClientAuth:
    """How this client authenticates at the token endpoint (RFC 6749 §2.3, RFC 7523 §2.2)."""

    client_id: str
    method: str  # one of CLIENT_AUTH_METHODS
    client_secret: str | None = field(default=None, repr=False)
    private_key_pem: str | None = field(default=None, repr=False)
    signing_alg: str | None = None  # private_key_jwt only


@dataclass(frozen=True)
class TokenResponse:
    """A successful token endpoint reply. `token_type` is "Bearer" or "DPoP" (normalised case) or, for a token
    exchange, whatever the server said (e.g. "N_A"). `expires_at` is a `time.time()` instant."""

    access_token: str = field(repr=False)
    token_type: str
    expires_at: float | None
    refresh_token: str | None = field(repr=False)
    scope: str | None
    issued_token_type: str | None
    raw: dict[str, Any] = field(repr=False)


# ---- grant forms -------------------------------------------------------------------------------------------


def _with_optional(form: dict[str, str], **optional: str | None) -> dict[str, str]:
    form.update({k: v for k, v in optional.items() if v})
    return form


def authorization_code_form(code: str, redirect_uri: str, code_verifier: str, resource: str | None) -> dict[str, str]:
    """RFC 6749 §4.1.3 with PKCE (RFC 7636) and the RFC 8707 resource indicator."""
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri}
    return _with_optional(form, code_verifier=code_verifier, resource=resource)


def refresh_form(refresh_token: str, resource: str | None, scope: str | None = None) -> dict[str, str]:
    """RFC 6749 §6; `scope` only to narrow the grant."""
    form = {"grant_type": "refresh_token", "refresh_token": refresh_token}
    return _with_optional(form, resource=resource, scope=scope)


def client_credentials_form(scope: str | None, resource: str | None) -> dict[str, str]:
    """RFC 6749 §4.4."""
    return _with_optional({"grant_type": "client_credentials"}, scope=scope, resource=resource)


def jwt_bearer_form(assertion: str, scope: str | None, resource: str | None) -> dict[str, str]:
    """RFC 7523 §2.1 authorization grant (workload identity JWTs, SEP-990 ID-JAGs)."""
    form = {"grant_type": GRANT_TYPE_JWT_BEARER, "assertion": assertion}
    return _with_optional(form, scope=scope, resource=resource)


def token_exchange_form(
    subject_token: str,
    subject_token_type: str,
    requested_token_type: str | None,
    audience: str | None,
    resource: str | None,
    scope: str | None,
) -> dict[str, str]:
    """RFC 8693 §2.1 (SEP-990: an IdP ID token -> an ID-JAG for the MCP server's authorization server)."""
    form = {
        "grant_type": GRANT_TYPE_TOKEN_EXCHANGE,
        "subject_token": subject_token,
        "subject_token_type": subject_token_type,
    }
    return _with_optional(
        form, requested_token_type=requested_token_type, audience=audience, resource=resource, scope=scope
    )


# ---- the request -------------------------------------------------------------------------------------------


def _basic_credentials(client_id: str, client_secret: str) -> str:
    # RFC 6749 §2.3.1: each part form-urlencoded before joining, so a ':' in the id cannot split it wrongly.
    # quote() (space -> %20) decodes the same under form decoding and under plain percent-decoding.
    pair = f"{quote(client_id, safe='')}:{quote(client_secret, safe='')}"
    return "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")


def _apply_client_auth(
    form: dict[str, str], headers: dict[str, str], auth: ClientAuth, audience: str, server: str | None
) -> None:
    method = auth.method
    if method == "none":
        form.setdefault("client_id", auth.client_id)
    elif method == "client_secret_basic":
        if not auth.client_secret:
            raise AuthError("client_secret_basic needs a client secret", server=server)
        headers["Authorization"] = _basic_credentials(auth.client_id, auth.client_secret)
    elif method == "client_secret_post":
        if not auth.client_secret:
            raise AuthError("client_secret_post needs a client secret", server=server)
        form["client_id"] = auth.client_id
        form["client_secret"] = auth.client_secret
    elif method == "private_key_jwt":
        if not auth.private_key_pem or not auth.signing_alg:
            raise AuthError("private_key_jwt needs a private key and a signing algorithm", server=server)
        try:
            assertion = client_assertion(auth.client_id, audience, auth.private_key_pem, auth.signing_alg)
        except AuthError as exc:
            raise AuthError(f"private_key_jwt: {exc.message}", server=server) from exc
        form["client_id"] = auth.client_id
        form["client_assertion_type"] = CLIENT_ASSERTION_TYPE_JWT_BEARER
        form["client_assertion"] = assertion
    else:
        raise AuthError(
            f"unsupported token endpoint auth method {method!r} (supported: {', '.join(CLIENT_AUTH_METHODS)})",
            server=server,
        )


def _one_line(text: str, limit: int = _MAX_DETAIL_CHARS) -> str:
    text = " ".join(_CONTROL.sub(" ", text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _json_object(content: bytes) -> dict[str, Any] | None:
    try:
        body = json.loads(content)
    except (ValueError, UnicodeDecodeError):
        return None
    return body if isinstance(body, dict) else None


def _normalise_token_type(value: Any) -> str:
    if not isinstance(value, str) or not value:
        return "Bearer"  # RFC 6749 requires it; a server that forgets it means the default scheme
    return {"bearer": "Bearer", "dpop": "DPoP"}.get(value.lower(), value)


def _expires_at(value: Any, now: float) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str):
        try:
            seconds = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return now + seconds if seconds >= 0 else None


def _optional_str(body: dict[str, Any], key: str) -> str | None:
    value = body.get(key)
    return value if isinstance(value, str) and value else None


def _parse_reply(
    response: httpx.Response, content: bytes, body: dict[str, Any] | None, sent_at: float, server: str | None
) -> TokenResponse:
    status = response.status_code
    if 200 <= status < 300:
        if body is None:
            # Never quote a 2xx body: it may well hold a token.
            ctype = response.headers.get("content-type", "no content type")
            raise TokenEndpointError(
                f"token endpoint answered HTTP {status} with a non-JSON body ({_one_line(ctype, 60)})",
                server=server, status=status,
            )
        access_token = body.get("access_token")
        if not isinstance(access_token, str) or not access_token:
            raise TokenEndpointError(
                f"token endpoint answered HTTP {status} without an access_token", server=server, status=status
            )
        return TokenResponse(
            access_token=access_token,
            token_type=_normalise_token_type(body.get("token_type")),
            expires_at=_expires_at(body.get("expires_in"), sent_at),
            refresh_token=_optional_str(body, "refresh_token"),
            scope=_optional_str(body, "scope"),
            issued_token_type=_optional_str(body, "issued_token_type"),
            raw=body,
        )
    if body is not None and isinstance(body.get("error"), str):
        error = body["error"]
        description = body.get("error_description")
        detail = _one_line(error, 80)
        if isinstance(description, str) and description.strip():
            detail += f": {_one_line(description)}"
        raise TokenEndpointError(
            f"token endpoint refused the request (HTTP {status}): {detail}", server=server, error=error, status=status
        )
    excerpt = _one_line(content[:4096].decode("utf-8", "replace"))
    raise TokenEndpointError(
        f"token endpoint answered HTTP {status}" + (f": {excerpt}" if excerpt else ""), server=server, status=status
    )


async def _post(
    http: httpx.AsyncClient,
    token_endpoint: str,
    form: dict[str, str],
    client_auth: ClientAuth,
    audience: str,
    dpop: DpopKey | None,
    server: str | None,
    timeout_s: float,
) -> TokenResponse:
    retried = False
    while True:
        # Rebuilt per attempt: a retry needs a fresh client assertion (jti) and a fresh DPoP proof.
        data = dict(form)
        headers = {"Accept": "application/json"}
        _apply_client_auth(data, headers, client_auth, audience, server)
        if dpop is not None:
            headers["DPoP"] = dpop.proof("POST", token_endpoint)
        sent_at = time.time()
        try:
            async with http.stream(
                "POST", token_endpoint, data=data, headers=headers, timeout=timeout_s, follow_redirects=False
            ) as response:
                content = await read_capped(response, "token endpoint's answer", server)
        except httpx.TimeoutException as exc:
            raise AuthError(f"token endpoint did not answer within {timeout_s:g}s", server=server) from exc
        except httpx.HTTPError as exc:
            raise AuthError(f"token endpoint unreachable: {describe_http_error(exc)}", server=server) from exc
        body = _json_object(content)
        if dpop is not None:
            dpop.remember_nonce(token_endpoint, response.headers)
            if not retried and is_nonce_challenge(response.status_code, response.headers, body):
                if dpop.nonce_for(token_endpoint) is None:
                    raise TokenEndpointError(
                        "token endpoint asked for a DPoP nonce but sent no DPoP-Nonce header",
                        server=server, error="use_dpop_nonce", status=response.status_code,
                    )
                log.debug("token endpoint asked for a DPoP nonce; retrying once")
                retried = True
                continue
        return _parse_reply(response, content, body, sent_at, server)


async def token_request(
    http: httpx.AsyncClient,
    token_endpoint: str,
    form: dict[str, str],
    *,
    client_auth: ClientAuth,
    assertion_audience: str | None = None,
    dpop: DpopKey | None = None,
    server: str | None = None,
    timeout_s: float = TOKEN_REQUEST_TIMEOUT_S,
) -> TokenResponse:
    """POST one grant `form` to `token_endpoint` with `client_auth` applied and return the parsed reply.

    private_key_jwt: the assertion's `aud` is `assertion_audience` — pass the authorization server's `issuer`
    (what SEP-1046 / rfc7523bis and the conformance suite require); without it the token endpoint URL is used
    (classic RFC 7523 §3). With `dpop`, every attempt carries a fresh proof and one `use_dpop_nonce` answer is
    retried with the nonce the server sent. The whole exchange is bounded by `timeout_s`.
    Raises TokenEndpointError (an AuthError) for a refusal or an unusable reply, AuthError for anything else."""
    require_secure_url(token_endpoint, "token endpoint", server)
    audience = assertion_audience or token_endpoint
    try:
        async with asyncio.timeout(timeout_s):
            return await _post(http, token_endpoint, form, client_auth, audience, dpop, server, timeout_s)
    except TimeoutError as exc:
        raise AuthError(f"token endpoint did not answer within {timeout_s:g}s", server=server) from exc
