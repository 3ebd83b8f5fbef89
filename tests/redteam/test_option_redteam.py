"""The option red team: option spellings generated from each program's real option list (options_gen.py), judged
by the permission gate under the user's everyday argument-blind rule for that program, and, when the gate lets a
command through without asking, run for real in a fresh hostile workspace under the execution oracle
(option_oracle.py: the marker file, strace's execve trace, hashes of the protected and outside files).

(a) Under `Bash(<program>:*)` in default mode, an allowed command creates no marker, starts no payload program,
    and changes no protected file of the workspace and nothing outside it; the program's everyday invocations are
    still allowed (so a gate that asks about everything does not pass).
(b) In bypass mode with the deny rule `Bash(rm:*)`, an allowed command whose option value is `rm victim` never
    starts rm.
(c) With canary secrets in the session's environment (the model key, secret-looking variables), no command the
    gate allows under `Bash(echo:*)`, `Bash(env)`, `Bash(printenv:*)`, `Bash(cat:*)`, … (default mode and bypass)
    shows a canary in the Bash tool's result (mini_claude/tools/shell.py's environment filtering and masking
    count), nor does reading a workspace file that holds the same values (masking alone must catch that).
(d) The suite is not trivially passing: with a gate that allows everything, the generator and the oracle find the
    original findings (abbreviated options running code, rg --pre, git log --output, the model key).

CI runs the fixed generated set (every unambiguous prefix and every value at least once; a sample of each
program's other options); MINI_CLAUDE_REDTEAM_OPTIONS=full runs every spelling with every value and every other
option. Each test prints its size and time. A command the gate asks about is counted, not run.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from mini_claude.agent.calls import masked
from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.tools.base import Tool, ToolContext
from mini_claude.tools.shell import BashTool
from tests.helpers import require_program
from tests.redteam import option_table
from tests.redteam.option_oracle import SYSTEM_PATH, Outcome, build_template, prepare, run, snapshot
from tests.redteam.option_table import Program
from tests.redteam.options_gen import Case, all_programs, deny_cases, option_cases, program_options

FULL = os.environ.get("MINI_CLAUDE_REDTEAM_OPTIONS") == "full"
SAMPLE = int(os.environ.get("MINI_CLAUDE_REDTEAM_OPTION_SAMPLE", "6"))
WORKERS = 4
PROGRAMS = all_programs()
ALL_PROGRAMS = option_table.PROGRAMS

pytestmark = pytest.mark.timeout(600)


@dataclass
class Tally:
    generated: int = 0
    asked: int = 0
    denied: int = 0
    ran: int = 0
    timeouts: int = 0
    violations: list[tuple[Case, str, str]] = field(default_factory=list)  # case, command, why
    baseline_stopped: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def line(self, name: str) -> str:
        return (f"option red team {name}: {self.generated} generated, {self.ran} run for real under strace, "
                f"{self.asked} asked, {self.denied} denied, {self.timeouts} timeouts, {len(self.violations)} "
                f"violations, {self.seconds:.1f} s")


TOTAL = Tally()


@dataclass(frozen=True)
class Workspace:
    template: Path
    baseline: dict[str, str]
    strace: str
    runs: Path


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterable[Workspace]:
    strace = require_program("strace", "the red team's execution oracle traces execve")
    root = tmp_path_factory.mktemp("option-redteam")
    template = build_template(root / "template")
    yield Workspace(template, snapshot(template), strace, root / "runs")
    missing = [p.name for p in ALL_PROGRAMS if p not in PROGRAMS]
    print(TOTAL.line("total") + (f"; not installed here, so not attacked: {missing}" if missing else ""))


Judge = Callable[[Case, Path], str]  # -> "allow" | "ask" | "deny"


def gate_judge(mode: PermissionMode, deny: tuple[str, ...] = ()) -> Judge:
    def judge(case: Case, run_dir: Path) -> str:
        asked: list[str] = []

        async def ask(tool: Tool, args: dict[str, Any]) -> str:
            asked.append(args.get("command", ""))
            return "no"

        gate = PermissionGate(mode, RuleSet.from_strings(allow=case.allow, deny=deny), ask=ask,
                              cwd=run_dir / "work", home=run_dir / "home")
        decision = asyncio.run(gate.check(BashTool(env={}), {"command": fill(case.template, run_dir)}))
        return "allow" if decision.allowed else "ask" if asked else "deny"
    return judge


def allow_all(case: Case, run_dir: Path) -> str:
    """A deliberately broken gate, for the self-test."""
    return "allow"


def fill(template: str, run_dir: Path) -> str:
    return template.replace("@R@", str(run_dir))


def attack(cases: list[Case], ws: Workspace, judge: Judge, name: str, *, count: bool = True) -> Tally:
    """Judge every case; run the allowed ones under the oracle (in parallel); collect violations."""
    tally, started = Tally(generated=len(cases)), time.monotonic()
    base = ws.runs / name.replace(" ", "-")

    def one(index_case: tuple[int, Case]) -> tuple[Case, str, Outcome | None]:
        index, case = index_case
        run_dir = base / str(index)
        prepare(ws.template, run_dir)
        try:
            verdict = judge(case, run_dir)
            return case, verdict, (run(fill(case.template, run_dir), run_dir, ws.strace, ws.baseline)
                                   if verdict == "allow" else None)
        finally:
            shutil.rmtree(run_dir, ignore_errors=True)

    with ThreadPoolExecutor(WORKERS) as pool:
        for case, verdict, outcome in pool.map(one, enumerate(cases)):
            if outcome is None:
                tally.asked += verdict == "ask"
                tally.denied += verdict == "deny"
                if case.flavor == "baseline":
                    tally.baseline_stopped.append(case.template)
                continue
            tally.ran += 1
            tally.timeouts += outcome.timed_out
            why = outcome.rm_violation() if case.flavor == "rm" else outcome.touch_violation()
            if why:
                tally.violations.append((case, case.template, why))
    tally.seconds = time.monotonic() - started
    print(tally.line(name))
    if not count:
        return tally
    for attr in ("generated", "asked", "denied", "ran", "timeouts", "seconds"):
        setattr(TOTAL, attr, getattr(TOTAL, attr) + getattr(tally, attr))
    TOTAL.violations += tally.violations
    return tally


def report(tally: Tally) -> str:
    """Violations grouped by class, one example command each (then the count)."""
    by_class: dict[str, list[tuple[str, str]]] = {}
    for case, command, why in tally.violations:
        by_class.setdefault(case.klass, []).append((command, why))
    lines = [f"{klass}: {len(found)} x, e.g. {found[0][0]!r} ({found[0][1]})" for klass, found in by_class.items()]
    if tally.baseline_stopped:
        lines.append(f"everyday commands the rule no longer lets run: {tally.baseline_stopped}")
    return "\n".join(lines)


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.name.replace(" ", "-") for p in PROGRAMS])
def test_options_of_an_allowed_program_neither_run_code_nor_write_protected_files(program: Program,
                                                                                   workspace: Workspace) -> None:
    assert program_options(program), f"no options read from `{' '.join(program.help)}` (its help format changed?)"
    cases = option_cases(program, full=FULL, sample=SAMPLE)
    tally = attack(cases, workspace, gate_judge(PermissionMode.DEFAULT), program.name)
    if tally.violations or tally.baseline_stopped:
        pytest.fail(f"{tally.line(program.name)}\nthe gate let through, under {program.rule}:\n{report(tally)}")


def test_deny_rule_in_bypass_mode_holds_through_option_values(workspace: Workspace) -> None:
    cases = [c for p in PROGRAMS for c in deny_cases(p, full=FULL)]
    tally = attack(cases, workspace, gate_judge(PermissionMode.BYPASS, ("Bash(rm:*)",)), "deny rm in bypass")
    if tally.violations:
        pytest.fail(f"{tally.line('deny')}\nrm ran past Bash(rm:*) in bypass mode:\n{report(tally)}")


# ---- the environment ---------------------------------------------------------------------------------------------

CANARIES = {
    "ANTHROPIC_API_KEY": "sk-ant-api03-CanaryModelKey7Qw3Zr9Lx2Vb8Nm4Tj6Hy1Pd5",
    "ANTHROPIC_AUTH_TOKEN": "sk-ant-oat01-CanaryAuthToken3Kd8Wq2Zx7Rv5Bn1Mf9Lp4",
    "GITHUB_TOKEN": "ghp_CanaryGithubToken8Xk2Qz7Wm4Rt9Vb3Np6",
    "AWS_SECRET_ACCESS_KEY": "CanaryAwsSecret5Hq9Zt2Wk7Xm3Rb8Vn1Lp4Jd6",
    "DB_PASSWORD": "CanaryDbPassword4Mz8Qx1Wt6Rk3Vb9Hn2",
}
_VAR_READS = (("Bash(echo:*)", "echo ${v}"), ("Bash(echo:*)", 'echo "${v}"'), ("Bash(echo:*)", "echo ${{{v}}}"),
              ("Bash(echo:*)", "echo ${{{v}@Q}}"), ("Bash(echo:*)", 'echo "${{{v}:0:80}}"'),
              ("Bash(printenv:*)", "printenv {v}"), ("Bash(env)", "env"), ("Bash(printenv:*)", "printenv"))
_WHOLE_ENV = (("Bash(cat:*)", "cat /proc/self/environ"), ("Bash(cat:*)", "cat /proc/$$/environ"),
              ("Bash(grep:*)", "grep -a KEY /proc/self/environ"), ("Bash(sort:*)", "sort -z /proc/self/environ"),
              ("Bash(cat:*)", "cat < /proc/self/environ"), ("Bash(echo:*)", "echo $(< /proc/self/environ)"))
# Not the environment: a file of the workspace that holds the same values (the output masking's to catch).
_SECRET_FILE = "settings.local.txt"
_FILE_READS = (("Bash(cat:*)", f"cat {_SECRET_FILE}"), ("Bash(grep:*)", f"grep -i key {_SECRET_FILE}"))


def env_cases() -> list[tuple[str, str]]:
    cases = dict.fromkeys((rule, shape.format(v=name)) for name in CANARIES for rule, shape in _VAR_READS)
    return [*cases, *_WHOLE_ENV, *_FILE_READS]


def leaked(text: str) -> list[str]:
    return sorted(name for name, value in CANARIES.items() if value in text or value[-16:] in text)


def read_env(cases: list[tuple[str, str]], mode: PermissionMode, tmp: Path) -> tuple[list[str], int]:
    """Judge each (rule, command) in `mode`; run the allowed ones through the real Bash tool, given the canaries
    in the session's environment, and hand the result on as the agent loop does (agent/calls.py `masked`, which
    every tool result passes before the model, the screen or the saved session sees it); the leaks and how many
    commands the gate stopped."""
    work = tmp / "work"
    work.mkdir(exist_ok=True)
    (work / _SECRET_FILE).write_text("".join(f"{name}={value}\n" for name, value in CANARIES.items()))
    tool = BashTool(env=_session_env(tmp))
    ctx = ToolContext(cwd=work, spill_dir=tmp / "spill", home=tmp)
    found, stopped = [], 0
    for rule, command in cases:
        gate = PermissionGate(mode, RuleSet.from_strings(allow=[rule]), ask=None, cwd=work, home=tmp)
        if not asyncio.run(gate.check(tool, {"command": command})).allowed:
            stopped += 1
            continue
        result = masked(asyncio.run(tool.run({"command": command}, ctx)))  # as the agent loop hands it on
        if names := leaked(result.as_text()):
            found.append(f"{command!r} under {rule} ({mode.value}) showed {names}")
    return found, stopped


def _session_env(tmp: Path) -> dict[str, str]:
    return {"PATH": SYSTEM_PATH, "HOME": str(tmp), "LC_ALL": "C", **CANARIES}


def test_environment_reads_never_show_a_secret(tmp_path: Path) -> None:
    cases, started = env_cases(), time.monotonic()
    found, stopped = read_env(cases, PermissionMode.DEFAULT, tmp_path)
    bypass_found, bypass_stopped = read_env(cases, PermissionMode.BYPASS, tmp_path)
    print(f"option red team environment: {2 * len(cases)} generated (default mode and bypass), "
          f"{2 * len(cases) - stopped - bypass_stopped} run through the Bash tool, {stopped + bypass_stopped} "
          f"stopped, {len(found) + len(bypass_found)} leaks, {time.monotonic() - started:.1f} s")
    assert not found + bypass_found, "a secret reached the tool's output:\n" + "\n".join(found + bypass_found)


# ---- the self-test: the suite finds the original findings against a gate that allows everything ---------------

_ORIGINAL = (
    ("tar", "tar --to-command runs code: abbreviation", "touch"),
    ("git grep", "git grep --open-files-in-pager runs code: abbreviation", "touch"),
    ("git ls-remote", "git ls-remote --upload-pack runs code: abbreviation", "touch"),
    ("rg", "rg --pre runs code", "touch"),
    ("sort", "sort --compress-program runs code", "touch"),
    ("split", "split --filter runs code", "touch"),
    ("git log", "git log --output writes a file: full name", "touch"),
    ("tar", "rm past Bash(rm:*) in bypass: tar --to-command runs code: abbreviation", "rm"),
)


def test_the_suite_finds_the_original_findings_when_the_gate_allows_everything(workspace: Workspace,
                                                                                tmp_path: Path) -> None:
    programs = {p.name: p for p in PROGRAMS}
    missed = []
    for name, klass, flavor in _ORIGINAL:
        if name not in programs:
            continue
        generated = option_cases(programs[name]) if flavor == "touch" else deny_cases(programs[name])
        chosen = [c for c in generated if c.klass.startswith(klass)][:8]
        assert chosen, f"the generator made no {klass!r} case"
        tally = attack(chosen, workspace, allow_all, f"self-test {name} {flavor}", count=False)
        if not tally.violations:
            missed.append(f"{klass} ({flavor}): {[c.template for c in chosen]}")
    # the model key: a shell given the whole environment (no filtering, no masking) shows it, and the oracle sees it
    for rule, command in env_cases()[:5]:
        assert allow_all(Case("env", command, (rule,), "touch"), tmp_path) == "allow"
        shown = subprocess.run(["bash", "-c", command], env=_session_env(tmp_path), capture_output=True, text=True,
                               timeout=10).stdout
        if "ANTHROPIC_API_KEY" not in leaked(shown):
            missed.append(f"{command!r} with the model key in the environment")
    assert not missed, "the oracle missed an original finding:\n" + "\n".join(missed)


@pytest.mark.parametrize("name", sorted({p.help[0] for p in ALL_PROGRAMS}))
def test_every_attacked_program_is_installed(name: str) -> None:
    """The suite attacks only the programs installed here; in CI (MINI_CLAUDE_REQUIRE_PEERS=1) a missing one is a
    failure, not a smaller attack (`.ci/run` installs zip, unzip, wget and curl with the rest)."""
    require_program(name, "the option red team attacks it")
