"""State that grows with use: `mini-claude -p hi` run again and again with one HOME and state folder, against the
local mock model, with stdio corpus servers (bench/corpus_server.py over the largest bench/tool_corpus lists)
whose command line changes on every run — as a CI job's generated config with a workspace path, or a bumped
version pin, changes it.

    .venv/bin/python bench/state_growth.py [--runs 12] [--servers 20] [--out FILE]

Per run: the time from spawning the process to the mock receiving its first request, and the size of the state
folder after the run. Each server's arguments differ per run by `-X run=N` (an interpreter option Python ignores),
so the server itself and its tools stay the same: only the config changes. The same helpers drive
tests/state/test_state_growth.py.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from mini_claude.models.mock_server import MockModelServer  # noqa: E402
from mini_claude.models.scenario import parse_scenario  # noqa: E402

CORPUS = ROOT / "bench" / "tool_corpus" / "servers"
SERVER = ROOT / "bench" / "corpus_server.py"
RUN_TIMEOUT_S = 120.0


class TimedMock(MockModelServer):
    """The mock model answering "hello" to every request, noting when each request arrived."""

    def __init__(self, turns: int) -> None:
        super().__init__(parse_scenario({"turns": [{"content": [{"type": "text", "text": "hello"}]}] * turns}))
        self.arrived: list[float] = []
        self._times = threading.Lock()

    def _record(self, path: str, headers: dict[str, str], body: Any) -> None:
        with self._times:
            self.arrived.append(time.perf_counter())
        super()._record(path, headers, body)


@dataclass(frozen=True)
class RunFigures:
    run: int
    first_request_s: float
    state_bytes: int


def largest_corpus_files(count: int) -> list[Path]:
    """The `count` corpus tool lists with the most bytes (the largest tool lists)."""
    files = sorted(CORPUS.glob("*.json"), key=lambda p: (-p.stat().st_size, p.name))
    return files[:count]


def config_for_run(files: list[Path], run: int) -> dict[str, Any]:
    """An `mcpServers` config whose every entry's arguments differ from any other run's."""
    return {"mcpServers": {path.stem: {"command": sys.executable,
                                       "args": ["-X", f"run={run}", str(SERVER), str(path)]} for path in files}}


def folder_bytes(folder: Path) -> int:
    total = 0
    for dirpath, _dirs, names in os.walk(folder):
        for name in names:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
    return total


def run_once(run: int, files: list[Path], env: dict[str, str], work: Path, mock: TimedMock) -> RunFigures:
    config = work / f"servers-{run}.json"
    config.write_text(json.dumps(config_for_run(files, run)))
    before = len(mock.arrived)
    began = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "mini_claude", "-p", "hi", "--mcp-config", str(config)],
                          cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=RUN_TIMEOUT_S)
    if proc.returncode != 0 or "hello" not in proc.stdout or len(mock.arrived) == before:
        raise RuntimeError(f"run {run} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    config.unlink()
    state = Path(env["MINI_CLAUDE_STATE_DIR"])
    return RunFigures(run, mock.arrived[before] - began, folder_bytes(state))


def run_series(runs: int, servers: int, base: Path) -> list[RunFigures]:
    """`runs` runs with one HOME and state folder under `base`; the figures of each."""
    return young_and_grown(runs, servers, base, pairs=0)[0]


@dataclass(frozen=True)
class Paired:
    """Runs taken in turn on a copy of the state as it was after the first run (`young`) and as it is after the
    whole series (`grown`): both see the same load of a shared machine, so their difference is the state's."""

    young: list[RunFigures]
    grown: list[RunFigures]


def young_and_grown(runs: int, servers: int, base: Path, *, pairs: int = 3) -> tuple[list[RunFigures], Paired]:
    """The series (`runs` runs on one state folder under `base`), then `pairs` pairs of runs, young then grown,
    each on a fresh copy of its state (each with a config no run had before, as in the series)."""
    files = largest_corpus_files(servers)
    home, work, state = base / "home", base / "work", base / "state"
    for folder in (home, work):
        folder.mkdir(parents=True, exist_ok=True)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "ANTHROPIC_API_KEY": "x",
           "MINI_CLAUDE_STATE_DIR": str(state), "PYTHONPATH": str(ROOT), "MCP_TIMEOUT": "60000"}
    mock = TimedMock((runs + 2 * pairs) * 4 + 4)
    env["ANTHROPIC_BASE_URL"] = mock.start()
    young_state = base / "state-after-run-1"
    paired = Paired([], [])
    try:
        figures = []
        for run in range(1, runs + 1):
            figures.append(run_once(run, files, env, work, mock))
            if run == 1:
                shutil.copytree(state, young_state, symlinks=True)
        for pair in range(pairs):
            for kept, into in ((young_state, paired.young), (state, paired.grown)):
                copy = base / f"state-pair-{pair}-{len(into)}-{kept.name}"
                shutil.copytree(kept, copy, symlinks=True)
                run = runs + 1 + 2 * pair + (into is paired.grown)
                into.append(run_once(run, files, {**env, "MINI_CLAUDE_STATE_DIR": str(copy)}, work, mock))
        return figures, paired
    finally:
        mock.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--servers", type=int, default=20)
    parser.add_argument("--out", help="write the figures as JSON here too")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mc-state-growth-") as tmp:
        figures = run_series(args.runs, args.servers, Path(tmp))
    print(f"{args.servers} corpus servers, arguments changed per run")
    print("| run | first request after start | state folder |")
    print("|---|---|---|")
    for row in figures:
        print(f"| {row.run} | {row.first_request_s:.2f} s | {row.state_bytes / 1e6:.2f} MB |")
    if args.out:
        Path(args.out).write_text(json.dumps({
            "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "servers": args.servers,
            "runs": [{"run": r.run, "first_request_s": round(r.first_request_s, 3), "state_bytes": r.state_bytes}
                     for r in figures]}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
