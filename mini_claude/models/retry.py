"""Retrying model requests.

`run_with_retry` runs one attempt at a time. A retryable failure (429, 408, 409, 5xx, Anthropic's 529 and its
mid-stream `overloaded_error`, a broken connection) waits Claude Code's backoff — 0.5 s doubling to at most 32 s,
plus up to a quarter more at random, for up to 10 retries (11 attempts, about 3 minutes in all; measured against
Claude Code 2.1.197 on the mock model) — or longer when the server's `retry-after` / `retry-after-ms` asks for it
(up to `MAX_RETRY_AFTER_S`; a longer wait ends the retries with a message saying so); `x-should-retry` is obeyed.
The SDK clients are built with `max_retries=0`, so this is the only retry layer. A streaming attempt that already
showed text to the user is never retried (the caller's `may_retry` says so): the user would see the answer twice.

Before each wait, the caller's `on_retry` (if any) hears a `RetryNotice`: the cause, classified by
retry_cause.py (connection refused, DNS, TLS, proxy, timeout, 429 with its retry-after, 529, 5xx), which retry comes
and of how many, and the delay. When the retries run out, the error says what to change (`Cause.hint`); neither
ever shows a credential (base URLs are shown redacted, `logredact.redact_text`).

A 401 or 403 is not retried, except that a 401 lets `Credentials.refresh` get new ones once (an apiKeyHelper run
again); the error then names the variable or helper to fix (`Credentials.refusal`), never a key. Waits go through
`RetryPolicy.sleep`, so tests replace the clock.

What an SDK or transport exception means (a `ModelError`, retryable or not) is sdk_errors.py's.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from mini_claude.errors import ModelError
from mini_claude.logredact import redact_text
from mini_claude.models.base import RetryListener, RetryNotice
from mini_claude.models.retry_cause import Endpoint, classify

__all__ = [
    "MAX_RETRY_AFTER_S",
    "NON_RETRYABLE_STATUSES",
    "RETRY_BASE_ENV",
    "Credentials",
    "Endpoint",
    "RetryPolicy",
    "complete_with_retry",
    "is_retryable_status",
    "one_line",
    "response_headers",
    "retry_after_s",
    "run_with_retry",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

RETRY_BASE_ENV = "MINI_CLAUDE_RETRY_BASE_S"
NON_RETRYABLE_STATUSES = frozenset({400, 401, 403, 404, 422})
RETRYABLE_CLIENT_STATUSES = frozenset({408, 409, 429})
MAX_MESSAGE_CHARS = 300
AUTH_STATUSES = frozenset({401, 403})
MAX_RETRY_AFTER_S = 60.0  # a server asking for a longer wait is told no: the run ends with its message

class Credentials(Protocol):
    """What the retry layer asks of a backend's credentials when the API refuses them."""

    async def refresh(self) -> bool:
        """After a 401: True when new credentials may help (the next attempt fetches them)."""
        ...

    def refusal(self, status: int, refreshed: bool) -> str:
        """Words to add to a 401/403 message: which variable or helper to fix (never a value)."""
        ...

    def secrets(self) -> list[str]:
        """The values to remove from any error text."""
        ...


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry: after failed attempt n (1-based) wait `base * 2**(n-1)` capped at
    `max_delay_s`, plus up to `jitter` of that at random (Claude Code's schedule); `sleep` does the waiting."""

    max_attempts: int = 11
    base_delay_s: float = 0.5
    max_delay_s: float = 32.0
    jitter: float = 0.25
    sleep: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep, compare=False)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> RetryPolicy:
        """The default policy, with `MINI_CLAUDE_RETRY_BASE_S` overriding the base delay when it parses."""
        source = os.environ if env is None else env
        raw = (source.get(RETRY_BASE_ENV) or "").strip()
        if raw:
            try:
                base = float(raw)
            except ValueError:
                log.warning("ignoring %s=%r: not a number of seconds", RETRY_BASE_ENV, raw)
            else:
                if base >= 0:
                    return cls(base_delay_s=base)
                log.warning("ignoring %s=%r: negative", RETRY_BASE_ENV, raw)
        return cls()

    def delay_s(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt `attempt`: the backoff, or the server's retry-after when that is
        longer (as Claude Code waits)."""
        backoff = min(self.max_delay_s, self.base_delay_s * (2 ** max(0, attempt - 1)))
        if self.jitter > 0:
            backoff += random.uniform(0.0, self.jitter * backoff)
        return max(backoff, retry_after) if retry_after is not None else backoff


def is_retryable_status(status: int) -> bool:
    """429, 408, 409 and every 5xx (including Anthropic's 529 overloaded) are worth another try."""
    if status in NON_RETRYABLE_STATUSES:
        return False
    return status in RETRYABLE_CLIENT_STATUSES or status >= 500


def retry_after_s(headers: Mapping[str, str] | None) -> float | None:
    """The server's requested wait from `retry-after-ms` or `retry-after` (seconds or an HTTP date), if any."""
    if not headers:
        return None
    try:
        raw_ms = headers.get("retry-after-ms")
        if raw_ms is not None:
            return max(0.0, float(raw_ms) / 1000.0)
    except (TypeError, ValueError):
        pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except (TypeError, ValueError):
        pass
    try:
        import email.utils  # an HTTP date is rare in Retry-After: not imported on every start

        when = email.utils.parsedate_to_datetime(str(raw))
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def one_line(text: object, limit: int = MAX_MESSAGE_CHARS) -> str:
    """Collapse whitespace so a message is one readable line, and cut it if it is long."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


async def run_with_retry(
    attempt: Callable[[], Awaitable[T]],
    *,
    policy: RetryPolicy,
    map_error: Callable[[BaseException], ModelError | None],
    may_retry: Callable[[], bool] = lambda: True,
    credentials: Credentials | None = None,
    endpoint: Endpoint | None = None,
    on_retry: RetryListener | None = None,
) -> T:
    """Await `attempt()` until it succeeds, retrying retryable failures while `may_retry()` is true.

    `map_error` turns a foreign exception into a `ModelError` (None: not ours, re-raise it unchanged). A 401 asks
    `credentials` to refresh once (that retry is not counted and not delayed); a 401/403 that stands names what
    to fix. `on_retry` hears each retry before its wait; `endpoint` (where the requests go) words the causes.
    """
    where = endpoint or Endpoint("")
    attempts = max(1, policy.max_attempts)
    number = 0
    refreshed = False
    while True:
        number += 1
        try:
            return await attempt()
        except ModelError as err:
            exc: BaseException = err
            mapped: ModelError = err
        except Exception as err:
            found = map_error(err)
            if found is None:
                raise
            exc, mapped = err, found
        if credentials is not None and mapped.status in AUTH_STATUSES:
            if mapped.status == 401 and not refreshed and may_retry() and await credentials.refresh():
                refreshed = True
                number -= 1
                log.info("model request refused (401); fetching new credentials and trying again")
                continue
            raise _refused(mapped, credentials, refreshed) from None
        if not mapped.retryable or not may_retry():
            raise _redacted(mapped) from (None if mapped is exc else exc)
        cause = classify(exc, mapped, where)
        if number >= attempts:
            gave_up = ModelError(redact_text(f"{mapped} (gave up after {attempts} attempts); {cause.hint}"),
                                 status=mapped.status, retryable=True)
            raise gave_up from exc
        wanted = retry_after_s(response_headers(exc))
        if wanted is not None and wanted > MAX_RETRY_AFTER_S:
            raise ModelError(f"{mapped} (the server asked to wait {wanted:.0f}s before trying again; "
                             "try again later)", status=mapped.status, retryable=True) from exc
        delay = policy.delay_s(number, wanted)
        log.info("model request failed (%s: %s); retry %d/%d in %.2fs", cause.kind, mapped, number, attempts - 1,
                 delay)
        if on_retry is not None:
            on_retry(RetryNotice(cause.text, cause.kind, number, attempts - 1, delay, mapped.status, wanted))
        await policy.sleep(delay)


def _redacted(error: ModelError) -> ModelError:
    """`error` with any credential in a URL it names masked (a base URL may carry `user:password@`)."""
    text = redact_text(str(error))
    return error if text == str(error) else ModelError(text, status=error.status, retryable=error.retryable)


def _refused(error: ModelError, credentials: Credentials, refreshed: bool) -> ModelError:
    """A 401/403 as the user reads it: the API's words (any secret in them masked) and what to fix."""
    from mini_claude.models.credentials import scrub

    status = error.status or 401
    text = scrub(str(error), credentials.secrets()) + credentials.refusal(status, refreshed)
    return ModelError(text, status=status)


async def complete_with_retry(
    complete_once: Callable[[], Awaitable[T]],
    stream_once: Callable[[Callable[[str], None]], Awaitable[T]],
    *,
    stream: bool,
    on_text: Callable[[str], None] | None,
    policy: RetryPolicy,
    map_error: Callable[[BaseException], ModelError | None],
    credentials: Credentials | None = None,
    endpoint: Endpoint | None = None,
    on_retry: RetryListener | None = None,
) -> T:
    """One model turn, JSON or streamed, through `run_with_retry` — the skeleton every backend shares.

    A streamed attempt is retried only while it has shown no text: once `on_text` has seen any, a retry would
    repeat it on the screen, so the failure is raised instead.
    """
    if not stream:
        return await run_with_retry(complete_once, policy=policy, map_error=map_error, credentials=credentials,
                                    endpoint=endpoint, on_retry=on_retry)
    emitted = False

    def emit(text: str) -> None:
        nonlocal emitted
        emitted = True
        if on_text is not None:
            on_text(text)

    return await run_with_retry(lambda: stream_once(emit), policy=policy, map_error=map_error,
                                may_retry=lambda: not emitted, credentials=credentials, endpoint=endpoint,
                                on_retry=on_retry)


def response_headers(exc: BaseException) -> Mapping[str, str] | None:
    """The HTTP response headers an SDK exception carries, if any (its `retry-after`, `x-should-retry`)."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    return headers if isinstance(headers, Mapping) else None
