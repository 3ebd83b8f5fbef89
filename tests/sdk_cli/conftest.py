"""Fixtures for driving the CLI with the Claude Agent SDK itself: the SDK (PyPI `claude-agent-sdk`, installed apart
from the product by scripts/install-agent-sdk.sh into `$MINI_CLAUDE_AGENT_SDK_DIR`, default `.cache/agent-sdk/site`)
is imported only in a driver subprocess, whose `cli_path` is a wrapper script running this checkout's
`python -m mini_claude`; the model is our mock server (the real anthropic SDK talks to it)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from tests.helpers import ROOT, require

SDK_DIR_ENV = "MINI_CLAUDE_AGENT_SDK_DIR"
DRIVER_TIMEOUT_S = 90

_PRELUDE = """\
import asyncio, json, sys
sys.path.insert(0, {site!r})
from claude_agent_sdk import *  # noqa
from claude_agent_sdk.types import *  # noqa

def options(**kw):
    kw.setdefault("cli_path", {cli!r})
    kw.setdefault("cwd", {cwd!r})
    return ClaudeAgentOptions(**kw)

def show(message):
    return {{"kind": type(message).__name__, **{{k: v for k, v in vars(message).items() if k != "content"}},
             "text": "".join(getattr(b, "text", "") for b in getattr(message, "content", []) or []
                             if not isinstance(getattr(message, "content", None), str))}}

def report(value):
    print("REPORT " + json.dumps(value, default=str), flush=True)
"""


def sdk_site() -> Path:
    site = Path(os.environ.get(SDK_DIR_ENV) or ROOT / ".cache" / "agent-sdk" / "site")
    if not (site / "claude_agent_sdk").is_dir():
        require("the Claude Agent SDK", f"no claude_agent_sdk in {site} (${SDK_DIR_ENV}); run "
                                        "`bash scripts/install-agent-sdk.sh`")
    return site


class SdkRun:
    """A folder with HOME, a work folder and a wrapper `mini-claude`; `mock(turns)` starts the model; `drive(code)`
    runs `code` (async, with `options()`, `show()`, `report()`) against the SDK in a subprocess."""

    def __init__(self, tmp_path: Path) -> None:
        self.site = sdk_site()
        self.tmp = tmp_path
        self.home = tmp_path / "home"
        self.work = tmp_path / "work"
        for folder in (self.home, self.work):
            folder.mkdir()
        self.cli = tmp_path / "mini-claude"
        self.cli.write_text(f"#!/bin/sh\nPYTHONPATH={ROOT} exec {sys.executable} -m mini_claude \"$@\"\n")
        self.cli.chmod(self.cli.stat().st_mode | stat.S_IXUSR)
        self.env: dict[str, str] = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.home),
                                    "MINI_CLAUDE_STATE_DIR": str(tmp_path / "state"), "ANTHROPIC_API_KEY": "x",
                                    "CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK": "1"}
        self.mocks: list[MockModelServer] = []

    def mock(self, turns: list[dict[str, Any]]) -> MockModelServer:
        server = MockModelServer(parse_scenario({"turns": turns}, source="test"))
        self.env["ANTHROPIC_BASE_URL"] = server.start()
        self.mocks.append(server)
        return server

    def drive(self, code: str, *, timeout: float = DRIVER_TIMEOUT_S) -> Any:
        """Run `code` (the body of `async def main()`) and return what it `report()`ed."""
        prelude = _PRELUDE.format(site=str(self.site), cli=str(self.cli), cwd=str(self.work))
        script = prelude + "\nasync def main():\n" + textwrap.indent(textwrap.dedent(code), "    ") + \
            "\n\nasyncio.run(main())\n"
        path = self.tmp / "driver.py"
        path.write_text(script)
        proc = subprocess.run([sys.executable, str(path)], cwd=self.work, env=self.env, capture_output=True,
                              text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        reports = [line[len("REPORT "):] for line in proc.stdout.splitlines() if line.startswith("REPORT ")]
        assert proc.returncode == 0 and reports, f"driver failed (rc {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
        return json.loads(reports[-1])

    def close(self) -> None:
        for server in self.mocks:
            server.stop()


@pytest.fixture
def sdk(tmp_path: Path) -> Iterator[SdkRun]:
    run = SdkRun(tmp_path)
    try:
        yield run
    finally:
        run.close()
