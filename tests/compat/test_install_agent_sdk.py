"""scripts/install-agent-sdk.sh: a second run is a no-op that touches nothing, and a failed install says what failed
and leaves no folder that a later run would take for installed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.helpers import ROOT

SCRIPT = ROOT / "scripts" / "install-agent-sdk.sh"


def _run(dest: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT), str(dest)], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **env}, stdin=subprocess.DEVNULL)


def test_an_installed_copy_is_left_alone(tmp_path: Path) -> None:
    dest = tmp_path / "agent-sdk"
    (dest / "site" / "claude_agent_sdk").mkdir(parents=True)
    (dest / "examples").mkdir()
    (dest / "examples" / "quick_start.py").write_text("# placeholder\n")
    (dest / "VERSION").write_text("0.2.190\n")
    # a wheel that does not exist: any attempt to install would fail
    done = _run(dest, MINI_CLAUDE_AGENT_SDK_WHEEL=str(tmp_path / "missing.whl"))
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert (dest / "examples" / "quick_start.py").read_text() == "# placeholder\n"


def test_a_failed_install_says_why_and_leaves_nothing_installed(tmp_path: Path) -> None:
    dest = tmp_path / "agent-sdk"
    (dest / "examples").mkdir(parents=True)
    (dest / "VERSION").write_text("0.2.100\n")  # an older copy: replaced
    missing = tmp_path / "missing.whl"
    done = _run(dest, MINI_CLAUDE_AGENT_SDK_WHEEL=str(missing), MINI_CLAUDE_AGENT_SDK_TIMEOUT="30")
    assert done.returncode != 0
    assert f"FAILED: pip could not install {missing}" in done.stderr
    assert not (dest / "VERSION").exists()
