"""Fixtures for the hooks tests: the real CLI against the mock model (`cli`, from tests/integration), real hook scripts
written by each test, and a record of what each hook received.

`Hooked` writes `~/.claude/settings.json` (or a project's) with a `hooks` section and makes small hook scripts. A
script made by `recorder()` appends the JSON it read on stdin (plus the environment variables asked for) as one
line to a log, then does what it was told: print to stdout, to stderr, exit with a code."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import Cli

_RECORDER = '''\
import json, os, sys
payload = json.loads(sys.stdin.read() or "null")
record = {"payload": payload, "env": {k: os.environ.get(k) for k in KEYS}, "cwd": os.getcwd()}
with open(LOG, "a", encoding="utf-8") as log:
    log.write(json.dumps(record) + "\\n")
if STDOUT:
    sys.stdout.write(STDOUT)
if STDERR:
    sys.stderr.write(STDERR)
sys.exit(CODE)
'''


class Hooked:
    def __init__(self, cli: Cli) -> None:
        self.cli = cli
        self.dir = cli.tmp / "hook-scripts"
        self.dir.mkdir(exist_ok=True)
        self._count = 0

    def settings(self, hooks: dict[str, Any], *, where: Path | None = None, name: str = "settings.json",
                 **extra: Any) -> Path:
        """Write a settings file holding `hooks` (the user's by default, else `where/.claude/<name>`)."""
        folder = (where if where is not None else self.cli.home) / ".claude"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / name
        path.write_text(json.dumps({"hooks": hooks, **extra}))
        return path

    def recorder(self, *, stdout: str = "", stderr: str = "", code: int = 0, env: tuple[str, ...] = (),
                 name: str = "") -> tuple[str, Path]:
        """(the command to put in settings, the log it appends each payload to)."""
        self._count += 1
        stem = name or f"hook{self._count}"
        log = self.dir / f"{stem}.log"
        script = self.dir / f"{stem}.py"
        script.write_text(f"LOG = {str(log)!r}\nKEYS = {list(env)!r}\nSTDOUT = {stdout!r}\nSTDERR = {stderr!r}\n"
                          f"CODE = {code}\n" + _RECORDER)
        return f"{sys.executable} {script}", log

    def shell(self, body: str, name: str = "") -> str:
        """A small executable shell script; returns its path (the command)."""
        self._count += 1
        script = self.dir / f"{name or f'sh{self._count}'}.sh"
        script.write_text("#!/bin/sh\n" + body)
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
        return str(script)


def records(log: Path) -> list[dict[str, Any]]:
    """Every record a recorder hook wrote, in order ([] when it never ran)."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def payloads(log: Path) -> list[dict[str, Any]]:
    return [r["payload"] for r in records(log)]


def user_texts(request: dict[str, Any]) -> list[str]:
    """The text blocks of the last user message of one request the mock received."""
    message = request["body"]["messages"][-1]
    content = message["content"]
    if isinstance(content, str):
        return [content]
    return [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]



@pytest.fixture
def hooked(cli: Cli) -> Hooked:
    return Hooked(cli)
