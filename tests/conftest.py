"""Root test configuration: a mock model server per test, a pseudo-terminal, a tiny retry delay for the model backends, and the
one-line skip summary at the end of every run ("skips: none" or "skips: N (reason: count; ...)").

Each process that runs tests (one per pytest-xdist worker) has a tmux server of its own (`TMUX_TMPDIR`, set before
any test), kept up by a session that lives as long as the process: tmux ends its server with its last session, and a
`new-session` that meets a server on its way out fails — with two workers sharing one server, that happened between
one worker's last `kill-session` and the other's next start.

Helpers shared across folders live in importable modules (`tests/helpers.py`, `tests/peers.py`), not in conftest
files: several conftest.py files exist, so `import conftest` would be ambiguous."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from tests.integration.conftest import Cli

StartMock = Callable[..., MockModelServer]


@pytest.fixture(autouse=True)
def _tiny_retry_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINI_CLAUDE_RETRY_BASE_S", "0.001")


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[Cli]:
    """The CLI as a subprocess in a temporary project and home (tests/integration/conftest.py `Cli`), closed after."""
    c = Cli(tmp_path)
    yield c
    c.close()


@pytest.fixture
def terminal() -> Iterator[tuple[int, int]]:
    """A real pseudo-terminal: (leader, follower) descriptors, closed after the test."""
    import pty

    leader, follower = pty.openpty()
    yield leader, follower
    os.close(leader)
    os.close(follower)


@pytest.fixture
def mock_model() -> Iterator[StartMock]:
    """`mock_model(turns, **kwargs)` starts a MockModelServer for a list of turns; all stop at teardown."""
    servers: list[MockModelServer] = []

    def start(turns: list[dict[str, Any]], **kwargs: Any) -> MockModelServer:
        server = MockModelServer(parse_scenario({"turns": turns}), **kwargs)
        server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


_TMUX_DIR: str | None = None


def pytest_configure(config: pytest.Config) -> None:
    """This process's own tmux server (see the module docstring); not in the xdist controller, which runs no test."""
    global _TMUX_DIR
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        return
    _TMUX_DIR = tempfile.mkdtemp(prefix="mc-tmux-", dir="/tmp")  # short: a socket path has ~100 bytes at most
    os.environ["TMUX_TMPDIR"] = _TMUX_DIR
    os.environ.pop("TMUX", None)  # run from inside tmux: its $TMUX would name the user's own server
    tmux = shutil.which("tmux")
    if tmux is not None:
        keeper = f"while kill -0 {os.getpid()} 2>/dev/null; do sleep 1; done"  # ends with this process
        subprocess.run([tmux, "new-session", "-d", "-s", "keeper", keeper], capture_output=True, timeout=10)


def pytest_unconfigure(config: pytest.Config) -> None:
    if _TMUX_DIR is None:
        return
    tmux = shutil.which("tmux")
    if tmux is not None:
        subprocess.run([tmux, "kill-server"], capture_output=True, timeout=10)
    shutil.rmtree(_TMUX_DIR, ignore_errors=True)


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return reason.removeprefix("Skipped: ")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config) -> None:
    """One line that says whether anything was skipped, and why: a skip is never silent."""
    reasons = Counter(_skip_reason(report) for report in terminalreporter.stats.get("skipped", []))
    if not reasons:
        terminalreporter.write_line("skips: none")
        return
    detail = "; ".join(f"{reason}: {count}" for reason, count in reasons.most_common())
    terminalreporter.write_line(f"skips: {sum(reasons.values())} ({detail})")
