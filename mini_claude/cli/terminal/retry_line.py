"""How a model request that failed and waits to be sent again reads on the terminal.

While the REPL waits, its spinner line becomes `API error: connection refused (127.0.0.1:9) · retrying in 4s ·
attempt 3/10 · esc or ctrl+c to interrupt`, the seconds counting down (`RetryCountdown`, redrawn by the spinner), then
`retrying now` until the attempt ends. In `-p` each retry is one line on stderr (`retry_line`): stdout keeps only
the answer. The cause comes from the model layer already classified and free of credentials
(models/retry_cause.py); it is still passed through `render.clean` where it is printed.
"""

from __future__ import annotations

import math
import time

from mini_claude.models.base import RetryNotice

__all__ = ["RetryCountdown", "retry_line", "seconds"]


def seconds(delay_s: float) -> str:
    """A wait as people read it: `0.4s` under ten seconds with a fraction, else whole seconds (`12s`)."""
    if delay_s < 10 and delay_s != int(delay_s):
        return f"{max(delay_s, 0.1):.1f}s"
    return f"{math.ceil(delay_s)}s"


def _head(notice: RetryNotice) -> str:
    cause = notice.cause
    if notice.retry_after_s is not None:  # the server named its wait: said beside the status
        wait = f"retry-after {seconds(notice.retry_after_s)}"
        cause = f"{cause[:-1]}, {wait})" if cause.endswith(")") else f"{cause} ({wait})"
    return f"API error: {cause}"


def _count(notice: RetryNotice) -> str:
    return f"attempt {notice.attempt}/{notice.max_retries}"


def retry_line(notice: RetryNotice) -> str:
    """The one line `-p` writes on stderr for a retry: cause, delay, attempt."""
    return f"{_head(notice)} · retrying in {seconds(notice.delay_s)} · {_count(notice)}"


class RetryCountdown:
    """The spinner's text while a retry waits: the cause, the whole seconds left (counting down from the monotonic
    clock), the attempt; `retrying now` once the wait is over."""

    def __init__(self, notice: RetryNotice, now: float | None = None) -> None:
        self.notice = notice
        self.until = (time.monotonic() if now is None else now) + notice.delay_s

    def remaining_s(self, now: float | None = None) -> float:
        return max(0.0, self.until - (time.monotonic() if now is None else now))

    def label(self, now: float | None = None) -> str:
        left = self.remaining_s(now)
        when = f"retrying in {math.ceil(left)}s" if left > 0 else "retrying now"
        return f"{_head(self.notice)} · {when} · {_count(self.notice)}"
