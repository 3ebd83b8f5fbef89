"""A second SIGTERM (or SIGHUP) while mini-claude cleans up after the first still leaves no command running: the
second signal ends mini-claude at once (so a stuck clean-up can be cut short), but first every shell command's
process group still alive is killed. Found by the hostile review of issue 26: a background command that ignores
SIGTERM outlived mini-claude when the second signal came during the first one's grace period (the default action
ended the process before the SIGKILL)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from tests.helpers import assert_pid_gone, read_pidfile, wait_until
from tests.integration.conftest import Cli, tool_use

pytestmark = pytest.mark.timeout(90)

# the shell notes the group's SIGTERM in term.txt; its child ignores SIGTERM, so only a SIGKILL ends it
STUBBORN = ("echo $$ > shell.pid; trap 'echo x > term.txt' TERM; (trap '' TERM; exec sleep 300) & "
            "echo $! > child.pid; while :; do wait; done")
WAIT_FOR_PIDS = "while [ ! -s shell.pid ] || [ ! -s child.pid ]; do sleep 0.02; done; echo both"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_second_signal_during_the_clean_up_leaves_no_command_running(cli: Cli, sig: signal.Signals) -> None:
    cli.mock([tool_use("Bash", {"command": STUBBORN, "run_in_background": True}),
              tool_use("Bash", {"command": WAIT_FOR_PIDS}),
              {"content": [{"type": "text", "text": "slow"}], "delay_ms": 30_000}])
    proc = subprocess.Popen([sys.executable, "-m", "mini_claude", "-p", "go", "--allowedTools", "Bash"],
                            cwd=cli.work, env=cli.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        pids = [read_pidfile(cli.work / name, within_s=30) for name in ("shell.pid", "child.pid")]
        os.kill(proc.pid, sig)  # the clean-up begins: SIGTERM to the group, a grace, then SIGKILL
        # the group got its SIGTERM: the grace period runs now (polled finely: the grace is short)
        wait_until(lambda: (cli.work / "term.txt").exists(), "the background group's SIGTERM", within_s=10,
                   poll_s=0.002)
        os.kill(proc.pid, sig)  # the second one, during the grace
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    try:
        assert proc.returncode in (-sig, 128 + sig)
        for pid in pids:
            assert_pid_gone(pid, within_s=10)
    finally:
        for pid in pids:  # never leave the stubborn sleeper behind, whatever the outcome
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
