"""Fixtures for the sandbox tests: a workspace, a HOME with secrets, and a session `Sandbox` over them."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from mini_claude.sandbox.config import SandboxConfig
from mini_claude.sandbox.runtime import Sandbox


@pytest.fixture
def place(tmp_path: Path) -> Iterator[dict[str, Path]]:
    """`work` (a git repository) under /tmp; `home` (with ~/.ssh and ~/.netrc) and `outside` under /var/tmp, which
    the sandbox shows read-only (its /tmp is private, so a folder there would be hidden for another reason)."""
    work = tmp_path / "work"
    (work / ".git" / "hooks").mkdir(parents=True)
    (work / ".git" / "config").write_text("[core]\n")
    (work / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    base = Path(tempfile.mkdtemp(prefix="mc-sandbox-test-", dir="/var/tmp"))
    home, outside = base / "home", base / "outside"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("KEY\n")
    (home / ".netrc").write_text("machine x password y\n")
    outside.mkdir()
    yield {"work": work, "home": home, "outside": outside, "state": tmp_path / "state"}
    shutil.rmtree(base, ignore_errors=True)


def make_sandbox(place: dict[str, Path], warnings: list[str] | None = None, **config: object) -> Sandbox:
    settings = SandboxConfig(**{"enabled": True, **config})  # type: ignore[arg-type]
    return Sandbox(settings, work_dirs=[place["work"]], home=place["home"], state_dir=place["state"],
                   warn=None if warnings is None else warnings.append)
