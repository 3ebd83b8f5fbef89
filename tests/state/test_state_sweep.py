"""The daily state sweep (mini_claude/session/state_sweep.py), issue 22: every file under the state folder that grows has
a clean-up — sessions (old, beyond the newest 200 of a folder, of folders that no longer exist), spill files (old,
and the oldest past the total cap), server logs of servers silent for 30 days, approvals and trusted folders of
folders that no longer exist, set-aside files after 30 days, the REPL history cut to its last MiB — run at most
once a day, in the background, and never twice at once."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from mini_claude.agent.sessions import MAX_SESSIONS_PER_FOLDER, SessionLog, list_sessions, prune_sessions
from mini_claude.mcp.approval import ApprovalStore
from mini_claude.mcp.config import ServerConfig
from mini_claude.mcp.host.server_log import prune_server_logs
from mini_claude.session.state_sweep import (
    MAX_REPL_HISTORY_BYTES,
    REPL_HISTORY_NAME,
    SWEEP_EVERY_S,
    sweep_in_background,
    sweep_state,
    trim_history,
)
from mini_claude.spill import cap_spills, session_spill_dir, spill_text
from mini_claude.statefile import exclusive
from mini_claude.trust import TrustStore

pytestmark = pytest.mark.timeout(60)

DAY_S = 24 * 3600


def age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def _session(state: Path, cwd: Path, session_id: str, days_old: float = 0) -> Path:
    log = SessionLog.create(state, cwd, session_id)
    log.sync([{"role": "user", "content": [{"type": "text", "text": f"hello {session_id}"}]}])
    log.close()
    age(log.path, days_old * DAY_S)
    return log.path


def test_sessions_old_beyond_the_cap_and_of_gone_folders_are_removed(tmp_path: Path) -> None:
    state, here, gone = tmp_path / "state", tmp_path / "here", tmp_path / "gone"
    here.mkdir()
    gone.mkdir()
    fresh = _session(state, here, "fresh", days_old=1)
    _session(state, here, "old", days_old=31)
    _session(state, gone, "orphan")
    gone.rmdir()
    assert prune_sessions(state) == 2
    assert [info.path for info in list_sessions(state, here)] == [fresh]
    assert [p.name for p in (state / "sessions").iterdir()] == [fresh.parent.name]  # the gone folder's went too
    for n in range(5):
        _session(state, here, f"s{n}", days_old=n / 24)
    assert prune_sessions(state, max_per_folder=3) == 3  # the newest three of this folder stay
    assert sorted(info.id for info in list_sessions(state, here)) == ["s0", "s1", "s2"]
    assert MAX_SESSIONS_PER_FOLDER == 200


def test_spill_files_are_capped_oldest_first_but_never_the_running_sessions(tmp_path: Path) -> None:
    root = tmp_path / "state" / "tool-output"
    paths = []
    for n in range(4):
        paths.append(spill_text(f"{n}" * 1000, session_spill_dir(tmp_path / "state", f"s{n}"), "out"))
        age(paths[-1], (10 - n) * 3600)
    running = session_spill_dir(tmp_path / "state", "running")
    mine = spill_text("m" * 5000, running, "out")
    age(mine, 20 * 3600)
    assert cap_spills(root, max_bytes=2000, keep=running) == 2
    assert [p.exists() for p in paths] == [False, False, True, True] and mine.exists()


def test_server_logs_of_silent_servers_go(tmp_path: Path) -> None:
    folder = tmp_path / "mcp-logs"
    folder.mkdir()
    for name, days in (("live.log", 1), ("gone.log", 31), ("gone.log.1", 40), ("notes.txt", 90)):
        (folder / name).write_text("x")
        age(folder / name, days * DAY_S)
    assert prune_server_logs(folder) == 2
    assert sorted(p.name for p in folder.iterdir()) == ["live.log", "notes.txt"]


def test_approvals_and_trust_of_gone_folders_are_forgotten(tmp_path: Path) -> None:
    state, kept, gone = tmp_path / "state", tmp_path / "kept", tmp_path / "gone"
    kept.mkdir()
    gone.mkdir()
    db = ServerConfig(name="db", type="stdio", command="db", scope="project")
    approvals, trust = ApprovalStore(state / "a.json"), TrustStore(state / "t.json")
    for folder in (kept, gone):
        approvals.record(folder, db, "approved")
        trust.record(folder)
    gone.rmdir()
    assert approvals.prune() == 1 and trust.prune() == 1
    assert approvals.lookup(kept, db) == "approved" and trust.folders() == {str(kept.resolve())}
    assert list(json.loads((state / "a.json").read_text())) == [str(kept.resolve())]


def test_the_repl_history_is_cut_at_an_entry_boundary(tmp_path: Path) -> None:
    path = tmp_path / REPL_HISTORY_NAME
    entries = [f"\n# 2025-01-01 00:00:{n % 60:02d}.000000\n+line {n}\n+more {n}\n" for n in range(3000)]
    path.write_text("".join(entries))
    assert trim_history(path, max_bytes=1000)
    text = path.read_text()
    assert len(text.encode()) <= 1000 and text.startswith("# 2025-01-01") and text.endswith("+more 2999\n")
    assert not trim_history(path, max_bytes=1000)  # already small: left alone
    assert MAX_REPL_HISTORY_BYTES == 1024 * 1024


def test_the_sweep_runs_every_clean_up_once_a_day_in_the_background(tmp_path: Path) -> None:
    state, gone = tmp_path / "state", tmp_path / "gone"
    gone.mkdir()
    _session(state, gone, "orphan")
    (state / "mcp-eras.json.bad").write_text("{")
    age(state / "mcp-eras.json.bad", 31 * DAY_S)
    (state / "mcp-oauth.json.bad").write_text("{")  # set aside today: kept for now
    (state / ".trusted-folders.json.x1y2.tmp").write_text("{")  # a write a crash cut, long ago
    age(state / ".trusted-folders.json.x1y2.tmp", 31 * DAY_S)
    gone.rmdir()
    thread = sweep_in_background(state)
    assert thread is not None
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert not (state / "sessions").exists() or not any((state / "sessions").iterdir())
    assert sorted(p.name for p in state.iterdir() if p.name.endswith((".bad", ".tmp"))) == ["mcp-oauth.json.bad"]
    # not again within a day (one stat), again after one
    assert sweep_in_background(state) is None
    assert sweep_in_background(state, now=time.time() + SWEEP_EVERY_S + 60) is not None


def test_a_sweep_another_process_runs_is_not_started_twice(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    with exclusive(state / ".sweep.lock") as held:
        assert held
        assert not sweep_state(state).ran
    assert sweep_state(state).ran


def test_no_state_folder_no_sweep(tmp_path: Path) -> None:
    assert sweep_in_background(tmp_path / "never-created") is None
    assert not (tmp_path / "never-created").exists()
