"""Benchmark our MCP client against the official `mcp` SDK and a raw httpx floor, over Streamable HTTP.

One loopback server for the whole run (bench/http_server.py: stateless, JSON responses, both protocol eras) is
started on an ephemeral port and reaped at the end. Every measurement runs in a fresh worker subprocess (this file
with `--worker ...`), one client and one era per process, so CPU time and memory are that client's alone. Rounds
rotate the order of the clients; figures are medians over rounds, except the 10 MB result (best sample).

Eras: legacy (`initialize`, pinned 2025-11-25) and modern (2026-07-28: `server/discover`, per-request `_meta`).
Ours: `McpClient(protocol_version=...)` + `StreamableHttpTransport`. SDK: `mcp.Client(url, mode="legacy")` and
`mode="auto"` (probes `server/discover` and adopts 2026-07-28, the same round trips as ours pinned). Raw: an
`httpx.AsyncClient` POSTing JSON-RPC and parsing the JSON reply.

Run:  .venv/bin/python bench/http_bench.py            (~3 minutes on 2 cores)
      .venv/bin/python bench/http_bench.py --quick    (~40 s, one round, fewer calls)
Writes bench/results/http-latest.json and prints a table per era.
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
import time
from pathlib import Path
from typing import Any

import run as stdio_bench  # bench/run.py: worker environment, RSS, result plumbing, formatting

BENCH_DIR = Path(__file__).resolve().parent
SERVER = str(BENCH_DIR / "http_server.py")
RESULTS_DIR = BENCH_DIR / "results"
CLIENTS = ("ours", "sdk", "raw")
ERAS = ("legacy", "modern")
VERSIONS = {"legacy": "2025-11-25", "modern": "2026-07-28"}
MB = 1_000_000
BIG_SIZE = 10 * MB
CALL_TIMEOUT_S = 60.0
CONNECT_TIMEOUT_S = 30.0
IN_FLIGHT = 16
WARMUP_CALLS = 50
WARM_CONNECTS = 5
BIG_REPS = 5  # at most this many 10 MB calls per worker ...
BIG_REP_BUDGET_S = 2.0  # ... while their total stays under this
SERVER_START_TIMEOUT_S = 30.0


# ---- clients (imported lazily: a worker loads only its own client's layer) ----------------------------------


def import_layer(kind: str) -> None:
    """Import one client's MCP layer and its HTTP library (ours imports httpx lazily, in `start()`)."""
    if kind == "ours":
        import httpx

        import mini_claude.mcp.client
        import mini_claude.mcp.transports.http  # noqa: F401
    elif kind == "sdk":
        from mcp import Client  # noqa: F401
    else:
        import httpx  # noqa: F401


class Adapter(abc.ABC):
    """The same operations on each client: connect, list_tools (-> count), call (-> text), close, version."""

    def __init__(self, url: str, era: str) -> None:
        self.url = url
        self.era = era

    @abc.abstractmethod
    async def connect(self) -> None:
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

    @abc.abstractmethod
    def version(self) -> str | None:
        """(each client implements it)"""


class OursAdapter(Adapter):
    async def connect(self) -> None:
        from mini_claude.mcp.client import McpClient
        from mini_claude.mcp.transports.http import StreamableHttpTransport

        transport = StreamableHttpTransport(self.url, server="bench")
        self.client = McpClient(transport, name="bench", protocol_version=VERSIONS[self.era])
        await self.client.connect(timeout_s=CONNECT_TIMEOUT_S)

    async def list_tools(self) -> int:
        return len(await self.client.list_tools())

    async def call(self, name: str, args: dict[str, Any], timeout_s: float = CALL_TIMEOUT_S) -> str:
        result = await self.client.call_tool(name, args, timeout_s=timeout_s)
        return result.content[0]["text"]

    async def close(self) -> None:
        await self.client.close()

    def version(self) -> str | None:
        return self.client.protocol_version


