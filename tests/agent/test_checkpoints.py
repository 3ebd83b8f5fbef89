"""Checkpoints of the files our own tools change (agent/checkpoints.py), with the real Write and Edit tools on real
files: a change is put back, a created file deleted, a link planted since refused, a big file noted as not covered,
and the store read again by a new session object (what `--continue` does) still rewinds."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from mini_claude.agent import checkpoints as checkpoints_module
from mini_claude.agent.checkpoints import Checkpoints
from mini_claude.agent.turns import before, prompt_points
from mini_claude.tools.base import ToolContext
from mini_claude.tools.files import EditFileTool, WriteFileTool
from mini_claude.tools.read import ReadFileTool


def _prompt(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def _answer(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


class Session:
    """A history, its checkpoints and the tools, as the agent runs them (before_tool, then the tool)."""

    def __init__(self, tmp_path: Path, store: Path | None = None, history: list[dict[str, Any]] | None = None) -> None:
        self.work = tmp_path / "work"
        self.work.mkdir(exist_ok=True)
        self.ctx = ToolContext(cwd=self.work, spill_dir=tmp_path / "spill", home=tmp_path)
        self.history: list[dict[str, Any]] = history if history is not None else []
        self.store = store or tmp_path / "state" / "s1.checkpoints"
        self.checkpoints = Checkpoints(self.store, self.history)

    def prompt(self, text: str) -> None:
        self.history += [_prompt(text)]

    async def run(self, tool: Any, args: dict[str, Any]) -> str:
        if not tool.read_only:
            self.checkpoints.before_tool(tool.name, args, self.ctx)
        result = await tool.run(args, self.ctx)
        assert not result.is_error, result.as_text()
        self.history.append(_answer("done"))
        return result.as_text()

    async def write(self, name: str, content: str) -> None:
        await self.run(WriteFileTool(), {"file_path": name, "content": content})

    async def edit(self, name: str, old: str, new: str) -> None:
        await self.run(ReadFileTool(), {"file_path": name})
        await self.run(EditFileTool(), {"file_path": name, "old_string": old, "new_string": new})

    def point(self, n: int) -> Any:
        return prompt_points(self.history)[n]


async def test_a_changed_file_and_a_created_one_go_back_as_they_were(tmp_path: Path) -> None:
    s = Session(tmp_path)
    (s.work / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    s.prompt("first")
    await s.edit("calc.py", "a + b", "a - b")
    s.prompt("second")
    await s.edit("calc.py", "a - b", "a * b")
    await s.write("new.py", "print('new')\n")
    assert (s.work / "calc.py").read_text().endswith("a * b\n")

    done = s.checkpoints.restore(s.point(1), [s.work])  # back to before "second"
    assert (s.work / "calc.py").read_text().endswith("a - b\n")
    assert not (s.work / "new.py").exists()
    assert done.written == [str(s.work / "calc.py")] and done.deleted == [str(s.work / "new.py")]

    done = s.checkpoints.restore(s.point(0), [s.work])  # back to before "first": the earliest copy wins
    assert (s.work / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert done.skipped == []


async def test_the_store_is_private_and_a_second_edit_of_a_prompt_keeps_the_first_copy(tmp_path: Path) -> None:
    s = Session(tmp_path)
    (s.work / "a.txt").write_text("one\n")
    s.prompt("change it twice")
    await s.edit("a.txt", "one", "two")
    await s.edit("a.txt", "two", "three")
    assert stat.S_IMODE(os.stat(s.store).st_mode) == 0o700
    files = sorted(os.listdir(s.store))
    assert len(files) == 2 and all(stat.S_IMODE(os.stat(s.store / f).st_mode) == 0o600 for f in files)
    s.checkpoints.restore(s.point(0), [s.work])
    assert (s.work / "a.txt").read_text() == "one\n"


async def test_a_link_planted_since_is_never_written_through(tmp_path: Path) -> None:
    s = Session(tmp_path)
    (s.work / "notes.txt").write_text("mine\n")
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    s.prompt("edit notes")
    await s.edit("notes.txt", "mine", "theirs")
    (s.work / "notes.txt").unlink()
    (s.work / "notes.txt").symlink_to(outside)  # planted after the change

    done = s.checkpoints.restore(s.point(0), [s.work])
    assert outside.read_text() == "precious\n"
    assert (s.work / "notes.txt").is_symlink()
    assert [path for path, _ in done.skipped] == [str(s.work / "notes.txt")]
    assert "symbolic link" in done.skipped[0][1]


async def test_a_folder_swapped_for_a_link_and_a_path_outside_the_roots_are_refused(tmp_path: Path) -> None:
    s = Session(tmp_path)
    sub = s.work / "sub"
    sub.mkdir()
    (sub / "f.txt").write_text("before\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    s.prompt("edit in sub")
    await s.edit("sub/f.txt", "before", "after")
    sub.rename(s.work / "sub-moved")
    sub.symlink_to(elsewhere)  # the folder on its path is now a link

    done = s.checkpoints.restore(s.point(0), [s.work])
    assert list(elsewhere.iterdir()) == []
    assert "symbolic link" in done.skipped[0][1]

    done = s.checkpoints.restore(s.point(0), [tmp_path / "some-other-project"])
    assert done.skipped[0][1] == "outside the folders this session may write"


async def test_a_file_over_the_limit_is_not_copied_and_the_rewind_says_so(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checkpoints_module, "MAX_FILE_BYTES", 1000)
    s = Session(tmp_path)
    (s.work / "big.txt").write_text("x" * 2000)
    s.prompt("overwrite the big one")
    await s.run(ReadFileTool(), {"file_path": "big.txt"})
    await s.write("big.txt", "small\n")
    assert not any(name.endswith(".bin") for name in os.listdir(s.store))

    done = s.checkpoints.restore(s.point(0), [s.work])
    assert (s.work / "big.txt").read_text() == "small\n"
    assert done.written == [] and len(done.skipped) == 1
    assert "not saved before the change (over" in done.skipped[0][1]


async def test_checkpoints_survive_a_new_session_object_reading_the_same_store(tmp_path: Path) -> None:
    s = Session(tmp_path)
    (s.work / "calc.py").write_text("v1\n")
    s.prompt("make it v2")
    await s.edit("calc.py", "v1", "v2")
    s.prompt("make it v3")
    await s.edit("calc.py", "v2", "v3")

    resumed = Session(tmp_path, store=s.store, history=[dict(m) for m in s.history])  # --continue: a new process
    assert resumed.checkpoints.files_changed_at(resumed.point(1)) == [str(s.work / "calc.py")]
    resumed.checkpoints.restore(resumed.point(1), [s.work])
    assert (s.work / "calc.py").read_text() == "v2\n"


async def test_forgetting_a_rewound_part_drops_its_copies_and_a_prompt_sent_again_gets_new_ones(tmp_path: Path
                                                                                                ) -> None:
    s = Session(tmp_path)
    (s.work / "a.txt").write_text("one\n")
    s.prompt("keep")
    s.history.append(_answer("ok"))
    s.prompt("change")
    await s.edit("a.txt", "one", "two")
    point = s.point(1)
    s.checkpoints.forget_from(point)  # the conversation was cut back: its checkpoints go
    s.history[:] = before(s.history, point)
    assert not [n for n in os.listdir(s.store) if n.endswith(".bin")]
    s.prompt("change")  # the same prompt again, at the same place
    await s.edit("a.txt", "two", "three")
    s.checkpoints.restore(s.point(1), [s.work])
    assert (s.work / "a.txt").read_text() == "two\n"  # the new copy, not the forgotten one


def test_a_prompt_merged_after_interrupted_tool_results_is_found_and_cut_back_to(tmp_path: Path) -> None:
    history = [_prompt("first"),
               {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]},
               {"role": "user", "content": [
                   {"type": "tool_result", "tool_use_id": "t1", "content": "cut"},
                   {"type": "text", "text": "[The previous request was interrupted by the user.]"},
                   {"type": "text", "text": "second"}]}]
    points = prompt_points(history)
    assert [(p.text, p.key) for p in points] == [("first", (0, 0)), ("second", (2, 1))]
    cut = before(history, points[1])
    assert cut[-1]["content"] == [{"type": "tool_result", "tool_use_id": "t1", "content": "cut"}]
    assert len(history[2]["content"]) == 3  # the history itself is left as it was


async def test_the_sweep_removes_a_sessions_checkpoints_with_it(tmp_path: Path) -> None:
    from mini_claude.agent.sessions import SessionLog, checkpoints_dir, prune_sessions

    work = tmp_path / "work"
    work.mkdir()
    state = tmp_path / "state"
    kept, old = SessionLog.create(state, work, "kept"), SessionLog.create(state, work, "old")
    for log in (kept, old):
        log.sync([_prompt("hi")])
        log.close()
        s = Session(tmp_path, store=checkpoints_dir(log.path))
        s.prompt("write")
        await s.write(f"{log.id}.txt", "x")
    os.utime(old.path, (1, 1))  # not written for decades
    assert prune_sessions(state) == 1
    assert checkpoints_dir(kept.path).is_dir() and not checkpoints_dir(old.path).exists()


async def test_a_notebook_edit_is_put_back_too(tmp_path: Path) -> None:
    from mini_claude.tools.notebook import NotebookEditTool

    s = Session(tmp_path)
    book = s.work / "a.ipynb"
    original = ('{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [{"cell_type": "code", "id": "c1", '
                '"metadata": {}, "execution_count": null, "source": "x = 1", "outputs": []}]}\n')
    book.write_text(original)
    s.prompt("change the cell")
    await s.run(ReadFileTool(), {"file_path": "a.ipynb"})
    await s.run(NotebookEditTool(), {"notebook_path": "a.ipynb", "cell_id": "c1", "new_source": "x = 2"})
    assert "x = 2" in book.read_text()
    s.checkpoints.restore(s.point(0), [s.work])
    assert book.read_text() == original


async def test_a_hard_link_planted_since_is_not_written_into(tmp_path: Path) -> None:
    s = Session(tmp_path)
    (s.work / "notes.txt").write_text("mine\n")
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    s.prompt("edit notes")
    await s.edit("notes.txt", "mine", "theirs")
    (s.work / "notes.txt").unlink()
    os.link(outside, s.work / "notes.txt")

    done = s.checkpoints.restore(s.point(0), [s.work])
    assert outside.read_text() == "precious\n"
    assert "hard links" in done.skipped[0][1]


def test_a_compacted_historys_summary_is_no_prompt() -> None:
    history = [{"role": "user", "content": [
                   {"type": "text", "text": "[Summary of the earlier conversation, written when …]\nwe fixed it"}]},
               _answer("Understood. Continuing."), _prompt("next"), _answer("ok")]
    assert [p.text for p in prompt_points(history)] == ["next"]
