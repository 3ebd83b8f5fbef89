"""Spill files are private (issue 10, hole 8): 0600 files in 0700 folders under the state directory, created with
O_EXCL | O_NOFOLLOW (a symlink planted at a file's path is refused, never followed), and files older than 7 days
are removed when a session creates its spill folder. Real files, real modes, real symlinks."""

from __future__ import annotations

import hashlib
import os
import stat
import time
from pathlib import Path

import pytest

from mini_claude.spill import (
    MAX_AGE_S,
    SPILL_ROOT_NAME,
    session_spill_dir,
    spill_bytes,
    spill_text,
    sweep_old_spills,
)
from mini_claude.tools.base import ToolContext, ToolResult
from mini_claude.tools.output import cap_result

BIG = "\n".join(f"secret row {i}" for i in range(5_000))


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def spilled_name(text: str, stem: str = "bash", suffix: str = ".txt") -> str:
    return f"{stem}-{hashlib.sha256(text.encode()).hexdigest()[:12]}{suffix}"


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture(autouse=True)
def _permissive_umask() -> object:
    """The modes must not depend on the user's umask: run under a permissive one."""
    old = os.umask(0o022)
    yield None
    os.umask(old)


def test_spill_files_are_0600_in_0700_folders_under_the_state_dir(state: Path, tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path, spill_dir=session_spill_dir(state, "abc123"))
    capped = cap_result(ToolResult.text(BIG), ctx, tool_name="bash", max_chars=2000)
    path = ctx.spill_dir / spilled_name(BIG)
    assert f"saved to {path}" in capped.as_text()
    assert path.read_text() == BIG
    assert mode(path) == 0o600
    assert mode(ctx.spill_dir) == 0o700
    assert mode(state / SPILL_ROOT_NAME) == 0o700
    assert mode(state) == 0o700  # created by the spill: private too
    # the same output again reuses the file (content-addressed)
    assert spill_text(BIG, ctx.spill_dir, "bash") == path


def test_existing_loose_folders_are_tightened(state: Path) -> None:
    folder = session_spill_dir(state, "old")
    folder.mkdir(parents=True, mode=0o755)
    os.chmod(folder, 0o755)
    os.chmod(folder.parent, 0o755)
    spill_bytes(b"\x00data", folder, "img", ".bin")
    assert mode(folder) == 0o700 and mode(folder.parent) == 0o700


def test_a_dangling_symlink_at_the_spill_path_is_refused_not_followed(state: Path, tmp_path: Path) -> None:
    folder = session_spill_dir(state, "s1")
    folder.mkdir(parents=True)
    target = tmp_path / "elsewhere" / "planted.txt"  # does not exist: the symlink dangles
    target.parent.mkdir()
    (folder / spilled_name(BIG)).symlink_to(target)
    with pytest.raises(OSError, match="refusing to write a spill file"):
        spill_text(BIG, folder, "bash")
    assert not target.exists()
    # through cap_result the model still gets a preview, and nothing is written through the link
    ctx = ToolContext(cwd=tmp_path, spill_dir=folder)
    capped = cap_result(ToolResult.text(BIG), ctx, tool_name="bash", max_chars=2000)
    assert "saving it to a file failed" in capped.as_text() and "secret row 0" in capped.as_text()
    assert not target.exists()


def test_a_symlink_to_an_existing_file_is_refused_and_the_file_untouched(state: Path, tmp_path: Path) -> None:
    folder = session_spill_dir(state, "s2")
    folder.mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (folder / spilled_name(BIG)).symlink_to(victim)
    with pytest.raises(OSError):
        spill_text(BIG, folder, "bash")
    assert victim.read_text() == "keep me"


def test_a_spill_folder_that_is_a_symlink_is_refused(state: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = session_spill_dir(state, "s3")
    link.parent.mkdir(parents=True)
    link.symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(OSError):
        spill_text(BIG, link, "bash")
    assert list(elsewhere.iterdir()) == []


def test_files_older_than_7_days_go_when_a_new_session_spills(state: Path) -> None:
    root = state / SPILL_ROOT_NAME
    old_session, live_session = root / "old", root / "live"
    old_session.mkdir(parents=True)
    live_session.mkdir()
    eight_days_ago = time.time() - MAX_AGE_S - 86400
    old_file, recent_file, old_in_live = old_session / "a.txt", live_session / "b.txt", live_session / "c.txt"
    for path in (old_file, recent_file, old_in_live):
        path.write_text("x")
    os.utime(old_file, (eight_days_ago, eight_days_ago))
    os.utime(old_in_live, (eight_days_ago, eight_days_ago))
    dangling = live_session / "d.txt"
    dangling.symlink_to(state / "nowhere")
    os.utime(dangling, (eight_days_ago, eight_days_ago), follow_symlinks=False)
    outside = state / "keep.txt"  # not in a session folder: never swept
    outside.write_text("x")
    os.utime(outside, (eight_days_ago, eight_days_ago))

    spill_text("new output", session_spill_dir(state, "new"), "bash")

    assert not old_session.exists()  # emptied, so removed
    assert not old_in_live.exists() and not os.path.lexists(dangling)
    assert recent_file.exists() and outside.exists()
    assert len(list((root / "new").iterdir())) == 1


def test_no_sweep_on_later_spills_of_the_same_session_nor_outside_the_layout(state: Path, tmp_path: Path) -> None:
    folder = session_spill_dir(state, "same")
    spill_text("first", folder, "bash")
    other = state / SPILL_ROOT_NAME / "other"
    other.mkdir()
    old = other / "old.txt"
    old.write_text("x")
    past = time.time() - MAX_AGE_S - 60
    os.utime(old, (past, past))
    spill_text("second", folder, "bash")  # the folder exists: no sweep
    assert old.exists()
    loose = tmp_path / "loose"  # a spill folder elsewhere (tests, tools): its parent is never swept
    sibling = tmp_path / "sibling.txt"
    sibling.write_text("x")
    os.utime(sibling, (past, past))
    spill_text("third", loose, "bash")
    assert sibling.exists()
    assert sweep_old_spills(state / SPILL_ROOT_NAME) == 1 and not old.exists()
