"""URL helpers the MCP stack shares (config, transports, auth): an origin for "same origin" checks and nonce
scopes, the display form of a URL for messages, and what counts as a loopback host."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit, urlunsplit

__all__ = ["display_url", "is_loopback_host", "origin"]

_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin(url: str) -> str:
    """`scheme://host[:port]`, lower-cased, without userinfo and without the scheme's default port: two URLs are
    same-origin exactly when their `origin()`s are equal. A port that does not parse is left out."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is None or port == _DEFAULT_PORTS.get(scheme):
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


def display_url(url: str) -> str:
    """The form of a server URL fit for error messages, logs and the model: scheme, host, port and path, without
    userinfo, query or fragment (which may carry tokens, e.g. from an expanded `${VAR}`); "?…" marks a dropped
    query. Something that does not parse as a URL is shown only as "<invalid URL>"."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "<invalid URL>"
    if not parts.scheme or not parts.netloc:
        return "<invalid URL>"
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = host if port is None else f"{host}:{port}"
    shown = urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    return shown + ("?…" if parts.query else "")


def is_loopback_host(host: str | None) -> bool:
    """`localhost`, 127.0.0.0/8 or ::1."""
    if not host:
        return False
    host = host.lower().rstrip(".")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
