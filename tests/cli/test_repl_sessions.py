"""Sessions you can see, in a real terminal (tmux) against the scripted mock model: `--continue` shows the earlier
exchange before the prompt, `/resume` chooses with the arrow keys, `/export` writes the conversation as Markdown
(and asks before replacing), and `/rewind` puts back a real file that an Edit call changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import start_repl

from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from tests.helpers import anthropic_env, run_cli

pytestmark = pytest.mark.timeout(120)


def _mock(turns: list[dict[str, Any]]) -> MockModelServer:
    return MockModelServer(parse_scenario({"turns": turns}, source="test"))


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def _saved_prompt(tmp_path: Path, work: Path, url: str, prompt: str) -> None:
    done = run_cli(["-p", prompt], cwd=work, env=anthropic_env(tmp_path, url))
    assert done.returncode == 0, done.stderr


def test_continue_shows_the_earlier_exchange_before_the_prompt(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    mock = _mock([{"content": [{"type": "text", "text": "I'll read it."},
                               {"type": "tool_use", "name": "Read", "input": {"file_path": str(work / "calc.py")}}]},
                  _text("It adds.\nSECOND-LINE\nTHIRD-LINE\nFOURTH-LINE\nFIFTH-LINE")])
    url = mock.start()
    term = None
    try:
        _saved_prompt(tmp_path, work, url, "what does calc.py do")
        term = start_repl(tmp_path, work, url, "cont", "--continue")
        term.wait_for(lambda s: "… (+2 lines)\n>" in s, "the conversation, then the prompt")
        screen = term.screen()
        view = screen[screen.index("/help for commands"):]  # under the banner, as Claude Code shows it
        for line in ("> what does calc.py do", "● I'll read it.", "● Read(calc.py)", "● It adds.",
                     "  SECOND-LINE", "  THIRD-LINE", "  … (+2 lines)"):
            assert line in view, screen
        assert "FOURTH-LINE" not in screen
        term.keys("C-d")
    finally:
        if term is not None:
            term.close()
        mock.stop()


def test_the_arrow_picker_resumes_the_second_session(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    mock = _mock([_text("ANSWER-OLDER"), _text("ANSWER-NEWER")])
    url = mock.start()
    term = None
    try:
        _saved_prompt(tmp_path, work, url, "the older session")
        _saved_prompt(tmp_path, work, url, "the newer session")
        term = start_repl(tmp_path, work, url, "pick")
        term.wait_for(lambda s: "/help for commands" in s, "the prompt")
        term.enter("/resume")
        term.wait_for(lambda s: "Resume which conversation?" in s and "↑/↓ to move" in s, "the picker")
        screen = term.screen()
        assert screen.index("the newer session") < screen.index("the older session")  # newest first
        assert "❯ 1. the newer session" in screen and "min ago · 1 KB" in screen
        term.keys("Down")
        term.wait_for(lambda s: "❯ 2. the older session" in s, "the second row chosen")
        term.keys("Enter")
        term.wait_for(lambda s: "● ANSWER-OLDER" in s, "the older conversation shown")
        screen = term.screen()
        assert "> the older session" in screen and "resumed" in screen
        assert "● ANSWER-NEWER" not in screen
        term.keys("C-d")
    finally:
        if term is not None:
            term.close()
        mock.stop()


def test_export_writes_the_conversation_and_asks_before_replacing(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    mock = _mock([_text("THE-ANSWER")])
    url = mock.start()
    term = start_repl(tmp_path, work, url, "export")
    try:
        term.wait_for(lambda s: "/help for commands" in s, "the prompt")
        term.enter("a question to export")
        term.wait_for(lambda s: "THE-ANSWER" in s, "the answer")
        term.enter("/export talk.md")
        term.wait_for(lambda s: f"conversation exported to {work / 'talk.md'}" in s, "the export")
        text = (work / "talk.md").read_text()
        assert "## User\n\na question to export\n\n## Assistant\n\nTHE-ANSWER" in text
        (work / "talk.md").write_text("keep me")
        term.enter("/export talk.md")
        term.wait_for(lambda s: "exists. Replace it? [y/n]" in s, "the question")
        term.keys("n", "Enter")
        term.wait_for(lambda s: "/export: not written" in s, "the refusal")
        assert (work / "talk.md").read_text() == "keep me"
        (work / "link.md").symlink_to(tmp_path / "elsewhere.md")
        term.enter("/export link.md")
        term.wait_for(lambda s: "is a symbolic link" in s, "the link refused")
        assert not (tmp_path / "elsewhere.md").exists()
        term.keys("C-d")
    finally:
        term.close()
        mock.stop()


def test_rewind_puts_back_the_file_an_edit_changed(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    calc = work / "calc.py"
    calc.write_text("def add(a, b):\n    return a + b\n")
    mock = _mock([
        {"content": [{"type": "tool_use", "name": "Read", "input": {"file_path": str(calc)}}]},
        {"content": [{"type": "tool_use", "name": "Edit", "input": {"file_path": str(calc), "old_string": "a + b",
                                                                     "new_string": "a - b"}}]},
        _text("EDITED-IT")])
    url = mock.start()
    term = start_repl(tmp_path, work, url, "rewind", "--permission-mode", "acceptEdits")
    try:
        term.wait_for(lambda s: "/help for commands" in s, "the prompt")
        term.enter("break the add function")
        term.wait_for(lambda s: "EDITED-IT" in s, "the edit done")
        assert "a - b" in calc.read_text()
        term.enter("/rewind")
        term.wait_for(lambda s: "❯ 1. break the add function  calc.py" in s, "the prompts with their changes")
        term.keys("Enter")
        term.wait_for(lambda s: "Restore code and conversation" in s and "code: 1 file to put back (calc.py)" in s,
                      "what to restore")
        assert "changes made by shell commands (Bash) are not undone" in " ".join(term.screen().split())
        term.keys("Enter")
        term.wait_for(lambda s: "restored calc.py" in s and "conversation rewound" in s, "the rewind")
        assert calc.read_text() == "def add(a, b):\n    return a + b\n"
        term.wait_for(lambda s: s.rstrip().endswith("> break the add function"), "the prompt back to edit")
        term.keys("C-u", "C-d")
    finally:
        term.close()
        mock.stop()


def test_checkpoints_of_an_earlier_run_survive_continue_and_code_alone_can_be_restored(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    notes = work / "notes.txt"
    notes.write_text("original\n")
    mock = _mock([
        {"content": [{"type": "tool_use", "name": "Read", "input": {"file_path": str(notes)}}]},
        {"content": [{"type": "tool_use", "name": "Write", "input": {"file_path": str(notes), "content": "new\n"}}]},
        {"content": [{"type": "tool_use", "name": "Write", "input": {"file_path": str(work / "made.txt"),
                                                                      "content": "made\n"}}]},
        _text("WROTE-BOTH")])
    url = mock.start()
    term = None
    try:
        done = run_cli(["-p", "rewrite the notes", "--permission-mode", "acceptEdits"], cwd=work,
                       env=anthropic_env(tmp_path, url))
        assert done.returncode == 0 and notes.read_text() == "new\n", done.stderr
        term = start_repl(tmp_path, work, url, "later", "--continue")
        term.wait_for(lambda s: "/help for commands" in s and "● WROTE-BOTH" in s, "the earlier run shown")
        term.enter("/rewind")
        term.wait_for(lambda s: "❯ 1. rewrite the notes  notes.txt, made.txt" in s, "the prompt with its changes")
        term.keys("Enter")
        term.wait_for(lambda s: "Restore what?" in s, "what to restore")
        term.keys("3")  # Restore code
        term.wait_for(lambda s: "restored notes.txt" in s and "deleted made.txt (created since)" in s, "the code back")
        assert notes.read_text() == "original\n" and not (work / "made.txt").exists()
        assert "conversation rewound" not in term.screen()  # the conversation stays as it was
        term.keys("C-d")
    finally:
        if term is not None:
            term.close()
        mock.stop()


def test_a_forked_session_gets_its_own_copy_of_the_checkpoints(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    mock = _mock([{"content": [{"type": "tool_use", "name": "Write", "input": {"file_path": str(work / "a.txt"),
                                                                            "content": "a\n"}}]},
                  _text("WROTE"), _text("FORKED")])
    url = mock.start()
    try:
        env = anthropic_env(tmp_path, url)
        first = run_cli(["-p", "write a", "--permission-mode", "acceptEdits", "--output-format", "json"], cwd=work,
                        env=env)
        assert first.returncode == 0, first.stderr
        original = json.loads(first.stdout)["session_id"]
        forked = run_cli(["-p", "go on", "--resume", original, "--fork-session", "--output-format", "json"],
                         cwd=work, env=env)
        assert forked.returncode == 0, forked.stderr
        fork_id = json.loads(forked.stdout)["session_id"]
        assert fork_id != original
        stores = {p.name: p for p in (tmp_path / "state" / "sessions").glob("*/*.checkpoints")}
        assert set(stores) == {f"{original}.checkpoints", f"{fork_id}.checkpoints"}
        assert (stores[f"{fork_id}.checkpoints"] / "index.jsonl").read_text() == \
            (stores[f"{original}.checkpoints"] / "index.jsonl").read_text()
    finally:
        mock.stop()
