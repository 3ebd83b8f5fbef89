"""Issue 27, acceptance 2, end to end: the real CLI (`python -m mini_claude -p`) against the mock model, real bash
under real bubblewrap, with the user setting `{"sandbox": {"enabled": true, "autoAllowBashIfSandboxed": true}}`.

Sandboxed commands run without a question (nothing could be asked in -p: an unasked run proves the auto-allow),
while writes outside the workspace, writes to the protected paths, reads of ~/.ssh and ~/.aws, and connections to
a loopback listener the test runs all fail — each refused result says it was the sandbox and how to ask for an
unsandboxed run. With the sandbox off and `--yolo`, the same commands all succeed (so it was the sandbox).
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from mini_claude.sandbox.bwrap import find_bwrap
from tests.integration.conftest import Cli, answer, result_text, tool_results, tool_use

pytestmark = [pytest.mark.timeout(180),
              pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap is not installed")]

SANDBOX_ON = {"sandbox": {"enabled": True, "autoAllowBashIfSandboxed": True}}
SANDBOX_NOTE = "[sandbox] This command ran in the OS sandbox, which stopped it"
ASK_OUT = "dangerouslyDisableSandbox: true"


@pytest.fixture
def listener() -> Iterator[int]:
    """A loopback TCP listener that answers `pong` to whoever connects."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.sendall(b"pong\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(5)
    server.close()


@pytest.fixture
def project(cli: Cli) -> Iterator[dict[str, Path]]:
    """A git repository with .claude/settings.json and .mcp.json; a HOME with secrets and an outside folder, both
    outside /tmp (the sandbox's /tmp is a private folder, which would hide them for another reason)."""
    subprocess.run(["git", "init", "-q", str(cli.work)], check=True)
    (cli.work / ".claude").mkdir()
    (cli.work / ".claude" / "settings.json").write_text("{}\n")
    (cli.work / ".mcp.json").write_text('{"mcpServers": {}}\n')
    base = Path(tempfile.mkdtemp(prefix="mc-sandbox-test-", dir="/var/tmp"))
    home, outside = base / "home", base / "outside"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("SSH-PRIVATE-KEY-MARKER\n")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text("AWS-SECRET-MARKER\n")
    outside.mkdir()
    cli.home = home
    cli.env["HOME"] = str(home)
    yield {"outside": outside}
    shutil.rmtree(base, ignore_errors=True)


def probes(outside: Path, home: Path, port: int) -> dict[str, str]:
    """What each probe command tries; every one succeeds without a sandbox."""
    return {
        "outside write": f"echo pwned > {outside}/marker",
        "git config": "echo '[core] fsmonitor = touch PWNED' >> .git/config",
        "git hook": "echo 'touch PWNED' > .git/hooks/pre-commit",
        "claude settings": "echo '{\"hooks\": {}}' > .claude/settings.json",
        "mcp json": "echo '{}' > .mcp.json",
        "ssh key": f"cat {home}/.ssh/id_rsa",
        "aws creds": "cat ~/.aws/credentials",
        "loopback": f"exec 3<>/dev/tcp/127.0.0.1/{port} && head -c 5 <&3",
        "outside network": "exec 3<>/dev/tcp/1.1.1.1/80 && echo connected",
    }


def run_all(cli: Cli, commands: dict[str, str], *flags: str, sandboxed: bool,
            env: dict[str, str] | None = None) -> dict[str, dict[str, object]]:
    """The model runs `ok` then every probe; each probe's tool_result, by name. The system prompt tells the model
    about the sandbox exactly when it is on."""
    turns = [tool_use("Bash", {"command": "echo inside > made-here.txt && cat made-here.txt"})]
    turns += [tool_use("Bash", {"command": command}) for command in commands.values()]
    mock = cli.mock([*turns, answer("done")])
    r = cli.run("-p", "probe", *flags, env=env)
    assert r.rc == 0, r.stderr
    results = tool_results(mock)
    assert len(results) == len(turns), results
    assert ("Bash commands run in an OS sandbox" in json.dumps(mock.requests[0]["body"]["system"])) is sandboxed
    return {"ok": results[0], **dict(zip(commands, results[1:], strict=True))}


def test_sandboxed_commands_run_unasked_and_are_contained(cli: Cli, project: dict[str, Path], listener: int) -> None:
    outside = project["outside"]
    settings = cli.tmp / "sandbox-settings.json"
    settings.write_text(json.dumps(SANDBOX_ON))
    commands = probes(outside, cli.home, listener)
    # The session's own temporary folder (TMPDIR private to this test, so other processes' sandboxes on the same
    # machine cannot blur the count): it is made while the session runs and removed when it ends.
    private_tmp = cli.tmp / "session-tmp"
    private_tmp.mkdir()
    seen: set[Path] = set()
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.02):
            seen.update(private_tmp.glob("mini-claude-sandbox-*"))

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        results = run_all(cli, commands, "--settings", str(settings), sandboxed=True,
                          env={"TMPDIR": str(private_tmp)})
    finally:
        done.set()
        watcher.join(timeout=5)
    assert seen, "the sandboxed session made no folder in its TMPDIR"
    assert not list(private_tmp.glob("mini-claude-sandbox-*"))  # the session removed its own

    assert results["ok"].get("is_error") is not True, results["ok"]
    assert result_text(results["ok"]) == "inside"  # ran, unasked, and wrote in the workspace
    assert (cli.work / "made-here.txt").read_text() == "inside\n"
    for name in commands:
        text = result_text(results[name])
        assert results[name].get("is_error") is True, (name, text)
        assert SANDBOX_NOTE in text and ASK_OUT in text, (name, text)
        assert "permission denied" not in text, (name, text)  # the sandbox stopped it, not the gate
    assert "SSH-PRIVATE-KEY-MARKER" not in json.dumps(results)
    assert "AWS-SECRET-MARKER" not in json.dumps(results)
    assert "pong" not in result_text(results["loopback"])
    assert not (outside / "marker").exists()
    assert "fsmonitor" not in (cli.work / ".git" / "config").read_text()
    assert not (cli.work / ".git" / "hooks" / "pre-commit").exists()
    assert (cli.work / ".claude" / "settings.json").read_text() == "{}\n"
    assert (cli.work / ".mcp.json").read_text() == '{"mcpServers": {}}\n'
    assert "Read-only file system" in result_text(results["git config"])
    assert "secret places" in result_text(results["ssh key"])
    assert "no network" in result_text(results["loopback"])


def test_the_same_commands_run_without_the_sandbox(cli: Cli, project: dict[str, Path], listener: int) -> None:
    outside = project["outside"]
    commands = probes(outside, cli.home, listener)
    del commands["outside network"]  # the test machine may have no route out; the loopback one proves the point
    results = run_all(cli, commands, "--yolo", sandboxed=False)
    for name in commands:
        assert results[name].get("is_error") is not True, (name, result_text(results[name]))
    assert "SSH-PRIVATE-KEY-MARKER" in result_text(results["ssh key"])
    assert "AWS-SECRET-MARKER" in result_text(results["aws creds"])
    assert result_text(results["loopback"]) == "pong"
    assert (outside / "marker").read_text() == "pwned\n"
    assert "fsmonitor" in (cli.work / ".git" / "config").read_text()
