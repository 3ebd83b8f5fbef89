"""MCP-served skills (SEP-2640) against a real stdio server (tests/mcp/servers/skills_server.py): listing only
when declared, no file read before a load, size / digest / front matter verification, refusal reads nothing
more."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from mini_claude.errors import McpError
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.skills import (
    McpSkill,
    SkillEntry,
    SkillVerificationError,
    list_skills,
    sha256_digest,
    supports_skills,
)
from mini_claude.mcp.transports.stdio import StdioParams, StdioTransport

pytestmark = pytest.mark.timeout(20)

SERVER = Path(__file__).resolve().parent / "servers" / "skills_server.py"
PDF = "skill://pdf-processing/SKILL.md"
FORMS = "skill://pdf-processing/references/FORMS.md"

Connect = Callable[..., Awaitable[tuple[McpClient, Path]]]


@pytest.fixture
async def connect(tmp_path: Path) -> AsyncIterator[Connect]:
    clients: list[McpClient] = []

    async def start(*flags: str) -> tuple[McpClient, Path]:
        log = tmp_path / f"requests-{len(clients)}.jsonl"
        params = StdioParams(command=sys.executable, args=[str(SERVER), "--log", str(log), *flags])
        client = McpClient(StdioTransport(params, server="skills"), name="skills", protocol_version="2025-11-25")
        clients.append(client)
        await client.connect(timeout_s=10)
        return client, log

    yield start
    for client in clients:
        await client.close()


def requests(log: Path, method: str | None = None) -> list[dict[str, str | None]]:
    if not log.exists():
        return []
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return [line for line in lines if method is None or line["method"] == method]


def by_uri(entries: list[SkillEntry], uri: str) -> SkillEntry:
    return next(e for e in entries if e.uri == uri)


async def test_list_reads_no_file_and_parses_entries(connect: Connect) -> None:
    client, log = await connect()
    assert supports_skills(client)
    entries = await list_skills(client)
    assert [e.uri for e in entries] == [PDF, "skill://git-workflow/SKILL.md", "skill://acme/billing/refunds/SKILL.md",
                                        "skill://acme/support/refunds/SKILL.md"]
    pdf = by_uri(entries, PDF)
    assert (pdf.name, pdf.description, pdf.server) == ("pdf-processing", "Extract, fill, and assemble PDF documents",
                                                       "skills")
    assert pdf.root == "skill://pdf-processing" and pdf.problem is None
    assert [f.uri for f in pdf.files or ()] == [PDF, FORMS]
    assert by_uri(entries, "skill://acme/billing/refunds/SKILL.md").path == "acme/billing/refunds"
    assert requests(log, "resources/read") == []


async def test_pagination_follows_next_cursor(connect: Connect) -> None:
    client, log = await connect("--page-size", "1")
    entries = await list_skills(client)
    assert len(entries) == 4
    assert len(requests(log, "skills/list")) == 4


async def test_no_skills_list_without_the_extension(connect: Connect) -> None:
    client, log = await connect("--no-extension")
    assert not supports_skills(client)
    assert await list_skills(client) == []
    assert requests(log, "skills/list") == []


async def test_good_skill_loads_and_reads_its_files_lazily(connect: Connect) -> None:
    client, log = await connect()
    skill = McpSkill(client, by_uri(await list_skills(client), PDF))
    assert requests(log, "resources/read") == []
    text = await skill.load()
    assert text.startswith("---\nname: pdf-processing") and "Skill body." in text
    assert [r["uri"] for r in requests(log, "resources/read")] == [PDF]
    assert await skill.read_file("references/FORMS.md") == "Supporting content: the forms.\n"
    assert await skill.read_file(FORMS) == "Supporting content: the forms.\n"  # cached: not read again
    assert await skill.load() == text
    assert [r["uri"] for r in requests(log, "resources/read")] == [PDF, FORMS]


async def test_front_matter_with_metadata_and_folded_description_verifies(connect: Connect) -> None:
    client, _log = await connect()
    skill = McpSkill(client, by_uri(await list_skills(client), "skill://git-workflow/SKILL.md"))
    assert "Always branch from main." in await skill.load()


@pytest.mark.parametrize(("mode", "needle"), [
    ("digest", "does not match its listed digest"),
    ("size", "bytes but the listing says"),
    ("frontmatter", "front matter of skill://pdf-processing/SKILL.md does not match the listed entry "
                    "(field description)"),
])
async def test_tampered_skill_md_is_refused_and_nothing_more_is_read(connect: Connect, mode: str,
                                                                     needle: str) -> None:
    client, log = await connect("--tamper", mode)
    entries = await list_skills(client)
    skill = McpSkill(client, by_uri(entries, PDF))
    with pytest.raises(SkillVerificationError) as info:
        await skill.load()
    err = info.value
    assert isinstance(err, McpError) and err.server == "skills" and err.skill == "pdf-processing"
    assert needle in str(err) and "refused" in str(err) and "\n" not in str(err)
    assert skill.refused is err
    for call in (skill.load(), skill.read_file("references/FORMS.md"), skill.read_file(FORMS)):
        with pytest.raises(SkillVerificationError) as again:
            await call
        assert again.value is err
    assert [r["uri"] for r in requests(log, "resources/read")] == [PDF]
    # the server's other skills are unaffected
    assert "Always branch" in await McpSkill(client, by_uri(entries, "skill://git-workflow/SKILL.md")).load()


async def test_tampered_supporting_file_refuses_the_skill(connect: Connect) -> None:
    client, log = await connect("--tamper", "file-digest")
    skill = McpSkill(client, by_uri(await list_skills(client), PDF))
    await skill.load()
    with pytest.raises(SkillVerificationError, match=r"FORMS\.md does not match its listed digest"):
        await skill.read_file("references/FORMS.md")
    with pytest.raises(SkillVerificationError):
        await skill.load()  # refused for good, even the already verified SKILL.md
    assert [r["uri"] for r in requests(log, "resources/read")] == [PDF, FORMS]


async def test_dynamic_skill_without_resources_is_declined_unread(connect: Connect) -> None:
    client, log = await connect("--tamper", "dynamic")
    entry = by_uri(await list_skills(client), PDF)
    assert entry.files is None and entry.problem is not None
    with pytest.raises(SkillVerificationError, match="lists no resources"):
        await McpSkill(client, entry).load()
    assert requests(log, "resources/read") == []


async def test_unlisted_and_outside_files_are_not_read(connect: Connect) -> None:
    client, log = await connect()
    skill = McpSkill(client, by_uri(await list_skills(client), PDF))
    for path in ("references/OTHER.md", "../git-workflow/SKILL.md", "skill://git-workflow/SKILL.md",
                 "/etc/passwd", ""):
        with pytest.raises(SkillVerificationError):
            await skill.read_file(path)
    assert [r["uri"] for r in requests(log, "resources/read")] == [PDF]
    assert skill.refused is None  # asking for a file that is not part of the skill refuses nothing
    assert await skill.read_file("references/FORMS.md")


def test_entry_shape_problems() -> None:
    good = {"uri": PDF, "frontmatter": {"name": "pdf-processing", "description": "d"},
            "resources": [{"uri": PDF, "digest": sha256_digest(b"x"), "size": 1}]}
    assert SkillEntry.from_wire(good, server="s") is not None
    assert SkillEntry.from_wire(good, server="s").problem is None  # type: ignore[union-attr]
    assert SkillEntry.from_wire({**good, "uri": "skill://pdf-processing/README.md"}, server="s") is None
    assert SkillEntry.from_wire({**good, "frontmatter": {"name": "x"}}, server="s") is None
    assert SkillEntry.from_wire("nope", server="s") is None

    def problem(**changes: object) -> str | None:
        entry = SkillEntry.from_wire({**good, **changes}, server="s")
        assert entry is not None
        return entry.problem

    assert "digest" in (problem(resources=[{"uri": PDF, "digest": "sha256:ABC", "size": 1}]) or "")
    assert "do not list" in (problem(resources=[]) or "")
    assert "outside" in (problem(resources=[*good["resources"],  # type: ignore[list-item]
                                            {"uri": "skill://other/x", "digest": sha256_digest(b""), "size": 0}])
                         or "")
    assert "not its name" in (problem(frontmatter={"name": "other", "description": "d"}) or "")
    assert "invalid size" in (problem(resources=[{"uri": PDF, "digest": sha256_digest(b"x"), "size": -1}]) or "")
