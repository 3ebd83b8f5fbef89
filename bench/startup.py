"""Agent start-up and exit: `mini-claude -p hi` against the local mock model, no MCP servers.

    .venv/bin/python bench/startup.py [--reps 7] [--claude PATH_TO_CLAUDE]

Two figures per run, medians over `--reps` runs (after one throw-away run):

* **to first request** — from spawning the process to the mock model receiving the first Messages request;
* **answer to exit** — from the mock finishing its answer to the process having exited.

With `--sandbox`, mini-claude is also timed with the OS sandbox on (`--settings` turning on `sandbox.enabled` and
`autoAllowBashIfSandboxed`), the two runs alternating so that drift in the machine's load hits both alike (issue
27: the sandbox must not add more than 20 ms). With `--claude`, Claude Code's binary is timed the same way (offline: `ANTHROPIC_BASE_URL` at the mock, an
isolated `HOME`, `IS_SANDBOX=1`). Results go to `bench/results/startup-latest.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mini_claude.models.mock_server import MockModelServer  # noqa: E402
from mini_claude.models.scenario import parse_scenario  # noqa: E402


class TimedMock(MockModelServer):
    """The mock model, noting when each request arrived."""

    def __init__(self, turns: int) -> None:
        super().__init__(parse_scenario({"turns": [{"content": [{"type": "text", "text": "hello"}]}] * turns}))
        self.arrived: list[float] = []
        self._times = threading.Lock()

    def _record(self, path: str, headers: dict[str, str], body: Any) -> None:
        with self._times:
            self.arrived.append(time.perf_counter())
        super()._record(path, headers, body)


def run_once(argv: list[str], env: dict[str, str], mock: TimedMock, cwd: Path) -> tuple[float, float]:
    before = len(mock.arrived)
    began = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate(timeout=120)
    ended = time.perf_counter()
    if proc.returncode != 0 or "hello" not in out:
        raise SystemExit(f"{argv[0]} failed ({proc.returncode}): {err[-500:]}")
    first = mock.arrived[before] - began
    # the answer is tiny: the response is complete right after the request arrived; what is left is the
    # client reading it, printing, and shutting down
    return first, ended - mock.arrived[-1]


def measure(name: str, argv: list[str], env: dict[str, str], reps: int, cwd: Path) -> dict[str, Any]:
    mock = TimedMock(reps * 4 + 4)
    url = mock.start()
    try:
        env = {**env, "ANTHROPIC_BASE_URL": url}
        run_once(argv, env, mock, cwd)  # warm the page cache and .pyc files
        samples = [run_once(argv, env, mock, cwd) for _ in range(reps)]
    finally:
        mock.stop()
    firsts = [s[0] * 1000 for s in samples]
    exits = [s[1] * 1000 for s in samples]
    return {"client": name, "to_first_request_ms": round(statistics.median(firsts), 1),
            "answer_to_exit_ms": round(statistics.median(exits), 1), "samples_ms": samples}


SANDBOX_SETTINGS = json.dumps({"sandbox": {"enabled": True, "autoAllowBashIfSandboxed": True,
                                           "network": {"allowedDomains": ["example.com"]}}})
SANDBOX_OFF_SETTINGS = json.dumps({"sandbox": {"enabled": False}})  # the same flag, so only the sandbox differs


def measure_pair(argv: list[str], env: dict[str, str], reps: int, cwd: Path) -> list[dict[str, Any]]:
    """mini-claude with the sandbox off and on, run alternately (`reps` each, after one throw-away run each)."""
    variants = {"mini-claude (sandbox off)": [*argv, "--settings", SANDBOX_OFF_SETTINGS],
                "mini-claude (sandbox on)": [*argv, "--settings", SANDBOX_SETTINGS]}
    mock = TimedMock(len(variants) * (reps + 1) + 4)
    url = mock.start()
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    cpu: dict[str, list[float]] = {name: [] for name in variants}  # the run's own CPU seconds: steadier under load
    try:
        env = {**env, "ANTHROPIC_BASE_URL": url}
        for variant in variants.values():
            run_once(variant, env, mock, cwd)
        for _ in range(reps):
            for name, variant in variants.items():
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                samples[name].append(run_once(variant, env, mock, cwd))
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[name].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    finally:
        mock.stop()
    return [{"client": name, "to_first_request_ms": round(statistics.median(s[0] * 1000 for s in runs), 1),
             "answer_to_exit_ms": round(statistics.median(s[1] * 1000 for s in runs), 1),
             "cpu_ms": round(statistics.median(cpu[name]) * 1000, 1), "samples_ms": runs}
            for name, runs in samples.items()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--sandbox", action="store_true", help="also time mini-claude with the OS sandbox on")
    parser.add_argument("--claude", help="path to Claude Code's `claude` binary, to time it the same way")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "startup-latest.json"))
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="mc-startup-"))
    home = work / "home"
    home.mkdir()
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "ANTHROPIC_API_KEY": "x",
            "MINI_CLAUDE_STATE_DIR": str(work / "state")}
    ours = [sys.executable, "-m", "mini_claude", "-p", "hi"]
    if args.sandbox:
        results = measure_pair(ours, {**base, "PYTHONPATH": str(ROOT)}, args.reps, work)
    else:
        results = [measure("mini-claude", ours, {**base, "PYTHONPATH": str(ROOT)}, args.reps, work)]
    if args.claude:
        results.append(measure("claude-code", [args.claude, "-p", "hi"], {**base, "IS_SANDBOX": "1"}, args.reps,
                               work))
    for row in results:
        print(f"{row['client']:<26} to first request {row['to_first_request_ms']:>7.1f} ms   "
              f"answer to exit {row['answer_to_exit_ms']:>7.1f} ms"
              + (f"   CPU {row['cpu_ms']:>7.1f} ms" if "cpu_ms" in row else ""))
    Path(args.out).write_text(json.dumps({"when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                                          "reps": args.reps, "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
