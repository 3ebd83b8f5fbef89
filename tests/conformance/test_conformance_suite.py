"""The official MCP conformance suite (every client scenario, harness 0.2.0-alpha.12) against tests/conformance/client.py.

The runner lives beside the project (`../shared/conformance/run-client-suite.sh`); it installs the harness and the
Node 22 it needs into `.cache/conformance` on first use (git-ignored, so a fresh clone reinstalls it). Without the
runner the test skips, or fails under CI (`MINI_CLAUDE_REQUIRE_PEERS=1`); a runner that cannot install Node or the
harness prints no summary, which fails the test with the runner's output. The timing-sensitive `sse-retry`
scenario runs on its own, everything else four at a time.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import require

ROOT = Path(__file__).resolve().parents[2]
RUNNER = ROOT.parent / "shared" / "conformance" / "run-client-suite.sh"
CLIENT = ROOT / "tests" / "conformance" / "client.py"
ALL_SCENARIOS = 48
SUITE_TIMEOUT_S = 420

pytestmark = pytest.mark.timeout(2 * SUITE_TIMEOUT_S + 60)


def _run(tmp_path: Path, label: str, *selection: str) -> tuple[int, int, str]:
    env = dict(os.environ, CONFORMANCE_DIR=str(ROOT / ".cache" / "conformance"))
    out = tmp_path / label
    proc = subprocess.run(
        ["bash", str(RUNNER), *selection, "-o", str(out), "--", sys.executable, str(CLIENT)],
        capture_output=True, text=True, timeout=SUITE_TIMEOUT_S, env=env, cwd=ROOT)
    report = proc.stdout + proc.stderr
    match = re.search(r"^(\d+) passed, (\d+) failed", proc.stdout, re.MULTILINE)
    assert match, f"the conformance runner printed no summary (exit {proc.returncode}):\n{report[-3000:]}"
    return int(match[1]), int(match[2]), report


def test_every_client_scenario_of_the_official_suite_passes(tmp_path: Path) -> None:
    if not RUNNER.exists():
        require("the conformance runner", f"{RUNNER} is not beside the project")
    passed, failed, report = _run(tmp_path, "parallel", "-j", "4", "--exclude", "^sse-retry$")
    passed_sse, failed_sse, report_sse = _run(tmp_path, "sse-retry", "--only", "^sse-retry$")
    failures = [line for line in (report + report_sse).splitlines() if line.startswith(("FAIL", "TIMEOUT"))]
    assert (passed + passed_sse, failed + failed_sse) == (ALL_SCENARIOS, 0), "\n".join(failures) or report[-3000:]
