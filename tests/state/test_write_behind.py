"""Pins written behind (state_writer.py, issue 19): a session's pin files are written by a background thread, so
its event loop never waits on a disk's fsync while a fleet comes up; what was put is visible to readers at once,
a later put of the same file wins, a failed write is logged and never raised, and a flush puts it all on disk."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from mini_claude.mcp.config import ServerConfig
from mini_claude.mcp.pinning import PinStore
from mini_claude.mcp.protocol import McpTool
from mini_claude.state_writer import WriteBehind

ECHO: dict[str, Any] = {"name": "echo", "description": "Echo text.",
                        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}


def test_put_is_visible_at_once_and_on_disk_after_a_flush(tmp_path: Path) -> None:
    writer = WriteBehind("test state")
    path = tmp_path / "state" / "a.json"
    writer.put(path, {"n": 1})
    writer.put(path, {"n": 2})  # a later put of the same file wins
    assert writer.pending(path) in ({"n": 2}, None)  # (None: already written)
    assert writer.flush(10)
    assert writer.pending(path) is None
    assert json.loads(path.read_text()) == {"n": 2}
    # nothing left to write: the writer has ended (a closed session leaves no thread behind)
    assert not [t for t in threading.enumerate() if t.name.startswith("write-behind")]
    writer.hold()
    writer.put(path, {"n": 3})
    assert writer.pending(path) == {"n": 3} and json.loads(path.read_text()) == {"n": 2}  # held: not written
    writer.release()
    assert writer.flush(10) and json.loads(path.read_text()) == {"n": 3}
    assert oct(path.stat().st_mode & 0o777) == "0o600"


def test_a_failed_write_is_logged_not_raised(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    writer = WriteBehind("test state")
    with caplog.at_level(logging.WARNING):
        writer.put(blocker / "a.json", {"n": 1})
        assert writer.flush(10)
        writer.put(tmp_path / "b.json", {"n": 2})  # the writer goes on
        assert writer.flush(10)
    assert "could not save the test state" in caplog.text
    assert json.loads((tmp_path / "b.json").read_text()) == {"n": 2}


def test_a_sessions_pins_are_fsynced_off_the_calling_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced_in: list[str] = []
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        synced_in.append(threading.current_thread().name)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    store = PinStore(tmp_path / "pins", write_behind=True)
    config = ServerConfig(name="srv", type="stdio", command="node", args=("s.js",), scope="project")
    key = store.key_for(config)
    echo = McpTool.from_wire(ECHO)
    assert echo is not None
    first = store.review(key, "srv", [echo])
    assert first.first_sight and [t.name for t in first.allowed] == ["echo"]
    again = store.review(key, "srv", [echo])  # reads what is still being written: no second first sight
    assert not again.first_sight and not again.changed
    assert store.flush(10)
    assert synced_in and threading.main_thread().name not in synced_in
    on_disk = PinStore(tmp_path / "pins")  # another store (another process) reads it from the disk
    assert on_disk.pinned(key).keys() == {"echo"}


async def test_an_event_loop_waits_for_the_writer_without_a_thread_of_its_own(tmp_path: Path) -> None:
    writer = WriteBehind("test state")
    assert await writer.flushed(1)  # nothing put: at once
    before = threading.active_count()
    writer.hold()
    writer.put(tmp_path / "a.json", {"n": 1})
    assert not (tmp_path / "a.json").exists()
    assert await writer.flushed(10)  # releases the hold, waits for the write
    assert json.loads((tmp_path / "a.json").read_text()) == {"n": 1}
    await asyncio.sleep(0)
    assert threading.active_count() <= before + 1  # the writer is ending; no executor thread was started
