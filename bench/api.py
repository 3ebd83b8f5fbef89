"""The Python API side by side with claude-agent-sdk, on the same offline mock model in one run (issue 28, acceptance 3).

    .venv/bin/python bench/api.py [--reps 5] [--calls 20] [--sessions 8] [--only sdk|ours] [--claude PATH]

Both clients run the same program: one in-process `@tool` ("add") served by `create_sdk_mcp_server("calc", ...)`,
allowed as `mcp__calc__add`, no setting sources, an isolated HOME and cwd, `ANTHROPIC_BASE_URL` at a mock model that
calls the tool once and then answers. The SDK drives its bundled Claude Code binary (or `--claude`), installed by
scripts/install-agent-sdk.sh into .cache/agent-sdk; ours is `mini_claude.api` (the compat names are a thin layer over
it). Each figure comes from a fresh worker process (`--worker`), one client per process; the mock models run in this
process, so a worker's CPU and memory are the client's own.

Rows:
* **import** — a fresh `python -c` timing, around it, the import line a program needs (`from claude_agent_sdk import
  query, ClaudeAgentOptions, tool, create_sdk_mcp_server, ResultMessage` / the same names from `mini_claude.api`),
  and the whole `python -c` process; median of `--import-reps` after one throw-away run (which writes the .pyc).
* **query() to result** — from calling `query()` to its `ResultMessage`, for the one-tool-call conversation; median of
  `--reps` after one warm-up query in the same worker (the SDK starts its CLI per query, as its users' programs do).
  The warm-up itself is shown as "the process's first query()" (ours loads a session's machinery then). A query that
  ends without calling the tool is an error, not a figure.
* **tool round trip** — one query whose model calls the tool `--calls` times in a row: per call, from the mock having
  the request that it answers with the tool_use to the handler being called, plus from the handler returning to the
  mock having the next request (with the result). This is the whole per-call overhead of the client (parse the
  answer, gate, dispatch to the in-process server, build and send the next request); it includes the mock's answer,
  shown on its own as "mock answer floor" (a bare HTTP client's time for the same answer). Median over the calls.
* **peak RSS per session** — `--sessions` queries at once, each on its own mock whose answer after the tool call
  takes 1.5 s (so all sessions are alive together): the peak of the worker's resident memory plus its child
  processes' (the SDK's CLIs), sampled every 20 ms, minus the worker's own RSS after a warm-up query (its children
  gone), divided by N: for the SDK its CLIs' RSS plus the Python process's growth, for ours the process's growth.
* **sessions per core** — those N one-tool-call sessions divided by the CPU seconds (user + system, the worker and
  its children) they took: how many such sessions one core completes per second when the model is instant.

Results go to `bench/results/api-latest.json`. Targets from the issue are checked at the end when both sides ran.
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
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mini_claude.models.mock_server import MockModelServer  # noqa: E402
from mini_claude.models.scenario import parse_scenario  # noqa: E402

SDK_SITE = ROOT / ".cache" / "agent-sdk" / "site"
# what a user's program imports: the names it needs (ours loads a session's machinery lazily, at these names)
IMPORTS = {"sdk": "from claude_agent_sdk import query, ClaudeAgentOptions, tool, create_sdk_mcp_server, ResultMessage",
           "ours": "from mini_claude.api import query, Options, tool, create_sdk_mcp_server, ResultMessage"}
MODEL = "claude-sonnet-4-5"
WORKER_TIMEOUT_S = 600
CALL = {"content": [{"type": "tool_use", "name": "mcp__calc__add", "input": {"a": 2, "b": 3}}]}
ANSWER = {"content": [{"type": "text", "text": "2 + 3 = {{last_tool_result}}"}]}
SLOW_ANSWER = {**ANSWER, "delay_ms": 1500}


class TimedMock(MockModelServer):
    """The mock model, noting when each request had arrived (body read, before the answer)."""

    def __init__(self, turns: list[dict[str, Any]]) -> None:
        super().__init__(parse_scenario({"turns": turns}, source="bench-api"))
        self.arrived: list[float] = []

    def _record(self, path: str, headers: dict[str, str], body: Any) -> None:
        if path.endswith("/messages"):
            self.arrived.append(time.perf_counter())  # CLOCK_MONOTONIC: comparable with the worker's
        super()._record(path, headers, body)


# ---- the worker: one client, one task, in a fresh process -------------------------------------------------------

def _client(side: str, url: str, cwd: str, claude: str | None, log: list[tuple[float, float]]) -> tuple[Any, Any]:
    """(query function, options) for `side`, with the `add` tool noting (called, returned) times in `log`."""
    env = {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-bench-not-a-key"}

    async def add(args: dict[str, Any]) -> dict[str, Any]:
        called = time.perf_counter()
        text = str(args["a"] + args["b"])
        log.append((called, time.perf_counter()))
        return {"content": [{"type": "text", "text": text}]}

    if side == "sdk":
        import claude_agent_sdk as sdk
        server = sdk.create_sdk_mcp_server("calc", "1.0.0", [sdk.tool("add", "Add two numbers",
                                                                       {"a": float, "b": float})(add)])
        env.update(IS_SANDBOX="1", DISABLE_AUTOUPDATER="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
        return sdk.query, sdk.ClaudeAgentOptions(cwd=cwd, model=MODEL, mcp_servers={"calc": server},
                                                 allowed_tools=["mcp__calc__add"], setting_sources=[], env=env,
                                                 cli_path=claude)
    import mini_claude.api as api
    server = api.create_sdk_mcp_server("calc", "1.0.0", [api.tool("add", "Add two numbers",
                                                                   {"a": float, "b": float})(add)])
    return api.query, api.Options(cwd=cwd, model=MODEL, mcp_servers={"calc": server},
                                  allowed_tools=["mcp__calc__add"], setting_sources=None, env=env)


def _result_class(side: str) -> type:
    if side == "sdk":
        from claude_agent_sdk import ResultMessage as SdkResult
        return SdkResult
    from mini_claude.api import ResultMessage
    return ResultMessage


async def _one_query(side: str, url: str, cwd: str, claude: str | None, log: list[tuple[float, float]]) -> float:
    query, options = _client(side, url, cwd, claude, log)
    result, calls = _result_class(side), len(log)
    began = time.perf_counter()
    async for message in query(prompt="add 2 and 3", options=options):
        if isinstance(message, result):
            took = time.perf_counter() - began
            if getattr(message, "is_error", False):
                raise RuntimeError(f"{side}: the query ended in an error: {message!r:.500}")
            if len(log) == calls:
                raise RuntimeError(f"{side}: the query never called the in-process tool; its result: "
                                   f"{getattr(message, 'result', '')!r:.300}")
            return took
    raise RuntimeError(f"{side}: query() ended without a ResultMessage")


def _tree(pid: int) -> list[int]:
    """`pid` and all its descendants (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, ()))
    return found


