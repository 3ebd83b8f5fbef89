"""One TLS context per process for every HTTP client of the MCP stack (transports and OAuth).

Building a context loads the CA bundle (~30 ms); an `httpx.AsyncClient()` without one builds a fresh context each
time, which was most of an HTTP server's connect time. The context honours SSL_CERT_FILE / SSL_CERT_DIR as httpx's
default does.
"""

from __future__ import annotations

import functools
import ssl

__all__ = ["tls_context"]


@functools.cache
def tls_context() -> ssl.SSLContext:
    import httpx

    return httpx.create_ssl_context(trust_env=True)
