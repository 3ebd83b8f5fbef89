"""Saved conversations through the real CLI: every message is on disk as it happens, `--continue` and `--resume`
pick them up, and a `kill -9` in the middle of a tool call leaves a file that resumes into a valid history."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

from mini_claude.agent.sessions import INTERRUPTED_RESULT, SessionLog, load_session, sessions_dir
from tests.helpers import uncached, wait_until
from tests.integration.conftest import Cli, answer, tool_use


def _saved(cli: Cli) -> list[Path]:
    folder = sessions_dir(cli.state, cli.work)
    return sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime) if folder.is_dir() else []


def test_continue_and_resume_pick_up_the_conversation(cli: Cli) -> None:
    mock = cli.mock([answer("first answer"), answer("second answer"), answer("third answer")])
    first = cli.run("-p", "remember the word HERON", "--output-format", "json")
    assert first.rc == 0, first.stderr
    session_id = json.loads(first.stdout)["session_id"]
    [path] = _saved(cli)
    assert path.stem == session_id and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert cli.run("-p", "and now?", "--continue").rc == 0
    assert [m["content"][0]["text"] for m in mock.requests[1]["body"]["messages"]] == [
        "remember the word HERON", "first answer", "and now?"]
    resumed = cli.run("-p", "last one", "--resume", session_id[:8], "--output-format", "json")
    assert resumed.rc == 0 and json.loads(resumed.stdout)["session_id"] == session_id, resumed.stderr
    assert len(mock.requests[2]["body"]["messages"]) == 5 and len(_saved(cli)) == 1
    missing = cli.run("-p", "x", "--resume", "nope")
    assert missing.rc == 1 and "no saved conversation 'nope'" in missing.stderr


def test_kill_9_during_a_tool_call_then_continue(cli: Cli) -> None:
    mock = cli.mock([tool_use("Bash", {"command": "sleep 5"}), answer("after the crash")])
    proc = subprocess.Popen([sys.executable, "-m", "mini_claude", "-p", "run the slow thing", "--yolo"],
                            cwd=cli.work, env=cli.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        wait_until(lambda: any("tool_use" in p.read_text() for p in _saved(cli)), "the tool call on disk",
                   within_s=20)
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=10)
    [path] = _saved(cli)
    history = load_session(path)
    assert [m["role"] for m in history] == ["user", "assistant", "user"]
    assert history[2]["content"][0]["content"] == INTERRUPTED_RESULT and history[2]["content"][0]["is_error"]
    result = cli.run("-p", "go on", "--continue")
    assert result.rc == 0 and result.stdout == "after the crash\n", result.stderr
    sent = mock.requests[-1]["body"]["messages"]
    assert sent[1]["content"][0]["type"] == "tool_use" and sent[2]["content"][0]["type"] == "tool_result"
    assert uncached(sent[2]["content"][-1]) == {"type": "text", "text": "go on"}


def test_the_log_replays_merges_and_take_backs(tmp_path: Path) -> None:
    log = SessionLog.create(tmp_path, tmp_path, "s1")
    history: list[dict] = [{"role": "user", "content": [{"type": "text", "text": "a"}]}]
    log.sync(history)
    history[0]["content"].append({"type": "text", "text": "b"})  # merged into the trailing user message
    log.sync(history)
    history.append({"role": "assistant", "content": [{"type": "text", "text": "c"}]})
    log.sync(history)
    del history[1:]  # a failed prompt taken back
    log.sync(history)
    log.close()
    assert load_session(log.path) == history
    with log.path.open("a") as f:
        f.write('{"type": "message", "message": {"role": "assis')  # cut by a crash
    assert load_session(log.path) == history


def test_a_rewritten_history_is_saved_whole(tmp_path: Path) -> None:
    log = SessionLog.create(tmp_path, tmp_path, "s2")
    history: list[dict] = [{"role": "user", "content": [{"type": "text", "text": f"p{i}"}]} if i % 2 == 0 else
                           {"role": "assistant", "content": [{"type": "text", "text": f"a{i}"}]} for i in range(8)]
    log.sync(history)
    history[:] = [{"role": "user", "content": [{"type": "text", "text": "summary"}]}, *history[5:]]  # compaction
    log.sync(history, rewritten=True)
    history.append({"role": "user", "content": [{"type": "text", "text": "next"}]})
    log.sync(history)
    log.close()
    assert load_session(log.path) == history


def test_resuming_twice_after_a_crash_keeps_every_prompt(cli: Cli) -> None:
    log = SessionLog.create(cli.state, cli.work, "crashed")
    log.sync([{"role": "user", "content": [{"type": "text", "text": "first"}]},
              {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]}])
    log.close()  # the process died during the tool call
    mock = cli.mock([answer("second answer"), answer("third answer")])
    assert cli.run("-p", "second", "--resume", "crashed").rc == 0
    assert cli.run("-p", "third", "--resume", "crashed").rc == 0
    sent = mock.requests[1]["body"]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user"]
    assert sent[2]["content"][-1] == {"type": "text", "text": "second"} and sent[4]["content"][-1]["text"] == "third"
