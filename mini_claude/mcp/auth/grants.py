"""Running one OAuth grant at an authorization server, once the provider has chosen the server, the scope and
the grant: the interactive authorization-code login with PKCE (and the client it needs: configured, CIMD or
dynamically registered), and the machine grants — client credentials (secret or private-key JWT), a JWT-bearer
workload assertion (RFC 7523), and enterprise-managed authorization (SEP-990: the user's ID token exchanged at the
IdP for an ID-JAG, RFC 8693, then presented as a JWT bearer grant).

Each returns the token endpoint's answer and the client that got it; keeping the token (and refreshing it later)
is the provider's business. Nothing here logs or quotes a token, secret, key or assertion.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, runtime_checkable
from urllib.parse import urlencode

import httpx

from mini_claude.errors import AuthError, AuthRequiredError, TokenEndpointError
from mini_claude.mcp.auth.authorizer import Authorizer
from mini_claude.mcp.auth.discovery import AuthServerMetadata, discover_auth_server
from mini_claude.mcp.auth.dpop import DpopKey
from mini_claude.mcp.auth.registration import (
    choose_secret_method,
    client_from_record,
    client_record,
    configured_client,
    register_client,
)
from mini_claude.mcp.auth.settings import OAuthSettings
from mini_claude.mcp.auth.store import TokenStore
from mini_claude.mcp.auth.tokens import (
    TOKEN_TYPE_ID_JAG,
    TOKEN_TYPE_ID_TOKEN,
    ClientAuth,
    TokenResponse,
    authorization_code_form,
    client_credentials_form,
    jwt_bearer_form,
    token_exchange_form,
    token_request,
)

__all__ = [
    "GrantRequest",
    "Granted",
    "SupportsListener",
    "authorization_code_grant",
    "client_credentials_grant",
    "enterprise_grant",
    "jwt_bearer_grant",
    "login_needed_message",
]

_PKCE_VERIFIER_BYTES = 48  # 64 characters of [A-Za-z0-9_-]: RFC 7636 allows 43-128
_STATE_BYTES = 24
_MAX_DESCRIPTION_CHARS = 200


def login_needed_message(name: str) -> str:
    return f"needs a login: run `mini-claude mcp login {name}`"


@runtime_checkable
class SupportsListener(Protocol):
    """An `Authorizer` with a redirect listener to open before the login (so its redirect URI is known before the
    client is registered) and to close after it, whatever happened."""

    async def start(self) -> None: ...

    async def close(self) -> None: ...


@dataclass(frozen=True)
class GrantRequest:
    """One authorization to run: at which server (`meta`), for which resource and scope, with which settings."""

    http: httpx.AsyncClient
    meta: AuthServerMetadata
    resource: str  # the RFC 8707 resource indicator
    scope: str | None
    settings: OAuthSettings
    dpop: DpopKey | None  # the key to bind the token to (None: a Bearer token)
    server: str


class Granted(NamedTuple):
    """What a grant got: the token endpoint's answer and the client it was issued to."""

    response: TokenResponse
    client: ClientAuth


def _pkce_pair() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(_PKCE_VERIFIER_BYTES)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).rstrip(b"=")
    return verifier, challenge.decode("ascii")


async def _token(req: GrantRequest, form: dict[str, str], client: ClientAuth) -> TokenResponse:
    """POST a grant to the authorization server's token endpoint, as `client`."""
    return await token_request(req.http, req.meta.token_endpoint, form, client_auth=client,
                               assertion_audience=req.meta.issuer, dpop=req.dpop, server=req.server)


# ---- authorization code ----------------------------------------------------------------------------------------


async def _login_client(req: GrantRequest, store: TokenStore, key: str,
                        redirect_uri: str) -> tuple[ClientAuth, bool, dict[str, Any] | None]:
    """The client for an authorization-code login, whether it came from dynamic registration, and — for a
    new registration — the record to store once the login succeeded (a failed one keeps the old client)."""
    meta, settings = req.meta, req.settings
    configured = configured_client(settings, meta)
    if configured is not None:
        return configured, False, None
    if meta.cimd_supported and settings.client_metadata_url:
        return ClientAuth(settings.client_metadata_url, "none"), False, None
    record = store.get(key, "clients", meta.issuer)
    if record is not None and record.get("redirect_uri") == redirect_uri:
        stored = client_from_record(record)
        if stored is not None:
            return stored, True, None
    client = await register_client(req.http, meta, redirect_uri, req.scope, req.server)
    return client, True, {**client_record(client), "redirect_uri": redirect_uri}


def _check_reply(reply: Mapping[str, str], state: str, meta: AuthServerMetadata, server: str) -> str:
    """The code of the authorization response, once its error, `state` and `iss` (RFC 9207) are checked."""
    if reply.get("error"):
        description = " ".join(str(reply.get("error_description") or "").split())[:_MAX_DESCRIPTION_CHARS]
        raise AuthError(f"authorization refused: {reply['error']}" + (f" ({description})" if description else ""),
                        server=server)
    if reply.get("state") != state:
        raise AuthError("the authorization response's state does not match the request; refusing it", server=server)
    iss = reply.get("iss")
    if iss is not None:
        if iss != meta.issuer:  # RFC 9207: simple string comparison, no normalisation
            raise AuthError(f"the authorization response comes from issuer {iss!r}, not {meta.issuer!r}; "
                            f"refusing it", server=server)
    elif meta.iss_parameter_supported:
        raise AuthError("the authorization response lacks the `iss` parameter its server promises (RFC 9207); "
                        "refusing it", server=server)
    code = reply.get("code")
    if not code:
        raise AuthError("the authorization response carries no code", server=server)
    return code


