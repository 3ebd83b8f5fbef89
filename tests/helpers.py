"""Helpers shared by every test folder: what a test requires (skip here, fail under CI), free loopback ports,
process liveness (pids, groups, pid files), bounded polls, environments for CLI and server subprocesses, and
running `python -m mini_claude`.

Imported as `tests.helpers` (pyproject sets pythonpath=["."]); conftest.py files hold fixtures only.

CI exports `MINI_CLAUDE_REQUIRE_PEERS=1`: then a missing third-party peer, ripgrep, tmux, Chromium or the conformance
runner fails the test that needs it (`require`), instead of skipping it quietly.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import pytest

__all__ = [
    "PYTHON",
    "REQUIRE_ENV",
    "ROOT",
    "anthropic_env",
    "assert_group_gone",
    "assert_pid_gone",
    "chromium_path",
    "clean_env",
    "eventually",
    "free_port",
    "is_zombie",
    "openai_env",
    "pid_alive",
    "pid_exists",
    "read_pidfile",
    "refused_port",
    "require",
    "require_program",
    "requirements_enforced",
    "run_cli",
    "server_configs",
    "server_env",
    "session_home",
    "start_tiny_http",
    "wait_gone",
    "wait_until",
]

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable  # the interpreter running the tests, never a hard-coded .venv path
REQUIRE_ENV = "MINI_CLAUDE_REQUIRE_PEERS"
POLL_INTERVAL_S = 0.02
CLI_TIMEOUT_S = 60.0


# ---- requirements: skip on a developer machine, fail under CI -----------------------------------------------------

def requirements_enforced() -> bool:
    """True under CI (`MINI_CLAUDE_REQUIRE_PEERS=1`): a missing requirement is a failure, not a skip."""
    return os.environ.get(REQUIRE_ENV) == "1"


def require(thing: str, reason: str) -> NoReturn:
    """`thing` (a peer, a program, the conformance runner) is missing: skip saying why, or fail under CI."""
    message = f"{thing} is missing: {reason}"
    if requirements_enforced():
        pytest.fail(f"{message} ({REQUIRE_ENV}=1: CI must provide it)", pytrace=False)
    pytest.skip(message)


def require_program(name: str, purpose: str) -> str:
    """The path of program `name` on PATH, or `require()` it (e.g. `require_program("tmux", "drives a terminal")`)."""
    path = shutil.which(name)
    if path is None:
        require(name, f"not on PATH ({purpose}); install it (`.ci/run` does, as root)")
    return path


CHROMIUM = Path("/usr/bin/chromium")


def chromium_path() -> str:
    """Debian's Chromium, which the browser tests drive with Playwright (`executable_path`; `playwright install` is
    never run), or `require()` it."""
    if not os.access(CHROMIUM, os.X_OK):
        require("chromium", f"{CHROMIUM} is not installed (browser tests drive it); `.ci/run` installs it as root")
    return str(CHROMIUM)


# ---- ports and bounded polls -------------------------------------------------------------------------------------

def free_port() -> int:
    """A loopback port nothing listens on (bound, then released). Released, it is anyone's: for a port that must
    refuse connections use `refused_port()`, for a server of ours `start_tiny_http()` (no race for the port)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


_refusing: socket.socket | None = None


def refused_port() -> int:
    """A loopback port that refuses every connection for as long as this process lives: it stays bound (so no
    other process, e.g. a server another xdist worker starts on port 0, can take it) but never listens."""
    global _refusing
    if _refusing is None:
        _refusing = socket.socket()
        _refusing.bind(("127.0.0.1", 0))
    return int(_refusing.getsockname()[1])