class SdkAdapter(Adapter):
    async def connect(self) -> None:
        from mcp import Client

        self.stack = contextlib.AsyncExitStack()
        # "auto" probes server/discover and adopts 2026-07-28 (a pinned mode would skip that round trip)
        client = Client(self.url, mode="legacy" if self.era == "legacy" else "auto",
                        read_timeout_seconds=CALL_TIMEOUT_S)
        self.client = await self.stack.enter_async_context(client)

    async def list_tools(self) -> int:
        # list first in every run: the SDK re-lists on a call to a tool it has not seen (output-schema cache)
        return len((await self.client.list_tools()).tools)

    async def call(self, name: str, args: dict[str, Any], timeout_s: float = CALL_TIMEOUT_S) -> str:
        result = await self.client.call_tool(name, args, read_timeout_seconds=timeout_s)
        return result.content[0].text  # type: ignore[union-attr]

    async def close(self) -> None:
        await self.stack.aclose()

    def version(self) -> str | None:
        return self.client.protocol_version


class RawAdapter(Adapter):
    """The floor: POST one JSON-RPC message, parse the JSON reply; no validation, no SSE, no session handling."""

    async def connect(self) -> None:
        import httpx

        self.http = httpx.AsyncClient(timeout=httpx.Timeout(CALL_TIMEOUT_S))
        self.next_id = 0
        self.headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        self.meta: dict[str, Any] | None = None
        if self.era == "legacy":
            result = await self.request("initialize", {"protocolVersion": VERSIONS["legacy"], "capabilities": {},
                                                       "clientInfo": {"name": "raw", "version": "0"}})
            self.headers["MCP-Protocol-Version"] = self.negotiated = result["protocolVersion"]
            await self.http.post(self.url, headers=self.headers,
                                 content=b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        else:
            self.headers["MCP-Protocol-Version"] = VERSIONS["modern"]
            self.meta = {"io.modelcontextprotocol/protocolVersion": VERSIONS["modern"],
                         "io.modelcontextprotocol/clientCapabilities": {},
                         "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}}
            result = await self.request("server/discover", {})
            self.negotiated = result["supportedVersions"][0]

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        self.next_id += 1
        headers = self.headers
        if self.meta is not None:
            params = {**params, "_meta": self.meta}
            headers = {**headers, "Mcp-Method": method}
        body = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}).encode()
        response = await self.http.post(self.url, headers=headers, content=body)
        reply = json.loads(response.content)
        if "error" in reply:
            raise RuntimeError(reply["error"])
        return reply["result"]

    async def list_tools(self) -> int:
        return len((await self.request("tools/list", {}))["tools"])

    async def call(self, name: str, args: dict[str, Any], timeout_s: float = CALL_TIMEOUT_S) -> str:
        result = await asyncio.wait_for(self.request("tools/call", {"name": name, "arguments": args}), timeout_s)
        return result["content"][0]["text"]

    async def close(self) -> None:
        await self.http.aclose()

    def version(self) -> str | None:
        return self.negotiated


ADAPTERS: dict[str, type[Adapter]] = {"ours": OursAdapter, "sdk": SdkAdapter, "raw": RawAdapter}


async def connected(kind: str, url: str, era: str) -> Adapter:
    adapter = ADAPTERS[kind](url, era)
    await adapter.connect()
    if adapter.version() != VERSIONS[era]:
        raise AssertionError(f"{kind} {era}: negotiated {adapter.version()!r}, expected {VERSIONS[era]}")
    return adapter


# ---- workers (one measurement family, one client, one era, one process) ------------------------------------


