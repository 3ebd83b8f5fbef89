"""Regression: CI skipped every test whose third-party peer was missing, so a broken peer install went green.

Under `MINI_CLAUDE_REQUIRE_PEERS=1` (what .ci/run exports) a missing peer now fails the test and names the peer;
without the switch (a developer machine) it still skips, saying why, and the run ends with its skip summary.
Each case runs pytest in a subprocess with `MINI_CLAUDE_PEERS_DIR` pointing at a peers.env whose entry is a path
that does not exist (or that has no entry at all)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REQUIRE_ENV, ROOT

pytestmark = pytest.mark.timeout(120)

PYTEST_TIMEOUT_S = 90
MISSING = "/nonexistent/peers/venv/bin/mcp-server-time"
NEEDS_A_PEER = '''
from tests.peers import peer_command


def test_needs_the_time_peer() -> None:
    assert peer_command("PEER_TIME")
'''


def _peers_dir(tmp_path: Path, entry: str | None) -> Path:
    peers = tmp_path / "peers"
    peers.mkdir()
    lines = ["# written by the test: the installer's format, one launch command a line"]
    if entry is not None:
        lines.append(f'PEER_TIME="{entry} --local-timezone UTC"')
    (peers / "peers.env").write_text("\n".join(lines) + "\n")
    return peers


def _pytest(tmp_path: Path, peers: Path, *args: str, strict: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in (REQUIRE_ENV, "PYTEST_ADDOPTS")}
    env["MINI_CLAUDE_PEERS_DIR"] = str(peers)
    if strict:
        env[REQUIRE_ENV] = "1"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=PYTEST_TIMEOUT_S)


def _tiny_test(tmp_path: Path) -> list[str]:
    """Arguments running a one-test file that needs PEER_TIME, with the root conftest (skip summary) loaded."""
    test_file = tmp_path / "test_needs_a_peer.py"
    test_file.write_text(NEEDS_A_PEER)
    return ["-c", str(ROOT / "pyproject.toml"), "--rootdir", str(ROOT), "-p", "tests.conftest", str(test_file)]


def test_a_missing_peer_fails_the_run_under_the_switch(tmp_path: Path) -> None:
    proc = _pytest(tmp_path, _peers_dir(tmp_path, MISSING), *_tiny_test(tmp_path), strict=True)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "1 failed" in out and "skipped" not in out, out
    assert f"peer PEER_TIME is missing: {MISSING} does not exist" in out, out
    assert f"{REQUIRE_ENV}=1" in out, out


def test_a_peer_absent_from_peers_env_fails_the_run_under_the_switch(tmp_path: Path) -> None:
    proc = _pytest(tmp_path, _peers_dir(tmp_path, None), *_tiny_test(tmp_path), strict=True)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "peer PEER_TIME is missing: not in " in out and "peers.env" in out, out


def test_without_the_switch_a_missing_peer_skips_and_the_summary_says_why(tmp_path: Path) -> None:
    proc = _pytest(tmp_path, _peers_dir(tmp_path, MISSING), *_tiny_test(tmp_path), strict=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "1 skipped" in out, out
    summary = [line for line in out.splitlines() if line.startswith("skips: ")]
    assert len(summary) == 1, out
    assert summary[0].startswith(f"skips: 1 (peer PEER_TIME is missing: {MISSING} does not exist"), summary


def test_the_real_peer_test_fails_under_the_switch(tmp_path: Path) -> None:
    """The same through tests/mcp/test_peers.py itself (its own conftest and imports)."""
    proc = _pytest(tmp_path, _peers_dir(tmp_path, MISSING), "tests/mcp/test_peers.py", "-k", "test_time_server",
                   strict=True)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "1 failed" in out and "PEER_TIME" in out, out
