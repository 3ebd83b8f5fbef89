"""Benchmark our MCP client against the official `mcp` SDK and a raw asyncio floor, over stdio.

Every measurement runs in a fresh worker subprocess (this file with `--worker ...`), one client per process, so
imports, memory and CPU time belong to that client alone; the server (bench/server.py) is a separate process.
Rounds alternate the order of the clients; each figure is the median over rounds (and over repetitions inside a
worker where there are several), except big results: the best sample, as this machine's noise is additive.

Run:  .venv/bin/python bench/run.py            (~2 minutes on 2 cores)
      .venv/bin/python bench/run.py --quick    (~30 s, fewer rounds and calls)
Writes bench/results/latest.json and prints a table.
"""

from __future__ import annotations

import abc
import argparse
import asyncio
import contextlib
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
SERVER = str(BENCH_DIR / "server.py")
RESULTS_DIR = BENCH_DIR / "results"
PYCACHE_DIR = os.path.join(tempfile.gettempdir(), "mini-claude-bench-pycache")
CLIENTS = ("ours", "sdk", "raw")
MB = 1_000_000
BIG_SIZES = (1 * MB, 10 * MB, 40 * MB)
CALL_TIMEOUT_S = 120.0  # for ordinary calls; big calls get the --big-timeout cap
IN_FLIGHT = 64
LIST_TOOLS_MANY = 500
BIG_REPS = 5  # at most this many calls per size and worker ...
BIG_REP_BUDGET_S = 2.0  # ... while their total stays under this


# ---- clients (imported lazily: a worker loads only its own client's layer) ----------------------------------


def import_layer(kind: str) -> None:
    """Import the MCP layer of one client (what the import-time row measures)."""
    if kind == "ours":
        import mini_claude.mcp.client
        import mini_claude.mcp.transports.stdio  # noqa: F401
    elif kind == "sdk":
        from mcp import ClientSession  # noqa: F401
        from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: F401
    else:
        import raw_client  # noqa: F401  (asyncio + json)


def server_argv(tools: int, prebuild: tuple[int, ...] = ()) -> list[str]:
    argv = [SERVER, "--tools", str(tools)]
    if prebuild:
        argv += ["--prebuild", ",".join(map(str, prebuild))]
    return argv


class Adapter(abc.ABC):
    """The same four operations on each client: connect, list_tools (-> count), call (-> text), close."""

    @abc.abstractmethod
    async def connect(self, argv: list[str]) -> None:
        """(each client implements it)"""

    @abc.abstractmethod
    async def list_tools(self) -> int:
        """(each client implements it)"""

    @abc.abstractmethod
    async def call(self, name: str, args: dict[str, Any], timeout_s: float = CALL_TIMEOUT_S) -> str:
        """(each client implements it)"""

    @abc.abstractmethod
    async def close(self) -> None:
        """(each client implements it)"""


class OursAdapter(Adapter):
    async def connect(self, argv: list[str]) -> None:
        from mini_claude.mcp.client import McpClient
        from mini_claude.mcp.transports.stdio import StdioParams, StdioTransport

        transport = StdioTransport(StdioParams(sys.executable, argv), server="bench")
        self.client = McpClient(transport, name="bench")
        await self.client.connect(timeout_s=60)

    async def list_tools(self) -> int:
        self.tools = await self.client.list_tools()
        return len(self.tools)

    async def call(self, name: str, args: dict[str, Any], timeout_s: float = CALL_TIMEOUT_S) -> str:
        result = await self.client.call_tool(name, args, timeout_s=timeout_s)
        return result.content[0]["text"]

    async def close(self) -> None:
        await self.client.close()


class SdkAdapter(Adapter):
    async def connect(self, argv: list[str]) -> None:
        from mcp import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client

        self.stack = contextlib.AsyncExitStack()
        params = StdioServerParameters(command=sys.executable, args=argv)
        read, write = await self.stack.enter_async_context(stdio_client(params))
        self.session = await self.stack.enter_async_context(ClientSession(read, write))
        await self.session.initialize()

    async def list_tools(self) -> int:
        # list first in every run: the SDK re-lists on a call to a tool it has not seen (output-schema cache)
        self.tools = (await self.session.list_tools()).tools
        return len(self.tools)

    async def call(self, name: str, args: dict[str, Any], timeout_s: float = CALL_TIMEOUT_S) -> str:
        result = await self.session.call_tool(name, args, read_timeout_seconds=timeout_s)
        return result.content[0].text

    async def close(self) -> None:
        await self.stack.aclose()