async def authorization_code_grant(req: GrantRequest, authorizer: Authorizer | None, store: TokenStore,
                                   key: str) -> Granted:
    """The interactive login: PKCE (S256), the user at `authorizer`, the code exchanged at the token endpoint. A
    dynamically registered client is stored (under `key`, per issuer) only once its login succeeded, and forgotten
    when the token endpoint no longer knows it. Raises AuthRequiredError without an `authorizer`."""
    meta, server = req.meta, req.server
    if authorizer is None:
        raise AuthRequiredError(login_needed_message(server), server=server)
    if meta.from_metadata and "S256" not in (meta.code_challenge_methods or ()):
        raise AuthError(f"the authorization server {meta.issuer} does not support PKCE with S256 "
                        f"(code_challenge_methods_supported); refusing to log in", server=server)
    if not meta.authorization_endpoint:
        raise AuthError(f"the authorization server {meta.issuer} has no authorization_endpoint; configure a "
                        f"machine grant (mcpServers.{server}.oauth.grantType)", server=server)
    listener = authorizer if isinstance(authorizer, SupportsListener) else None
    try:
        if listener is not None:
            await listener.start()  # binds the loopback port, so the redirect URI is known before registration
        redirect_uri = authorizer.redirect_uri
        client, dynamic, new_client = await _login_client(req, store, key, redirect_uri)
        verifier, code_challenge = _pkce_pair()
        state = secrets.token_urlsafe(_STATE_BYTES)
        params = {"response_type": "code", "client_id": client.client_id, "redirect_uri": redirect_uri,
                  "code_challenge": code_challenge, "code_challenge_method": "S256", "state": state,
                  "resource": req.resource}
        if req.scope:
            params["scope"] = req.scope
        endpoint = meta.authorization_endpoint
        url = endpoint + ("&" if "?" in endpoint else "?") + urlencode(params)
        reply = await authorizer.authorize(url)
    finally:
        if listener is not None:
            await listener.close()  # whatever failed after start(), the listener goes (a fixed port stays usable)
    code = _check_reply(reply, state, meta, server)
    try:
        response = await _token(req, authorization_code_form(code, redirect_uri, verifier, req.resource), client)
    except TokenEndpointError as exc:
        if dynamic and new_client is None and exc.error == "invalid_client":
            store.put(key, "clients", meta.issuer, None)  # register afresh next time
        raise
    if new_client is not None:
        store.put(key, "clients", meta.issuer, new_client)
    return Granted(response, client)


# ---- machine grants --------------------------------------------------------------------------------------------


def _machine_client(req: GrantRequest) -> ClientAuth:
    client = configured_client(req.settings, req.meta)
    if client is None:
        raise AuthError(f"set mcpServers.{req.server}.oauth.clientId for the {req.settings.grant_type} grant",
                        server=req.server)
    return client


async def client_credentials_grant(req: GrantRequest) -> Granted:
    """RFC 6749 §4.4 with the configured client (a secret, or a private key: private_key_jwt)."""
    client = _machine_client(req)
    return Granted(await _token(req, client_credentials_form(req.scope, req.resource), client), client)


async def jwt_bearer_grant(req: GrantRequest, assertion: str) -> Granted:
    """RFC 7523 §2.1: a workload identity `assertion` presented by the configured client."""
    client = _machine_client(req)
    return Granted(await _token(req, jwt_bearer_form(assertion, req.scope, req.resource), client), client)


async def enterprise_grant(req: GrantRequest) -> Granted:
    """SEP-990: exchange the user's ID token at the IdP for an ID-JAG naming this authorization server (RFC 8693),
    then present the ID-JAG to it as a JWT bearer grant."""
    settings, meta, server = req.settings, req.meta, req.server
    ent = settings.enterprise
    assert ent is not None  # OAuthSettings guarantees it for the enterprise grant
    id_token = ent.read_id_token(f"{settings.key}.enterprise")
    idp_endpoint = ent.idp_token_endpoint
    if not idp_endpoint:
        assert ent.idp_issuer is not None  # OAuthSettings requires one of the two
        idp_endpoint = (await discover_auth_server(req.http, ent.idp_issuer, server)).token_endpoint
    idp_client_id = ent.idp_client_id or settings.client_id or ""
    if ent.idp_client_secret:
        idp_client = ClientAuth(idp_client_id, "client_secret_basic", client_secret=ent.idp_client_secret)
    else:
        idp_client = ClientAuth(idp_client_id, "none")
    form = token_exchange_form(id_token, TOKEN_TYPE_ID_TOKEN, TOKEN_TYPE_ID_JAG, meta.issuer, req.resource, req.scope)
    try:
        jag = await token_request(req.http, idp_endpoint, form, client_auth=idp_client, server=server)
    except AuthError as exc:
        raise AuthError(f"the identity provider refused the token exchange: {exc.message}", server=server) from None
    client = _machine_client(req)
    if client.method == "none" and client.client_secret is None and settings.client_secret:
        client = ClientAuth(client.client_id, choose_secret_method(meta), client_secret=settings.client_secret)
    return Granted(await _token(req, jwt_bearer_form(jag.access_token, req.scope, req.resource), client), client)
