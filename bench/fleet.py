"""A fleet of stdio servers: how long until the first model request leaves, against the servers' own floor.

    .venv/bin/python bench/fleet.py [--runs 5] [--hog] [--servers N] [--no-claude] [--out FILE]

Every server of bench/tool_corpus/servers and bench/tool_corpus/fleet_extra (66 real servers' tool lists) is
started as a small stdio process (bench/corpus_server.py). Three things are timed, interleaved run by run, and
reported as medians and as ratios to the floor of the same run:

* the floor: a minimal asyncio client (bench/raw_client.py's shape, no mini_claude code, in a fresh interpreter)
  spawns every server, sends `initialize` and `tools/list` to each, and is done when the last list arrived;
  `floor_pidfd` is the same client with asyncio's PidfdChildWatcher instead of its default thread per child
  (Python 3.11; what 3.12 does by itself, and what mini-claude does); `floor_tight` adds a 1 MB stdout pipe per
  server (Linux; mini-claude asks for the same), so a server writes its whole list at once — the tightest floor,
  which the ratios "to the tightest floor" use;
* ours: `mini-claude -p hi --mcp-config … --strict-mcp-config` against the local mock model, from spawning the
  process to the mock receiving its first request; with a fresh HOME (and state folder) every run, and with a
  warm one (the same HOME, run once before the timed runs);
* Claude Code, when its binary is at `.cache/claude-code/node_modules/@anthropic-ai/claude-code-linux-x64/claude`
  (offline: ANTHROPIC_BASE_URL at the mock, an isolated HOME, IS_SANDBOX=1): spawn to its first request that
  offers tools.

`--hog` runs a busy loop on every core for the whole bench (the "under load" variant). Every run of ours also
checks its `--output-format stream-json` init line (every server `connected`) and its stderr (no traceback, no
"failed"); a run that breaks either is counted and shown.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from mini_claude.models.mock_server import MockModelServer  # noqa: E402
from mini_claude.models.scenario import parse_scenario  # noqa: E402

CORPUS = ROOT / "bench" / "tool_corpus" / "servers"
SERVER = ROOT / "bench" / "corpus_server.py"
CLAUDE = ROOT / ".cache" / "claude-code" / "node_modules" / "@anthropic-ai" / "claude-code-linux-x64" / "claude"
RESULTS = ROOT / "bench" / "results"
RUN_TIMEOUT_S = 180.0
PIDFD_FLOOR = sys.version_info < (3, 12) and hasattr(os, "pidfd_open")  # 3.12 watches children with pidfds anyway
BIG_PIPES = sys.platform == "linux"  # F_SETPIPE_SZ

# the floor client, run in a fresh interpreter: stdlib only, prints "done" when every server has listed its tools
FLOOR_CLIENT = r'''
import asyncio, json, sys

async def one(argv):
    if "bigpipe" in sys.argv[2:]:  # a 1 MB stdout pipe, as mini-claude asks for: a big list is written at once
        import fcntl, os
        read_end, write_end = os.pipe()
        fcntl.fcntl(read_end, fcntl.F_SETPIPE_SZ, 1 << 20)
        proc = await asyncio.create_subprocess_exec(*argv, stdin=-1, stdout=write_end)
        os.close(write_end)
        proc.stdout = asyncio.StreamReader(limit=1 << 30)
        await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(proc.stdout),
                                                           open(read_end, "rb", buffering=0))
    else:
        proc = await asyncio.create_subprocess_exec(*argv, stdin=-1, stdout=-1, limit=1 << 30)
    def send(i, method, params):
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}).encode() + b"\n")
    async def answer(i):
        while True:
            message = json.loads(await proc.stdout.readline())
            if message.get("id") == i:
                return message["result"]
    send(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "floor", "version": "0"}})
    await answer(1)
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    send(2, "tools/list", {})
    tools = len((await answer(2))["tools"])
    return proc, tools

async def main():
    if "pidfd" in sys.argv[2:]:  # the loop reads a pidfd per child instead of asyncio's thread per child
        watcher = asyncio.PidfdChildWatcher()
        watcher.attach_loop(asyncio.get_running_loop())
        asyncio.set_child_watcher(watcher)
    config = json.load(open(sys.argv[1]))["mcpServers"]
    done = await asyncio.gather(*(one([c["command"], *c["args"]]) for c in config.values()))
    print("done", sum(t for _, t in done), flush=True)
    for proc, _ in done:
        proc.stdin.close()
    await asyncio.gather(*(proc.wait() for proc, _ in done))

asyncio.run(main())
'''


class TimedMock(MockModelServer):
    """The mock model answering "hello", noting when each request arrived and whether it offered tools."""

    def __init__(self, turns: int) -> None:
        super().__init__(parse_scenario({"turns": [{"content": [{"type": "text", "text": "hello"}]}] * turns}))
        self.arrived: list[tuple[float, bool]] = []
        self._times = threading.Lock()

    def _record(self, path: str, headers: dict[str, str], body: Any) -> None:
        with self._times:
            tools = isinstance(body, dict) and bool(body.get("tools"))
            self.arrived.append((time.perf_counter(), tools and "/messages" in path))
        super()._record(path, headers, body)

    def first_after(self, began: float, *, with_tools: bool) -> float | None:
        with self._times:
            for at, tools in self.arrived:
                if at >= began and (tools or not with_tools):
                    return at - began
        return None


def fleet_files(servers: int | None = None) -> list[tuple[str, Path]]:
    """(name, tool list) for each server: the tool-search corpus (`servers/`, sorted) then the fleet-only servers
    (`fleet_extra/`, sorted): 66 distinct real servers once by default; `servers` above that cycles the list
    (`github-2`, …), below it takes the first `servers`."""
    files = sorted(CORPUS.glob("*.json")) + sorted((CORPUS.parent / "fleet_extra").glob("*.json"))
    count = servers or len(files)
    return [(files[i % len(files)].stem + (f"-{i // len(files) + 1}" if i >= len(files) else ""),
             files[i % len(files)]) for i in range(count)]


def fleet_config(servers: int | None = None) -> dict[str, Any]:
    return {"mcpServers": {name: {"command": sys.executable, "args": [str(SERVER), str(path)]}
                           for name, path in fleet_files(servers)}}


def corpus_size(servers: int | None = None) -> tuple[int, int]:
    files = fleet_files(servers)
    return len(files), sum(len(json.loads(p.read_text(encoding="utf-8"))["tools"]) for _, p in files)


def floor_once(config: Path, *, pidfd: bool = False, bigpipe: bool = False) -> float:
    """One run of the floor client, with the small environment mini-claude gives its servers (PATH, HOME, LANG)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(config.parent), "LANG": "C.UTF-8"}
    began = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-W", "ignore", "-c", FLOOR_CLIENT, str(config),
                             *(["pidfd"] if pidfd else []), *(["bigpipe"] if bigpipe else [])],
                            stdout=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True, env=env)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    took = time.perf_counter() - began
    proc.wait(timeout=RUN_TIMEOUT_S)
    if not line.startswith("done"):
        raise RuntimeError(f"the floor client failed (exit {proc.returncode})")
    return took