def server_cpu_s(pid: int | None) -> float | None:
    """utime + stime of the server process in seconds (Linux /proc), to show it is not the bottleneck."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def worker_connect(kind: str, url: str, era: str) -> dict[str, Any]:
    """initialize (or server/discover) -> first tools/list: the first connection of a process, then warm ones."""
    import_layer(kind)
    samples = []
    for _ in range(1 + WARM_CONNECTS):
        t0 = time.perf_counter()
        adapter = await connected(kind, url, era)
        assert await adapter.list_tools() == 2
        samples.append(time.perf_counter() - t0)
        await adapter.close()
    return {"connect_first_s": samples[0], "connect_warm_s": statistics.median(samples[1:]), "samples": samples}


async def worker_calls(kind: str, url: str, era: str, seq_calls: int, total: int, reps: int,
                       server_pid: int | None) -> dict[str, Any]:
    import_layer(kind)
    adapter = await connected(kind, url, era)
    await adapter.list_tools()
    args = {"text": "hello from the benchmark"}
    for _ in range(WARMUP_CALLS):
        await adapter.call("echo", args)
    latencies = []
    clock = time.perf_counter
    cpu0 = time.process_time()
    for _ in range(seq_calls):
        t0 = clock()
        await adapter.call("echo", args)
        latencies.append(clock() - t0)
    seq_cpu = (time.process_time() - cpu0) / seq_calls
    latencies.sort()

    async def lane(budget: list[int]) -> None:
        while budget[0] > 0:
            budget[0] -= 1
            text = await adapter.call("echo", args)
            assert text == args["text"]

    throughput, cpu, server_cpu = [], [], []
    for _ in range(reps):
        budget = [total]
        wall0, cpu0, srv0 = clock(), time.process_time(), server_cpu_s(server_pid)
        await asyncio.gather(*(lane(budget) for _ in range(IN_FLIGHT)))
        wall, used, srv1 = clock() - wall0, time.process_time() - cpu0, server_cpu_s(server_pid)
        throughput.append(total / wall)
        cpu.append(used / total)
        if srv0 is not None and srv1 is not None:
            server_cpu.append((srv1 - srv0) / total)
    await adapter.close()
    return {
        "seq_p50_s": latencies[len(latencies) // 2],
        "seq_p99_s": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
        "seq_cpu_per_call_s": seq_cpu,
        "throughput_cps": statistics.median(throughput),
        "cpu_per_call_s": statistics.median(cpu),
        "server_cpu_per_call_s": statistics.median(server_cpu) if server_cpu else None,
        "throughput_samples": throughput,
        "cpu_samples": cpu,
    }


async def worker_big(kind: str, url: str, era: str, timeout_s: float) -> dict[str, Any]:
    """Seconds per 10 MB result; a timeout records None and ends the worker (its client is in a bad state)."""
    import_layer(kind)
    adapter = await connected(kind, url, era)
    await adapter.list_tools()
    await adapter.call("big", {"size": 1000})
    samples: list[float | None] = []
    out: dict[str, Any] = {"samples": samples}
    while len(samples) < BIG_REPS and sum(samples) < BIG_REP_BUDGET_S:  # type: ignore[arg-type]
        t0 = time.perf_counter()
        try:
            text = await asyncio.wait_for(adapter.call("big", {"size": BIG_SIZE}, timeout_s), timeout_s)
        except Exception as exc:  # TimeoutError, or the SDK's own timeout error
            samples.append(None)
            out["error_detail"] = f"{type(exc).__name__} after {time.perf_counter() - t0:.1f}s"
            stdio_bench.emit(out)
            os._exit(0)
        samples.append(time.perf_counter() - t0)
        assert len(text) == BIG_SIZE
        del text
    out["VmHWM_after"] = stdio_bench.rss_mb().get("VmHWM")
    await adapter.close()
    return out


def run_worker(args: argparse.Namespace) -> None:
    kind, url, era = args.client, args.url, args.era
    if args.worker == "connect":
        result = asyncio.run(worker_connect(kind, url, era))
    elif args.worker == "calls":
        result = asyncio.run(worker_calls(kind, url, era, args.seq, args.total, args.reps, args.server_pid))
    else:
        result = asyncio.run(worker_big(kind, url, era, args.big_timeout))
    stdio_bench.emit(result)


# ---- orchestration ------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def http_server() -> Any:
    """Start bench/http_server.py on an ephemeral loopback port; yield (url, pid); terminate and reap it."""
    proc = subprocess.Popen([sys.executable, SERVER, "--port", "0", "--prebuild", f"1000,{BIG_SIZE}"],
                            stdout=subprocess.PIPE, text=True, env=stdio_bench.worker_env())
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        line = ""
        while time.monotonic() < deadline and not line.startswith("LISTENING "):
            line = proc.stdout.readline()
            if not line and proc.poll() is not None:
                raise RuntimeError(f"http_server.py exited {proc.returncode} before listening")
        if not line.startswith("LISTENING "):
            raise RuntimeError("http_server.py did not start listening in time")
        yield line.split()[1], proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def spawn(worker: str, client: str, era: str, url: str, *extra: str, timeout_s: float = 300) -> dict[str, Any]:
    argv = [sys.executable, str(Path(__file__).resolve()), "--worker", worker, "--client", client, "--era", era,
            "--url", url, *extra]
    return stdio_bench._run(argv, timeout_s, stdio_bench.worker_env())


def order(round_no: int) -> list[str]:
    shift = round_no % len(CLIENTS)
    return list(CLIENTS[shift:] + CLIENTS[:shift])


def collect(args: argparse.Namespace) -> dict[str, Any]:
    raw: dict[str, dict[str, dict[str, list[dict[str, Any]]]]] = {e: {c: {} for c in CLIENTS} for e in ERAS}

    def record(era: str, client: str, family: str, result: dict[str, Any]) -> None:
        if "error" in result:
            print(f"  ! {era} {client} {family}: {result['error']}", file=sys.stderr)
        raw[era][client].setdefault(family, []).append(result)

    t_start = time.perf_counter()
    with http_server() as (url, pid):
        print(f"server {url} (pid {pid})", file=sys.stderr)
        for era in ERAS:  # one throw-away worker per client: the first run may write .pyc files
            for client in CLIENTS:
                spawn("connect", client, era, url)
        for i in range(args.rounds):
            print(f"round {i + 1}/{args.rounds} ...", file=sys.stderr)
            for era in ERAS:
                for client in order(i):
                    record(era, client, "connect", spawn("connect", client, era, url))
                    record(era, client, "calls", spawn("calls", client, era, url, "--seq", str(args.seq),
                                                       "--total", str(args.total), "--reps", str(args.reps),
                                                       "--server-pid", str(pid)))
                    record(era, client, "big", spawn("big", client, era, url, "--big-timeout",
                                                     str(args.big_timeout), timeout_s=args.big_timeout + 120))
    elapsed = time.perf_counter() - t_start

    median_of, scale = stdio_bench.median_of, stdio_bench._scale
    summary: dict[str, dict[str, dict[str, Any]]] = {}
    for era in ERAS:
        summary[era] = {}
        for client in CLIENTS:
            fam = raw[era][client]
            calls = fam.get("calls", [])
            ok_big = [b for b in fam.get("big", []) if "error" not in b]
            big_samples = [t for b in ok_big for t in b["samples"]]
            timed_out = None in big_samples
            done = [t for t in big_samples if t is not None]
            summary[era][client] = {
                "connect_first_ms": scale(median_of(fam.get("connect", []), "connect_first_s"), 1e3),
                "connect_warm_ms": scale(median_of(fam.get("connect", []), "connect_warm_s"), 1e3),
                "seq_p50_us": scale(median_of(calls, "seq_p50_s"), 1e6),
                "seq_p99_us": scale(median_of(calls, "seq_p99_s"), 1e6),
                "seq_cpu_per_call_us": scale(median_of(calls, "seq_cpu_per_call_s"), 1e6),
                "throughput_cps": median_of(calls, "throughput_cps"),
                "cpu_per_call_us": scale(median_of(calls, "cpu_per_call_s"), 1e6),
                "server_cpu_per_call_us": scale(median_of(calls, "server_cpu_per_call_s"), 1e6),
                "big10mb_s": min(done) if done and not timed_out else None,
                "big10mb_s_timed_out": timed_out,
                "big_peak_rss_mb": max((b["VmHWM_after"] for b in ok_big if b.get("VmHWM_after")), default=None),
            }
    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()},
        "config": {k: v for k, v in vars(args).items() if k not in ("worker", "client", "era", "url", "server_pid")},
        "server": "bench/http_server.py (stateless, JSON responses)",
        "versions": VERSIONS,
        "elapsed_s": elapsed,
        "summary": summary,
        "raw": raw,
    }


ROWS = [  # key, label, format
    ("connect_first_ms", "connect → first tools/list, 1st in process (ms)", "{:.1f}"),
    ("connect_warm_ms", f"connect → first tools/list, warm, median of {WARM_CONNECTS} (ms)", "{:.2f}"),
    ("seq_p50_us", "sequential call p50 (µs)", "{:.0f}"),
    ("seq_p99_us", "sequential call p99 (µs)", "{:.0f}"),
    ("seq_cpu_per_call_us", "client CPU/call, sequential (µs)", "{:.0f}"),
    ("throughput_cps", f"throughput, {IN_FLIGHT} in flight (calls/s)", "{:.0f}"),
    ("cpu_per_call_us", f"client CPU/call, {IN_FLIGHT} in flight (µs)", "{:.0f}"),
    ("big10mb_s", "10 MB result (s)", "{:.3f}"),
    ("big_peak_rss_mb", "peak RSS after 10 MB results (MB)", "{:.0f}"),
    ("server_cpu_per_call_us", f"  (server CPU/call, {IN_FLIGHT} in flight, µs)", "{:.0f}"),
]


def table(results: dict[str, Any], era: str) -> str:
    s = results["summary"][era]
    fmt, ratio = stdio_bench.fmt, stdio_bench.ratio
    cap = f">{results['config']['big_timeout']:g}s"
    header = ["metric", "ours", "sdk", "raw", "ours/raw", "sdk/ours"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for key, label, pattern in ROWS:
        o, k, r = (s[c][key] for c in CLIENTS)
        cells = [label, *(fmt(v, pattern, cap if s[c].get(key + "_timed_out") else "n/a")
                          for c, v in zip(CLIENTS, (o, k, r), strict=True))]
        if key.startswith("server_"):
            cells += ["", ""]
        else:
            cells += [ratio(o, r), ratio(k, o)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def report(results: dict[str, Any]) -> str:
    lines = [f"mini-claude MCP client benchmark, Streamable HTTP, {results['date']}, Python "
             f"{results['machine']['python']}, {results['machine']['cpus']} CPUs, run took "
             f"{results['elapsed_s']:.0f}s" + (" (--quick)" if results["config"]["quick"] else "")]
    for era in ERAS:
        lines += ["", f"{era} era ({VERSIONS[era]}):", "", table(results, era)]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description="Benchmark ours vs the mcp SDK vs raw httpx over Streamable HTTP.")
    parser.add_argument("--quick", action="store_true", help="one round, fewer calls (~40 s)")
    parser.add_argument("--worker", choices=("connect", "calls", "big"), help=argparse.SUPPRESS)
    parser.add_argument("--client", choices=CLIENTS, help=argparse.SUPPRESS)
    parser.add_argument("--era", choices=ERAS, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--server-pid", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, help="rounds of workers per client and era (default 3, quick 1)")
    parser.add_argument("--seq", type=int, help="sequential calls per worker (default 1000, quick 300)")
    parser.add_argument("--total", type=int, help="calls per in-flight repetition (default 1600, quick 640)")
    parser.add_argument("--reps", type=int, help="in-flight repetitions per worker (default 3, quick 2)")
    parser.add_argument("--big-timeout", type=float, help="cap per 10 MB result in seconds (default 30, quick 15)")
    parser.add_argument("--out", default=str(RESULTS_DIR / "http-latest.json"), help="where to write the JSON")
    args = parser.parse_args()
    defaults = {"rounds": (3, 1), "seq": (1000, 300), "total": (1600, 640), "reps": (3, 2),
                "big_timeout": (30.0, 15.0)}
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
