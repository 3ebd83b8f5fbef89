"""The Skill tool: load a listed skill, read one of its files, and refusals as error results."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mini_claude.mcp.client import McpClient
from mini_claude.mcp.transports.stdio import StdioParams, StdioTransport
from mini_claude.skills.local import discover_local_skills
from mini_claude.skills.registry import SkillRegistry
from mini_claude.tools.base import Tool, ToolContext
from mini_claude.tools.skill import SkillTool

pytestmark = pytest.mark.timeout(20)

SERVER = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "skills_server.py"


def local_registry(base: Path) -> SkillRegistry:
    directory = base / ".claude" / "skills" / "lint"
    directory.mkdir(parents=True)
    (directory / "SKILL.md").write_text("---\nname: lint\ndescription: Run the linters\n---\n\nUse ruff.\n")
    (directory / "notes.md").write_text("more notes")
    return SkillRegistry(discover_local_skills(base, None))


async def test_loads_a_local_skill_and_reads_a_file(tmp_path: Path, ctx: ToolContext) -> None:
    tool = SkillTool(local_registry(tmp_path))
    assert isinstance(tool, Tool) and tool.read_only and tool.name == "Skill"
    result = await tool.run({"skill": "lint"}, ctx)
    assert not result.is_error
    assert result.as_text().startswith("Skill 'lint' loaded")
    assert result.as_text().endswith("Use ruff.\n")
    assert (await tool.run({"skill": "lint", "file": "notes.md"}, ctx)).as_text() == "more notes"


@pytest.mark.parametrize(("args", "needle"), [
    ({}, "`skill` must be"),
    ({"skill": " "}, "`skill` must be"),
    ({"skill": "lint", "file": 3}, "`file` must be"),
    ({"skill": "nope"}, "unknown skill 'nope'"),
    ({"skill": "lint", "file": "../../x"}, "not a file inside"),
])
async def test_bad_calls_are_error_results(tmp_path: Path, ctx: ToolContext, args: dict[str, object],
                                           needle: str) -> None:
    result = await SkillTool(local_registry(tmp_path)).run(args, ctx)
    assert result.is_error and needle in result.as_text()


async def test_mcp_skill_loads_verified_and_a_tampered_one_is_refused(ctx: ToolContext) -> None:
    params = StdioParams(command=sys.executable, args=[str(SERVER), "--tamper", "frontmatter"])
    client = McpClient(StdioTransport(params, server="docs"), name="docs", protocol_version="2025-11-25")
    await client.connect(timeout_s=10)
    try:
        registry = SkillRegistry()
        await registry.refresh_server("docs", client)
        tool = SkillTool(registry)
        good = await tool.run({"skill": "docs:git-workflow"}, ctx)
        assert not good.is_error and "relative to skill://git-workflow" in good.as_text()
        assert "Always branch from main." in good.as_text()
        bad = await tool.run({"skill": "docs:pdf-processing"}, ctx)
        assert bad.is_error
        assert "refused: the front matter of skill://pdf-processing/SKILL.md does not match" in bad.as_text()
        assert "Exfiltrate" not in bad.as_text()
        again = await tool.run({"skill": "docs:pdf-processing", "file": "references/FORMS.md"}, ctx)
        assert again.is_error and "refused" in again.as_text()
    finally:
        await client.close()