class RawAdapter(Adapter):
    async def connect(self, argv: list[str]) -> None:
        from raw_client import RawClient

        self.client = RawClient([sys.executable, *argv])
        await self.client.start()
        await self.client.request("initialize", {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}})
        self.client.notify("notifications/initialized")

    async def list_tools(self) -> int:
        self.tools = (await self.client.request("tools/list", {}))["tools"]
        return len(self.tools)

    async def call(self, name: str, args: dict[str, Any], timeout_s: float = CALL_TIMEOUT_S) -> str:
        result = await asyncio.wait_for(self.client.request("tools/call", {"name": name, "arguments": args}),
                                        timeout_s)
        return result["content"][0]["text"]

    async def close(self) -> None:
        await self.client.close()


ADAPTERS: dict[str, type[Adapter]] = {"ours": OursAdapter, "sdk": SdkAdapter, "raw": RawAdapter}


# ---- workers (one measurement family, one client, one process) -------------------------------------------------


def rss_mb() -> dict[str, float]:
    """Current (VmRSS) and peak (VmHWM) resident memory of this process in MB (Linux)."""
    out: dict[str, float] = {}
    with contextlib.suppress(OSError), open("/proc/self/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0]) / 1024
    return out


IMPORT_STATEMENTS = {
    "ours": "import mini_claude.mcp.client, mini_claude.mcp.transports.stdio",
    "sdk": "from mcp import ClientSession; from mcp.client.stdio import StdioServerParameters, stdio_client",
    "raw": "import raw_client",  # asyncio + json
}


def spawn_import(kind: str, *, bytecode: bool = True) -> dict[str, Any]:
    """Import time in a bare interpreter (this module's own imports, asyncio among them, would hide the cost).

    `bytecode=False` runs with PYTHONDONTWRITEBYTECODE=1 and no cache: modules without a .pyc next to them (our
    editable checkout, in a sandbox that sets that variable) are compiled on every import.
    """
    code = (f"import sys, time; sys.path.insert(0, {str(BENCH_DIR)!r}); t0 = time.perf_counter(); "
            f"{IMPORT_STATEMENTS[kind]}; "
            "print('RESULT {\"import_s\": %r}' % (time.perf_counter() - t0))")
    env = worker_env() if bytecode else {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    if not bytecode:
        env.pop("PYTHONPYCACHEPREFIX", None)
    return _run([sys.executable, "-c", code], 60, env)


def worker_env() -> dict[str, str]:
    """Workers write and read bytecode in a cache outside the tree, like an installed package would have."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = PYCACHE_DIR
    return env


async def worker_startup(kind: str, tools: int) -> dict[str, Any]:
    baseline = rss_mb().get("VmRSS")  # this harness alone (asyncio, argparse, ...: ~22 MB with the interpreter)
    start = time.perf_counter()
    import_layer(kind)
    imported = time.perf_counter()
    adapter = ADAPTERS[kind]()
    await adapter.connect(server_argv(tools))
    count = await adapter.list_tools()
    listed = time.perf_counter()
    assert count == tools, (count, tools)
    memory = rss_mb()
    await adapter.close()
    return {"import_s": imported - start, "listed_s": listed - imported, "VmRSS_baseline": baseline, **memory}


async def worker_calls(kind: str, seq_calls: int, total: int, reps: int) -> dict[str, Any]:
    import_layer(kind)
    adapter = ADAPTERS[kind]()
    await adapter.connect(server_argv(2))
    await adapter.list_tools()
    args = {"text": "hello from the benchmark"}
    for _ in range(100):  # warm-up
        await adapter.call("echo", args)
    latencies = []
    clock = time.perf_counter
    for _ in range(seq_calls):
        t0 = clock()
        await adapter.call("echo", args)
        latencies.append(clock() - t0)
    latencies.sort()

    async def lane(budget: list[int]) -> None:
        while budget[0] > 0:
            budget[0] -= 1
            text = await adapter.call("echo", args)
            assert text == args["text"]

    throughput, cpu = [], []
    for _ in range(reps):
        budget = [total]
        wall0, cpu0 = clock(), time.process_time()
        await asyncio.gather(*(lane(budget) for _ in range(IN_FLIGHT)))
        wall, used = clock() - wall0, time.process_time() - cpu0
        throughput.append(total / wall)
        cpu.append(used / total)
    await adapter.close()
    return {
        "seq_p50_s": latencies[len(latencies) // 2],
        "seq_p99_s": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
        "throughput_cps": statistics.median(throughput),
        "cpu_per_call_s": statistics.median(cpu),
        "throughput_samples": throughput,
        "cpu_samples": cpu,
    }


async def worker_big(kind: str, sizes: list[int], timeout_s: float) -> dict[str, Any]:
    """Seconds per big result; a timeout records None and ends the worker (its client is now in a bad state)."""
    import_layer(kind)
    adapter = ADAPTERS[kind]()
    await adapter.connect(server_argv(2, tuple(sizes)))
    await adapter.list_tools()
    await adapter.call("big", {"size": 1000})
    out: dict[str, Any] = {}
    for size in sizes:
        samples: list[float | None] = out.setdefault(str(size), [])
        # fast clients repeat a size (best of several beats this machine's noise); a slow one does it once
        while len(samples) < BIG_REPS and sum(samples) < BIG_REP_BUDGET_S:  # type: ignore[arg-type]
            t0 = time.perf_counter()
            try:
                text = await asyncio.wait_for(adapter.call("big", {"size": size}, timeout_s), timeout_s)
            except Exception as exc:  # TimeoutError, or the SDK's own timeout error
                samples.append(None)
                out[f"{size}_error"] = f"{type(exc).__name__} after {time.perf_counter() - t0:.1f}s"
                emit(out)
                os._exit(0)  # the server gets EOF / EPIPE and exits
            samples.append(time.perf_counter() - t0)
            assert len(text) == size
            del text
    out["VmHWM_after"] = rss_mb().get("VmHWM")
    await adapter.close()
    return out


def emit(result: dict[str, Any]) -> None:
    sys.stdout.write("RESULT " + json.dumps(result) + "\n")
    sys.stdout.flush()


def run_worker(args: argparse.Namespace) -> None:
    if args.worker == "startup":
        emit(asyncio.run(worker_startup(args.client, args.tools)))
    elif args.worker == "calls":
        emit(asyncio.run(worker_calls(args.client, args.seq, args.total, args.reps)))
    elif args.worker == "big":
        emit(asyncio.run(worker_big(args.client, [int(s) for s in args.sizes.split(",")], args.big_timeout)))


# ---- orchestration ------------------------------------------------------------------------------------------------


def spawn(worker: str, client: str, *extra: str, timeout_s: float = 300) -> dict[str, Any]:
    argv = [sys.executable, str(Path(__file__).resolve()), "--worker", worker, "--client", client, *extra]
    return _run(argv, timeout_s, worker_env())


def _run(argv: list[str], timeout_s: float, env: dict[str, str]) -> dict[str, Any]:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"worker timed out after {timeout_s:.0f}s"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    return {"error": f"worker exited {proc.returncode}: {proc.stderr[-2000:]}"}


def order(round_no: int) -> list[str]:
    shift = round_no % len(CLIENTS)
    return list(CLIENTS[shift:] + CLIENTS[:shift])


def median_of(samples: list[dict[str, Any]], key: str) -> float | None:
    values = [s[key] for s in samples if s.get(key) is not None]
    return statistics.median(values) if values else None


def collect(args: argparse.Namespace) -> dict[str, Any]:
    raw: dict[str, dict[str, list[dict[str, Any]]]] = {c: {} for c in CLIENTS}

    def record(client: str, family: str, result: dict[str, Any]) -> None:
        if "error" in result:
            print(f"  ! {client} {family}: {result['error']}", file=sys.stderr)
        raw[client].setdefault(family, []).append(result)

    t_start = time.perf_counter()
    print(f"import time x{args.import_reps} ...", file=sys.stderr)
    for client in CLIENTS:  # one throw-away import each: the first run may write .pyc files
        spawn_import(client)
    for i in range(args.import_reps):
        for client in order(i):
            record(client, "import", spawn_import(client))
            record(client, "import_nopyc", spawn_import(client, bytecode=False))
    print(f"start -> tools listed x{args.rounds} ...", file=sys.stderr)
    for i in range(args.rounds):
        for client in order(i):
            record(client, "start1", spawn("startup", client, "--tools", "1"))
            record(client, f"start{LIST_TOOLS_MANY}", spawn("startup", client, "--tools", str(LIST_TOOLS_MANY)))
    print(f"calls x{args.rounds} ...", file=sys.stderr)
    for i in range(args.rounds):
        for client in order(i):
            record(client, "calls", spawn("calls", client, "--seq", str(args.seq), "--total", str(args.total),
                                          "--reps", str(args.reps)))
    print(f"big results x{args.big_rounds} (cap {args.big_timeout:g}s each) ...", file=sys.stderr)
    sizes = ",".join(map(str, BIG_SIZES))
    for i in range(args.big_rounds):
        for client in order(i):
            record(client, "big", spawn("big", client, "--sizes", sizes, "--big-timeout", str(args.big_timeout),
                                        timeout_s=args.big_timeout * len(BIG_SIZES) + 120))
    elapsed = time.perf_counter() - t_start

    summary: dict[str, dict[str, Any]] = {}
    for client in CLIENTS:
        fam = raw[client]
        big = fam.get("big", [])
        summary[client] = {
            "import_ms": _scale(median_of(fam.get("import", []), "import_s"), 1e3),
            "import_nopyc_ms": _scale(median_of(fam.get("import_nopyc", []), "import_s"), 1e3),
            "start1_ms": _scale(median_of(fam.get("start1", []), "listed_s"), 1e3),
            f"start{LIST_TOOLS_MANY}_ms": _scale(median_of(fam.get(f"start{LIST_TOOLS_MANY}", []), "listed_s"), 1e3),
            "rss500_mb": median_of(fam.get(f"start{LIST_TOOLS_MANY}", []), "VmRSS"),
            "seq_p50_us": _scale(median_of(fam.get("calls", []), "seq_p50_s"), 1e6),
            "seq_p99_us": _scale(median_of(fam.get("calls", []), "seq_p99_s"), 1e6),
            "throughput_cps": median_of(fam.get("calls", []), "throughput_cps"),
            "cpu_per_call_us": _scale(median_of(fam.get("calls", []), "cpu_per_call_s"), 1e6),
        }
        ok = [b for b in big if "error" not in b]
        for size in BIG_SIZES:
            key = f"big{size // MB}mb_s"
            samples = [t for b in ok for t in b.get(str(size), [])]
            # a worker that timed out on a smaller size never got here: that, too, is "over the cap"
            timed_out = None in samples or any(str(size) not in b for b in ok)
            done = [t for t in samples if t is not None]
            summary[client][key] = min(done) if done and not timed_out else None
            summary[client][key + "_timed_out"] = timed_out
        summary[client]["big_peak_rss_mb"] = max((b["VmHWM_after"] for b in ok if b.get("VmHWM_after")),
                                                 default=None)
    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()},
        "config": {k: v for k, v in vars(args).items() if k not in ("worker", "client")},
        "elapsed_s": elapsed,
        "summary": summary,
        "raw": raw,
    }


def _scale(value: float | None, factor: float) -> float | None:
    return None if value is None else value * factor


ROWS = [  # key, label, unit format, lower is better
    ("import_ms", "import MCP layer (ms)", "{:.1f}", True),
    ("import_nopyc_ms", "  same, no .pyc (PYTHONDONTWRITEBYTECODE=1)", "{:.1f}", True),
    ("start1_ms", "spawn+init+list, 1 tool (ms)", "{:.1f}", True),
    (f"start{LIST_TOOLS_MANY}_ms", f"spawn+init+list, {LIST_TOOLS_MANY} tools (ms)", "{:.1f}", True),
    ("rss500_mb", f"RSS after {LIST_TOOLS_MANY} tools (MB)", "{:.1f}", True),
    ("seq_p50_us", "sequential call p50 (µs)", "{:.0f}", True),
    ("seq_p99_us", "sequential call p99 (µs)", "{:.0f}", True),
    ("throughput_cps", f"throughput, {IN_FLIGHT} in flight (calls/s)", "{:.0f}", False),
    ("cpu_per_call_us", f"client CPU/call, {IN_FLIGHT} in flight (µs)", "{:.1f}", True),
    ("big1mb_s", "1 MB result (s)", "{:.3f}", True),
    ("big10mb_s", "10 MB result (s)", "{:.3f}", True),
    ("big40mb_s", "40 MB result (s)", "{:.3f}", True),
    ("big_peak_rss_mb", "peak RSS after the 40 MB result (MB)", "{:.0f}", True),
]


def fmt(value: float | None, pattern: str, cap: str) -> str:
    return cap if value is None else pattern.format(value)


def ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or b is None or b == 0 else f"{a / b:.2f}x"


def table(results: dict[str, Any]) -> str:
    s = results["summary"]
    cap = f">{results['config']['big_timeout']:g}s"
    header = ["metric", "ours", "sdk", "raw", "ours/raw", "sdk/ours"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for key, label, pattern, _ in ROWS:
        o, k, r = s["ours"][key], s["sdk"][key], s["raw"][key]
        cells = [label, *(fmt(v, pattern, cap if s[c].get(key + "_timed_out") else "n/a")
                          for c, v in zip(CLIENTS, (o, k, r), strict=True)),
                 ratio(o, r), ratio(k, o) if not s["sdk"].get(key + "_timed_out")
                 else f"> {ratio(results['config']['big_timeout'], o)}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def targets(results: dict[str, Any]) -> list[tuple[str, bool | None, str]]:
    s = results["summary"]
    o, k, r = s["ours"], s["sdk"], s["raw"]

    def check(name: str, ok: bool | None, detail: str) -> tuple[str, bool | None, str]:
        return name, ok, detail

    def both(*values: float | None) -> bool:
        return all(v is not None for v in values)

    out = []
    c_o, c_r, c_k = o["cpu_per_call_us"], r["cpu_per_call_us"], k["cpu_per_call_us"]
    out.append(check("CPU/call @64 <= 2x raw", c_o <= 2 * c_r if both(c_o, c_r) else None,
                     f"{ratio(c_o, c_r)} raw"))
    out.append(check("CPU/call @64 <= 1/8 SDK", c_o * 8 <= c_k if both(c_o, c_k) else None,
                     f"SDK is {ratio(c_k, c_o)} ours"))
    out.append(check("sequential p50 <= 1.5x raw", o["seq_p50_us"] <= 1.5 * r["seq_p50_us"]
                     if both(o["seq_p50_us"], r["seq_p50_us"]) else None, f"{ratio(o['seq_p50_us'], r['seq_p50_us'])} raw"))
    out.append(check("throughput @64 >= 7x SDK", o["throughput_cps"] >= 7 * k["throughput_cps"]
                     if both(o["throughput_cps"], k["throughput_cps"]) else None,
                     f"{ratio(o['throughput_cps'], k['throughput_cps'])} SDK"))
    out.append(check("import <= 80 ms", o["import_ms"] <= 80 if both(o["import_ms"]) else None,
                     f"{fmt(o['import_ms'], '{:.1f}', 'n/a')} ms"))
    out.append(check("RSS with 500 tools <= 40 MB", o["rss500_mb"] <= 40 if both(o["rss500_mb"]) else None,
                     f"{fmt(o['rss500_mb'], '{:.1f}', 'n/a')} MB"))
    t10, t40 = o["big10mb_s"], o["big40mb_s"]
    out.append(check("40 MB linear in size (t40/t10 <= 5)", t40 / t10 <= 5 if both(t10, t40) else None,
                     f"t40/t10 = {ratio(t40, t10)} (4x is linear; raw: {ratio(r['big40mb_s'], r['big10mb_s'])})"))
    return out


def report(results: dict[str, Any]) -> str:
    lines = [f"mini-claude MCP client benchmark, {results['date']}, Python {results['machine']['python']}, "
             f"{results['machine']['cpus']} CPUs, run took {results['elapsed_s']:.0f}s"
             + (" (--quick)" if results["config"]["quick"] else ""), "", table(results), "", "targets:"]
    for name, ok, detail in targets(results):
        mark = "n/a " if ok is None else ("MET " if ok else "MISS")
        lines.append(f"  [{mark}] {name}: {detail}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description="Benchmark ours vs the mcp SDK vs a raw asyncio client.")
    parser.add_argument("--quick", action="store_true", help="one round, fewer calls (~30 s)")
    parser.add_argument("--worker", choices=("startup", "calls", "big"), help=argparse.SUPPRESS)
    parser.add_argument("--client", choices=CLIENTS, help=argparse.SUPPRESS)
    parser.add_argument("--tools", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--sizes", default="", help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, help="rounds of start/calls workers per client (default 5, quick 1)")
    parser.add_argument("--big-rounds", type=int, help="rounds of big-result workers (default 2, quick 1)")
    parser.add_argument("--import-reps", type=int, help="import measurements per client (default 9, quick 3)")
    parser.add_argument("--seq", type=int, help="sequential calls per worker (default 2000, quick 500)")
    parser.add_argument("--total", type=int, help="calls per in-flight repetition (default 3200, quick 1280)")
    parser.add_argument("--reps", type=int, help="in-flight repetitions per worker (default 3, quick 2)")
    parser.add_argument("--big-timeout", type=float, help="cap per big result in seconds (default 30, quick 15)")
    parser.add_argument("--out", default=str(RESULTS_DIR / "latest.json"), help="where to write the JSON")
    args = parser.parse_args()
    defaults = {"rounds": (5, 1), "big_rounds": (2, 1), "import_reps": (9, 3), "seq": (2000, 500),
                "total": (3200, 1280), "reps": (3, 2), "big_timeout": (30.0, 15.0)}
    for key, (full, quick) in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, quick if args.quick else full)
    if args.worker:
        run_worker(args)
        return
    results = collect(args)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(report(results))
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
