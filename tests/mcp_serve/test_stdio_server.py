"""The stdio server transport under `mini-claude mcp serve`, on the raw wire: only protocol on stdout, a line that
is not JSON or is over the size cap answered with an error while the connection goes on, and end of input ending
the server at once with a still-running shell command's process reaped."""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from mini_claude.trust import TrustStore
from tests.helpers import PYTHON, assert_pid_gone, clean_env, read_pidfile

pytestmark = pytest.mark.timeout(60)

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}


class Raw:
    def __init__(self, work: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen([PYTHON, "-m", "mini_claude", "mcp", "serve"], cwd=work, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.buffer = b""

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def message(self, timeout_s: float = 30.0) -> dict[str, Any]:
        """The next line of stdout, which must be a JSON-RPC message."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            assert left > 0, "no message from the server in time"
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                assert chunk, f"stdout ended; stderr: {self.proc.stderr.read() if self.proc.stderr else ''!r}"
                self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        message = json.loads(line)
        assert message["jsonrpc"] == "2.0"
        return message  # type: ignore[no-any-return]


def test_bad_lines_get_errors_and_the_connection_goes_on(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    raw = Raw(work, clean_env(tmp_path, MINI_CLAUDE_MCP_MAX_MESSAGE_BYTES="4096"))
    try:
        raw.send(json.dumps(INIT).encode() + b"\n")
        assert raw.message()["result"]["serverInfo"]["name"] == "mini-claude"
        raw.send(b"this is not json\n")
        assert raw.message()["error"]["code"] == -32700
        raw.send(b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"' + b"x" * 10_000 + b'"}}\n')
        assert raw.message()["error"]["code"] == -32600
        raw.send(b'{"jsonrpc":"2.0","id":3,"method":"ping"}\n')
        assert raw.message() == {"jsonrpc": "2.0", "id": 3, "result": {}}
        assert raw.proc.stdin is not None
        raw.proc.stdin.close()
        assert raw.proc.wait(timeout=20) == 0
    finally:
        if raw.proc.poll() is None:
            raw.proc.kill()
            raw.proc.wait()


def test_end_of_input_ends_the_server_and_reaps_a_running_command(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / ".claude").mkdir(parents=True)
    (work / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash"]}}))
    env = clean_env(tmp_path)
    TrustStore.in_state_dir(Path(env["MINI_CLAUDE_STATE_DIR"])).record(work.resolve())
    raw = Raw(work, env)
    pid_file = work / "pid"
    try:
        raw.send(json.dumps(INIT).encode() + b"\n")
        raw.message()
        raw.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "Bash", "arguments": {"command": "echo $$ > pid; exec sleep 300"}}}
        raw.send(json.dumps(call).encode() + b"\n")
        child = read_pidfile(pid_file, within_s=30)  # the command started
        assert raw.proc.stdin is not None
        raw.proc.stdin.close()
        raw.proc.wait(timeout=20)
        assert_pid_gone(child, within_s=10)  # the shell command did not outlive the server
    finally:
        if raw.proc.poll() is None:
            raw.proc.kill()
            raw.proc.wait()

