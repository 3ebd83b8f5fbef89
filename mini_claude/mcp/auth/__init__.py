"""OAuth 2.1 for HTTP MCP servers: discovery, PKCE, client registration, token grants, refresh, token storage.

    provider = provider_for(cfg, env)                      # background use: no interactive login
    transport = StreamableHttpTransport(cfg.url, auth=provider, server=cfg.name)
    await login(cfg, env, BrowserAuthorizer(port))         # `mini-claude mcp login NAME`
    logout(cfg, env)                                       # `mini-claude mcp logout NAME`

Modules: settings (the `oauth` config object), discovery (WWW-Authenticate, RFC 9728, RFC 8414/OIDC),
registration (pre-registered / CIMD / RFC 7591 clients), authorizer (loopback redirect + browser), store (the 0600
token file), provider (the `HttpAuth` state machine), held_token (the token it holds, refresh, issuer binding),
grants (running one grant: the login, the machine grants); jwt, dpop, tokens (signing, DPoP proofs, the token
endpoint). It reads a server's config through the small
`OAuthServerConfig` protocol (name, url, oauth), never `mini_claude.mcp.config` (a layer above it).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from mini_claude.mcp.auth.authorizer import Authorizer, BrowserAuthorizer
from mini_claude.mcp.auth.grants import login_needed_message
from mini_claude.mcp.auth.provider import OAuthProvider
from mini_claude.mcp.auth.settings import OAuthServerConfig, OAuthSettings
from mini_claude.mcp.auth.store import TokenStore

__all__ = [
    "Authorizer",
    "BrowserAuthorizer",
    "OAuthProvider",
    "OAuthServerConfig",
    "OAuthSettings",
    "TokenStore",
    "login",
    "login_needed_message",
    "logout",
    "provider_for",
]


_MAX_PROVIDERS = 256
# One provider per (server name, URL, `oauth` object, token store) per process: a reconnect (a new transport)
# gets the same provider, so the flow rate limit, a refused assertion and the step-up memory are not reset.
_providers: OrderedDict[tuple[Any, ...], OAuthProvider] = OrderedDict()


def _provider_key(cfg: OAuthServerConfig, store: TokenStore) -> tuple[Any, ...]:
    return (cfg.name, cfg.url, json.dumps(dict(cfg.oauth or {}), sort_keys=True, default=str), store.identity)


def provider_for(cfg: OAuthServerConfig, env: Mapping[str, str], *, authorizer: Authorizer | None = None,
                 store: TokenStore | None = None) -> OAuthProvider:
    """The OAuth provider of one HTTP server (the same object for the same server, settings and store for the
    life of the process; its `authorizer` is the latest caller's). Raises ConfigError for a bad `oauth` object.
    Without `authorizer`, a server that needs an interactive login fails its request with AuthRequiredError."""
    settings = OAuthSettings.from_config(cfg)
    store = store if store is not None else TokenStore.default(env)
    key = _provider_key(cfg, store)
    provider = _providers.get(key)
    if provider is None:
        provider = OAuthProvider(cfg, settings, authorizer=authorizer, store=store)
        _providers[key] = provider
        while len(_providers) > _MAX_PROVIDERS:
            _providers.popitem(last=False)
    else:
        provider.authorizer = authorizer
        _providers.move_to_end(key)
    return provider


async def login(cfg: OAuthServerConfig, env: Mapping[str, str], authorizer: Authorizer | None,
                *, store: TokenStore | None = None) -> None:
    """Authorize now and store the tokens (what was stored stays until that succeeds). Raises AuthError /
    ConfigError. The server's provider (`provider_for`) holds the new token at once."""
    store = store if store is not None else TokenStore.default(env)
    provider = _providers.get(_provider_key(cfg, store))
    if provider is None:
        provider = provider_for(cfg, env, store=store)
    await provider.login(authorizer)


def logout(cfg: OAuthServerConfig, env: Mapping[str, str], *, store: TokenStore | None = None) -> bool:
    """Forget the tokens and client registrations kept for this server (and what its providers hold in memory).
    True if anything was stored."""
    store = store if store is not None else TokenStore.default(env)
    for key, provider in list(_providers.items()):
        if key[0] == cfg.name and key[3] == store.identity:
            provider.reset()
    return store.forget_server(cfg.name)
