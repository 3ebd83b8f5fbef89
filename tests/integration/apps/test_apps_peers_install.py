"""scripts/install-apps-peers.sh: a second run is a no-op that needs no npm, and a failed install says what failed
and leaves no VERSION that a later run would take for installed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.helpers import ROOT

SCRIPT = ROOT / "scripts" / "install-apps-peers.sh"
BINS = ("mcp-server-basic-vanillajs", "mcp-budget-allocator-server")


def _run(dest: Path, fake_npm: str) -> subprocess.CompletedProcess[str]:
    """The script with `npm` on PATH being a shell script whose body is `fake_npm`."""
    fake = dest.parent / "bin"
    fake.mkdir(exist_ok=True)
    (fake / "npm").write_text("#!/bin/sh\n" + fake_npm + "\n")
    (fake / "npm").chmod(0o755)
    return subprocess.run(["bash", str(SCRIPT), str(dest)], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PATH": f"{fake}:/usr/bin:/bin", "MINI_CLAUDE_TOOLS_TIMEOUT": "30"},
                          stdin=subprocess.DEVNULL)


def _pinned() -> str:
    text = SCRIPT.read_text()
    specs = [line.strip().strip('"') for line in text.split("PACKAGES=(", 1)[1].split(")", 1)[0].splitlines()]
    return " ".join(spec for spec in specs if spec)


def test_an_installed_copy_is_left_alone(tmp_path: Path) -> None:
    dest = tmp_path / "apps-peers"
    bin_dir = dest / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    for name in BINS:
        (bin_dir / name).write_text("#!/bin/sh\n")
        (bin_dir / name).chmod(0o755)
    (dest / "VERSION").write_text(_pinned() + "\n")
    called = tmp_path / "npm-was-called"
    done = _run(dest, f"touch {called}; exit 1")
    assert done.returncode == 0, done.stderr
    assert done.stderr == "" and not called.exists()


def test_a_failed_install_says_why_and_leaves_nothing_installed(tmp_path: Path) -> None:
    dest = tmp_path / "apps-peers"
    dest.mkdir()
    (dest / "VERSION").write_text("@modelcontextprotocol/server-basic-vanillajs@2.0.0\n")  # an older copy: replaced
    done = _run(dest, "echo 'npm ERR! network unreachable' >&2; exit 1")
    assert done.returncode != 0
    assert "FAILED: npm could not install @modelcontextprotocol/server-basic-vanillajs@2.0.3" in done.stderr
    assert "network unreachable" in done.stderr
    assert not (dest / "VERSION").exists()
