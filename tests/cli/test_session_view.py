"""What a resumed conversation looks like before the prompt (cli/resume.py `conversation_lines`) and what `/export`
writes (cli/slash/sessions.py `markdown`): prompts, the assistant's text cut short, tool calls on one line, the
earlier exchanges counted, escape sequences removed and secrets masked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mini_claude import secrets
from mini_claude.cli.resume import conversation_lines
from mini_claude.cli.slash.sessions import markdown

WORK = Path("/w/proj")


def _exchange(prompt: str, answer: str, n: int = 0) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": [{"type": "text", "text": "<system-reminder>memory</system-reminder>"},
                                     {"type": "text", "text": prompt}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": f"t{n}", "name": "Read", "input": {"file_path": f"{WORK}/calc.py"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{n}",
                                      "content": [{"type": "text", "text": "1\tdef add(a, b):"}]}]},
        {"role": "assistant", "content": [{"type": "text", "text": answer}]},
    ]


def test_the_view_shows_prompts_text_and_one_line_calls() -> None:
    history = _exchange("fix calc.py", "Fixed.\nline 2\nline 3\nline 4\nline 5")
    lines = conversation_lines(history, WORK)
    assert lines == ["> fix calc.py", "● Let me look.", "● Read(calc.py)", "● Fixed.", "  line 2", "  line 3",
                     "  … (+2 lines)"]


def test_a_long_conversation_shows_the_last_exchanges_and_counts_the_rest() -> None:
    history = [m for n in range(8) for m in _exchange(f"prompt {n}", f"answer {n}", n)]
    lines = conversation_lines(history, WORK, last=3)
    assert lines[0] == "  … 5 earlier exchanges not shown"
    assert [line for line in lines if line.startswith(">")] == ["> prompt 5", "> prompt 6", "> prompt 7"]


def test_the_view_removes_escape_sequences_and_marks_failed_calls() -> None:
    history = [
        {"role": "user", "content": [{"type": "text", "text": "go \x1b[2J"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "b", "name": "Bash",
                                           "input": {"command": "rm x\x1b]52;c;AAAA\x07"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "b", "content": "no", "is_error": True}]},
        {"role": "assistant", "content": [{"type": "text", "text": "\x1b[31mred\x1b[0m"}]}]
    text = "\n".join(conversation_lines(history, WORK))
    assert "\x1b" not in text and "\x07" not in text
    assert "● red" in text and "⎿ 1 tool call failed" in text and "● Bash(rm x" in text


def test_the_markdown_export_has_turns_calls_short_results_and_no_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-live-abcdefghijklmnop1234"
    known = secrets.SecretValues()
    known.add("TEST_EXPORT_KEY", secret)
    monkeypatch.setattr(secrets, "SECRETS", known)
    history = _exchange(f"use key {secret}", "Done.")
    history[2]["content"][0]["content"] = [{"type": "text", "text": "\n".join(f"row {i}" for i in range(9))}]
    text = markdown(history, WORK, session_id="abc", now=0)
    assert text.startswith("# Conversation abc\n\n_Exported 1970-01-01 00:00:00 UTC from /w/proj_")
    assert "## User\n\nuse key [secret TEST_EXPORT_KEY]" in text and secret not in text
    assert "memory" not in text  # the agent's reminders are not the user's words
    assert "## Assistant\n\nLet me look.\n\n**Tool call:** `Read(calc.py)`" in text
    assert "**Result:**\n\n```\nrow 0\nrow 1\nrow 2\nrow 3\nrow 4\n… (+4 lines)\n```" in text
    assert text.rstrip().endswith("Done.")


def test_a_compacted_conversation_says_so_and_shows_no_summary_as_a_prompt() -> None:
    history = [{"role": "user", "content": [{"type": "text", "text": "[Summary of the earlier conversation]\nstuff"}]},
               {"role": "assistant", "content": [{"type": "text", "text": "Understood. Continuing."}]},
               *_exchange("after", "done")]
    lines = conversation_lines(history, WORK)
    assert lines[0] == "  … the conversation before was summarised (compacted)"
    assert [line for line in lines if line.startswith(">")] == ["> after"]