def _rss_kb(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue  # it has just exited
    return total


def _tree_rss_kb(pid: int) -> int:
    """VmRSS of `pid` and all its descendants, in kB."""
    return _rss_kb(_tree(pid))


async def _own_rss_when_alone(within_s: float = 15.0) -> int:
    """This process's RSS once the warm-up's child processes (the SDK's CLI) have exited, so that the baseline is
    the Python process alone."""
    import asyncio
    deadline = time.monotonic() + within_s
    while len(_tree(os.getpid())) > 1:
        if time.monotonic() > deadline:
            raise RuntimeError(f"child processes still alive {within_s} s after the warm-up query")
        await asyncio.sleep(0.05)
    return _rss_kb([os.getpid()])


def _cpu_seconds() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


async def _worker(args: argparse.Namespace) -> dict[str, Any]:
    import asyncio
    side, urls, cwd = args.worker, args.urls.split(","), args.cwd
    log: list[tuple[float, float]] = []
    if args.task == "query":  # urls[0]: warm-up then reps queries, in order
        times = [await _one_query(side, urls[0], cwd, args.claude, log) for _ in range(args.reps + 1)]
        return {"query_s": times[1:], "first_query_s": times[0]}
    if args.task == "tool":  # warm-up query, then one query of `calls` tool calls
        await _one_query(side, urls[0], cwd, args.claude, [])
        await _one_query(side, urls[0], cwd, args.claude, log)
        return {"handler": log}
    # concurrent: urls[0] warm-up, urls[1:] one per session
    await _one_query(side, urls[0], cwd, args.claude, [])
    baseline = await _own_rss_when_alone()
    peak, stop = [baseline], threading.Event()

    def sample() -> None:
        while not stop.wait(0.02):
            peak.append(_tree_rss_kb(os.getpid()))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    cpu = _cpu_seconds()
    began = time.perf_counter()
    try:
        await asyncio.gather(*(_one_query(side, url, cwd, args.claude, []) for url in urls[1:]))
    finally:
        stop.set()
        sampler.join()
    return {"baseline_kb": baseline, "peak_kb": max(peak), "cpu_s": _cpu_seconds() - cpu,
            "wall_s": time.perf_counter() - began, "sessions": len(urls) - 1}


# ---- the parent: mocks, workers, the table --------------------------------------------------------------------

def _env(side: str, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "CLAUDE", "MINI_CLAUDE_", "PYTHON"))}
    env.update(HOME=str(home), PYTHONPYCACHEPREFIX="/tmp/mini-claude-bench-pycache", MINI_CLAUDE_STATE_DIR=str(
        home / ".mini-claude-state"), PYTHONPATH=str(SDK_SITE) + os.pathsep + str(ROOT) if side == "sdk" else str(ROOT))
    return env


