"""Fixtures for end-to-end CLI tests: `python -m mini_claude` as a real subprocess, the real anthropic SDK talking
to MockModelServer over loopback, and real MCP server processes (our probe server and the third-party peers)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "tests" / "mcp" / "servers" / "probe_server.py"
CLI_TIMEOUT_S = 60


def probe_entry(*args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """A stdio server entry running the probe server with this interpreter."""
    entry: dict[str, Any] = {"command": sys.executable, "args": [str(PROBE), *args]}
    if env:
        entry["env"] = env
    return entry


@dataclass
class Result:
    rc: int
    stdout: str
    stderr: str
    seconds: float

    def json(self) -> Any:
        return json.loads(self.stdout)


class Cli:
    """Runs the CLI in `work` with HOME and the state dir inside tmp_path."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.home = tmp_path / "home"
        self.work = tmp_path / "work"
        self.state = tmp_path / "state"
        for d in (self.home, self.work):
            d.mkdir(exist_ok=True)
        self.env: dict[str, str] = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "MINI_CLAUDE_STATE_DIR": str(self.state),
            "ANTHROPIC_API_KEY": "x",
            "OPENAI_API_KEY": "y-secret",
            "MCP_TIMEOUT": "10000",
            "PYTHONPATH": str(ROOT),
        }
        self.mocks: list[MockModelServer] = []

    def mock(self, turns: list[dict[str, Any]]) -> MockModelServer:
        server = MockModelServer(parse_scenario({"turns": turns}, source="test"))
        self.env["ANTHROPIC_BASE_URL"] = server.start()
        self.mocks.append(server)
        return server

    def run(self, *args: str, env: dict[str, str] | None = None, timeout: float = CLI_TIMEOUT_S) -> Result:
        began = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "mini_claude", *args], cwd=self.work,
                              env={**self.env, **(env or {})}, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
        return Result(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - began)

    def config_file(self, servers: dict[str, Any], name: str = "servers.json") -> str:
        path = self.tmp / name
        path.write_text(json.dumps({"mcpServers": servers}))
        return str(path)

    def close(self) -> None:
        for server in self.mocks:
            server.stop()



def tool_results(mock: MockModelServer) -> list[dict[str, Any]]:
    """Every tool_result block the model was sent, in order (deduplicated by tool_use_id)."""
    return sent_tool_results(mock.requests)


def sent_tool_results(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`tool_results` of recorded requests (later requests repeat the history: each block once)."""
    seen: dict[str, dict[str, Any]] = {}
    for req in requests:
        body = req.get("body") or {}
        for message in body.get("messages", []):
            content = message.get("content")
            if not isinstance(content, list):
                continue
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    seen.setdefault(block["tool_use_id"], block)
    return list(seen.values())


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if isinstance(b, dict))


def tool_use(name: str, args: dict[str, Any] | None = None, text: str | None = None) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if text:
        content.append({"type": "text", "text": text})
    content.append({"type": "tool_use", "name": name, "input": args or {}})
    return {"content": content}


def answer(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}
