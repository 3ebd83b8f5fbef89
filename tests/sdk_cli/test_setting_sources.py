"""`--setting-sources`: each loader reads only the scopes asked for, and all of them when not asked (unchanged)."""

from __future__ import annotations

import json
from pathlib import Path

from mini_claude.agent.commands import load_commands
from mini_claude.agent.memory import load_memory
from mini_claude.agent.subagents import load_subagent_types
from mini_claude.mcp.config import load_mcp_config
from mini_claude.settings import load_settings
from mini_claude.skills.local import discover_local_skills

SKILL = "---\nname: {name}\ndescription: a skill\n---\nbody\n"
AGENT = "---\nname: {name}\ndescription: an agent\n---\nprompt\n"


def scene(tmp_path: Path) -> tuple[Path, Path]:
    home, work = tmp_path / "home", tmp_path / "work"
    for base, scope in ((home, "user"), (work, "project")):
        claude = base / ".claude"
        (claude / "commands").mkdir(parents=True)
        (claude / "commands" / f"{scope}-cmd.md").write_text("Do it.")
        (claude / "skills" / f"{scope}-skill").mkdir(parents=True)
        (claude / "skills" / f"{scope}-skill" / "SKILL.md").write_text(SKILL.format(name=f"{scope}-skill"))
        (claude / "agents").mkdir()
        (claude / "agents" / f"{scope}-agent.md").write_text(AGENT.format(name=f"{scope}-agent"))
        (claude / "settings.json").write_text(json.dumps({"env": {f"FROM_{scope.upper()}": "1"}, "mcpServers": {
            f"{scope}-server": {"command": "true"}}}))
        (claude / "CLAUDE.md").write_text(f"{scope} memory")
    (work / ".claude" / "settings.local.json").write_text(json.dumps({"env": {"FROM_LOCAL": "1"}}))
    (work / "CLAUDE.local.md").write_text("local memory")
    (work / ".mcp.json").write_text(json.dumps({"mcpServers": {"mcpjson-server": {"command": "true"}}}))
    return home, work


def test_no_sources_read_nothing_and_none_reads_everything(tmp_path: Path) -> None:
    home, work = scene(tmp_path)
    assert load_settings(cwd=work, home=home, sources=()).env == {}
    assert load_settings(cwd=work, home=home).env == {"FROM_USER": "1", "FROM_PROJECT": "1", "FROM_LOCAL": "1"}
    assert load_memory(work, home, ()).files == []
    assert {f.kind for f in load_memory(work, home).files} == {"user", "project", "local"}
    assert load_commands(work, home, ())[0] == {}
    assert set(load_commands(work, home)[0]) == {"/user-cmd", "/project-cmd"}
    assert discover_local_skills(work, home, ()) == []
    assert {s.name for s in discover_local_skills(work, home)} == {"user-skill", "project-skill"}
    kinds, _ = load_subagent_types(work, home, trusted=True, sources=())
    assert not {"user-agent", "project-agent"} & set(kinds)
    assert {"user-agent", "project-agent"} <= set(load_subagent_types(work, home, trusted=True)[0])
    assert load_mcp_config(cwd=work, home=home, env={}, sources=()).servers == {}
    assert set(load_mcp_config(cwd=work, home=home, env={}).servers) == {"user-server", "project-server",
                                                                         "mcpjson-server"}


def test_one_source_reads_its_own_files_only(tmp_path: Path) -> None:
    home, work = scene(tmp_path)
    assert load_settings(cwd=work, home=home, sources=("local",)).env == {"FROM_LOCAL": "1"}
    assert [f.kind for f in load_memory(work, home, ("project",)).files] == ["project"]
    assert set(load_commands(work, home, ("user",))[0]) == {"/user-cmd"}
    assert [s.name for s in discover_local_skills(work, home, ("project",))] == ["project-skill"]
    kinds, _ = load_subagent_types(work, home, trusted=True, sources=("project",))
    assert "project-agent" in kinds and "user-agent" not in kinds
    assert set(load_mcp_config(cwd=work, home=home, env={}, sources=("project",)).servers) == {
        "project-server", "mcpjson-server"}
