"""`OAuthProvider`: OAuth 2.1 for one HTTP MCP server, behind the transports' `HttpAuth` protocol.

Before every request it hands out the held access token (`Authorization: Bearer …`, or `DPoP …` plus a fresh
proof), refreshing it first when it is about to expire. On a challenge from the server it:

* 401: reads the server's protected-resource metadata again (the AS may have moved: then the old AS's client and
  tokens are never shown to the new one), tries the refresh token, else runs the configured grant: an interactive
  authorization-code login with PKCE (needs an `Authorizer`; without one: AuthRequiredError), client credentials,
  a JWT-bearer workload assertion, or enterprise-managed authorization (token exchange at the IdP, then JWT bearer);
* 403 `insufficient_scope`: re-authorizes with the union of the scopes held and the scopes asked for, once per
  scope set (a server that keeps refusing gets an AuthError, not a loop);
* a DPoP nonce demand (401 `use_dpop_nonce`, or any DPoP-Nonce header): remembers the nonce and retries.

Configured client credentials (`oauth.clientId`, secret, key, assertion, enterprise) are only ever sent to one
authorization server: `oauth.issuer` / `oauth.authServerMetadataUrl` when set, else the first issuer this server
named (recorded in the token store as `bound_issuer`). A server that later names another one gets an AuthError
naming both, not our credentials. Dynamically registered clients follow a migration (SEP-2352).

One provider lives per server (and store) per process (`mini_claude.mcp.auth.provider_for`), so the flow rate
limit, a refused workload assertion and the step-up memory survive reconnects. `login()` replaces what is stored
only once the new authorization succeeded.

Every wait is bounded; tokens, secrets and keys never reach a log line or an error message.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from typing import Any

import httpx

from mini_claude.errors import AuthError
from mini_claude.mcp.auth.authorizer import Authorizer
from mini_claude.mcp.auth.discovery import (
    AuthServerMetadata,
    Challenge,
    ProtectedResource,
    discover_auth_server,
    discover_resource,
    fetch_auth_server_metadata,
    issuers_match,
    parse_challenge,
)
from mini_claude.mcp.auth.dpop import DpopKey, is_nonce_challenge
from mini_claude.mcp.auth.grants import (
    Granted,
    GrantRequest,
    authorization_code_grant,
    client_credentials_grant,
    enterprise_grant,
    jwt_bearer_grant,
)
from mini_claude.mcp.auth.held_token import REFRESH_MARGIN_S, HeldToken
from mini_claude.mcp.auth.settings import OAuthServerConfig, OAuthSettings
from mini_claude.mcp.auth.store import TokenStore
from mini_claude.net.errors import describe_http_error
from mini_claude.net.tls import tls_context
from mini_claude.net.urls import display_url
from mini_claude.secrets import SECRETS

__all__ = ["MAX_FLOWS_PER_WINDOW", "REFRESH_MARGIN_S", "OAuthProvider"]

log = logging.getLogger(__name__)

MAX_FLOWS_PER_WINDOW = 4  # authorizations (logins / grants) within FLOW_WINDOW_S before we give up
FLOW_WINDOW_S = 60.0
PROBE_TIMEOUT_S = 15.0
OFFLINE_ACCESS = "offline_access"


def _header(headers: Mapping[str, str], name: str) -> str | None:
    for k, v in headers.items():
        if k.lower() == name:
            return v
    return None


def _merge_scopes(*groups: Any) -> list[str]:
    merged: list[str] = []
    for group in groups:
        for scope in group or ():
            if scope and scope not in merged:
                merged.append(scope)
    return merged


class OAuthProvider(HeldToken):
    """Implements `mini_claude.mcp.transports.base.HttpAuth` for one server (see the module docstring); the token
    it holds and the issuer binding are the base class's."""

    def __init__(self, cfg: OAuthServerConfig, settings: OAuthSettings, *, authorizer: Authorizer | None = None,
                 store: TokenStore | None = None) -> None:
        if not cfg.url:
            raise AuthError("OAuth needs an HTTP server URL", server=cfg.name)
        super().__init__(cfg.name, settings, store if store is not None else TokenStore(None),
                         TokenStore.server_key(cfg.name, cfg.url))
        self.url = cfg.url
        self.authorizer = authorizer
        self._resource: ProtectedResource | None = None
        self._meta: AuthServerMetadata | None = None
        self._scopes: list[str] = []  # what the last authorization asked for
        self._step_ups: set[frozenset[str]] = set()
        self._flow_times: list[float] = []
        self._failed_assertion: tuple[str, AuthError] | None = None

    # ---- HttpAuth ------------------------------------------------------------------------------------------------

    async def request_headers(self, method: str, url: str) -> dict[str, str]:
        token = await self._usable_token()
        if token is None:
            return {}
        access = token["access_token"]
        SECRETS.add(f"mcp:{self.server} OAuth token", access)  # masked if a tool result or the screen shows it
        if token.get("token_type") == "DPoP" and self._dpop is not None:
            return {"Authorization": f"DPoP {access}", "DPoP": self._dpop.proof(method, url, access_token=access)}
        return {"Authorization": f"Bearer {access}"}

    async def handle_challenge(self, method: str, url: str, status: int, headers: Mapping[str, str]) -> bool:
        seen = self._token
        if self._dpop is not None and _header(headers, "dpop-nonce"):
            before = self._dpop.nonce_for(url)
            self._dpop.remember_nonce(url, headers)
            if is_nonce_challenge(status, headers, None) or (status == 400 and self._dpop.nonce_for(url) != before):
                return True
        challenge = parse_challenge(headers)
        if status == 401:
            async with self._guard():
                if self._token is not seen and self._token is not None:
                    return True  # a concurrent request already got a new token
                await self._on_unauthorized(challenge)
            return True
        if status == 403 and challenge.error == "insufficient_scope":
            async with self._guard():
                if self._token is not seen and self._token is not None:
                    return True
                await self._step_up(challenge)
            return True
        return False

    # ---- explicit login / logout -----------------------------------------------------------------------------

    async def login(self, authorizer: Authorizer | None = None) -> None:
        """A fresh authorization now (what `mcp login` runs), with `authorizer` (default: the provider's): probe
        the server for its challenge, authorize. The tokens and registered client held stay until the new
        authorization succeeds and replaces them, so a cancelled or failed login logs nobody out."""
        async with httpx.AsyncClient(verify=tls_context()) as http:
            challenge = await self._probe(http)
            async with self._guard():
                self._load()
                await self._authorize(http, challenge, scopes=None, authorizer=authorizer)

    def reset(self) -> None:
        """Forget everything held in memory (after `logout`: the store was emptied under us)."""
        self._token, self._loaded, self._dpop, self._store_stamp = None, False, None, None
        self._resource = self._meta = None
        self._scopes = []
        self._step_ups.clear()
        self._flow_times.clear()
        self._failed_assertion = None

    async def _probe(self, http: httpx.AsyncClient) -> Challenge:
        body = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "mini-claude", "version": "0"}}}
        try:
            response = await http.post(self.url, content=json.dumps(body),
                                       headers={"Content-Type": "application/json",
                                                "Accept": "application/json, text/event-stream"},
                                       timeout=PROBE_TIMEOUT_S)
            await response.aclose()
        except httpx.HTTPError as exc:
            raise AuthError(f"cannot reach {display_url(self.url)}: {describe_http_error(exc)}",
                            server=self.server) from None
        session = response.headers.get("mcp-session-id")
        if session:
            try:
                await http.delete(self.url, headers={"Mcp-Session-Id": session}, timeout=PROBE_TIMEOUT_S)
            except httpx.HTTPError:
                pass
        return parse_challenge(response.headers) if response.status_code in (401, 403) else Challenge()

    # ---- challenges ----------------------------------------------------------------------------------------------

    async def _on_unauthorized(self, challenge: Challenge) -> None:
        self._load()
        used = self._token
        stored = self._stored_token()
        if stored is not None and (used is None or stored.get("access_token") != used.get("access_token")):
            self._adopt(stored)  # another process (or `mcp login`) stored a newer token: try that first
            return
        async with httpx.AsyncClient(verify=tls_context()) as http:
            resource = await discover_resource(http, self.url, challenge, self.server)
            if used is not None:
                issuer = used.get("issuer")
                same_as = issuer in resource.authorization_servers or resource.url is None
                if same_as and used.get("refresh_token") and await self._refresh(http, used):
                    return
                self._drop_token()
            await self._authorize(http, challenge, scopes=None, resource=resource)

    async def _step_up(self, challenge: Challenge) -> None:
        held = (self._token or {}).get("requested_scope")  # None in a stored token that asked for no scope
        wanted = _merge_scopes(self._scopes or (held.split() if isinstance(held, str) else []),
                               (challenge.scope or "").split())
        key = frozenset(wanted)
        if key in self._step_ups:
            raise AuthError(f"the server still refuses with insufficient_scope after authorizing scope "
                            f"{' '.join(wanted)!r}; the account may lack that permission", server=self.server)
        self._step_ups.add(key)
        async with httpx.AsyncClient(verify=tls_context()) as http:
            await self._authorize(http, challenge, scopes=wanted, resource=self._resource)

    # ---- authorizing ---------------------------------------------------------------------------------------------

    def _count_flow(self) -> None:
        now = time.monotonic()
        self._flow_times = [t for t in self._flow_times if now - t < FLOW_WINDOW_S]
        if len(self._flow_times) >= MAX_FLOWS_PER_WINDOW:
            raise AuthError(f"authorization keeps failing ({len(self._flow_times)} attempts in "
                            f"{FLOW_WINDOW_S:g}s); giving up", server=self.server)
        self._flow_times.append(now)

    async def _auth_server(self, http: httpx.AsyncClient, resource: ProtectedResource) -> AuthServerMetadata:
        """The authorization server to use: the configured one (`oauth.authServerMetadataUrl`, `oauth.issuer`),
        else the first one the server's metadata names."""
        wanted = self.settings.issuer
        if self.settings.auth_server_metadata_url:
            return await fetch_auth_server_metadata(http, self.settings.auth_server_metadata_url, self.server,
                                                    issuer=wanted)
        issuers = resource.authorization_servers
        if wanted is None:
            return await discover_auth_server(http, issuers[0], self.server, legacy=resource.url is None)
        chosen = next((i for i in issuers if issuers_match(i, wanted)), None)
        if chosen is None:
            raise AuthError(f"the server names authorization server {', '.join(issuers)}, not the configured "
                            f"{wanted}; refusing to authorize there (if the server really moved, change "
                            f"mcpServers.{self.server}.oauth.issuer)", server=self.server)
        return await discover_auth_server(http, chosen, self.server, legacy=resource.url is None)

    async def _authorize(self, http: httpx.AsyncClient, challenge: Challenge, *, scopes: list[str] | None,
                         resource: ProtectedResource | None = None, authorizer: Authorizer | None = None) -> None:
        if resource is None:
            resource = await discover_resource(http, self.url, challenge, self.server)
        meta = await self._auth_server(http, resource)
        self._bind_issuer(meta.issuer)
        previous = self.store.entry(self._key).get("issuer")
        if isinstance(previous, str) and previous != meta.issuer:
            log.info("MCP server %r: authorization server changed to %s; registering afresh", self.server,
                     meta.issuer)
            self.store.put(self._key, "tokens", previous, None)
            self._dpop = None
        self._resource, self._meta = resource, meta
        if scopes is None:
            base = (challenge.scope.split() if challenge.scope else None) or self.settings.scopes \
                or resource.scopes_supported or ()
            scopes = _merge_scopes(base)
        grant = self._grant_for(meta)
        if (grant == "authorization_code" and meta.scopes_supported and OFFLINE_ACCESS in meta.scopes_supported
                and OFFLINE_ACCESS not in scopes):
            scopes = [*scopes, OFFLINE_ACCESS]
        self._scopes = list(scopes)
        scope = " ".join(scopes) or None
        self._count_flow()
        self._dpop = self._dpop_for(meta)
        req = GrantRequest(http, meta, resource.resource, scope, self.settings, self._dpop, self.server)
        if grant == "authorization_code":
            granted = await authorization_code_grant(req, authorizer or self.authorizer, self.store, self._key)
        elif grant == "client_credentials":
            granted = await client_credentials_grant(req)
        elif grant == "jwt_bearer":
            granted = await self._jwt_bearer(req)
        else:
            granted = await enterprise_grant(req)
        self._keep(granted.response, meta, resource.resource, granted.client, scope)

    def _grant_for(self, meta: AuthServerMetadata) -> str:
        """The configured grant; an unconfigured one becomes client_credentials when the AS offers only that and
        the config holds client credentials (a machine client needs no login)."""
        grant = self.settings.grant_type
        grants = meta.grant_types or ()
        if (grant == "authorization_code" and not self.settings.grant_type_explicit
                and self.settings.has_client_credentials and "client_credentials" in grants
                and "authorization_code" not in grants):
            return "client_credentials"
        return grant

    def _dpop_for(self, meta: AuthServerMetadata) -> DpopKey | None:
        wanted = self.settings.dpop
        algs = meta.dpop_algs
        if wanted is False or (wanted is None and not algs):
            return None
        if self._dpop is not None and (not algs or self._dpop.alg in algs):
            return self._dpop
        for alg in ("ES256", *(algs or ())):
            if algs and alg not in algs:
                continue
            try:
                return DpopKey.generate(alg)
            except AuthError:
                continue
        raise AuthError(f"the authorization server wants DPoP with {', '.join(algs or ())}, none of which is "
                        f"supported; set mcpServers.{self.server}.oauth.dpop to false", server=self.server)

    async def _jwt_bearer(self, req: GrantRequest) -> Granted:
        assertion = self.settings.read_assertion()
        if self._failed_assertion is not None and self._failed_assertion[0] == assertion:
            raise self._failed_assertion[1]  # a refused assertion is not retried (SEP-1933); a new one is
        try:
            return await jwt_bearer_grant(req, assertion)
        except AuthError as exc:
            self._failed_assertion = (assertion, exc)
            raise