def run_worker(side: str, task: str, mocks: list[TimedMock], work: Path, args: argparse.Namespace) -> dict[str, Any]:
    argv = [sys.executable, str(Path(__file__).resolve()), "--worker", side, "--task", task, "--cwd", str(work),
            "--urls", ",".join(m.start() for m in mocks), "--reps", str(args.reps)]
    if args.claude:
        argv += ["--claude", args.claude]
    proc = subprocess.run(argv, cwd=work, env=_env(side, work / "home"), capture_output=True, text=True,
                          timeout=WORKER_TIMEOUT_S, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-4:])
        raise RuntimeError(f"{side} {task} worker failed ({proc.returncode}): {tail}")
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def measure_import(side: str, work: Path, reps: int) -> dict[str, float]:
    code = f"import time; t = time.perf_counter(); {IMPORTS[side]}; print(time.perf_counter() - t)"
    inner, whole = [], []
    for rep in range(reps + 1):
        began = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", code], cwd=work, env=_env(side, work / "home"),
                              capture_output=True, text=True, timeout=120)
        ended = time.perf_counter()
        if proc.returncode != 0:
            raise RuntimeError(f"{IMPORTS[side]!r} failed: {proc.stderr.strip().splitlines()[-1:]}")
        if rep:
            inner.append(float(proc.stdout))
            whole.append(ended - began)
    return {"import_s": statistics.median(inner), "python_c_import_s": statistics.median(whole)}


def mock_floor(reps: int = 20) -> float:
    """A bare HTTP client's time for the mock's streamed tool_use answer (part of every round trip below)."""
    mock = TimedMock([CALL] * reps)
    url = mock.start()
    body = json.dumps({"model": MODEL, "max_tokens": 100, "stream": True,
                       "messages": [{"role": "user", "content": "add"}]}).encode()
    times = []
    try:
        for _ in range(reps):
            request = urllib.request.Request(f"{url}/v1/messages", body, {"content-type": "application/json"})
            began = time.perf_counter()
            with urllib.request.urlopen(request, timeout=10) as answer:
                answer.read()
            times.append(time.perf_counter() - began)
    finally:
        mock.stop()
    return statistics.median(times[1:])


