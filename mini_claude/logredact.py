"""Secrets out of log records: every URL in a record loses its userinfo and the values of its query and fragment,
and `Bearer`/`Basic` credentials are masked, before any handler formats it.

A server URL may carry a token (`?token=…`, `user:pass@`, an expanded `${VAR}`), and libraries log URLs as they
are: httpx logs every request line at INFO, with the full query. `RedactingFilter` sits on the root logger's
handlers (`add_redaction`), so records of every logger that propagate there are covered, httpx's and httpcore's
included. Query *names* stay (`?token=***&page=***`), which keeps a debug log useful. The filter can also pass the
text through a `scrub` function (the CLI passes `render.clean`, so log lines with server text cannot drive the
terminal either).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable

__all__ = ["MASK", "RedactingFilter", "add_redaction", "redact_text", "redact_url"]

MASK = "***"

# scheme://… up to whitespace, a quote or an angle bracket (how URLs end inside log messages and reprs)
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]{0,31}://[^\s\"'<>`]+")
_AUTH_SCHEME = re.compile(r"\b(Bearer|Basic)\s+[A-Za-z0-9\-._~+/]+=*", re.IGNORECASE)


def redact_url(url: str) -> str:
    """`url` with `***` for its userinfo and for each query/fragment value; scheme, host, port, path and the
    parameter names stay. Works on text that is not a valid URL too (nothing is parsed strictly)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    end = len(rest)
    for mark in "/?#":
        found = rest.find(mark)
        if found != -1:
            end = min(end, found)
    authority, tail = rest[:end], rest[end:]
    if "@" in authority:
        authority = f"{MASK}@{authority.rpartition('@')[2]}"
    before_fragment, hash_sign, fragment = tail.partition("#")
    path, question, query = before_fragment.partition("?")
    return (f"{scheme}://{authority}{path}{question}{_mask_values(query)}"
            f"{hash_sign}{_mask_values(fragment)}")


def _mask_values(params: str) -> str:
    if not params:
        return params
    masked = []
    for pair in params.split("&"):
        name, eq, _value = pair.partition("=")
        # `?SECRET` (a bare value) is masked whole; an empty pair (`a=1&&b=2`) stays empty
        masked.append(f"{name}={MASK}" if eq else (MASK if name else ""))
    return "&".join(masked)


def redact_text(text: str) -> str:
    """`text` with every URL in it redacted (`redact_url`) and Bearer/Basic credentials masked."""
    if "://" in text:
        text = _URL.sub(lambda match: redact_url(match.group()), text)
    return _AUTH_SCHEME.sub(lambda match: f"{match.group(1)} {MASK}", text)


class RedactingFilter(logging.Filter):
    """Rewrites each record it sees: the formatted message (and traceback text) redacted, then `scrub`bed.

    The record keeps no arguments afterwards (`msg` is the final text), so no later handler can format the
    original values again."""

    def __init__(self, scrub: Callable[[str], str] | None = None) -> None:
        super().__init__()
        self.scrub = scrub

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: logging would report it; show the raw parts, redacted
            message = f"{record.msg!r} {record.args!r}"
        record.msg, record.args = self._clean(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self._clean(record.exc_text)
        if record.stack_info:
            record.stack_info = self._clean(record.stack_info)
        return True

    def _clean(self, text: str) -> str:
        text = redact_text(text)
        return self.scrub(text) if self.scrub is not None else text


def add_redaction(scrub: Callable[[str], str] | None = None, logger: logging.Logger | None = None) -> None:
    """Put a `RedactingFilter` on every handler of `logger` (default: the root logger) that has none yet."""
    target = logger if logger is not None else logging.getLogger()
    for handler in target.handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter(scrub))
