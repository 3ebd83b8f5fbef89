"""OAuth 2.1 for HTTP MCP servers: discovery, PKCE, client registration, token grants, refresh, token storage.

    provider = provider_for(cfg, env)                      # background use: no interactive login
    transport = StreamableHttpTransport(cfg.url, auth=provider, server=cfg.name)
    await login(cfg, env, BrowserAuthorizer(port))         # `mini-claude mcp login NAME`
    logout(cfg, env)                                       # `mini-claude mcp logout NAME`

Modules: settings (the `oauth` config object), discovery (WWW-Authenticate, RFC 9728, RFC 8414/OIDC),
registration (pre-registered / CIMD / RFC 7591 clients), authorizer (loopback redirect + browser), store (the 0600
token file), provider (the `HttpAuth` state machine); jwt, dpop, tokens (signing, DPoP proofs, the token endpoint).
"""

from __future__ import annotations

from collections.abc import Mapping

from mini_claude.mcp.auth.authorizer import Authorizer, BrowserAuthorizer
from mini_claude.mcp.auth.provider import OAuthProvider, login_needed_message
from mini_claude.mcp.auth.settings import OAuthSettings
from mini_claude.mcp.auth.store import TokenStore
from mini_claude.mcp.config import ServerConfig

__all__ = [
    "Authorizer",
    "BrowserAuthorizer",
    "OAuthProvider",
    "OAuthSettings",
    "TokenStore",
    "login",
    "login_needed_message",
    "logout",
    "provider_for",
]


def provider_for(cfg: ServerConfig, env: Mapping[str, str], *, authorizer: Authorizer | None = None,
                 store: TokenStore | None = None) -> OAuthProvider:
    """The OAuth provider of one HTTP server. Raises ConfigError for a bad `oauth` object. Without `authorizer`,
    a server that needs an interactive login fails its request with AuthRequiredError."""
    settings = OAuthSettings.from_config(cfg)
    return OAuthProvider(cfg, settings, authorizer=authorizer,
                         store=store if store is not None else TokenStore.default(env))


async def login(cfg: ServerConfig, env: Mapping[str, str], authorizer: Authorizer | None,
                *, store: TokenStore | None = None) -> None:
    """Authorize now (forgetting what was held) and store the tokens. Raises AuthError / ConfigError."""
    await provider_for(cfg, env, authorizer=authorizer, store=store).login()


def logout(cfg: ServerConfig, env: Mapping[str, str], *, store: TokenStore | None = None) -> bool:
    """Forget the tokens and client registrations kept for this server. True if there were any."""
    return (store if store is not None else TokenStore.default(env)).forget_server(cfg.name)
