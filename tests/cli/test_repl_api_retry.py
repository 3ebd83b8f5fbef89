"""The REPL in a real terminal (tmux) with the model API unreachable: while a failed request waits to be sent again,
the spinner line names the cause, counts the seconds down and the attempts up; Ctrl+C (and Esc) during the wait
return to the prompt at once. And the line's words (cli/terminal/retry_line.py)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from cli_helpers import Terminal, start_terminal

from mini_claude.cli.terminal.retry_line import RetryCountdown, retry_line, seconds
from mini_claude.models.base import RetryNotice

pytestmark = pytest.mark.timeout(120)

CLOSED = "http://127.0.0.1:9"
LINE = re.compile(r"API error: connection refused \(127\.0\.0\.1:9\) · retrying in (\d+)s · attempt (\d+)/10")
PROMPT_BACK_S = 3.0  # an interruption returns to the prompt within this (the fourth wait is 3.2 s or more)


def _waiting(screen: str) -> tuple[int, int] | None:
    """(seconds left, attempt) of the retry line on the screen, if one is shown."""
    found = LINE.findall(screen)
    return (int(found[-1][0]), int(found[-1][1])) if found else None


def _interrupt_during_a_wait(term: Terminal, key: str, times: int) -> None:
    term.wait_for(lambda s: (w := _waiting(s)) is not None and w[1] >= 4, "the fourth attempt's wait", within_s=30)
    began = time.monotonic()
    term.keys(key)
    term.wait_for(lambda s: s.count("interrupted") == times and _waiting(s) is None, "the prompt back")
    assert time.monotonic() - began < PROMPT_BACK_S


def test_the_spinner_names_the_cause_counts_down_and_ctrl_c_or_esc_end_the_wait(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    # waits of 0.4 s doubling: attempts 1-3 pass in under 3 s, the fourth waits 3.2 s or more
    term = start_terminal(tmp_path, work, "retry", [], {"ANTHROPIC_BASE_URL": CLOSED, "ANTHROPIC_API_KEY": "x",
                                                        "MINI_CLAUDE_RETRY_BASE_S": "0.4"})
    try:
        term.wait_for(lambda s: "/help for commands" in s, "the prompt")
        term.enter("hello")
        seen: list[tuple[int, int]] = []

        def counting(screen: str) -> bool:
            waiting = _waiting(screen)
            if waiting is not None and waiting not in seen:
                seen.append(waiting)
            attempts = {attempt for _, attempt in seen}
            counted_down = any(a == b and left_a > left_b for left_a, a in seen for left_b, b in seen)
            return len(attempts) >= 2 and counted_down

        term.wait_for(counting, "the attempt counting up and the seconds down", within_s=30)
        assert "ctrl+c to interrupt" in term.screen()
        _interrupt_during_a_wait(term, "C-c", 1)
        term.enter("again")
        _interrupt_during_a_wait(term, "Escape", 2)
        term.keys("C-d")
        term.wait_for(lambda s: "[exit 0]" in s, "the REPL to exit")
    finally:
        term.close()


# ---- the line itself ------------------------------------------------------------------------------------------


def _notice(**changes: object) -> RetryNotice:
    fields: dict[str, object] = {"cause": "connection refused (127.0.0.1:9)", "kind": "connection_refused",
                                 "attempt": 3, "max_retries": 10, "delay_s": 4.2}
    fields.update(changes)
    return RetryNotice(**fields)  # type: ignore[arg-type]


def test_the_countdown_rounds_up_and_ends_retrying_now() -> None:
    countdown = RetryCountdown(_notice(), now=100.0)
    assert countdown.label(now=100.0) == ("API error: connection refused (127.0.0.1:9) · retrying in 5s · "
                                          "attempt 3/10")
    assert "retrying in 3s" in countdown.label(now=101.5)
    assert "retrying in 1s" in countdown.label(now=104.1)
    assert countdown.label(now=104.2).endswith("· retrying now · attempt 3/10")


def test_the_stderr_line_says_the_delay_and_the_servers_retry_after() -> None:
    assert retry_line(_notice(delay_s=0.25)) == ("API error: connection refused (127.0.0.1:9) · retrying in 0.2s · "
                                                 "attempt 3/10")
    limited = _notice(cause="rate limited (429)", kind="rate_limited", status=429, retry_after_s=6.0, delay_s=6.0,
                      attempt=1)
    assert retry_line(limited) == "API error: rate limited (429, retry-after 6s) · retrying in 6s · attempt 1/10"
    assert seconds(12.3) == "13s" and seconds(2.0) == "2s" and seconds(0.01) == "0.1s"
