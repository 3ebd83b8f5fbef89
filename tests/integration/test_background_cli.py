"""No background command outlives mini-claude: `-p` as a real subprocess against the mock model starts `sleep 300`
with Bash `run_in_background`, and once the run ends (the model answered, or Ctrl+C during a model request) the
shell and its child are gone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import Any

import pytest

from tests.helpers import assert_pid_gone, read_pidfile
from tests.integration.conftest import Cli, answer, result_text, tool_results, tool_use

pytestmark = pytest.mark.timeout(90)

SLEEPER = "echo $$ > shell.pid; sleep 300 & echo $! > child.pid; wait"
# the foreground call returns once both pids are written, so the run ends with the sleeper surely started
WAIT_FOR_PIDS = "while [ ! -s shell.pid ] || [ ! -s child.pid ]; do sleep 0.02; done; echo both"


def _turns(last: dict[str, Any]) -> list[dict[str, Any]]:
    return [tool_use("Bash", {"command": SLEEPER, "run_in_background": True, "description": "sleep a while"}),
            tool_use("Bash", {"command": WAIT_FOR_PIDS}),
            last]


def test_a_background_sleeper_is_gone_when_p_ends(cli: Cli) -> None:
    mock = cli.mock(_turns(answer("left it running")))
    result = cli.run("-p", "start a sleeper", "--allowedTools", "Bash", "--output-format", "json")
    assert result.rc == 0, result.stderr
    assert result.json()["result"] == "left it running"
    started = result_text(tool_results(mock)[0])
    assert started.startswith("Started in the background as task bash_1 ")
    for name in ("shell.pid", "child.pid"):
        assert_pid_gone(read_pidfile(cli.work / name), within_s=10)


def _signal_midway(cli: Cli, sig: signal.Signals) -> tuple[int, str, list[int]]:
    """`-p` starts a sleeper, then gets `sig` while its third request waits on a slow model: (exit code, stderr,
    the sleeper's shell and child pids)."""
    cli.mock(_turns({"content": [{"type": "text", "text": "slow"}], "delay_ms": 30_000}))
    proc = subprocess.Popen([sys.executable, "-m", "mini_claude", "-p", "start a sleeper", "--allowedTools", "Bash"],
                            cwd=cli.work, env=cli.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        pids = [read_pidfile(cli.work / name, within_s=30) for name in ("shell.pid", "child.pid")]
        os.kill(proc.pid, sig)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, stderr, pids


def test_a_background_sleeper_is_gone_after_ctrl_c(cli: Cli) -> None:
    rc, _, pids = _signal_midway(cli, signal.SIGINT)
    assert rc != 0
    for pid in pids:
        assert_pid_gone(pid, within_s=10)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_terminate_signal_ends_p_like_ctrl_c_and_leaves_nothing(cli: Cli, sig: signal.Signals) -> None:
    """`kill` or a closed terminal: the session is cancelled as by Ctrl+C (every child stopped), exit 128 + N."""
    rc, stderr, pids = _signal_midway(cli, sig)
    assert rc == 128 + sig, stderr
    assert f"stopped by {sig.name}" in stderr
    for pid in pids:
        assert_pid_gone(pid, within_s=10)
