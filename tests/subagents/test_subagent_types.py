"""Sub-agent types from real files (agent/subagents.py): the built-ins, `~/.claude/agents` and `.claude/agents` with
the project's winning, front matter read through the bounded doors (a bad file is a warning naming it, a FIFO never
hangs), Claude Code's tool names mapped to ours, and a repository's `model` counting only in a trusted folder."""

from __future__ import annotations

import os
from pathlib import Path

from mini_claude.agent.subagents import BUILTIN_TYPES, MAX_AGENT_FILE_BYTES, SubagentGate, load_subagent_types
from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.tools.builtins import builtin_tools


def _write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(text)
    return path


def _agent(name: str, tools: str | None = None, model: str | None = None, body: str = "Be brief.") -> str:
    lines = ["---", f"name: {name}", f"description: the {name} agent"]
    lines += [f"tools: {tools}"] if tools is not None else []
    lines += [f"model: {model}"] if model is not None else []
    return "\n".join([*lines, "---", body, ""])


def test_builtins_user_and_project_types(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    _write(home / ".claude" / "agents", "shared", _agent("shared", body="USER VERSION"))
    _write(home / ".claude" / "agents", "mine", _agent("mine", "Read, Grep"))
    _write(work / ".claude" / "agents", "shared", _agent("shared", body="PROJECT VERSION"))
    # trusted: the project's type replaces the user's of the same name (untrusted it cannot: tests/redteam/
    # test_round7.py::test_an_untrusted_repository_cannot_swap_the_users_own_agent_type)
    kinds, warnings = load_subagent_types(work, home, trusted=True)
    assert warnings == []
    assert list(kinds) == ["general-purpose", "Explore", "mine", "shared"]
    assert kinds["shared"].prompt == "PROJECT VERSION" and kinds["shared"].source == "project"
    assert kinds["mine"].tools == ("Read", "Grep") and kinds["mine"].source == "user"
    assert kinds["mine"].tools_text() == "Read, Grep"
    assert kinds["general-purpose"].tools_text() == "*"
    assert kinds["Explore"].tools_text() == "read-only ones"


def test_tool_names_map_to_ours_and_agent_never_nests(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    _write(work / ".claude" / "agents", "r", _agent("r", "Read, mcp__probe__echo, Agent"))
    _write(work / ".claude" / "agents", "listed", "---\nname: listed\ndescription: d\ntools: [Bash, Glob]\n---\nx\n")
    _write(work / ".claude" / "agents", "star", _agent("star", "'*'"))
    kinds, _ = load_subagent_types(work, home, trusted=False)
    r = kinds["r"]
    assert [n for n in ("Read", "Grep", "Bash", "mcp__probe__echo", "mcp__probe__peek", "Agent")
            if r.allows(n)] == ["Read", "mcp__probe__echo"]
    assert [n for n in ("Bash", "Glob", "Read") if kinds["listed"].allows(n)] == ["Bash", "Glob"]
    assert kinds["star"].tools is None and kinds["star"].allows("Write") and not kinds["star"].allows("Agent")
    # no sub-agent ends the session's plan mode, whatever its tools list says
    assert not kinds["star"].allows("ExitPlanMode") and not kinds["general-purpose"].allows("ExitPlanMode")
    explore = kinds["Explore"]
    assert [n for n in ("Read", "Grep", "Glob", "Bash", "Write", "Edit", "Agent", "mcp__s__t")
            if explore.allows(n)] == ["Read", "Grep", "Glob", "Bash", "mcp__s__t"]


def test_a_repository_model_counts_only_when_trusted(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    _write(work / ".claude" / "agents", "costly", _agent("costly", model="opus"))
    _write(home / ".claude" / "agents", "users", _agent("users", model="haiku"))
    untrusted, said = load_subagent_types(work, home, trusted=False)
    trusted, quiet = load_subagent_types(work, home, trusted=True)
    assert untrusted["costly"].model is None and trusted["costly"].model == "opus"
    assert said == [f"{work / '.claude' / 'agents' / 'costly.md'}: `model: opus` ignored (the session's model is "
                    "used) until the folder is trusted — run `mini-claude trust` here or pass --trust to use them"]
    assert quiet == []
    assert untrusted["users"].model == "haiku"  # the user's own file


def test_bad_files_are_warnings_naming_them(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    folder = work / ".claude" / "agents"
    nameless = _write(folder, "nameless", "---\ndescription: no name\n---\nbody\n")
    bad_name = _write(folder, "badname", "---\nname: has space\ndescription: d\n---\nbody\n")
    no_desc = _write(folder, "nodesc", "---\nname: nodesc\n---\nbody\n")
    broken = _write(folder, "broken", "---\nname: [unclosed\n---\nbody\n")
    huge = _write(folder, "huge", _agent("huge", body="x" * MAX_AGENT_FILE_BYTES))
    fifo = folder / "fifo.md"
    os.mkfifo(fifo)  # a FIFO is refused at once, never read (it would block)
    _write(folder, "good", _agent("good"))
    kinds, warnings = load_subagent_types(work, home, trusted=True)
    assert "good" in kinds and not {"nameless", "has space", "nodesc", "huge", "fifo"} & set(kinds)
    assert len(warnings) == 6, warnings
    for path in (nameless, bad_name, no_desc, broken, huge, fifo):
        assert any(str(path) in w for w in warnings), (path, warnings)
    assert any("`description` missing" in w for w in warnings)


async def test_explore_is_read_only_whatever_the_mode(tmp_path: Path) -> None:
    explore = next(t for t in BUILTIN_TYPES if t.name == "Explore")
    tools = builtin_tools()
    assert [t.name for t in tools if explore.offers(t)] == ["Read", "Glob", "Grep", "TaskOutput", "WebFetch",
                                                                 "WebSearch", "TodoWrite"]
    # its gate refuses a tool that is not read-only first, even where the session's mode would let it run
    gate = PermissionGate(PermissionMode.BYPASS, RuleSet.from_strings(), ask=None, cwd=tmp_path)
    bash = next(t for t in tools if t.name == "Bash")
    refused = await SubagentGate(gate, "Explore", read_only=True).check(bash, {"command": "touch x"})
    assert not refused.allowed and refused.reason == "permission denied for Bash: the Explore agent is read-only"
    assert (await SubagentGate(gate, "general-purpose").check(bash, {"command": "touch x"})).allowed
