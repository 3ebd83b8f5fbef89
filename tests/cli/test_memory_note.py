"""`# note` (cli/questions/memory_note.py) with real files: the question offers the project, project-local and user memory
files, each answer writes to its own file (which the loader then reads), none is chosen silently, and a target
that is a symlink or a FIFO is named with the reason and not offered — the symlink/FIFO refusal holds for every
target, not only ./CLAUDE.md."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from mini_claude.agent.memory import append_memory_note, load_memory
from mini_claude.cli.questions.memory_note import NOTE_QUESTION, add_memory_note
from mini_claude.cli.terminal.render import TerminalUI
from mini_claude.errors import ConfigError


class _Answers:
    """The REPL's `_ask`, answering from a script and keeping what was offered."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.offered: list[list[str]] = []

    async def __call__(self, question: str, choices: dict[str, str]) -> str:
        assert question == NOTE_QUESTION
        self.offered.append(list(choices))
        return choices[self.answers.pop(0)]


def _ui() -> TerminalUI:
    return TerminalUI(out=io.StringIO(), err=io.StringIO())


@pytest.fixture
def box(tmp_path: Path) -> tuple[Path, Path]:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    (work / ".git").mkdir()
    return work, home


@pytest.mark.parametrize(("key", "where", "kind"), [("p", "work/CLAUDE.md", "project"),
                                                    ("l", "work/CLAUDE.local.md", "local"),
                                                    ("u", "home/.claude/CLAUDE.md", "user")])
async def test_each_answer_writes_its_own_file(box: tuple[Path, Path], key: str, where: str, kind: str) -> None:
    work, home = box
    ask = _Answers(key)
    path = await add_memory_note(" use tabs ", ask=ask, ui=_ui(), cwd=work, home=home)
    assert path == work.parent / where and path.read_text() == "- use tabs\n"
    assert ask.offered == [["p", "l", "u", "n"]]
    assert [(f.kind, f.text) for f in load_memory(work, home).files] == [(kind, "- use tabs\n")]


async def test_declining_writes_nothing(box: tuple[Path, Path]) -> None:
    work, home = box
    ui = _ui()
    assert await add_memory_note("x", ask=_Answers("n"), ui=ui, cwd=work, home=home) is None
    assert "not noted" in ui.err.getvalue()  # type: ignore[attr-defined]
    assert sorted(p.name for p in work.iterdir()) == [".git"] and not (home / ".claude").exists()


async def test_a_link_or_fifo_target_is_named_and_not_offered(box: tuple[Path, Path]) -> None:
    work, home = box
    victim = home / "victim.md"
    victim.write_text("mine\n")
    (work / "CLAUDE.md").symlink_to(victim)
    os.mkfifo(work / "CLAUDE.local.md")
    ui, ask = _ui(), _Answers("u")
    await add_memory_note("note", ask=ask, ui=ui, cwd=work, home=home)
    shown = ui.err.getvalue()  # type: ignore[attr-defined]
    assert "cannot add to CLAUDE.md: " in shown and "it is a symbolic link" in shown
    assert "cannot add to CLAUDE.local.md: " in shown and "not a regular file" in shown
    assert ask.offered == [["u", "n"]] and victim.read_text() == "mine\n"
    (home / ".claude" / "CLAUDE.md").unlink()
    (home / ".claude" / "CLAUDE.md").symlink_to(victim)
    nothing = _Answers()
    assert await add_memory_note("note", ask=nothing, ui=ui, cwd=work, home=home) is None
    assert nothing.offered == []  # no file can take it: nothing asked
    for path in (work / "CLAUDE.md", home / ".claude" / "CLAUDE.md"):  # the writer itself refuses too
        with pytest.raises(ConfigError, match="it is a symbolic link"):
            append_memory_note(path, "note")
    with pytest.raises(ConfigError, match="not a regular file"):
        append_memory_note(work / "CLAUDE.local.md", "note")
    assert victim.read_text() == "mine\n"


async def test_a_local_note_keeps_claude_local_md_out_of_git(box: tuple[Path, Path]) -> None:
    """As Claude Code does: in a git work tree, a note in CLAUDE.local.md adds the file to the folder's .gitignore
    (once), keeping what the .gitignore held."""
    work, home = box  # a git work tree (the fixture's .git)
    (work / ".gitignore").write_text("node_modules/")  # no final newline
    await add_memory_note("mine", ask=_Answers("l"), ui=_ui(), cwd=work, home=home)
    assert (work / ".gitignore").read_text() == "node_modules/\nCLAUDE.local.md\n"
    await add_memory_note("again", ask=_Answers("l"), ui=_ui(), cwd=work, home=home)
    assert (work / ".gitignore").read_text() == "node_modules/\nCLAUDE.local.md\n"
    await add_memory_note("shared", ask=_Answers("p"), ui=_ui(), cwd=work, home=home)
    assert (work / ".gitignore").read_text().count("CLAUDE.local.md") == 1


async def test_outside_git_or_through_a_link_no_gitignore_is_written(box: tuple[Path, Path], tmp_path: Path) -> None:
    work, home = box
    (work / ".git").rmdir()
    await add_memory_note("mine", ask=_Answers("l"), ui=_ui(), cwd=work, home=home)
    assert not (work / ".gitignore").exists()  # not a git work tree
    (work / ".git").mkdir()
    target = tmp_path / "elsewhere"
    target.write_text("x\n")
    (work / ".gitignore").symlink_to(target)
    ui = _ui()
    await add_memory_note("more", ask=_Answers("l"), ui=ui, cwd=work, home=home)
    assert target.read_text() == "x\n"
    assert "could not add CLAUDE.local.md to .gitignore" in ui.err.getvalue()
