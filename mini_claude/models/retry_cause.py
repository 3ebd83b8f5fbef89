"""Why a model request failed, in words a person can act on: the cause shown while a retry waits, and what to
change when the retries run out.

`classify` looks at the exception the attempt raised (its whole cause chain) and the `ModelError` it was mapped
to, by type and HTTP status only — never by message text — and returns a `Cause`:

    kind                 text (while waiting)                          hint (in the final error)
    connection_refused   connection refused (127.0.0.1:9)              nothing listens there: start it or fix the URL
    dns                  DNS lookup failed (api.example.com)           check the host name and the network's DNS
    tls                  TLS certificate not trusted (host)            trust its CA (SSL_CERT_FILE) or fix the URL
                         TLS handshake failed (host)                   not a TLS server? http:// in the URL
    proxy                proxy 127.0.0.1:3128 refused the connection   check HTTPS_PROXY / HTTP_PROXY / NO_PROXY
    timeout              timed out (host)                              check the network and the URL
    connection_reset     connection reset (host)                       the URL may not be the model API
    connection           connection failed (host)                      check the network and the URL
    rate_limited         rate limited (429)                            wait, or send fewer requests
    overloaded           overloaded (529)                              try later, or another model (/model)
    server_error         server error (503)                            try later
    http                 HTTP 408                                      try later

A proxy is named when the environment's proxy settings (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY: what httpx
reads) send the request through one and the connection to it failed. Only a host and port are ever shown: a URL's
user, password, path and query never are, so a credential written into a base URL or a proxy URL stays out.
"""

from __future__ import annotations

import socket
import ssl
import sys
import urllib.request
from dataclasses import dataclass
from urllib.parse import urlsplit

from mini_claude.errors import ModelError

__all__ = ["KINDS", "Cause", "Endpoint", "classify", "host_port"]

KINDS = ("connection_refused", "dns", "tls", "proxy", "timeout", "connection_reset", "connection", "rate_limited",
         "overloaded", "server_error", "http")


@dataclass(frozen=True)
class Endpoint:
    """Where a backend sends its requests: the base URL, and the variable that sets it (named in hints)."""

    url: str
    setting: str = ""

    @property
    def where(self) -> str:
        return self.setting or "the model API's base URL"


@dataclass(frozen=True)
class Cause:
    """One failed attempt, classified: `kind` (one of KINDS), `text` for the waiting line, `hint` for the final
    error (what the user can change)."""

    kind: str
    text: str
    hint: str


def host_port(url: str) -> str:
    """`host:port` of a URL (the port only when the URL names one); never its user, password, path or query."""
    try:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return ""
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    return f"{host}:{port}" if port is not None else host


def classify(exc: BaseException, mapped: ModelError, endpoint: Endpoint) -> Cause:
    """The cause of one failed attempt: `exc` as raised (its chain holds the network reason), `mapped` as the retry
    layer mapped it (its status)."""
    if mapped.status is not None:
        return _status_cause(mapped.status)
    return _network_cause(exc, endpoint)


def _status_cause(status: int) -> Cause:
    if status == 429:
        return Cause("rate_limited", "rate limited (429)",
                     "the API is limiting requests: wait a while before trying again, or send fewer")
    if status == 529:
        return Cause("overloaded", "overloaded (529)",
                     "the API is overloaded: try again in a few minutes, or choose another model with /model")
    if status >= 500:
        return Cause("server_error", f"server error ({status})", "the API failed on its side: try again later")
    return Cause("http", f"HTTP {status}", "try again later")


def _network_cause(exc: BaseException, endpoint: Endpoint) -> Cause:
    target = host_port(endpoint.url) or "the base URL"  # never the URL itself: it may carry a user and password
    at = f" ({target})" if target else ""
    found = _network_kind(exc)
    proxy = _proxy_for(endpoint.url)
    if found == "proxy" or (proxy and found in ("connection_refused", "dns")):  # the proxy could not be reached
        shown = host_port(proxy) if proxy else ""
        via = f"proxy {shown}" if shown else "the proxy"
        what = {"connection_refused": "refused the connection", "dns": "could not be found (DNS)"}.get(
            found, "failed the request")
        return Cause("proxy", f"{via} {what}",
                     "check the proxy settings (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY; NO_PROXY to bypass one)")
    where = endpoint.where
    if found == "connection_refused":
        return Cause(found, f"connection refused{at}",
                     f"nothing is listening at {target}: start the server, or fix {where}")
    if found == "dns":
        host = target.rsplit(":", 1)[0] if target and not target.endswith("]") else target
        return Cause(found, f"DNS lookup failed ({host})",
                     f"check the host name in {where} and that this machine can resolve names (network, DNS)")
    if found == "tls_certificate":
        return Cause("tls", f"TLS certificate not trusted{at}",
                     "the server's certificate is not trusted here: add its CA with SSL_CERT_FILE, or fix "
                     f"{where}")
    if found == "tls":
        return Cause("tls", f"TLS handshake failed{at}",
                     f"is {target} a TLS server? If it speaks plain HTTP, use http:// in {where}")
    if found == "timeout":
        return Cause(found, f"timed out{at}",
                     f"no answer from {target} in time: check the network, and that {where} is right")
    if found == "connection_reset":
        return Cause(found, f"connection reset{at}",
                     f"{target} closed the connection: check that {where} points at the model API")
    return Cause("connection", f"connection failed{at}", f"check the network, and that {where} is right")


def _network_kind(exc: BaseException) -> str:
    """The most telling reason in the chain: a proxy error, TLS, DNS, refused, reset, a timeout — or "connection"."""
    http = [m for m in (sys.modules.get("httpx2"), sys.modules.get("httpx")) if m is not None]
    proxy_errors = tuple(m.ProxyError for m in http)
    timeouts = tuple(m.TimeoutException for m in http)
    chain = _chain(exc)
    for current in chain:
        if proxy_errors and isinstance(current, proxy_errors):
            return "proxy"
    for current in chain:  # the innermost cause names it best: the OS error under the library's wrappers
        if isinstance(current, ssl.SSLCertVerificationError):
            return "tls_certificate"
        if isinstance(current, ssl.SSLError):
            return "tls"
        if isinstance(current, socket.gaierror):
            return "dns"
        if isinstance(current, ConnectionRefusedError):
            return "connection_refused"
        if isinstance(current, ConnectionResetError):
            return "connection_reset"
    if any(isinstance(c, TimeoutError) or (timeouts and isinstance(c, timeouts)) for c in chain):
        return "timeout"
    return "connection"


def _chain(exc: BaseException) -> list[BaseException]:
    seen: set[int] = set()
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append(current)
        current = current.__cause__ or current.__context__
    return list(reversed(chain))


def _proxy_for(url: str) -> str:
    """The proxy URL the environment sends a request to `url` through (as httpx reads it), or ""."""
    try:
        parts = urlsplit(url)
        proxies = urllib.request.getproxies_environment()
        if not proxies or (parts.hostname and urllib.request.proxy_bypass_environment(parts.hostname, proxies)):
            return ""
        return proxies.get(parts.scheme) or proxies.get("all") or ""
    except (ValueError, OSError):
        return ""
