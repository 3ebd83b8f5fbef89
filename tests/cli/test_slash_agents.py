"""`/agents` (issue 29): the agent file it writes is Claude Code's format and loads through the start-up loader; the
writer never follows a link nor writes into a FIFO, and replaces a file only when told; the whole dialogue, driven
through typed answers (the picker's numbered fallback off a terminal), writes the file, asks before replacing one,
and puts the new type in the session's types at once."""

from __future__ import annotations

import io
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from mini_claude.agent.subagents import BUILTIN_TYPES, load_subagent_types
from mini_claude.cli.slash.agents import (
    AgentDraft,
    agent_file_text,
    agent_listing,
    agent_path,
    agents_command,
    write_agent_file,
)
from mini_claude.cli.terminal.render import TerminalUI
from mini_claude.errors import ConfigError

TRICKY = "Reviews diffs: finds bugs # and 'quotes' — also \"these\""


def _draft(**changes: Any) -> AgentDraft:
    fields: dict[str, Any] = {"scope": "project", "name": "reviewer", "description": TRICKY,
                              "tools": ("Read", "Grep", "mcp__gh__pr"), "model": "sonnet",
                              "prompt": "You review code.\nLine two."}
    return AgentDraft(**{**fields, **changes})


def test_the_file_is_claude_codes_format_and_loads_back(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    path = agent_path("project", "reviewer", cwd=work, home=home)
    assert path == work / ".claude" / "agents" / "reviewer.md"
    assert agent_path("user", "x", cwd=work, home=home) == home / ".claude" / "agents" / "x.md"
    text = agent_file_text(_draft())
    assert text.startswith("---\nname: reviewer\ndescription: ")
    assert "\ntools: Read, Grep, mcp__gh__pr\nmodel: sonnet\n---\n\nYou review code.\nLine two.\n" in text
    write_agent_file(path, text)
    kinds, warnings = load_subagent_types(work, home, trusted=True)
    assert warnings == []
    kind = kinds["reviewer"]
    assert (kind.description, kind.tools, kind.model, kind.prompt, kind.source, kind.path) == \
        (TRICKY, ("Read", "Grep", "mcp__gh__pr"), "sonnet", "You review code.\nLine two.", "project", path)

    every = agent_file_text(_draft(name="helper", tools=None, model="inherit"))
    assert "tools:" not in every and "\nmodel: inherit\n" in every  # no tools line: every tool, as in Claude Code
    write_agent_file(agent_path("user", "helper", cwd=work, home=home), every)
    helper = load_subagent_types(work, home, trusted=True)[0]["helper"]
    assert helper.tools is None and helper.source == "user"


def test_the_writer_replaces_only_when_told_and_never_through_a_link(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "agents" / "a.md"
    write_agent_file(path, "one\n")
    with pytest.raises(FileExistsError):
        write_agent_file(path, "two\n")
    write_agent_file(path, "three\n", replace=True)
    assert path.read_text() == "three\n"

    target = tmp_path / "target.txt"
    target.write_text("keep\n")
    link = path.parent / "link.md"
    os.symlink(target, link)
    for replace in (False, True):
        with pytest.raises((ConfigError, FileExistsError)):
            write_agent_file(link, "evil\n", replace=replace)
    assert target.read_text() == "keep\n"

    fifo = path.parent / "fifo.md"
    os.mkfifo(fifo)
    with pytest.raises((ConfigError, OSError)):  # no reader: refused at once (never a hang)
        write_agent_file(fifo, "x\n", replace=True)

    linked = tmp_path / "linked"
    (linked / ".claude").mkdir(parents=True)
    os.symlink(tmp_path / "elsewhere", linked / ".claude" / "agents")
    with pytest.raises(ConfigError, match="a folder on the way is a symbolic link"):
        write_agent_file(linked / ".claude" / "agents" / "b.md", "x\n")
    assert not (tmp_path / "elsewhere").exists()


def _answers(*replies: str | None) -> tuple[Callable[[str], Awaitable[str | None]], list[str]]:
    asked: list[str] = []
    queue = list(replies)

    async def typed(label: str) -> str | None:
        asked.append(label)
        return queue.pop(0)
    return typed, asked


def _parts(work: Path, home: Path) -> Any:
    kinds = {t.name: t for t in BUILTIN_TYPES}
    return SimpleNamespace(subagents=SimpleNamespace(kinds=kinds), gate=SimpleNamespace(cwd=work),
                           env={"HOME": str(home)}, trusted=False)


async def test_the_dialogue_writes_asks_before_replacing_and_loads_the_new_type(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    parts = _parts(work, home)
    err = io.StringIO()
    ui = TerminalUI(out=io.StringIO(), err=err)
    # /agents: the listing, then "Create a new agent" (1), project (1), name (a bad one first), description,
    # tools "a list I type" (3) and the list, model sonnet (2), the prompt left empty (the starting template)
    typed, asked = _answers("1", "1", "bad name!", "reviewer", "Reviews diffs: finds bugs", "3", "Read, Grep",
                            "2", "")
    await agents_command(parts, "", ui, typed=typed)
    out = capsys.readouterr().out
    assert "  general-purpose  (built-in) · tools: all · model: inherit" in out
    assert "  Explore  (built-in) · tools: read-only ones · model: inherit" in out
    assert asked[3] == "Name (letters, digits, - and _): " and len(asked) == 9
    assert "a name is 1 to 64 letters, digits, '-' and '_'" in err.getvalue()
    path = work / ".claude" / "agents" / "reviewer.md"
    text = path.read_text()
    assert text.startswith("---\nname: reviewer\ndescription: 'Reviews diffs: finds bugs'\ntools: Read, Grep\n"
                           "model: sonnet\n---\n\nYou are the reviewer sub-agent. Your job: Reviews diffs: finds bugs")
    kind = parts.subagents.kinds["reviewer"]
    assert kind.path == path and kind.tools == ("Read", "Grep")
    assert kind.model is None  # the folder is not trusted: a project agent's model waits for trust
    assert "`model: sonnet` ignored (the session's model is used) until the folder is trusted" in err.getvalue()
    assert "the reviewer agent is ready: the Agent tool can start it in this session" in err.getvalue()

    # again, same name: "No, keep it" leaves the file as it was
    typed, _ = _answers("1", "reviewer", "Other", "1", "1", "new prompt", "1")
    await agents_command(parts, "new", ui, typed=typed)
    assert path.read_text() == text and "/agents: cancelled, nothing written" in err.getvalue()
    # and "Yes, replace it" replaces it
    typed, _ = _answers("1", "reviewer", "Other", "2", "1", "NEW-PROMPT", "2")
    await agents_command(parts, "new", ui, typed=typed)
    assert path.read_text().endswith("---\n\nNEW-PROMPT\n") and parts.subagents.kinds["reviewer"].tools == \
        ("Read", "Glob", "Grep", "WebFetch", "WebSearch")
    listing = agent_listing(parts.subagents.kinds)
    assert f"  reviewer  (project: {path}) · tools: Read, Glob, Grep, WebFetch, WebSearch · model: inherit" in listing


async def test_a_project_agent_may_not_take_a_builtin_name_and_a_dismissal_writes_nothing(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    parts = _parts(work, home)
    err = io.StringIO()
    ui = TerminalUI(out=io.StringIO(), err=err)
    typed, _ = _answers("1", "Explore", None)
    await agents_command(parts, "new", ui, typed=typed)
    assert "'Explore' is a built-in type: a project agent may not take its name" in err.getvalue()
    assert "/agents: cancelled, nothing written" in err.getvalue() and not (work / ".claude").exists()
    await agents_command(parts, "frobnicate", ui, typed=typed)
    assert "usage: /agents [new]" in err.getvalue()