def base_env(home: Path, mock_url: str) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "ANTHROPIC_API_KEY": "sk-ant-bench",
            "ANTHROPIC_BASE_URL": mock_url, "LANG": "C.UTF-8"}


def ours_once(config: Path, home: Path, mock: TimedMock, agent_root: Path = ROOT) -> dict[str, Any]:
    """One `mini-claude -p hi` run (the checkout at `agent_root`); the time to its first request, its servers'
    statuses and its stderr's health."""
    env = {**base_env(home, mock.url), "PYTHONPATH": str(agent_root), "MINI_CLAUDE_STATE_DIR": str(home / "state")}
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "mini_claude", "-p", "hi", "--mcp-config", str(config),
                           "--strict-mcp-config", "--output-format", "stream-json", "--verbose"],
                          cwd=home, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=RUN_TIMEOUT_S, check=False)
    first = mock.first_after(began, with_tools=False)
    # (run from `home`, outside any checkout: `-m mini_claude` comes from PYTHONPATH)
    if done.returncode != 0 or first is None:
        raise RuntimeError(f"mini-claude -p failed ({done.returncode}): {done.stderr[-2000:]}")
    statuses: dict[str, int] = {}
    for line in done.stdout.splitlines():
        record = json.loads(line) if line.startswith("{") else {}
        if record.get("subtype") == "init":
            for server in record.get("mcp_servers", []):
                statuses[server["status"]] = statuses.get(server["status"], 0) + 1
            break
    bad_stderr = any(word in done.stderr for word in ("Traceback", "never retrieved", "failed"))
    return {"first_request_s": first, "statuses": statuses, "stderr_clean": not bad_stderr,
            "stderr_tail": done.stderr[-600:] if bad_stderr else ""}


def claude_once(config: Path, home: Path, mock: TimedMock) -> float:
    env = {**base_env(home, mock.url), "IS_SANDBOX": "1", "DISABLE_AUTOUPDATER": "1",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "MCP_TIMEOUT": "60000"}
    began = time.perf_counter()
    done = subprocess.run([str(CLAUDE), "-p", "hi", "--mcp-config", str(config), "--strict-mcp-config"],
                          cwd=home, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=RUN_TIMEOUT_S, check=False)
    first = mock.first_after(began, with_tools=True)
    if first is None:
        raise RuntimeError(f"claude -p sent no request with tools ({done.returncode}): {done.stderr[-1000:]}")
    return first


