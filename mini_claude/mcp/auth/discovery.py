"""Finding a server's authorization server: the `WWW-Authenticate` challenge, RFC 9728 protected-resource
metadata (PRM), RFC 8414 / OpenID Connect authorization-server metadata, and the 2025-03-26 fallbacks (AS metadata
at the server's origin; with no metadata at all, /authorize /token /register there).

Checks that refuse with AuthError: the PRM `resource` must be the server (same origin, a path prefix of the
server URL); the AS metadata `issuer` must be the issuer its well-known URL was built from (RFC 8414 §3.3); the
issuer, its metadata and every endpoint it names must be HTTPS unless on loopback (`urls.py`). Bodies are read with
a byte cap (`bodies.py`).

Where these may point: the challenge's `resource_metadata` and the PRM's `authorization_servers` may name any
origin — the spec lets an MCP server use an authorization server anywhere, so refusing other origins would break
real deployments. What keeps that safe: the PRM must name this very server as its `resource`, the AS metadata must
name the issuer it was asked for, tokens and dynamically registered clients are kept per issuer (one AS never sees
another's), and configured client credentials are bound to one issuer (`oauth.issuer`, else the first one seen;
see `OAuthProvider`)."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx

from mini_claude.errors import AuthError
from mini_claude.mcp.auth.bodies import read_capped
from mini_claude.mcp.auth.dpop import parse_www_authenticate
from mini_claude.mcp.auth.urls import is_secure_url, require_secure_url
from mini_claude.net import urls
from mini_claude.net.errors import describe_http_error

__all__ = [
    "METADATA_TIMEOUT_S",
    "AuthServerMetadata",
    "Challenge",
    "ProtectedResource",
    "discover_auth_server",
    "discover_resource",
    "fetch_auth_server_metadata",
    "issuers_match",
    "parse_challenge",
    "resource_matches",
]

log = logging.getLogger(__name__)

METADATA_TIMEOUT_S = 15.0


@dataclass(frozen=True)
class Challenge:
    """What a 401/403 `WWW-Authenticate` said (Bearer or DPoP scheme)."""

    scheme: str | None = None  # "bearer" | "dpop" | None
    resource_metadata: str | None = None
    scope: str | None = None
    error: str | None = None


def parse_challenge(headers: Mapping[str, str]) -> Challenge:
    value = _header(headers, "www-authenticate")
    if not value:
        return Challenge()
    found = [(s, p) for s, p in parse_www_authenticate(value) if s in ("bearer", "dpop")]
    if not found:
        return Challenge()
    # several challenges (Bearer and DPoP): take the parameters from any that has them
    merged: dict[str, str] = {}
    for _, params in found:
        for k, v in params.items():
            merged.setdefault(k, v)
    return Challenge(scheme=found[0][0], resource_metadata=merged.get("resource_metadata") or None,
                     scope=merged.get("scope") or None, error=merged.get("error") or None)


@dataclass(frozen=True)
class ProtectedResource:
    """RFC 9728 metadata of the MCP server (or, for a 2025-03-26 server without it, what we assume)."""

    resource: str  # sent as RFC 8707 `resource`, exactly as published
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None = None
    url: str | None = None  # where it was read; None: no PRM (legacy server)


@dataclass(frozen=True)
class AuthServerMetadata:
    issuer: str
    authorization_endpoint: str | None
    token_endpoint: str
    registration_endpoint: str | None = None
    scopes_supported: tuple[str, ...] | None = None
    code_challenge_methods: tuple[str, ...] | None = None
    token_endpoint_auth_methods: tuple[str, ...] | None = None
    grant_types: tuple[str, ...] | None = None
    iss_parameter_supported: bool = False
    cimd_supported: bool = False
    dpop_algs: tuple[str, ...] | None = None
    from_metadata: bool = True  # False: the 2025-03-26 default endpoints
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


def _header(headers: Mapping[str, str], name: str) -> str | None:
    for k, v in headers.items():
        if k.lower() == name:
            return v
    return None


def _path(url: str) -> str:
    return urlsplit(url).path.rstrip("/")


def resource_matches(resource: str, server_url: str) -> bool:
    """The PRM resource names this server: same scheme, host and port, and its path is the server URL's path or
    a segment-wise prefix of it."""
    try:
        r, s = urlsplit(resource), urlsplit(server_url)
        if r.scheme.lower() != s.scheme.lower() or r.hostname != s.hostname or r.port != s.port:
            return False
    except ValueError:
        return False
    rp, sp = r.path.rstrip("/"), s.path.rstrip("/")
    return sp == rp or sp.startswith(rp + "/")


async def _get_json(http: httpx.AsyncClient, url: str, server: str | None, *,
                    secure: bool = False) -> dict[str, Any] | None:
    """GET a metadata document: its object on 200, None when it is not there (4xx/5xx, not JSON). `secure`: the
    URL, and any URL a redirect leads to, must be HTTPS (or loopback)."""
    if secure:
        require_secure_url(url, "authorization server metadata URL", server)
    try:
        async with http.stream("GET", url, headers={"Accept": "application/json"}, timeout=METADATA_TIMEOUT_S,
                               follow_redirects=True) as response:
            if secure and not is_secure_url(str(response.url)):
                raise AuthError(f"authorization server metadata at {url} redirects to a non-HTTPS URL; refusing it",
                                server=server)
            if response.status_code != 200:
                log.debug("%s: HTTP %s", url, response.status_code)
                return None
            body = await read_capped(response, f"metadata at {url}", server)
    except httpx.HTTPError as exc:
        raise AuthError(f"cannot fetch {url}: {describe_http_error(exc)}", server=server) from None
    try:
        data = json.loads(body)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _strings(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, str))
    return None


async def discover_resource(http: httpx.AsyncClient, server_url: str, challenge: Challenge,
                            server: str | None) -> ProtectedResource:
    """The server's PRM: from the challenge's `resource_metadata`, else the well-known path-insertion URL, else
    the root well-known URL. None found: a 2025-03-26 server whose AS is its own origin."""
    origin, path = urls.origin(server_url), _path(server_url)
    candidates = []
    if challenge.resource_metadata:
        candidates.append(challenge.resource_metadata)
    else:
        if path:
            candidates.append(f"{origin}/.well-known/oauth-protected-resource{path}")
        candidates.append(f"{origin}/.well-known/oauth-protected-resource")
    for url in candidates:
        data = await _get_json(http, url, server)
        if data is None:
            continue
        resource = data.get("resource")
        if not isinstance(resource, str) or not resource:
            raise AuthError(f"protected resource metadata at {url} has no `resource`", server=server)
        if not resource_matches(resource, server_url):
            raise AuthError(f"protected resource metadata names resource {resource!r}, not this server "
                            f"({server_url}); refusing to authorize (check the server's `url`)", server=server)
        servers = _strings(data.get("authorization_servers")) or ()
        if not servers:
            raise AuthError(f"protected resource metadata at {url} lists no authorization_servers", server=server)
        return ProtectedResource(resource=resource, authorization_servers=servers,
                                 scopes_supported=_strings(data.get("scopes_supported")), url=url)
    return ProtectedResource(resource=server_url, authorization_servers=(origin,), url=None)


def _texts(data: dict[str, Any]) -> Any:
    def text(name: str) -> str | None:
        value = data.get(name)
        return value if isinstance(value, str) and value else None

    return text


def _metadata_urls(issuer: str) -> list[str]:
    """RFC 8414 §3.1 path insertion, then OIDC with path insertion, then OIDC path appending (MCP 2025-11-25)."""
    origin, path = urls.origin(issuer), _path(issuer)
    if path:
        return [f"{origin}/.well-known/oauth-authorization-server{path}",
                f"{origin}/.well-known/openid-configuration{path}",
                f"{origin}{path}/.well-known/openid-configuration"]
    return [f"{origin}/.well-known/oauth-authorization-server", f"{origin}/.well-known/openid-configuration"]


def issuers_match(found: str, expected: str) -> bool:
    # RFC 8414 wants them identical; a lone trailing slash on one side is the usual harmless difference
    return found == expected or found.rstrip("/") == expected.rstrip("/")


def _parse_metadata(data: dict[str, Any], url: str, expected: str | None, server: str | None) -> AuthServerMetadata:
    found = data.get("issuer")
    if not isinstance(found, str) or not found:
        raise AuthError(f"authorization server metadata at {url} names no issuer; refusing to use it", server=server)
    if expected is not None and not issuers_match(found, expected):
        raise AuthError(f"authorization server metadata at {url} names issuer {found!r}, not {expected!r}; "
                        f"refusing to use it", server=server)
    require_secure_url(found, "authorization server issuer", server)
    token_endpoint = data.get("token_endpoint")
    if not isinstance(token_endpoint, str) or not token_endpoint:
        raise AuthError(f"authorization server metadata at {url} has no token_endpoint", server=server)
    text = _texts(data)
    for name in ("authorization_endpoint", "token_endpoint", "registration_endpoint"):
        endpoint = text(name)
        if endpoint is not None:
            require_secure_url(endpoint, f"authorization server's {name}", server)
    return AuthServerMetadata(
        issuer=found,
        authorization_endpoint=text("authorization_endpoint"),
        token_endpoint=token_endpoint,
        registration_endpoint=text("registration_endpoint"),
        scopes_supported=_strings(data.get("scopes_supported")),
        code_challenge_methods=_strings(data.get("code_challenge_methods_supported")),
        token_endpoint_auth_methods=_strings(data.get("token_endpoint_auth_methods_supported")),
        grant_types=_strings(data.get("grant_types_supported")),
        iss_parameter_supported=data.get("authorization_response_iss_parameter_supported") is True,
        cimd_supported=data.get("client_id_metadata_document_supported") is True,
        dpop_algs=_strings(data.get("dpop_signing_alg_values_supported")),
        raw=data,
    )


async def discover_auth_server(http: httpx.AsyncClient, issuer: str, server: str | None, *,
                               legacy: bool = False) -> AuthServerMetadata:
    """The AS metadata for `issuer`. `legacy` (no PRM): a server without any metadata gets the 2025-03-26 default
    endpoints at its origin."""
    require_secure_url(issuer, "authorization server", server)
    for url in _metadata_urls(issuer):
        data = await _get_json(http, url, server, secure=True)
        if data is not None:
            return _parse_metadata(data, url, issuer, server)
    if legacy:
        origin = urls.origin(issuer)
        return AuthServerMetadata(issuer=origin, authorization_endpoint=f"{origin}/authorize",
                                  token_endpoint=f"{origin}/token", registration_endpoint=f"{origin}/register",
                                  from_metadata=False)
    raise AuthError(f"no authorization server metadata found for {issuer} "
                    f"(tried {', '.join(_metadata_urls(issuer))})", server=server)


async def fetch_auth_server_metadata(http: httpx.AsyncClient, url: str, server: str | None, *,
                                     issuer: str | None = None) -> AuthServerMetadata:
    """The AS metadata at a configured URL (`oauth.authServerMetadataUrl`: no discovery). With `issuer`, the
    document must name that issuer."""
    data = await _get_json(http, url, server, secure=True)
    if data is None:
        raise AuthError(f"no authorization server metadata at {url} (check oauth.authServerMetadataUrl)",
                        server=server)
    return _parse_metadata(data, url, issuer, server)
