"""A saved session is listed (the resume picker, the "resumed" line) by what the user typed first, not by the
reminders the agent opens a conversation with (CLAUDE.md, the git snapshot)."""

from __future__ import annotations

from pathlib import Path

from mini_claude.agent.sessions import SessionLog, list_sessions


def test_the_first_prompt_skips_the_opening_reminders(tmp_path: Path) -> None:
    state, cwd = tmp_path / "state", tmp_path / "work"
    cwd.mkdir()
    log = SessionLog.create(state, cwd, "s1")
    log.sync([{"role": "user", "content": [
        {"type": "text", "text": "<system-reminder>\nGit state of the working directory ...\n</system-reminder>"},
        {"type": "text", "text": "Fix   the add\nfunction"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}])
    log.close()
    [info] = list_sessions(state, cwd)
    assert info.first_prompt == "Fix the add function"
