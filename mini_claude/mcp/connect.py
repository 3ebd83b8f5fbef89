"""`build_transport`: the one place a server's config becomes a transport (stdio, Streamable HTTP, legacy SSE, or
in-process for a `"type": "sdk"` server living in this process).

It also attaches what an HTTP server needs besides its URL: static `headers`, the `headersHelper` command, and
the OAuth provider (`mini_claude.mcp.auth`) that answers 401/403 challenges.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from mini_claude.errors import TransportError
from mini_claude.mcp.config import AGENT_CREDENTIAL_VARS, ServerConfig
from mini_claude.mcp.config_entry import server_key
from mini_claude.mcp.transports.base import HttpAuth, Transport
from mini_claude.mcp.transports.headers_helper import HeadersHelper
from mini_claude.secrets import register_header_values, without_credentials

if TYPE_CHECKING:
    from mini_claude.mcp.auth import Authorizer
    from mini_claude.mcp.transports.inprocess import MessagePeer

__all__ = ["AGENT_CREDENTIAL_VARS", "build_transport", "server_environment"]


def server_environment(base: Mapping[str, str], extra: Mapping[str, str]) -> dict[str, str]:
    """The environment a stdio server gets: the user's, minus the agent's credentials, plus its `env` entries."""
    return without_credentials(base, extra.items())


def build_transport(cfg: ServerConfig, env: Mapping[str, str], *, authorizer: Authorizer | None = None,
                    sdk_peers: Mapping[str, MessagePeer] | None = None) -> Transport:
    """Build the transport a server's config asks for.

    `authorizer` is what can run an interactive login; without one a
    server that needs a login fails with AuthRequiredError (shown as `needs-auth`). A `"type": "sdk"` server
    is reached through its config's `instance`, else through `sdk_peers[name]` (a server that lives elsewhere and
    is reached through the program's own channel); with neither it fails, naming its config key.
    """
    if cfg.type == "sdk":
        from mini_claude.mcp.transports.inprocess import InProcessTransport

        peer = cfg.instance if cfg.instance is not None else (sdk_peers or {}).get(cfg.name)
        if peer is None:
            where = f" in {cfg.source}" if cfg.source else ""
            raise TransportError(f"{server_key('mcpServers', cfg.name)}{where} is an in-process (\"sdk\") server, "
                                 f"but no server object was given for it: pass it in the program's mcp_servers "
                                 f"(a config file cannot hold one)", server=cfg.name)
        return InProcessTransport(peer, server=cfg.name)
    if cfg.type == "stdio":
        from mini_claude.mcp.transports.stdio import StdioParams, StdioTransport

        assert cfg.command is not None
        params = StdioParams(command=cfg.command, args=list(cfg.args), env=server_environment(env, cfg.env),
                             cwd=cfg.cwd)
        return StdioTransport(params, server=cfg.name)
    if cfg.type in ("http", "sse"):
        assert cfg.url is not None
        register_header_values(cfg.headers, f"mcp:{cfg.name}")  # `Authorization` & co. masked wherever shown
        auth = _auth_provider(cfg, env, authorizer)
        helper = _headers_helper(cfg, env)
        if cfg.type == "http":
            from mini_claude.mcp.transports.auto import AutoHttpTransport

            return AutoHttpTransport(cfg.url, headers=dict(cfg.headers), server=cfg.name, auth=auth,
                                     headers_helper=helper)
        from mini_claude.mcp.transports.sse import SseTransport

        return SseTransport(cfg.url, headers=dict(cfg.headers), server=cfg.name, auth=auth, headers_helper=helper)
    raise TransportError(f"unknown server type {cfg.type!r} (use stdio, http, sse or sdk)", server=cfg.name)


def _auth_provider(cfg: ServerConfig, env: Mapping[str, str], authorizer: Authorizer | None) -> HttpAuth | None:
    """The OAuth provider for an HTTP server (`mini_claude.mcp.auth.provider_for`)."""
    from mini_claude.mcp.auth import provider_for

    provider: HttpAuth = provider_for(cfg, env, authorizer=authorizer)
    return provider


def _headers_helper(cfg: ServerConfig, env: Mapping[str, str]) -> HeadersHelper | None:
    """The server's `headersHelper` command, run with the server environment (never the agent's credentials)."""
    if not cfg.headers_helper:
        return None
    assert cfg.url is not None
    return HeadersHelper(cfg.headers_helper, server=cfg.name, url=cfg.url, env=server_environment(env, {}))
