"""EraMemory: per-server era answers in a small JSON file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mini_claude.mcp.eras import ERAS_FILE_NAME, EraMemory, EraRecord


def test_remember_recall_forget(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "eras.json"
    memory = EraMemory(path)
    assert memory.recall("github") is None
    memory.remember("github", "legacy", "2025-11-25")
    memory.remember("linear", "modern", "2026-07-28")
    assert memory.recall("github") == EraRecord("legacy", "2025-11-25")
    assert EraMemory(path).recall("linear") == EraRecord("modern", "2026-07-28")  # persisted
    memory.forget("github")
    assert memory.recall("github") is None and memory.recall("linear") is not None
    assert json.loads(path.read_text()) == {"linear": {"era": "modern", "version": "2026-07-28"}}
    assert [p.name for p in path.parent.iterdir()] == ["eras.json"]  # no temp files left


@pytest.mark.parametrize("content", ["not json", "[1, 2]", '{"x": {"era": "future", "version": "1"}}',
                                     '{"x": {"era": "legacy"}}', '{"x": "legacy"}'])
def test_bad_file_or_entry_is_no_memory(tmp_path: Path, content: str) -> None:
    path = tmp_path / "eras.json"
    path.write_text(content)
    memory = EraMemory(path)
    assert memory.recall("x") is None
    memory.remember("y", "modern", "2026-07-28")
    assert memory.recall("y") == EraRecord("modern", "2026-07-28")


def test_default_path_is_under_the_state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINI_CLAUDE_STATE_DIR", str(tmp_path / "state"))
    memory = EraMemory()
    assert memory.path == tmp_path / "state" / ERAS_FILE_NAME
    memory.remember("s", "legacy", "2025-06-18")
    assert memory.path.exists()


def test_unwritable_location_is_only_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    memory = EraMemory(blocker / "eras.json")  # its parent is a file: mkdir fails
    memory.remember("s", "legacy", "2025-06-18")
    assert memory.recall("s") is None
    assert "could not save" in caplog.text
