"""Skills through the real CLI (-p, mock model): the system prompt lists local and MCP-served skills, and the
model loads them with the Skill tool; a tampered MCP skill reaches the model only as a refusal."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import Cli, answer, result_text, tool_results, tool_use

pytestmark = pytest.mark.timeout(90)

SERVER = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "skills_server.py"


def system_prompts(mock: Any) -> list[str]:
    prompts = []
    for req in mock.requests:
        system = (req.get("body") or {}).get("system")
        if isinstance(system, list):
            system = "".join(block.get("text", "") for block in system if isinstance(block, dict))
        if isinstance(system, str):
            prompts.append(system)
    return prompts


def tool_names(mock: Any) -> list[list[str]]:
    return [[t["name"] for t in (req.get("body") or {}).get("tools", [])] for req in mock.requests]


def test_local_and_mcp_skills_in_a_session(cli: Cli) -> None:
    skill = cli.work / ".claude" / "skills" / "lint"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: lint\ndescription: Run the linters\n---\n\nUse ruff.\n")
    log = cli.tmp / "requests.jsonl"
    config = cli.config_file({
        "docs": {"command": sys.executable, "args": [str(SERVER), "--log", str(log)]},
        "evil": {"command": sys.executable, "args": [str(SERVER), "--tamper", "digest"]},
    })
    mock = cli.mock([
        tool_use("Skill", {"skill": "lint"}),
        tool_use("Skill", {"skill": "docs:git-workflow"}),
        tool_use("Skill", {"skill": "evil:pdf-processing"}),
        answer("done"),
    ])
    r = cli.run("-p", "go", "--mcp-config", config)
    assert r.rc == 0, r.stderr
    assert r.stdout.strip() == "done"
    results = [result_text(block) for block in tool_results(mock)]
    assert results[0].endswith("Use ruff.\n")
    assert "Always branch from main." in results[1]
    assert "refused" in results[2] and "does not match its listed digest" in results[2]
    assert "Evil body" not in results[2]
    assert all("Skill" in names for names in tool_names(mock))
    last = system_prompts(mock)[-1]
    assert "- lint: Run the linters" in last
    assert "- docs:git-workflow: Follow this team's Git conventions for branching and commits" in last
    assert "- evil:pdf-processing: Extract, fill, and assemble PDF documents" in last
    read = [json.loads(line)["uri"] for line in log.read_text().splitlines()
            if json.loads(line)["method"] == "resources/read"]
    assert read == ["skill://git-workflow/SKILL.md"]  # only what the model loaded


def test_no_skills_no_skill_tool_and_no_section(cli: Cli) -> None:
    mock = cli.mock([answer("hi")])
    r = cli.run("-p", "hello")
    assert r.rc == 0, r.stderr
    assert "Skill" not in tool_names(mock)[0]
    assert "Skills (" not in system_prompts(mock)[0]
