"""The token held for one HTTP MCP server's OAuth, and the one authorization server configured credentials are
bound to: `HeldToken` is the base of `provider.OAuthProvider` (which answers challenges and authorizes).

It owns the access token in memory and in the token store: taken from the store once, and again whenever none is
held (another process, or `mcp login`, may have stored one; a stat of the store decides whether to read it),
adopted with its DPoP key, kept (with the client and endpoint that refresh it) when a grant or refresh succeeds,
dropped when refresh fails, refreshed `REFRESH_MARGIN_S` before it expires. Refresh happens only at an
authorization server our configured credentials may go to: the explicit `oauth.issuer`, else the first issuer
recorded as `bound_issuer` (`_bind_issuer` refuses a different one). The lock that serializes refresh and
re-authorization belongs to the event loop it ran in (the provider outlives one `asyncio.run`).

Tokens, secrets and keys never reach a log line or an error message.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import httpx

from mini_claude.errors import AuthError
from mini_claude.mcp.auth.discovery import AuthServerMetadata, issuers_match
from mini_claude.mcp.auth.dpop import DpopKey
from mini_claude.mcp.auth.registration import client_from_record
from mini_claude.mcp.auth.settings import OAuthSettings
from mini_claude.mcp.auth.store import TokenStore
from mini_claude.mcp.auth.tokens import ClientAuth, TokenResponse, refresh_form, token_request
from mini_claude.net.tls import tls_context

__all__ = ["REFRESH_MARGIN_S", "HeldToken"]

# the provider's logger: records keep the name they had before this part was split out of provider.py
log = logging.getLogger("mini_claude.mcp.auth.provider")

REFRESH_MARGIN_S = 60.0  # refresh a token this long before it expires


class HeldToken:
    """One server's held token and issuer binding (see the module docstring); `key` is its token-store key."""

    def __init__(self, server: str, settings: OAuthSettings, store: TokenStore, key: str) -> None:
        self.server = server
        self.settings = settings
        self.store = store
        self._key = key
        self._token: dict[str, Any] | None = None
        self._loaded = False
        self._store_stamp: tuple[int, ...] | None = None  # the store as last read while no token was held
        self._dpop: DpopKey | None = None
        self._lock: asyncio.Lock | None = None
        self._lock_loop: asyncio.AbstractEventLoop | None = None

    # ---- tokens held ---------------------------------------------------------------------------------------------

    def _guard(self) -> asyncio.Lock:
        # the provider outlives one event loop (asyncio.run per CLI command): a lock belongs to the loop it ran in
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock_loop is not loop:
            self._lock, self._lock_loop = asyncio.Lock(), loop
        return self._lock

    def _stored_token(self) -> dict[str, Any] | None:
        entry = self.store.entry(self._key)
        issuer = entry.get("issuer")
        record = entry.get("tokens", {}).get(issuer) if isinstance(issuer, str) else None
        return record if isinstance(record, dict) and isinstance(record.get("access_token"), str) else None

    def _load(self) -> None:
        """Take the stored token: once, and again whenever none is held (another process may have logged in)."""
        if self._loaded and self._token is not None:
            return
        stamp = self.store.stamp()
        if self._loaded and stamp == self._store_stamp:
            return  # nothing new stored since the last look (a server without OAuth costs one stat per request)
        self._loaded, self._store_stamp = True, stamp
        record = self._stored_token()
        if record is not None:
            self._adopt(record)

    def _adopt(self, record: dict[str, Any]) -> None:
        self._token = record
        if record.get("token_type") == "DPoP":
            self._dpop = self._dpop_from(record)

    def _dpop_from(self, record: dict[str, Any]) -> DpopKey | None:
        pem, alg = record.get("dpop_key"), record.get("dpop_alg")
        if isinstance(pem, str) and isinstance(alg, str):
            try:
                return DpopKey.from_pem(pem, alg)
            except AuthError:
                return None
        return None

    async def _usable_token(self) -> dict[str, Any] | None:
        self._load()
        token = self._token
        if token is None:
            return None
        expires_at = token.get("expires_at")
        if isinstance(expires_at, int | float) and expires_at - time.time() < REFRESH_MARGIN_S:
            if token.get("refresh_token"):
                async with self._guard():
                    if self._token is token:
                        async with httpx.AsyncClient(verify=tls_context()) as http:
                            await self._refresh(http, token)
                token = self._token
            elif expires_at <= time.time():
                return None  # the server's 401 will get a new one
        return token

    def _drop_token(self) -> None:
        if self._token is not None:
            issuer = self._token.get("issuer")
            if isinstance(issuer, str):
                self.store.put(self._key, "tokens", issuer, None)
        self._token = None

    def _keep(self, response: TokenResponse, meta: AuthServerMetadata, resource: str, client: ClientAuth,
              scope: str | None, previous_refresh: str | None = None) -> None:
        dpop = self._dpop if response.token_type == "DPoP" else None
        record: dict[str, Any] = {
            "access_token": response.access_token,
            "token_type": "DPoP" if dpop is not None else "Bearer",
            "expires_at": response.expires_at,
            "refresh_token": response.refresh_token or previous_refresh,
            "scope": response.scope or scope,
            "requested_scope": scope,
            "issuer": meta.issuer,
            "token_endpoint": meta.token_endpoint,
            "resource": resource,
            "client": {"client_id": client.client_id, "method": client.method},
            "obtained_at": time.time(),
        }
        if dpop is not None:
            record["dpop_key"] = dpop.to_pem()
            record["dpop_alg"] = dpop.alg
        self._token = record
        self.store.put(self._key, "tokens", meta.issuer, record)
        log.info("MCP server %r: authorized by %s", self.server, meta.issuer)

    def _client_for_record(self, token: dict[str, Any]) -> ClientAuth | None:
        raw = token.get("client")
        info: dict[str, Any] = raw if isinstance(raw, dict) else {}
        client_id = info.get("client_id")
        if not isinstance(client_id, str):
            return None
        if self.settings.client_id == client_id:
            key = self.settings.read_private_key()
            if key is not None:
                return ClientAuth(client_id, "private_key_jwt", private_key_pem=key,
                                  signing_alg=self.settings.signing_algorithm or "ES256")
            return ClientAuth(client_id, str(info.get("method") or "none"), client_secret=self.settings.client_secret)
        stored = client_from_record(self.store.get(self._key, "clients", str(token.get("issuer"))))
        if stored is not None and stored.client_id == client_id:
            return stored
        return ClientAuth(client_id, "none") if info.get("method") == "none" else None

    async def _refresh(self, http: httpx.AsyncClient, token: dict[str, Any]) -> bool:
        if not self._issuer_allowed(str(token.get("issuer"))):
            return False  # our configured credentials are not for that authorization server
        client = self._client_for_record(token)
        refresh_token = token.get("refresh_token")
        if client is None or not isinstance(refresh_token, str):
            return False
        form = refresh_form(refresh_token, token.get("resource"))
        try:
            response = await token_request(http, str(token["token_endpoint"]), form, client_auth=client,
                                           assertion_audience=str(token.get("issuer")), dpop=self._dpop,
                                           server=self.server)
        except AuthError as exc:
            log.info("MCP server %r: token refresh failed (%s)", self.server, exc.message)
            self._drop_token()
            return False
        meta = AuthServerMetadata(issuer=str(token["issuer"]), authorization_endpoint=None,
                                  token_endpoint=str(token["token_endpoint"]))
        self._keep(response, meta, str(token.get("resource")), client, token.get("requested_scope"),
                   previous_refresh=refresh_token)
        return True

    # ---- the issuer configured credentials are bound to -----------------------------------------------------

    def _issuer_allowed(self, issuer: str) -> bool:
        """Whether configured credentials may go to `issuer` (always, when none are configured)."""
        settings = self.settings
        if not settings.has_configured_credentials:
            return True
        if settings.issuer is not None:
            return issuers_match(issuer, settings.issuer)
        if settings.auth_server_metadata_url is not None:
            return True  # the configured document chose it
        bound = self.store.field(self._key, "bound_issuer")
        return not isinstance(bound, str) or issuers_match(issuer, bound)

    def _bind_issuer(self, issuer: str) -> None:
        """Configured credentials go to one authorization server only: the first one seen is recorded, and a
        later different one is refused (an explicit `oauth.issuer` / `authServerMetadataUrl` was enforced by
        `OAuthProvider._auth_server`)."""
        settings = self.settings
        if not settings.has_configured_credentials or settings.issuer or settings.auth_server_metadata_url:
            return
        bound = self.store.set_field_once(self._key, "bound_issuer", issuer)
        if not issuers_match(issuer, bound):
            raise AuthError(f"the server now names authorization server {issuer} instead of {bound}, the one the "
                            f"configured client credentials were used with; not sending them there. If the move "
                            f"is intended, set mcpServers.{self.server}.oauth.issuer to {issuer!r} (or run "
                            f"`mini-claude mcp logout {self.server}` to forget {bound})", server=self.server)
