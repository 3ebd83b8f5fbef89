"""The shell red team: generated attacks (attacks.py) judged by the permission gate, then run with real bash under
an execution oracle (oracle.py: strace's execve trace and self-recording stub programs), so that "the matcher
allowed it" and "bash ran something else" cannot both be true unnoticed.

(a) Under the everyday allow rules (`Bash(git status:*)`, `Bash(echo:*)`, `Bash(true)`), a command the gate
    allows starts no program but `git` (a no-op stub) and the wrappers allow rules look through, marks no stub,
    and leaves no file.
(b) With the deny rule `Bash(rm:*)` in bypassPermissions mode, a command the gate lets through never starts `rm`
    (the stub on PATH, or the real one by path) and `victim` survives.

The count of generated commands and the time are printed (and in any failure message). A failure names the
command and what ran; its fix goes in the walk with an exact-string regression test in tests/permissions/.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.tools.shell import BashTool
from tests.helpers import require_program
from tests.redteam.attacks import commands
from tests.redteam.oracle import NO_MARK, Ran, make_bin, run

BATCH = 25            # commands per hypothesis example; the allowed ones run in parallel
# Per property: 480 x 25 = 12,000 commands, 24,000 for the two. To search further than CI does, set
# MINI_CLAUDE_REDTEAM_EXAMPLES (more examples) and MINI_CLAUDE_REDTEAM_SEED (other examples than CI's).
EXAMPLES = int(os.environ.get("MINI_CLAUDE_REDTEAM_EXAMPLES", "480"))
SEED = os.environ.get("MINI_CLAUDE_REDTEAM_SEED")
WORKERS = 4
EVERYDAY_RULES = ("Bash(git status:*)", "Bash(echo:*)", "Bash(true)")
# What may start under the everyday rules: the allowed program and the wrappers allow rules strip.
ALLOWED_PROGRAMS = frozenset({"git"}) | NO_MARK

pytestmark = pytest.mark.timeout(600)


@dataclass
class Stats:
    generated: int = 0
    distinct: set[str] = field(default_factory=set)
    ran: int = 0
    stopped: int = 0
    timeouts: int = 0


def _check(batch: list[str], gate: PermissionGate, bin_dir: Path, scratch: Path, strace: str, stats: Stats,
           violation: Callable[[Ran], str]) -> None:
    stats.generated += len(batch)
    stats.distinct.update(batch)
    to_run = [c for c in batch if asyncio.run(gate.check(BashTool(), {"command": c})).allowed]
    stats.stopped += len(batch) - len(to_run)
    base = stats.ran
    stats.ran += len(to_run)
    with ThreadPoolExecutor(WORKERS) as pool:
        results = list(pool.map(lambda ic: run(ic[1], bin_dir, scratch / f"{base + ic[0]}", strace),
                                enumerate(to_run)))
    stats.timeouts += sum(r.timed_out for r in results)
    bad = [f"{command!r}: {why}" for command, ran in zip(to_run, results, strict=True) if (why := violation(ran))]
    assert not bad, "the gate let through:\n" + "\n".join(bad)


def _property(test: Callable[[list[str]], None]) -> Callable[[], None]:
    """Hypothesis settings for a property: CI's fixed examples, or a seed's."""
    configured = settings(max_examples=EXAMPLES, derandomize=SEED is None, deadline=None, database=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])(test)
    return seed(int(SEED))(configured) if SEED is not None else configured


def _summary(name: str, stats: Stats, started: float) -> str:
    return (f"red team {name}: {stats.generated} generated ({len(stats.distinct)} distinct), {stats.ran} run with "
            f"bash under strace, {stats.stopped} stopped by the gate, {stats.timeouts} timeouts, "
            f"{time.monotonic() - started:.1f} s")


def _allow_violation(ran: Ran) -> str:
    others = [p for p in ran.programs if p not in ALLOWED_PROGRAMS]
    marks = ran.marks - ALLOWED_PROGRAMS
    if others or marks or ran.files or ran.victim_gone:
        return (f"started {list(ran.programs)}, marked {sorted(marks)}, left {sorted(ran.files)}"
                + (", removed victim" if ran.victim_gone else ""))
    return ""


def _deny_violation(ran: Ran) -> str:
    if "rm" in ran.programs or "rm" in ran.marks or ran.victim_gone:
        return f"started {list(ran.programs)}, marked {sorted(ran.marks)}" + (
            ", removed victim" if ran.victim_gone else "")
    return ""


def test_everyday_allow_rules_run_nothing_else(tmp_path: Path) -> None:
    strace = require_program("strace", "the red team's execution oracle traces execve")
    bin_dir = make_bin(tmp_path / "bin", real_git=False)
    gate = PermissionGate(PermissionMode.DEFAULT, RuleSet.from_strings(allow=EVERYDAY_RULES), ask=None,
                          cwd=tmp_path)
    stats, started = Stats(), time.monotonic()

    @_property
    @given(st.lists(commands("touch", "PWNED"), min_size=BATCH, max_size=BATCH, unique=True))
    def check(batch: list[str]) -> None:
        _check(batch, gate, bin_dir, tmp_path / "runs", strace, stats, _allow_violation)

    check()
    summary = _summary("allow", stats, started)
    print(summary)
    assert len(stats.distinct) >= EXAMPLES * BATCH * 0.8 and stats.ran >= EXAMPLES * 2 and \
        stats.stopped >= EXAMPLES * 7, summary


def test_deny_rule_in_bypass_mode_never_runs_rm(tmp_path: Path) -> None:
    strace = require_program("strace", "the red team's execution oracle traces execve")
    bin_dir = make_bin(tmp_path / "bin", real_git=True)
    gate = PermissionGate(PermissionMode.BYPASS, RuleSet.from_strings(deny=["Bash(rm:*)"]), ask=None, cwd=tmp_path)
    stats, started = Stats(), time.monotonic()

    @_property
    @given(st.lists(commands("rm", "victim"), min_size=BATCH, max_size=BATCH, unique=True))
    def check(batch: list[str]) -> None:
        _check(batch, gate, bin_dir, tmp_path / "runs", strace, stats, _deny_violation)

    check()
    summary = _summary("deny", stats, started)
    print(summary)
    assert len(stats.distinct) >= EXAMPLES * BATCH * 0.8 and stats.ran >= EXAMPLES * 2 and \
        stats.stopped >= EXAMPLES * 7, summary


def test_the_oracle_sees_what_ran(tmp_path: Path) -> None:
    """The oracle itself: a real program by absolute path, a stub, a background job and a grandchild all show."""
    strace = require_program("strace", "the red team's execution oracle traces execve")
    bin_dir = make_bin(tmp_path / "bin", real_git=True)
    ran = run("/bin/rm victim; touch f & wait; sh -c 'awk \"BEGIN{system(\\\"rm x\\\")}\"'", bin_dir,
              tmp_path / "one", strace)
    assert ran.victim_gone and {"rm", "touch", "sh", "awk"} <= set(ran.programs) and "touch" in ran.marks
    quiet = run("echo hi; true; git status", bin_dir, tmp_path / "two", strace)
    assert quiet.programs == ("git",) and not quiet.marks and not quiet.files and not quiet.victim_gone
