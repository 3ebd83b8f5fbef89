"""Which URLs the OAuth client may talk to: authorization-server endpoints (metadata, authorization, token,
registration, an IdP's token endpoint) must be HTTPS (MCP authorization spec, OAuth 2.1 §1.5), except on the
loopback interface (127.0.0.0/8, ::1, `localhost`), where local servers and tests run without TLS."""

from __future__ import annotations

from urllib.parse import urlsplit

from mini_claude.errors import AuthError
from mini_claude.net.urls import is_loopback_host

__all__ = ["is_secure_url", "require_secure_url"]


def is_secure_url(url: str) -> bool:
    """HTTPS, or plain HTTP to a loopback host."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return False
    scheme = parts.scheme.lower()
    if not host:
        return False
    return scheme == "https" or (scheme == "http" and is_loopback_host(host))


def require_secure_url(url: str, what: str, server: str | None) -> str:
    """`url`, or AuthError when it is neither HTTPS nor loopback HTTP (`what` names the endpoint)."""
    if not is_secure_url(url):
        raise AuthError(f"the {what} {url!r} is not HTTPS; refusing to use it (only loopback addresses may use "
                        f"plain HTTP)", server=server)
    return url