def _query_stage(side: str, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    mock = TimedMock([CALL, ANSWER] * (args.reps + 1))
    try:
        times = run_worker(side, "query", [mock], work, args)
        return {"query_s": statistics.median(times["query_s"]), "first_query_s": times["first_query_s"]}
    finally:
        mock.stop()


def _tool_stage(side: str, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    mock = TimedMock([CALL, ANSWER] + [CALL] * args.calls + [ANSWER])
    try:
        handler = run_worker(side, "tool", [mock], work, args)["handler"]
        arrived = mock.arrived[2:]
    finally:
        mock.stop()
    if len(handler) != args.calls or len(arrived) != args.calls + 1:
        raise RuntimeError(f"{side}: {len(handler)} tool calls and {len(arrived)} requests")
    there = [called - arrived[i] for i, (called, _) in enumerate(handler)]
    back = [arrived[i + 1] - returned for i, (_, returned) in enumerate(handler)]
    return {"tool_round_trip_s": statistics.median(a + b for a, b in zip(there, back, strict=True)),
            "tool_to_handler_s": statistics.median(there), "tool_back_s": statistics.median(back)}


def _concurrent_stage(side: str, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    mocks = [TimedMock([CALL, ANSWER])] + [TimedMock([CALL, SLOW_ANSWER]) for _ in range(args.sessions)]
    try:
        conc = run_worker(side, "concurrent", mocks, work, args)
    finally:
        for mock in mocks:
            mock.stop()
    n = conc["sessions"]
    return {"rss_per_session_mb": (conc["peak_kb"] - conc["baseline_kb"]) / 1024 / n,
            "peak_rss_mb": conc["peak_kb"] / 1024, "baseline_rss_mb": conc["baseline_kb"] / 1024,
            "sessions_per_core_s": n / conc["cpu_s"], "cpu_per_session_s": conc["cpu_s"] / n}


def measure(side: str, args: argparse.Namespace) -> dict[str, Any]:
    """Every figure of `side`; a stage that fails is noted in `errors` (and its figures left out), the others run."""
    row: dict[str, Any] = {"client": side, "errors": []}
    with tempfile.TemporaryDirectory(prefix=f"mc-bench-api-{side}-") as tmp:
        work = Path(tmp)
        (work / "home").mkdir()
        try:
            row.update(measure_import(side, work, args.import_reps))
        except RuntimeError as exc:
            row["errors"].append(str(exc))
            return row  # nothing else can run
        for stage in (_query_stage, _tool_stage, _concurrent_stage):
            try:
                row.update(stage(side, work, args))
            except (RuntimeError, subprocess.TimeoutExpired) as exc:
                row["errors"].append(str(exc))
    return row


ROWS = [("import (in-process, s)", "import_s", 3), ("python -c 'import X' (s)", "python_c_import_s", 3),
        ("query() to result (s)", "query_s", 3), ("  the process's first query() (s)", "first_query_s", 3), ("tool round trip (ms)", "tool_round_trip_s", 1),
        ("  tool_use → handler (ms)", "tool_to_handler_s", 1), ("  handler → next request (ms)", "tool_back_s", 1),
        ("peak RSS per session (MB)", "rss_per_session_mb", 1), ("CPU per session (ms)", "cpu_per_session_s", 1),
        ("sessions per core (/s)", "sessions_per_core_s", 1)]


def _shown(row: dict[str, Any] | None, key: str, digits: int) -> str:
    if row is None:
        return "not run"
    if key not in row:  # the stage failed (its error was printed)
        return "pending the API" if row["client"] == "ours" else "failed"
    value = row[key] * (1000 if key.startswith("tool_") or key == "cpu_per_session_s" else 1)
    return f"{value:.{digits}f}"


def targets(ours: dict[str, Any], sdk: dict[str, Any]) -> list[str]:
    checks = [("import <= 0.3 s", ours["import_s"] <= 0.3, f"{ours['import_s']:.3f} s"),
              ("result <= 1/5 of the SDK's", ours["query_s"] <= sdk["query_s"] / 5,
               f"SDK is {sdk['query_s'] / ours['query_s']:.1f}x ours"),
              ("tool round trip <= 5 ms", ours["tool_round_trip_s"] <= 0.005,
               f"{ours['tool_round_trip_s'] * 1000:.1f} ms"),
              ("RSS per session <= 1/10 of the SDK's", ours["rss_per_session_mb"] <= sdk["rss_per_session_mb"] / 10,
               f"SDK is {sdk['rss_per_session_mb'] / max(ours['rss_per_session_mb'], 0.01):.1f}x ours")]
    return [f"  [{'MET ' if ok else 'MISS'}] {name}: {shown}" for name, ok, shown in checks]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=5, help="queries timed per client (after one warm-up)")
    parser.add_argument("--import-reps", type=int, default=7)
    parser.add_argument("--calls", type=int, default=20, help="tool calls in the round-trip query")
    parser.add_argument("--sessions", type=int, default=8, help="concurrent sessions for RSS and CPU")
    parser.add_argument("--only", choices=("sdk", "ours"), help="measure one client only")
    parser.add_argument("--claude", help="the Claude Code binary the SDK drives (default: its bundled one)")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "api-latest.json"))
    parser.add_argument("--worker", choices=("sdk", "ours"), help=argparse.SUPPRESS)
    parser.add_argument("--task", choices=("query", "tool", "concurrent"), help=argparse.SUPPRESS)
    parser.add_argument("--urls", help=argparse.SUPPRESS)
    parser.add_argument("--cwd", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        import asyncio
        print(json.dumps(asyncio.run(_worker(args))))
        return 0
    if not (SDK_SITE / "claude_agent_sdk").is_dir() and args.only != "ours":
        print(f"no claude-agent-sdk in {SDK_SITE}: run scripts/install-agent-sdk.sh", file=sys.stderr)
        return 2
    results: dict[str, dict[str, Any]] = {}
    for side in ("sdk", "ours"):
        if not args.only or side == args.only:
            results[side] = measure(side, args)
            for error in results[side]["errors"]:
                print(f"{side}: {error}", file=sys.stderr)
    floor = mock_floor()
    sdk, ours = results.get("sdk"), results.get("ours")
    print("| metric | claude-agent-sdk | mini_claude.api | sdk/ours |\n|---|---|---|---|")
    for label, key, digits in ROWS:
        ratio = ""
        if sdk and ours and key in sdk and key in ours and ours[key]:
            r = sdk[key] / ours[key]
            ratio = f"{r:.1f}x" if r >= 1 else f"{r:.3f}x"
        print(f"| {label} | {_shown(sdk, key, digits)} | {_shown(ours, key, digits)} | {ratio} |")
    print(f"\nmock answer floor (a bare HTTP client, in every round trip above): {floor * 1000:.2f} ms")
    if sdk and ours and not sdk["errors"] and not ours["errors"]:
        print("targets:\n" + "\n".join(targets(ours, sdk)))
    Path(args.out).write_text(json.dumps({"when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                                          "config": {k: v for k, v in vars(args).items() if v is not None},
                                          "mock_floor_s": floor, "results": results}, indent=2))
    return 1 if any(row["errors"] for row in results.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
