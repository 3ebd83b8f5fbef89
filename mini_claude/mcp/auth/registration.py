"""Who this client is at an authorization server: a pre-registered client (`oauth.clientId`), a client-ID
metadata document URL (SEP-991 CIMD), or a dynamic client registration (RFC 7591), and which token-endpoint
authentication method it uses (none, client_secret_basic, client_secret_post, private_key_jwt)."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import httpx

from mini_claude.errors import AuthError
from mini_claude.mcp.auth.bodies import read_capped
from mini_claude.mcp.auth.discovery import AuthServerMetadata
from mini_claude.mcp.auth.settings import OAuthSettings
from mini_claude.mcp.auth.tokens import ClientAuth
from mini_claude.mcp.auth.urls import require_secure_url
from mini_claude.net.errors import describe_http_error

__all__ = ["CLIENT_NAME", "REGISTRATION_TIMEOUT_S", "choose_secret_method", "client_from_record",
           "client_record", "configured_client", "register_client"]

log = logging.getLogger(__name__)

CLIENT_NAME = "mini-claude"
REGISTRATION_TIMEOUT_S = 15.0


def choose_secret_method(meta: AuthServerMetadata) -> str:
    """For a client with a secret: client_secret_basic unless the AS lists only client_secret_post."""
    supported = meta.token_endpoint_auth_methods
    if supported and "client_secret_basic" not in supported and "client_secret_post" in supported:
        return "client_secret_post"
    return "client_secret_basic"


def configured_client(settings: OAuthSettings, meta: AuthServerMetadata) -> ClientAuth | None:
    """The client the config names (pre-registered), or None. `meta` only picks the auth method: whether these
    credentials may be sent to `meta.issuer` at all is the provider's issuer binding (`OAuthProvider._bind_issuer`)."""
    if not settings.client_id:
        return None
    key = settings.read_private_key()
    if key is not None:
        return ClientAuth(settings.client_id, "private_key_jwt", private_key_pem=key,
                          signing_alg=settings.signing_algorithm or "ES256")
    if settings.client_secret:
        return ClientAuth(settings.client_id, choose_secret_method(meta), client_secret=settings.client_secret)
    return ClientAuth(settings.client_id, "none")


def client_record(client: ClientAuth) -> dict[str, Any]:
    return {"client_id": client.client_id, "method": client.method, "client_secret": client.client_secret,
            "registered_at": time.time()}


def client_from_record(record: dict[str, Any] | None) -> ClientAuth | None:
    if not record or not isinstance(record.get("client_id"), str):
        return None
    secret = record.get("client_secret")
    return ClientAuth(record["client_id"], str(record.get("method") or "none"),
                      client_secret=secret if isinstance(secret, str) else None)


def _wanted_method(meta: AuthServerMetadata) -> str:
    supported = meta.token_endpoint_auth_methods
    if not supported or "none" in supported:
        return "none"  # a native app cannot keep a secret; PKCE protects the code
    for method in ("client_secret_basic", "client_secret_post"):
        if method in supported:
            return method
    return supported[0]


async def register_client(http: httpx.AsyncClient, meta: AuthServerMetadata, redirect_uri: str,
                          scope: str | None, server: str | None) -> ClientAuth:
    """RFC 7591 dynamic client registration at the AS's registration endpoint."""
    if not meta.registration_endpoint:
        raise AuthError(f"the authorization server {meta.issuer} does not offer dynamic client registration; "
                        f"set mcpServers.{server}.oauth.clientId (and clientSecret) to a client registered there",
                        server=server)
    wanted = _wanted_method(meta)
    body: dict[str, Any] = {
        "client_name": CLIENT_NAME,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": wanted,
        "application_type": "native",
    }
    if scope:
        body["scope"] = scope
    endpoint = require_secure_url(meta.registration_endpoint, "registration endpoint", server)
    try:
        async with http.stream("POST", endpoint, json=body, timeout=REGISTRATION_TIMEOUT_S,
                               headers={"Accept": "application/json"}) as response:
            content = await read_capped(response, f"registration answer from {endpoint}", server)
    except httpx.HTTPError as exc:
        raise AuthError(f"client registration at {endpoint} failed: {describe_http_error(exc)}",
                        server=server) from None
    try:
        data = json.loads(content)
    except ValueError:
        data = None
    if response.status_code not in (200, 201) or not isinstance(data, dict):
        detail = ""
        if isinstance(data, dict) and isinstance(data.get("error"), str):
            detail = f": {data['error']}"
            if isinstance(data.get("error_description"), str):
                detail += f" ({' '.join(data['error_description'].split())[:200]})"
        raise AuthError(f"client registration at {meta.registration_endpoint} refused (HTTP "
                        f"{response.status_code}){detail}; set mcpServers.{server}.oauth.clientId to a "
                        f"pre-registered client", server=server)
    client_id = data.get("client_id")
    if not isinstance(client_id, str) or not client_id:
        raise AuthError("client registration answered without a client_id", server=server)
    secret = data.get("client_secret") if isinstance(data.get("client_secret"), str) else None
    method = data.get("token_endpoint_auth_method")
    if not isinstance(method, str) or method not in ("none", "client_secret_basic", "client_secret_post"):
        method = wanted if (wanted == "none" or secret) else "none"
    if method != "none" and not secret:
        method = "none"
    log.debug("registered client at %s (auth method %s)", meta.issuer, method)
    return ClientAuth(client_id, method, client_secret=secret)
