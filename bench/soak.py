"""Endurance soak: one process drives many MCP servers through `McpManager` for a long time and watches what it holds.

    python bench/soak.py [--calls 50000] [--cycles 500] [--crashes 500] [--servers 10] [--http 2] [--json FILE]

What runs (all in this process, one event loop, one long-lived `McpManager`):

* `--servers` servers: `--http` of them are bench/http_server.py (streamable HTTP on loopback, one process each,
  started here), the rest tests/mcp/servers/probe_server.py (stdio, started by the manager);
* `--calls` tool calls spread over every server, `--concurrency` at a time (every 50th to probe's `fail`, an
  isError result; the rest `echo`, each answer checked);
* `--cycles` connect/disconnect cycles: one server at a time (round robin) is switched off and on again
  (`set_enabled`) and called; every `--fresh-every`th cycle a second, short-lived manager also starts every server,
  calls each once and shuts down;
* `--crashes` crash/restart cycles: a stdio server's `crash` tool exits its process (the call fails), then
  `restart()` brings it back (every `--heal-every`th waits for self-healing instead: calls until one succeeds); every
  `--http-crash-every`th cycle an HTTP server is killed (SIGKILL), called while it is down (refused: the
  connection is lost, its tools stay listed), started again on the same port, and called until the manager has
  reconnected.

Measured (`probe()`): open file descriptors (/proc/self/fd), OS threads (/proc/self/task), asyncio tasks, child
processes and zombies among them (/proc/*/stat), RSS (VmRSS, after `gc.collect()`). `pre` is before any manager;
`start` after a warm-up (every kind of work done once: first-use allocations are not leaks); then after each
phase and at `--samples` points inside it; `end` with the same servers up, `closed` after `aclose()`. A leak is
anything that grows from `start` to `end` (fds, threads, tasks, children must come back exactly; RSS within a
bound) or does not return to `pre` after `closed`. Counts that settle asynchronously (a reaped child, a closed
pipe) are waited for with a timeout (`settle`), never slept for.

`run_soak()` is what tests/soak/test_soak_short.py runs with small numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: bench/ is sys.path[0], the package is one up
    sys.path.insert(0, str(ROOT))

from mini_claude.errors import McpError  # noqa: E402
from mini_claude.mcp.config import load_mcp_config  # noqa: E402
from mini_claude.mcp.manager import McpManager  # noqa: E402
from mini_claude.mcp.server_state import ServerStatus  # noqa: E402

PROBE = ROOT / "tests" / "mcp" / "servers" / "probe_server.py"
HTTP_SERVER = ROOT / "bench" / "http_server.py"
SETTLE_S = 15.0
CALL_S = 30.0


@dataclass(frozen=True)
class Sample:
    """What the process holds at one moment."""

    label: str
    at_s: float
    fds: int
    threads: int
    tasks: int
    children: int
    zombies: int
    rss_kb: int

    def counts(self) -> tuple[int, int, int, int, int]:
        return (self.fds, self.threads, self.tasks, self.children, self.zombies)


def _children() -> tuple[int, int]:
    """(children, zombies) of this process, from /proc."""
    me, children, zombies = os.getpid(), 0, 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if int(fields[1]) == me:
            children += 1
            zombies += fields[0] == "Z"
    return children, zombies


def _rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def probe(label: str, began: float) -> Sample:
    """A sample now (call from inside the event loop: it counts the loop's tasks, this one included)."""
    gc.collect()
    children, zombies = _children()
    return Sample(label=label, at_s=round(time.monotonic() - began, 2), fds=len(os.listdir("/proc/self/fd")),
                  threads=len(os.listdir("/proc/self/task")), tasks=len(asyncio.all_tasks()), children=children,
                  zombies=zombies, rss_kb=_rss_kb())


async def settle(label: str, began: float, target: Sample, within_s: float = SETTLE_S) -> Sample:
    """Wait (bounded) until fds/threads/tasks/children/zombies are back at `target`'s; the last sample either way."""
    deadline = time.monotonic() + within_s
    while True:
        now = probe(label, began)
        if now.counts() == target.counts() or time.monotonic() >= deadline:
            return now
        await asyncio.sleep(0.05)


async def steady(label: str, began: float, polls: int = 6, within_s: float = SETTLE_S) -> Sample:
    """Wait (bounded) until `polls` samples in a row, 0.1 s apart, agree on fds/threads/tasks/children/zombies (no
    close or reconnect of the warm-up still in flight); the last one."""
    deadline = time.monotonic() + within_s
    last, same = probe(label, began), 1
    while same < polls and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        now = probe(label, began)
        same = same + 1 if now.counts() == last.counts() else 1
        last = now
    return last


class HttpPeer:
    """One bench/http_server.py process on a fixed loopback port: started, killed, started again."""

    def __init__(self) -> None:
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        cmd = [sys.executable, str(HTTP_SERVER), "--port", str(self.port)]
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        assert proc.stdout is not None
        try:
            line = proc.stdout.readline().decode()  # "LISTENING http://127.0.0.1:PORT/mcp" (the server flushes it)
        finally:
            proc.stdout.close()  # never read again: no pipe kept open per server
        if not line.startswith("LISTENING "):
            proc.kill()
            proc.wait(5)
            raise RuntimeError(f"bench/http_server.py did not start: {line!r}")
        self.port = int(line.rsplit(":", 1)[1].split("/")[0])
        self.proc = proc

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def kill(self) -> None:
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
            self.proc = None


def _configs(home: Path, stdio: list[str], http: dict[str, str]) -> list[Any]:
    servers: dict[str, Any] = {name: {"command": sys.executable, "args": [str(PROBE)]} for name in stdio}
    servers.update({name: {"type": "http", "url": url} for name, url in http.items()})
    loaded = load_mcp_config(cwd=home, home=home, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
                             strict=True, extra=[json.dumps({"mcpServers": servers})])
    if loaded.errors:
        raise RuntimeError(f"soak config: {loaded.errors}")
    return list(loaded.servers.values())


class Soak:
    """The servers, the long-lived manager and the work; `samples` collects what `probe` saw."""

    def __init__(self, home: Path, n_servers: int, n_http: int, concurrency: int, heal_every: int,
                 log: Callable[[str], None]) -> None:
        self.home = home
        self.heal_every = heal_every
        self.stdio = [f"probe{i}" for i in range(n_servers - n_http)]
        self.http = {f"web{i}": HttpPeer() for i in range(n_http)}
        self.names = [*self.stdio, *self.http]
        self.concurrency = concurrency
        self.log = log
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
                    "MINI_CLAUDE_STATE_DIR": str(home / "state")}
        self.began = time.monotonic()
        self.samples: list[Sample] = []
        self.manager: McpManager | None = None
        self.counts = {"calls": 0, "errors_expected": 0, "reconnect_retries": 0, "cycles": 0, "fresh_managers": 0,
                       "crashes": 0, "healed": 0, "http_kills": 0, "refused_while_down": 0}

    def mark(self, sample: Sample) -> Sample:
        self.samples.append(sample)
        s = sample
        self.log(f"{s.label:>14} {s.at_s:8.1f}s  fds {s.fds:4d}  threads {s.threads:3d}  tasks {s.tasks:3d}  "
                 f"children {s.children:3d}  zombies {s.zombies}  rss {s.rss_kb / 1024:7.1f} MB")
        return sample

    def new_manager(self) -> McpManager:
        configs = _configs(self.home, self.stdio, {name: peer.url for name, peer in self.http.items()})
        return McpManager(configs, env=self.env, startup_timeout=CALL_S)

    async def up(self) -> McpManager:
        manager = self.new_manager()
        manager.start()
        await manager.wait_started()
        down = {n: s.error for n, s in manager.states.items() if s.status is not ServerStatus.READY}
        if down:
            await manager.aclose()
            raise RuntimeError(f"servers not ready: {down}")
        return manager

    async def call(self, manager: McpManager, name: str, k: int) -> None:
        """One checked call: `echo` (its text back) or, every 50th on a stdio server, `fail` (an isError result)."""
        if name in self.stdio and (k // len(self.names)) % 50 == 49:
            result = await manager.call_tool(name, "fail", {})
            if not result.is_error:
                raise AssertionError(f"{name}: fail gave no isError result")
            self.counts["errors_expected"] += 1
        else:
            result = await manager.call_tool(name, "echo", {"text": f"soak-{k}"})
            text = result.content[0].get("text", "") if result.content else ""
            if not str(text).endswith(f"soak-{k}"):
                raise AssertionError(f"{name}: echo {k} answered {text!r}")
        self.counts["calls"] += 1

    async def call_until_ok(self, manager: McpManager, name: str, k: int, within_s: float = CALL_S) -> int:
        """Call until one succeeds (a lost connection reconnects, a crashed server heals); the failures seen."""
        deadline, failures = time.monotonic() + within_s, 0
        while True:
            try:
                await self.call(manager, name, k)
                return failures
            except McpError:
                failures += 1
                if time.monotonic() >= deadline:
                    raise
                await asyncio.sleep(0.05)

    # ---- phases ----------------------------------------------------------------------------------------------

    async def calls(self, total: int, points: int) -> None:
        manager = self.manager
        assert manager is not None
        done = 0
        next_mark = total // points if points else total + 1

        async def worker(start: int) -> None:
            nonlocal done
            for k in range(start, total, self.concurrency):
                await self.call(manager, self.names[k % len(self.names)], k)
                done += 1

        workers = [asyncio.create_task(worker(i), name=f"soak-worker-{i}") for i in range(self.concurrency)]
        try:
            while not all(w.done() for w in workers):
                await asyncio.wait(workers, timeout=0.5, return_when=asyncio.FIRST_EXCEPTION)
                if any(w.done() and w.exception() for w in workers):
                    break
                if done >= next_mark and done < total:
                    self.mark(probe(f"calls {done}", self.began))
                    next_mark += total // points
        finally:
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
        for w in workers:
            if w.exception() is not None:
                raise w.exception()  # type: ignore[misc]

    async def cycles(self, total: int, fresh_every: int, points: int) -> None:
        manager = self.manager
        assert manager is not None
        for i in range(total):
            name = self.names[i % len(self.names)]
            off = await manager.set_enabled(name, False)
            if off.status is not ServerStatus.DISABLED:
                raise AssertionError(f"{name}: switched off but {off.status.label}")
            on = await manager.set_enabled(name, True)
            if on.status is not ServerStatus.READY:
                raise AssertionError(f"{name}: switched on but {on.status.label}: {on.error}")
            await self.call(manager, name, i)
            if fresh_every and i % fresh_every == fresh_every - 1:
                other = await self.up()
                try:
                    for k, other_name in enumerate(self.names):
                        await self.call(other, other_name, k)
                finally:
                    await other.aclose()
                self.counts["fresh_managers"] += 1
            self.counts["cycles"] += 1
            if points and (i + 1) % max(1, total // points) == 0 and i + 1 < total:
                self.mark(probe(f"cycles {i + 1}", self.began))

    async def crashes(self, total: int, http_every: int, points: int) -> None:
        manager = self.manager
        assert manager is not None
        for i in range(total):
            if http_every and self.http and i % http_every == http_every - 1:
                name = list(self.http)[(i // http_every) % len(self.http)]
                peer = self.http[name]
                before = manager.states[name].client
                peer.kill()
                try:  # refused while it is down: the connection is lost, the tools stay listed
                    await self.call(manager, name, i)
                except McpError:
                    self.counts["refused_while_down"] += 1
                peer.start()
                self.counts["http_kills"] += 1
                self.counts["reconnect_retries"] += await self.call_until_ok(manager, name, i)
                if manager.states[name].client is before:
                    raise AssertionError(f"{name}: its server was killed and restarted, but no new client connected")
            else:
                name = self.stdio[i % len(self.stdio)]
                try:
                    await manager.call_tool(name, "crash", {})
                except McpError:
                    pass
                else:
                    raise AssertionError(f"{name}: crash answered")
                self.counts["crashes"] += 1
                # every heal_every-th: self-healing (the next call after the backoff restarts it)
                if self.heal_every and self.counts["crashes"] % self.heal_every == 0:
                    await self.call_until_ok(manager, name, i)
                    self.counts["healed"] += 1
                else:
                    state = await manager.restart(name)
                    if state.status is not ServerStatus.READY:
                        raise AssertionError(f"{name}: restarted but {state.status.label}: {state.error}")
                    await self.call(manager, name, i)
            if points and (i + 1) % max(1, total // points) == 0 and i + 1 < total:
                self.mark(probe(f"crashes {i + 1}", self.began))

    async def warm_up(self) -> None:
        """Every kind of work once, so `start` counts what steady state holds, not first-use allocations."""
        await self.calls(len(self.names) * self.concurrency * 2, 0)
        await self.cycles(len(self.names), len(self.names), 0)
        await self.crashes(len(self.stdio) + 1, len(self.stdio) + 1, 0)


async def _run(soak: Soak, calls: int, cycles: int, crashes: int, fresh_every: int, http_crash_every: int,
               points: int) -> None:
    # the baseline once steady: a task still ending from before (the HTTP servers' start) made `pre` count one
    # task more than anything after it, and `closed` "differ" from it
    pre = soak.mark(await steady("pre", soak.began))
    soak.manager = await soak.up()
    try:
        await soak.warm_up()
        start = soak.mark(await steady("start", soak.began))
        phase_began = time.monotonic()
        await soak.calls(calls, points)
        calls_s = time.monotonic() - phase_began
        soak.mark(await settle("after calls", soak.began, start))
        await soak.cycles(cycles, fresh_every, points)
        soak.mark(await settle("after cycles", soak.began, start))
        await soak.crashes(crashes, http_crash_every, points)
        soak.mark(await settle("end", soak.began, start))
        soak.counts["calls_per_s"] = int(calls / calls_s) if calls_s > 0 else 0
    finally:
        await soak.manager.aclose()
    soak.mark(await settle("closed", soak.began, pre))


def run_soak(*, calls: int, cycles: int, crashes: int, servers: int = 10, http: int = 2, concurrency: int = 10,
             fresh_every: int = 25, http_crash_every: int = 10, heal_every: int = 50, points: int = 4,
             log: Callable[[str], None] = lambda _line: None) -> dict[str, Any]:
    """Run the soak; returns {"samples": [Sample as dict], "counts": {...}, "seconds": float}. The HTTP servers
    are started before `pre` and stopped after `closed` (they are part of the baseline)."""
    with tempfile.TemporaryDirectory(prefix="mini-claude-soak-") as tmp:
        soak = Soak(Path(tmp), servers, http, concurrency, heal_every, log)
        for peer in soak.http.values():
            peer.start()
        try:
            asyncio.run(_run(soak, calls, cycles, crashes, fresh_every, http_crash_every, points))
        finally:
            for peer in soak.http.values():
                peer.kill()
    return {"samples": [asdict(s) for s in soak.samples], "counts": soak.counts,
            "seconds": round(time.monotonic() - soak.began, 1)}


def by_label(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["label"]: s for s in result["samples"]}


def _main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50_000)
    parser.add_argument("--cycles", type=int, default=500, help="connect/disconnect cycles")
    parser.add_argument("--crashes", type=int, default=500, help="crash/restart cycles")
    parser.add_argument("--servers", type=int, default=10)
    parser.add_argument("--http", type=int, default=2, help="how many of the servers are streamable HTTP")
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--fresh-every", type=int, default=25, help="a whole second manager every N cycles")
    parser.add_argument("--http-crash-every", type=int, default=10, help="kill an HTTP server every N crash cycles")
    parser.add_argument("--heal-every", type=int, default=50, help="every Nth stdio crash heals by itself")
    parser.add_argument("--samples", type=int, default=4, help="samples inside each phase")
    parser.add_argument("--json", help="write the result here")
    args = parser.parse_args()
    result = run_soak(calls=args.calls, cycles=args.cycles, crashes=args.crashes, servers=args.servers,
                      http=args.http, concurrency=args.concurrency, fresh_every=args.fresh_every,
                      http_crash_every=args.http_crash_every, heal_every=args.heal_every, points=args.samples,
                      log=print)
    labels = by_label(result)
    start, end, pre, closed = labels["start"], labels["end"], labels["pre"], labels["closed"]
    print(json.dumps(result["counts"]))
    keys = ("fds", "threads", "tasks", "children", "zombies")
    grew = [k for k in keys if end[k] != start[k]] + [f"{k} (after close)" for k in keys if closed[k] != pre[k]]
    print("start→end: " + ", ".join(f"{k} {start[k]}→{end[k]}" for k in keys)
          + f", rss {start['rss_kb'] / 1024:.1f}→{end['rss_kb'] / 1024:.1f} MB; {result['seconds']} s")
    print("flat" if not grew else f"GREW: {', '.join(grew)}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    return 0 if not grew else 1


if __name__ == "__main__":
    sys.exit(_main())