@contextmanager
def cpu_hog(on: bool) -> Iterator[None]:
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 1)] \
        if on else []
    try:
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def bench(runs: int, hog: bool, claude: bool, agent_root: Path = ROOT, servers_wanted: int | None = None
          ) -> dict[str, Any]:
    servers, tools = corpus_size(servers_wanted)
    rows: dict[str, list[float]] = {"floor": [], "floor_pidfd": [], "floor_tight": [], "ours_fresh": [],
                                    "ours_warm": [], "claude_code": []}
    health: list[dict[str, Any]] = []
    mock = TimedMock(runs * 20 + 40)
    mock.start()
    try:
        with tempfile.TemporaryDirectory() as tmp, cpu_hog(hog):
            base = Path(tmp)
            config = base / "fleet.json"
            config.write_text(json.dumps(fleet_config(servers_wanted)))
            warm = base / "warm"
            warm.mkdir()
            ours_once(config, warm, mock, agent_root)  # warms the HOME: pins, approvals, era memory written once
            use_claude = claude and CLAUDE.exists()
            if use_claude:
                claude_once(config, base / "warm", mock)  # its first run writes its own files
            for run in range(runs):
                rows["floor"].append(floor_once(config))
                if PIDFD_FLOOR:
                    rows["floor_pidfd"].append(floor_once(config, pidfd=True))
                if BIG_PIPES:
                    rows["floor_tight"].append(floor_once(config, pidfd=PIDFD_FLOOR, bigpipe=True))
                fresh = base / f"fresh-{run}"
                fresh.mkdir()
                for label, home in (("ours_fresh", fresh), ("ours_warm", warm)):
                    result = ours_once(config, home, mock, agent_root)
                    rows[label].append(result["first_request_s"])
                    health.append({"run": label, **{k: v for k, v in result.items() if k != "first_request_s"}})
                if use_claude:
                    cc_home = base / f"cc-{run}"
                    cc_home.mkdir()
                    rows["claude_code"].append(claude_once(config, cc_home, mock))
    finally:
        mock.stop()
    medians = {k: round(statistics.median(v), 3) for k, v in rows.items() if v}
    floor = medians["floor"]
    tightest = min(v for k, v in medians.items() if k.startswith("floor"))
    # "connected": Claude Code's word, in the init line since issue 26 ("ready" before, an older checkout's)
    not_ready = [h for h in health if set(h["statuses"]) not in ({"connected"}, {"ready"})]
    return {"servers": servers, "tools": tools, "runs": runs, "hog": hog, "cpus": os.cpu_count(),
            "agent_root": str(agent_root), "load_avg_1min_at_end": round(os.getloadavg()[0], 2),
            "median_s": medians, "ratio_to_floor": {k: round(v / floor, 2) for k, v in medians.items()},
            "ratio_to_floor_pidfd": ({k: round(v / medians["floor_pidfd"], 2) for k, v in medians.items()}
                                     if "floor_pidfd" in medians else None),
            "ratio_to_tightest_floor": {k: round(v / tightest, 2) for k, v in medians.items()},
            "runs_s": {k: [round(x, 3) for x in v] for k, v in rows.items() if v},
            "runs_all_ready": len(health) - len(not_ready), "runs_checked": len(health),
            "runs_not_all_ready": not_ready, "runs_stderr_clean": sum(1 for h in health if h["stderr_clean"]),
            "stderr_problems": [h["stderr_tail"] for h in health if not h["stderr_clean"]][:3]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--hog", action="store_true", help="a CPU hog on every core for the whole bench")
    parser.add_argument("--no-claude", action="store_true", help="skip Claude Code even when it is installed")
    parser.add_argument("--servers", type=int,
                        help="how many servers (servers/ then fleet_extra/, cycled past 66; default: each once)")
    parser.add_argument("--agent-root", type=Path, default=ROOT,
                        help="the checkout whose mini_claude is timed (e.g. an older commit unpacked elsewhere)")
    parser.add_argument("--out", type=Path, help="where to write the JSON (default bench/results/fleet[-hog]-latest)")
    args = parser.parse_args(argv)
    report = bench(args.runs, args.hog, not args.no_claude, args.agent_root.resolve(), args.servers)
    out = args.out or RESULTS / f"fleet{'-hog' if args.hog else ''}-latest.json"
    out.write_text(json.dumps(report, indent=2) + "\n")
    floor = report["median_s"]["floor"]
    print(f"{report['servers']} servers / {report['tools']} tools, {report['runs']} runs"
          f"{', CPU hog on every core' if args.hog else ''} (medians)")
    for key, value in report["median_s"].items():
        print(f"  {key:12} {value:6.2f} s  {value / floor:5.2f}x floor")
    tight = report["ratio_to_tightest_floor"]
    print(f"  vs the tightest floor: ours fresh {tight['ours_fresh']:.2f}x, warm {tight['ours_warm']:.2f}x"
          + (f", Claude Code {tight['claude_code']:.2f}x" if "claude_code" in tight else ""))
    print(f"  runs of ours with every server ready: {report['runs_all_ready']}/{report['runs_checked']}; "
          f"stderr clean: {report['runs_stderr_clean']}/{report['runs_checked']}")
    print(f"  written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
