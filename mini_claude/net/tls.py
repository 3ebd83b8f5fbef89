"""One TLS context per process for every HTTP client: the model's, the MCP transports' and OAuth's.

Building a context loads the CA bundle (~30 ms of CPU); an `httpx.AsyncClient()` without one builds a fresh context
each time, which was most of an HTTP server's connect time. The context honours SSL_CERT_FILE / SSL_CERT_DIR as
httpx's default does. `warm_tls_context()` starts the build in a thread once a session's servers are starting, when
something it talks to is https (`tls_context_for`: plain http needs none): loading certificates holds no GIL, but
importing httpx does, and a busy machine has no spare core, so it is never started before the first spawn.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import ssl
import sys
import threading
from concurrent.futures import Future

__all__ = ["HTTPX_FIRST_USE_MODULES", "plain_http", "skip_httpx_cli", "tls_context", "tls_context_for", "warm_tls_context"]

_lock = threading.Lock()
_context: Future[ssl.SSLContext] | None = None
WARM_WAIT_S = 30.0  # a build in flight is waited for this long, then built again here (it cannot hang a request)
EXIT_WAIT_S = 5.0  # at exit, how long a warm-up still loading certificates is waited for
# What httpx imports only when its first client is built (its transport: httpcore, h11, certifi) and at its first
# request (anyio's asyncio backend, sniffio): ~55 ms, which a session imports ahead, off its first request's path
# (session/preload.py). Names of other projects' modules: one that moves is only a missed warm-up.
HTTPX_FIRST_USE_MODULES = ("httpcore", "h11", "certifi", "anyio._backends._asyncio", "sniffio")


def skip_httpx_cli() -> None:
    """Have `import httpx` skip its command-line client (`httpx._main`: click, rich, pygments; ~35 ms), which it
    imports whenever click happens to be installed and which this program never runs (httpx then defines a stub
    `httpx.main`). For the CLI's session paths, before anything imports httpx; a no-op once httpx is imported."""
    if "httpx" not in sys.modules:
        sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]


def warm_tls_context() -> None:
    """Start building the shared context in a thread (once per process); `tls_context()` then waits for it instead
    of building it again. A process that ends first waits (bounded) for the build at exit: a thread still inside
    OpenSSL while the interpreter finalizes can crash it."""
    future = _claim()
    if future is not None:
        threading.Thread(target=_build_into, args=(future,), name="tls-context", daemon=True).start()
        atexit.register(_settle, future)


def _settle(future: Future[ssl.SSLContext]) -> None:
    try:
        future.exception(timeout=EXIT_WAIT_S)
    except concurrent.futures.TimeoutError:
        pass


def tls_context_for(url: str) -> ssl.SSLContext:
    """The context for a client that talks to `url` alone (and follows no redirect to another origin): the shared
    one for https; for plain http (a local model or MCP server) one that trusts no certificate at all, so such a
    client loads no CA bundle (~20 ms of CPU, and `import httpx`'s worth more when warmed), and anything that would
    take it to https fails closed."""
    if plain_http(url):
        return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # verifies certificates and host names, and trusts no CA
    return tls_context()


def plain_http(url: str) -> bool:
    """Whether a client of `url` speaks plain http (no TLS): what `tls_context_for` and the warm-up decide by."""
    return url.lstrip().lower().startswith("http://")


def tls_context() -> ssl.SSLContext:
    """The shared context: built here on first use, or the one a `warm_tls_context()` build delivers."""
    future = _claim()
    if future is not None:
        _build_into(future)
        return future.result()
    assert _context is not None
    try:
        return _context.result(timeout=WARM_WAIT_S)
    except TimeoutError:
        return _build()


def _claim() -> Future[ssl.SSLContext] | None:
    """A new future for the caller to fill, or None when a build is done or under way."""
    global _context
    with _lock:
        if _context is not None:
            return None
        _context = Future()
        return _context


def _build_into(future: Future[ssl.SSLContext]) -> None:
    try:
        future.set_result(_build())
    except BaseException as exc:  # an unreadable SSL_CERT_FILE: every user of the context hears of it
        future.set_exception(exc)


def _build() -> ssl.SSLContext:
    import httpx

    return httpx.create_ssl_context(trust_env=True)