def start_tiny_http(*args: str) -> tuple[int, subprocess.Popen[bytes]]:
    """tests/mcp/servers/tiny_http_server.py serving on a socket bound and listening here, handed to it (`--fd`):
    its port is known and taken before the child starts, so nothing can take it in between and the server is
    reachable at once (connections wait in the backlog). The caller kills and reaps the process."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        port = int(sock.getsockname()[1])
        proc = subprocess.Popen([PYTHON, str(ROOT / "tests" / "mcp" / "servers" / "tiny_http_server.py"),
                                 "--fd", str(sock.fileno()), *args], stdin=subprocess.DEVNULL,
                                pass_fds=[sock.fileno()])
    return port, proc  # our copy is closed: the child's is the only one, so the port refuses once it is gone


def wait_until(condition: Callable[[], object], what: str, *, within_s: float = 10.0,
               poll_s: float = POLL_INTERVAL_S) -> None:
    """Poll `condition` every `poll_s` until it is true; fail naming `what` after `within_s` seconds."""
    deadline = time.monotonic() + within_s
    while not condition():
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {within_s}s waiting for {what}")
        time.sleep(poll_s)


async def eventually(condition: Callable[[], object], what: str, *, within_s: float = 5.0) -> None:
    """`wait_until` for async tests: polls without blocking the event loop. `condition` may be a coroutine
    function (a check that itself calls a server)."""
    deadline = time.monotonic() + within_s
    while True:
        met = condition()
        if inspect.isawaitable(met):
            met = await met
        if met:
            return
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {within_s}s waiting for {what}")
        await asyncio.sleep(POLL_INTERVAL_S)


# ---- processes ----------------------------------------------------------------------------------------------------

def _proc_stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, pgrp) of `pid` from /proc, or None when there is no such process (or no /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the fields after the parenthesised command name (which may itself contain spaces or parentheses)
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[0], int(fields[1]), int(fields[2])


def pid_exists(pid: int) -> bool:
    """True when a process (zombie included) has this pid."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def is_zombie(pid: int) -> bool:
    """True when `pid` is a zombie (exited, not yet reaped). Linux only (reads /proc); False elsewhere."""
    info = _proc_stat(pid)
    return info is not None and info[0] == "Z"


def pid_alive(pid: int) -> bool:
    """True while `pid` runs; a zombie (exited, waiting to be reaped) or a dead pid is not alive."""
    if not pid_exists(pid):
        return False
    info = _proc_stat(pid)
    return info is None or info[0] not in ("Z", "X")


def _is_dead(pid: int) -> bool:
    """Gone, or a zombie that is not ours to reap (an orphan waiting for init, which may poll slowly)."""
    if not pid_exists(pid):
        return True
    info = _proc_stat(pid)
    return info is not None and info[0] in ("Z", "X") and info[1] != os.getpid()


def _group_members(pgid: int) -> list[int]:
    if not Path("/proc/self/stat").exists():  # no /proc: ask the kernel whether the group is non-empty
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return []
        except PermissionError:
            pass
        return [pgid]
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            info = _proc_stat(int(entry.name))
            if info is not None and info[2] == pgid:
                members.append(int(entry.name))
    return members


def assert_pid_gone(pid: int, *, within_s: float = 0.0) -> None:
    """Assert `pid` is dead and, if it was our child, reaped (no zombie of ours).

    `within_s` allows for a signal to land. An orphan (a grandchild) killed but still a zombie under init counts
    as dead: reaping it is init's job, and some inits poll only every couple of seconds.
    """
    deadline = time.monotonic() + within_s
    while not _is_dead(pid):
        if time.monotonic() >= deadline:
            state = "a zombie we never reaped" if is_zombie(pid) else "still running"
            raise AssertionError(f"pid {pid} is {state}")
        time.sleep(POLL_INTERVAL_S)


def assert_group_gone(pgid: int, *, within_s: float = 1.0) -> None:
    """Assert nothing in process group `pgid` is alive (and none of its members is a zombie of ours)."""
    deadline = time.monotonic() + within_s
    while True:
        alive = [pid for pid in _group_members(pgid) if not _is_dead(pid)]
        if not alive:
            return
        if time.monotonic() >= deadline:
            raise AssertionError(f"process group {pgid} still has live members: {alive}")
        time.sleep(POLL_INTERVAL_S)


async def wait_gone(pid: int, within_s: float = 3.0) -> bool:
    """Whether `pid` stops running within `within_s` (signals are delivered asynchronously)."""
    deadline = time.monotonic() + within_s
    while pid_alive(pid):
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(POLL_INTERVAL_S)
    return True


