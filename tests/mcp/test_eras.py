"""EraMemory: per-server era answers in a small JSON file, keyed by hashes only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mini_claude.mcp.negotiation import ERAS_FILE_NAME, EraMemory, EraRecord, hashed_key


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
    assert json.loads(path.read_text()) == {hashed_key("linear"): {"era": "modern", "version": "2026-07-28"}}
    assert [p.name for p in path.parent.iterdir()] == ["eras.json"]  # no temp files left


@pytest.mark.parametrize("content", ["not json", "[1, 2]", '{"X": {"era": "future", "version": "1"}}',
                                     '{"X": {"era": "legacy"}}', '{"X": "legacy"}',
                                     '{"x": {"era": "legacy", "version": "2025-11-25"}}'])
def test_bad_file_or_entry_is_no_memory(tmp_path: Path, content: str) -> None:
    path = tmp_path / "eras.json"
    path.write_text(content.replace('"X"', json.dumps(hashed_key("x"))))
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


def test_keys_are_stored_hashed_and_plaintext_entries_are_dropped(tmp_path: Path) -> None:
    path = tmp_path / "eras.json"
    # what an older version wrote: the server's URL (with a token in it) as the key
    path.write_text(json.dumps({"api https://u:pw@example.com/mcp?token=s3cr3t": {"era": "legacy",
                                                                                  "version": "2025-06-18"}}))
    memory = EraMemory(path)
    key = "api https://u:pw@example.com/mcp?token=s3cr3t"
    assert memory.recall(key) is None  # plaintext keys are not read
    memory.remember(key, "modern", "2026-07-28")
    memory.remember("local python -m srv --api-key=s3cr3t", "legacy", "2025-11-25")
    text = path.read_text()
    assert "s3cr3t" not in text and "example.com" not in text and "pw" not in text and "python" not in text
    assert sorted(json.loads(text)) == sorted([hashed_key(key), hashed_key("local python -m srv --api-key=s3cr3t")])
    assert hashed_key(key).startswith("sha256:") and len(hashed_key(key)) == 7 + 64
    assert memory.recall(key) == EraRecord("modern", "2026-07-28")
