"""Issue 29, acceptance 1 (project commands): in the REPL of a trusted folder (a real git repository, trusted as
Claude Code records it), a repository's `.claude/commands/st.md` with `allowed-tools: Bash(git status:*)` runs its
``!`git status` `` and the model's `git status` without a question; what goes beyond it — the model's `touch`, another
command's `!` line — is asked about with the REPL's usual question, and a "no" stops that command before anything of
it runs. The rules end with the command: the same `git status` typed as a plain turn afterwards is asked about."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cli_helpers import start_repl

from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from tests.helpers import require_program

pytestmark = pytest.mark.timeout(180)

QUESTION_ENDS = ("[y/a/n]", "[y/a/n/v]")  # (v when the call is too long to show whole)


def _flat(screen: str) -> str:
    return " ".join(screen.split())


def _repository(tmp_path: Path) -> Path:
    git = require_program("git", "the trusted folder is a git repository")
    work = tmp_path / "repo"
    work.mkdir()
    subprocess.run([git, "init", "-q"], cwd=work, check=True, timeout=30)
    (work / "tracked.txt").write_text("tracked\n")
    subprocess.run([git, "add", "tracked.txt"], cwd=work, check=True, timeout=30)
    subprocess.run([git, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "init"],
                   cwd=work, check=True, timeout=30)
    commands = work / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "st.md").write_text("---\nallowed-tools: Bash(git status:*)\ndescription: the status\n---\n"
                                    "Status now: !`git status --short`\n")
    (commands / "mk.md").write_text("---\nallowed-tools: Bash(git status:*)\n---\nMade: !`touch made-by-bang`\n")
    (work / "untracked.txt").write_text("new\n")
    # trusted as Claude Code records it (HOME is tmp_path in start_repl)
    (tmp_path / ".claude.json").write_text(json.dumps({"projects": {str(work.resolve()): {
        "hasTrustDialogAccepted": True}}}))
    return work


def test_a_trusted_project_command_runs_its_allowed_tools_and_asks_beyond(tmp_path: Path) -> None:
    work = _repository(tmp_path)
    mock = MockModelServer(parse_scenario({"turns": [
        {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": "git status"}}]},
        {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": "touch beyond.txt"}}],
         "expect_tool_result_contains": "untracked.txt"},
        {"content": [{"type": "text", "text": "ST-DONE"}]},
        {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": "git status"}}]},
        {"content": [{"type": "text", "text": "PLAIN-DONE"}]},
    ]}, source="test"))
    url = mock.start()
    term = start_repl(tmp_path, work, url, "projcmd")
    try:
        term.wait_for(lambda s: "/help for commands" in s, "the prompt")
        assert "not trusted" not in term.screen()
        term.enter("/st")
        # `git status` (the `!` line, then the model's call) ran unasked; the model's `touch` is asked about
        term.wait_for(lambda s: _flat(s).endswith(QUESTION_ENDS), "the question about the touch")
        screen = _flat(term.screen())
        assert "Run a shell command: touch beyond.txt" in screen, screen
        assert "Run a shell command: git status" not in screen
        term.keys("y", "Enter")
        term.wait_for(lambda s: "ST-DONE" in s, "the end of the command's turn")
        assert (work / "beyond.txt").exists()
        first = mock.requests[0]["body"]["messages"][0]["content"]
        texts = [first] if isinstance(first, str) else [b["text"] for b in first if b.get("type") == "text"]
        [typed] = [t for t in texts if t.startswith("Status now: ")]  # (after the git snapshot's reminder)
        assert "?? untracked.txt" in typed, typed  # the `!` line's output, inlined

        term.enter("/mk")  # its `!` line is beyond its allowed-tools: asked, and "no" stops it whole
        term.wait_for(lambda s: "Run a shell command: touch made-by-bang" in _flat(s)
                      and _flat(s).endswith(QUESTION_ENDS), "the question about the ! line")
        term.keys("n", "Enter")
        term.wait_for(lambda s: "What should the model do instead?" in s, "the follow-up")
        term.keys("Enter")
        term.wait_for(lambda s: "/mk: stopped, nothing was run or sent: !`touch made-by-bang`" in _flat(s),
                      "the command stopped")
        assert not (work / "made-by-bang").exists() and len(mock.requests) == 3  # nothing reached the model

        term.enter("status please")  # a plain turn: the command's rule is gone, so `git status` is asked about
        term.wait_for(lambda s: _flat(s).count("Run a shell command: git status") == 1
                      and _flat(s).endswith(QUESTION_ENDS), "the question about git status, now")
        term.keys("y", "Enter")
        term.wait_for(lambda s: "PLAIN-DONE" in s, "the end of the plain turn")
        term.keys("C-d")
    finally:
        term.close()
        mock.stop()


def test_the_trust_question_names_the_command_and_yes_lets_it_run(tmp_path: Path) -> None:
    work = _repository(tmp_path)
    (tmp_path / ".claude.json").unlink()  # not trusted yet: the commands are the only thing trust would change
    mock = MockModelServer(parse_scenario({"turns": [{"content": [{"type": "text", "text": "ST-DONE"}]}]},
                                          source="test"))
    url = mock.start()
    term = start_repl(tmp_path, work, url, "projtrust")
    try:
        term.wait_for(lambda s: "Do you trust the files in this folder?" in s, "the trust question")
        assert "- .claude/commands allowed-tools (/mk, /st)" in term.screen()
        term.keys("y", "Enter")
        term.wait_for(lambda s: "/help for commands" in s, "the prompt")
        term.enter("/st")
        term.wait_for(lambda s: "ST-DONE" in s, "the command's answer, nothing asked")
        assert "Run a shell command" not in term.screen()
        first = mock.requests[0]["body"]["messages"][0]["content"]
        assert any(b.get("text", "").startswith("Status now: ") for b in first if isinstance(b, dict)), first
        term.keys("C-d")
    finally:
        term.close()
        mock.stop()