def read_pidfile(path: Path, *, within_s: float = 5.0) -> int:
    """The pid a process wrote to `path` (written atomically), waiting up to `within_s` for the file."""
    deadline = time.monotonic() + within_s
    while not (path.exists() and path.read_text().strip()):
        if time.monotonic() >= deadline:
            raise AssertionError(f"{path} was never written")
        time.sleep(POLL_INTERVAL_S / 2)
    return int(path.read_text())


# ---- environments and the CLI as a subprocess ---------------------------------------------------------------------

def server_env(tmp_path: Path) -> dict[str, str]:
    """The small explicit environment a manager passes to its servers: PATH, HOME and the state dir in tmp_path."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
            "MINI_CLAUDE_STATE_DIR": str(tmp_path / "state")}


def server_configs(tmp_path: Path, servers: dict[str, Any]) -> list[Any]:
    """`ServerConfig`s for `{"name": entry}` as `--mcp-config` would load them (strict: no other source)."""
    import json

    from mini_claude.mcp.config import load_mcp_config

    loaded = load_mcp_config(cwd=tmp_path, home=tmp_path, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
                             strict=True, extra=[json.dumps({"mcpServers": servers})])
    assert not loaded.errors, loaded.errors
    return list(loaded.servers.values())


def session_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, servers: dict[str, Any],
                 base_url: str = "http://127.0.0.1:9") -> Path:
    """An in-process session's world: `servers` in an isolated HOME's ~/.claude/settings.json, no model or
    mini-claude variable of the caller's, a key, `base_url` for the model (by default one never called), and the
    working folder (returned) as the current one."""
    home, work = tmp_path / "home", tmp_path / "work"
    for folder in (home / ".claude", work):
        folder.mkdir(parents=True, exist_ok=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"mcpServers": servers}))
    for name in [k for k in os.environ if k.startswith(("ANTHROPIC_", "OPENAI_", "MINI_CLAUDE_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MINI_CLAUDE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", base_url)
    monkeypatch.chdir(work)
    return work


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The test process's environment without any model/agent variables, with HOME and state in tmp_path."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "OPENAI_", "MINI_CLAUDE_", "MCP_"))}
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env.update(HOME=str(home), MINI_CLAUDE_STATE_DIR=str(tmp_path / "state"), PYTHONPATH=str(ROOT),
               MINI_CLAUDE_RETRY_BASE_S="0.001")
    env.update(extra)
    return env


def anthropic_env(tmp_path: Path, url: str, **extra: str) -> dict[str, str]:
    """`clean_env` pointing the Anthropic backend at the mock model at `url`."""
    return clean_env(tmp_path, ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="x", **extra)


def openai_env(tmp_path: Path, url: str, **extra: str) -> dict[str, str]:
    """`clean_env` selecting the OpenAI-compatible backend against the mock model at `url`."""
    return clean_env(tmp_path, MINI_CLAUDE_BACKEND="openai", OPENAI_BASE_URL=url + "/v1", OPENAI_API_KEY="x",
                     **extra)


def run_cli(args: list[str], *, cwd: Path, env: dict[str, str],
            timeout: float = CLI_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    """Run `python -m mini_claude ARGS` to completion (stdin closed), capturing its text output."""
    return subprocess.run([PYTHON, "-m", "mini_claude", *args], cwd=cwd, env=env, text=True, capture_output=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def uncached(value: Any) -> Any:
    """`value` (a request body or any part of one) without its prompt-cache marks (`cache_control`): for tests
    about what a request says, not where its cache breakpoints are (tests/models/test_thinking_and_cache.py)."""
    if isinstance(value, dict):
        return {k: uncached(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [uncached(v) for v in value]
    return value


def system_text(body: dict[str, Any]) -> str:
    """A Messages request's system prompt as one string (the agent sends it as a text block with a cache mark)."""
    system = body.get("system")
    if isinstance(system, list):
        return "".join(str(b.get("text", "")) for b in system if isinstance(b, dict))
    return system if isinstance(system, str) else ""
