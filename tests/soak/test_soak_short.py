"""The endurance soak (bench/soak.py) in short, for CI: ten real servers (eight stdio probe servers, two streamable
HTTP bench servers on loopback) driven through one `McpManager` — 2,000 checked tool calls, 30 connect/disconnect
cycles (with fresh whole managers among them), 30 crash/restart cycles (probe's `crash`, then `restart()` or
self-healing; HTTP servers killed and started again, the manager reconnecting) — and what the process holds must
come back: open fds, OS threads, asyncio tasks, child processes (and no zombie) equal at the end to the start, and
to before any manager once it is shut down; RSS grows by less than RSS_BOUND_KB. Counts that settle asynchronously
are waited for with a timeout (bench/soak.py `settle`), never slept for."""

from __future__ import annotations

from typing import Any

import pytest

from bench.soak import by_label, run_soak

pytestmark = pytest.mark.timeout(180)

COUNTS = ("fds", "threads", "tasks", "children", "zombies")
# measured growth start→end: 0.1 MB here, 1.0 MB over the full 50,000-call soak; 1 KB kept per call would be 2 MB
RSS_BOUND_KB = 6 * 1024


@pytest.fixture(scope="module")
def soak() -> dict[str, Any]:
    lines: list[str] = []
    result = run_soak(calls=2_000, cycles=30, crashes=30, servers=10, http=2, fresh_every=15, http_crash_every=10,
                      heal_every=12, points=2, log=lines.append)
    result["log"] = "\n".join(lines)
    return result


def test_every_kind_of_work_was_done(soak: dict[str, Any]) -> None:
    counts = soak["counts"]
    assert counts["calls"] >= 2_000 + 30 + 30, counts
    assert counts["errors_expected"] >= 1, counts  # isError results came back as results
    assert counts["cycles"] >= 30 and counts["fresh_managers"] >= 2, counts
    assert counts["crashes"] >= 27 and counts["healed"] >= 2 and counts["http_kills"] >= 3, counts
    samples = by_label(soak)
    assert samples["start"]["children"] == 10, soak["log"]  # 8 stdio servers + 2 HTTP servers
    assert samples["start"]["children"] - samples["pre"]["children"] == 8, soak["log"]


def test_fds_threads_tasks_and_children_come_back_to_their_start(soak: dict[str, Any]) -> None:
    samples = by_label(soak)
    start, end = samples["start"], samples["end"]
    assert {k: end[k] for k in COUNTS} == {k: start[k] for k in COUNTS}, soak["log"]
    for label in ("after calls", "after cycles"):
        assert {k: samples[label][k] for k in COUNTS} == {k: start[k] for k in COUNTS}, soak["log"]


def test_shutting_down_returns_to_before_the_manager(soak: dict[str, Any]) -> None:
    samples = by_label(soak)
    pre, closed = samples["pre"], samples["closed"]
    assert {k: closed[k] for k in COUNTS} == {k: pre[k] for k in COUNTS}, soak["log"]


def test_rss_stays_within_its_bound(soak: dict[str, Any]) -> None:
    samples = by_label(soak)
    assert samples["end"]["rss_kb"] - samples["start"]["rss_kb"] < RSS_BOUND_KB, soak["log"]
