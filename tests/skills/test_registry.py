"""SkillRegistry: local skills from `.claude/skills`, MCP-served skills listed in the background, per-origin
names, and lazy loading (against the real stdio skills server of tests/mcp/servers)."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from mini_claude.agent.system_prompt import build_system_prompt
from mini_claude.errors import SkillVerificationError, ToolError
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.transports.stdio import StdioParams, StdioTransport
from mini_claude.skills.local import discover_local_skills
from mini_claude.skills.registry import SkillRegistry

pytestmark = pytest.mark.timeout(20)

SERVER = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "skills_server.py"


def write_skill(base: Path, dirname: str, front: str, body: str = "Body.\n") -> Path:
    directory = base / ".claude" / "skills" / dirname
    directory.mkdir(parents=True)
    (directory / "SKILL.md").write_text(f"---\n{front}---\n\n{body}")
    return directory


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[tuple[McpClient, Path]]:
    log = tmp_path / "requests.jsonl"
    params = StdioParams(command=sys.executable, args=[str(SERVER), "--log", str(log)])
    client = McpClient(StdioTransport(params, server="docs"), name="docs", protocol_version="2025-11-25")
    await client.connect(timeout_s=10)
    yield client, log
    await client.close()


def reads(log: Path) -> list[str]:
    lines = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return [line["uri"] for line in lines if line["method"] == "resources/read"]


def test_local_skills_project_then_user_and_project_wins(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    write_skill(project, "lint", "name: lint\ndescription: Run the linters\n")
    write_skill(home, "lint", "name: lint\ndescription: The user's lint\n")
    write_skill(home, "notes", "description: Take notes\n")  # no name: the directory name
    write_skill(home, "broken", "name: broken\n")  # no description: skipped
    (home / ".claude" / "skills" / "empty").mkdir()
    found = discover_local_skills(project, home)
    assert [(s.name, s.origin) for s in found] == [("lint", "project"), ("lint", "user"), ("notes", "user")]
    registry = SkillRegistry(found)
    assert [(s.name, s.description, s.origin) for s in registry.available()] == [
        ("lint", "Run the linters", "project"), ("notes", "Take notes", "user")]


def test_no_skill_directories_is_fine(tmp_path: Path) -> None:
    assert discover_local_skills(tmp_path / "nope", None) == []


async def test_local_load_and_files_stay_inside(tmp_path: Path) -> None:
    directory = write_skill(tmp_path, "lint", "name: lint\ndescription: d\n", "Use ruff.\n")
    (directory / "ref.md").write_text("reference")
    (tmp_path / "secret.txt").write_text("secret")
    registry = SkillRegistry(discover_local_skills(tmp_path, None))
    assert (await registry.load("lint")).endswith("Use ruff.\n")
    assert await registry.read_file("lint", "ref.md") == "reference"
    with pytest.raises(ToolError, match="not a file inside"):
        await registry.read_file("lint", "../../../secret.txt")
    with pytest.raises(ToolError, match="cannot read"):
        await registry.read_file("lint", "missing.md")
    with pytest.raises(ToolError, match=r"unknown skill 'nope' \(available: lint\)"):
        await registry.load("nope")


async def test_mcp_skills_join_under_server_names_without_reading_files(
        server: tuple[McpClient, Path], tmp_path: Path) -> None:
    client, log = server
    write_skill(tmp_path, "pdf-processing", "name: pdf-processing\ndescription: The local one\n")
    registry = SkillRegistry(discover_local_skills(tmp_path, None))
    registry.server_changed("docs", client)
    await registry.settle(5)
    names = [(s.name, s.origin) for s in registry.available()]
    assert names == [
        ("pdf-processing", "project"),
        ("docs:acme/billing/refunds", "mcp:docs"),  # two entries named "refunds": told apart by their path
        ("docs:acme/support/refunds", "mcp:docs"),
        ("docs:git-workflow", "mcp:docs"),
        ("docs:pdf-processing", "mcp:docs"),  # never shadows (nor is shadowed by) the local skill
    ]
    assert reads(log) == []
    prompt = build_system_prompt(tmp_path, {}, [(s.name, s.description) for s in registry.available()])
    assert "Skills (load one with the Skill tool" in prompt
    assert "- docs:git-workflow: Follow this team's Git conventions for branching and commits" in prompt
    assert reads(log) == []

    assert "Skill body." in await registry.load("docs:pdf-processing")
    assert await registry.read_file("docs:pdf-processing", "references/FORMS.md") == "Supporting content: the forms.\n"
    assert registry.get("docs:pdf-processing").location == "skill://pdf-processing"  # type: ignore[union-attr]
    assert reads(log) == ["skill://pdf-processing/SKILL.md", "skill://pdf-processing/references/FORMS.md"]

    # the same client again lists nothing again; an unchanged entry keeps its verified content
    registry.server_changed("docs", client)
    await registry.refresh_server("docs", client)
    await registry.load("docs:pdf-processing")
    assert len(reads(log)) == 2

    registry.server_changed("docs", None)
    assert [s.name for s in registry.available()] == ["pdf-processing"]


async def test_a_refused_mcp_skill_stays_refused(tmp_path: Path) -> None:
    params = StdioParams(command=sys.executable, args=[str(SERVER), "--tamper", "digest"])
    client = McpClient(StdioTransport(params, server="evil"), name="evil", protocol_version="2025-11-25")
    await client.connect(timeout_s=10)
    try:
        registry = SkillRegistry()
        await registry.refresh_server("evil", client)
        with pytest.raises(SkillVerificationError, match="refused"):
            await registry.load("evil:pdf-processing")
        with pytest.raises(SkillVerificationError, match="refused"):
            await registry.read_file("evil:pdf-processing", "references/FORMS.md")
        assert "Always branch" in await registry.load("evil:git-workflow")
    finally:
        await client.close()


async def test_a_server_without_the_extension_adds_nothing(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    params = StdioParams(command=sys.executable, args=[str(SERVER), "--no-extension", "--log", str(log)])
    client = McpClient(StdioTransport(params, server="plain"), name="plain", protocol_version="2025-11-25")
    await client.connect(timeout_s=10)
    try:
        registry = SkillRegistry()
        registry.server_changed("plain", client)
        await registry.settle(5)
        assert registry.available() == []
        assert "skills/list" not in log.read_text()
    finally:
        await client.close()


async def test_a_lost_remote_servers_skills_stay_and_loading_reconnects(tmp_path: Path) -> None:
    """Finding 14: while a remote server is ready-but-lost (no client until its next use) its skills stay listed;
    loading one reconnects it through the manager. The manager sees an http server; the bytes go over stdio."""
    import asyncio
    import os
    import signal

    from mini_claude.mcp.config import ServerConfig
    from mini_claude.mcp.manager import McpManager, ServerState, ServerStatus

    log = tmp_path / "requests.jsonl"
    transports: list[StdioTransport] = []

    def factory(cfg: ServerConfig, _env: object) -> StdioTransport:
        params = StdioParams(command=sys.executable, args=[str(SERVER), "--log", str(log)])
        transports.append(StdioTransport(params, server=cfg.name))
        return transports[-1]

    registry = SkillRegistry(client_for=lambda server: manager.connected_client(server))
    lost = asyncio.Event()

    def changed(state: ServerState) -> None:  # the session's wiring (session/start.py)
        if state.status is ServerStatus.READY and state.lost is not None:
            registry.server_lost(state.name)
            lost.set()
        else:
            registry.server_changed(state.name, state.client if state.status is ServerStatus.READY else None)

    cfg = ServerConfig(name="docs", type="http", url="http://127.0.0.1:9/mcp", protocol_version="2025-11-25")
    manager = McpManager([cfg], transport_factory=factory, on_change=changed)  # type: ignore[arg-type]
    manager.start()
    try:
        await manager.wait_started()
        await registry.settle(5)
        names = [s.name for s in registry.available()]
        assert "docs:git-workflow" in names
        assert "Always branch from main." in await registry.load("docs:git-workflow")

        assert transports[0].pid is not None
        os.kill(transports[0].pid, signal.SIGKILL)  # the connection is lost
        async with asyncio.timeout(5):
            await lost.wait()
        state = manager.states["docs"]
        assert state.status is ServerStatus.READY and state.lost is not None and state.client is None
        assert [s.name for s in registry.available()] == names  # still listed
        assert "Always branch from main." in await registry.load("docs:git-workflow")  # verified: no read

        # an unread skill needs the server: loading it reconnects
        assert "Skill body." in await registry.load("docs:pdf-processing")
        assert len(transports) == 2 and manager.states["docs"].lost is None
        assert await registry.read_file("docs:pdf-processing", "references/FORMS.md") == \
            "Supporting content: the forms.\n"
        await registry.settle(5)  # the reconnected client's listing replaces the entries (equal: kept)
        assert [s.name for s in registry.available()] == names
        assert "Skill body." in await registry.load("docs:pdf-processing")
    finally:
        await registry.aclose()
        await manager.aclose()
