"""Issue acceptance through the real CLI: `python -m mini_claude` subprocesses, the real `anthropic` / `openai`
SDKs against the mock model over loopback HTTP, requests asserted on the mock's log file."""

from __future__ import annotations

import json
import signal
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import read_log

from tests.helpers import (
    PYTHON,
    ROOT,
    anthropic_env,
    clean_env,
    openai_env,
    pid_alive,
    refused_port,
    wait_until,
)
from tests.helpers import run_cli as cli

pytestmark = pytest.mark.timeout(60)

ORIGINAL = b"alpha\r\nbeta\n"
EDITED = b"alpha\r\ngamma\n"


def _tool(name: str, **args: Any) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "name": name, "input": args}]}


def _say(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


CHAIN = [_tool("Read", file_path="a.txt"),
         _tool("Edit", file_path="a.txt", old_string="beta", new_string="gamma"),
         _tool("Read", file_path="a.txt"),
         _say("The file now says gamma.")]


def _work(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_bytes(ORIGINAL)
    return work


def _last_tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    last = body["messages"][-1]
    assert last["role"] == "user"
    return [b for b in last["content"] if b.get("type") == "tool_result"]


def _assert_chain_output(proc: subprocess.CompletedProcess[str], work: Path) -> None:
    assert proc.returncode == 0, proc.stderr
    assert (work / "a.txt").read_bytes() == EDITED
    assert proc.stdout == "The file now says gamma.\n"
    lines = proc.stderr.splitlines()
    calls = [line for line in lines if line.startswith("● ")]
    assert calls == ["● Read(a.txt)", "● Edit(a.txt)", "● Read(a.txt)"], proc.stderr
    # what each call did, under it: the lines read, the edit's counts and its diff (the old and the new text)
    edit = lines.index("● Edit(a.txt)")
    assert lines[edit - 1] == lines[edit + 7] == "  ⎿  Read 2 lines", proc.stderr
    assert lines[edit + 1:edit + 6] == ["  ⎿  Updated a.txt with 1 addition and 1 removal", "     @@ -1,2 +1,2 @@",
                                        "      alpha", "     -beta", "     +gamma"], proc.stderr


def test_chain_through_the_cli_anthropic(mock_model: Any, tmp_path: Path) -> None:
    work = _work(tmp_path)
    mock = mock_model(CHAIN)
    proc = cli(["-p", "--allowedTools", "Edit", "edit a.txt"], cwd=work, env=anthropic_env(tmp_path, mock.url))
    _assert_chain_output(proc, work)
    log = read_log(mock.log_path)
    assert [r["path"] for r in log] == ["/v1/messages"] * 4
    assert all("<redacted>" in (r["headers"].get("x-api-key"), r["headers"].get("authorization")) for r in log)
    for request in log[1:]:
        assert [r.get("is_error") for r in _last_tool_results(request["body"])] == [None]


@pytest.mark.parametrize("stream", ["1", "0"])
def test_chain_through_the_cli_openai(mock_model: Any, tmp_path: Path, stream: str) -> None:
    work = _work(tmp_path)
    mock = mock_model(CHAIN)
    env = openai_env(tmp_path, mock.url, MINI_CLAUDE_STREAM=stream)
    proc = cli(["-p", "--allowedTools", "Edit", "edit a.txt"], cwd=work, env=env)
    _assert_chain_output(proc, work)
    log = read_log(mock.log_path)
    assert [r["path"] for r in log] == ["/v1/chat/completions"] * 4
    assert all(bool(r["body"].get("stream")) is (stream == "1") for r in log)
    tool_messages = [m for m in log[-1]["body"]["messages"] if m["role"] == "tool"]
    assert len(tool_messages) == 3


def test_failing_and_denied_tools_through_the_cli(mock_model: Any, tmp_path: Path) -> None:
    work = _work(tmp_path)
    turns = [{"content": [{"type": "tool_use", "name": "Read", "input": {"file_path": "missing.txt"}},
                          {"type": "tool_use", "name": "Bash", "input": {"command": "touch pwned"}},
                          {"type": "tool_use", "name": "no_such_tool", "input": {}}]},
             _say("done")]
    mock = mock_model(turns)
    proc = cli(["-p", "go"], cwd=work, env=anthropic_env(tmp_path, mock.url))
    assert proc.returncode == 0 and "denied on the way" in proc.stderr, proc.stderr  # answered, with a denied call on the way
    assert proc.stdout == "done\n"
    assert not (work / "pwned").exists()
    log = read_log(mock.log_path)
    assert len(log) == 2
    results = _last_tool_results(log[1]["body"])
    assert [r.get("is_error") for r in results] == [True, True, True]
    ids = [b["id"] for b in log[1]["body"]["messages"][-2]["content"] if b["type"] == "tool_use"]
    assert [r["tool_use_id"] for r in results] == ids  # one result per call, in the calls' order
    denial = json.dumps(results[1]["content"])
    assert "--yolo" in denial and "permissions.allow" in denial and "Bash(touch:*)" in denial
    assert "● Bash(touch pwned)" in proc.stderr


def test_max_turns_exits_1_with_a_warning(mock_model: Any, tmp_path: Path) -> None:
    work = _work(tmp_path)
    mock = mock_model([_tool("Glob", pattern="*"), _tool("Glob", pattern="*"), _say("never")])
    proc = cli(["-p", "--max-turns", "1", "loop"], cwd=work, env=anthropic_env(tmp_path, mock.url))
    assert proc.returncode == 1, proc.stderr  # as Claude Code; 3 with --detailed-exit-codes (test_scripting.py)
    assert "stopped after --max-turns 1 turns" in proc.stderr
    assert len(read_log(mock.log_path)) == 1


def test_bad_permission_rule_in_settings_is_reported(mock_model: Any, tmp_path: Path) -> None:
    work = _work(tmp_path)
    (work / ".claude").mkdir()
    (work / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash(git", "Read"]}}))
    mock = mock_model([_say("hi")])
    proc = cli(["-p", "hello"], cwd=work, env=anthropic_env(tmp_path, mock.url))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "hi\n"
    warnings = [line for line in proc.stderr.splitlines() if "invalid permission rule" in line]
    assert len(warnings) == 1, proc.stderr
    assert '"Bash(git"' in warnings[0] and "settings.json" in warnings[0] and "permissions.allow" in warnings[0]


def test_no_api_key_is_one_line(tmp_path: Path) -> None:
    proc = cli(["-p", "hi"], cwd=tmp_path, env=clean_env(tmp_path))
    assert proc.returncode != 0
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert "ANTHROPIC_API_KEY" in lines[0] and "OPENAI_API_KEY" in lines[0]
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("backend", ["anthropic", "openai"])
def test_unreachable_base_url_is_one_line(tmp_path: Path, backend: str) -> None:
    url = f"http://127.0.0.1:{refused_port()}"
    env = anthropic_env(tmp_path, url) if backend == "anthropic" else openai_env(tmp_path, url)
    proc = cli(["-p", "hi"], cwd=tmp_path, env=env)
    assert proc.returncode == 1
    assert proc.stdout == ""
    *retries, error = proc.stderr.splitlines()  # a line for each retry as it waits (issue 29), then the error
    assert len(retries) == 10, proc.stderr
    assert all(line.startswith("API error: connection refused (127.0.0.1:") for line in retries), proc.stderr
    assert "127.0.0.1" in error and "Traceback" not in proc.stderr


def test_debug_allows_a_traceback(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{refused_port()}"
    proc = cli(["-p", "--debug", "hi"], cwd=tmp_path, env=anthropic_env(tmp_path, url))
    assert proc.returncode != 0
    assert "Traceback" in proc.stderr


def test_version_is_fast(tmp_path: Path) -> None:
    times = []
    for _ in range(3):
        began = time.perf_counter()
        proc = cli(["--version"], cwd=tmp_path, env=clean_env(tmp_path))
        times.append(time.perf_counter() - began)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith("mini-claude ")
    assert statistics.median(times) < 1.0, times


def test_importing_the_entry_point_is_light(tmp_path: Path) -> None:
    probe = ("import sys, mini_claude.cli.main\n"
             "heavy = ('anthropic', 'openai', 'httpx', 'rich', 'prompt_toolkit', 'pydantic')\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))")
    proc = subprocess.run([PYTHON, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=30,
                          env=clean_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]", proc.stdout


def test_demo(tmp_path: Path) -> None:
    proc = cli(["demo"], cwd=tmp_path, env=clean_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "● mcp__demo__add(a: 17, b: 25)" in out
    assert "17 + 25 = 42" in out
    assert "● Read(" in out


def test_sigint_during_bash_in_print_mode(mock_model: Any, tmp_path: Path) -> None:
    work = _work(tmp_path)
    pidfile = work / "pids"
    command = f"sleep 30 & echo $! > {pidfile}.tmp; echo $$ >> {pidfile}.tmp; mv {pidfile}.tmp {pidfile}; sleep 30"
    mock = mock_model([_tool("Bash", command=command), _say("never")])
    # Ctrl+C as a terminal sends it: to a process whose SIGINT is not ignored (a runner started in the background
    # by a shell without job control ignores it, and its children inherit that)
    proc = subprocess.Popen([PYTHON, "-m", "mini_claude", "-p", "--allowedTools", "Bash", "go"], cwd=work,
                            env=anthropic_env(tmp_path, mock.url), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 20
        while not pidfile.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the command never wrote its pidfile"
            time.sleep(0.02)
        pids = [int(p) for p in pidfile.read_text().split()]
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert out == ""
    assert "Traceback" not in err
    wait_until(lambda: not any(pid_alive(p) for p in pids), "every child of the interrupted command to die",
               within_s=3)
