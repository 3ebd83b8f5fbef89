"""`mini-claude mcp serve` driven by the official `mcp` Python client over stdio, in a tmp project: the tools are
listed with their annotations, Read and Glob run, and every call goes through the folder's permission gate —
a deny rule holds, a Bash command nobody approved is refused (or asked through elicitation when the client can),
and an untrusted folder's settings allow nothing."""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp.types as mt
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from mini_claude.mcp.client import McpClient
from mini_claude.mcp.transports.stdio import StdioParams, StdioTransport
from mini_claude.trust import TrustStore
from tests.helpers import PYTHON, clean_env

pytestmark = pytest.mark.timeout(120)


# what the denied file holds: letters no path shows (a bare "1234" was in the message whenever pytest's numbered
# temporary folder, quoted in the refusal, was pytest-1234 or the like)
LAUNCH_CODE = "QZX-1234-LAUNCH"


def project(tmp_path: Path, settings: dict[str, Any] | None = None, *, trusted: bool) -> tuple[Path, dict[str, str]]:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("first line\nsecond line\n")
    (work / "secret.txt").write_text(f"the launch code is {LAUNCH_CODE}\n")
    if settings is not None:
        (work / ".claude").mkdir()
        (work / ".claude" / "settings.json").write_text(json.dumps(settings))
    env = clean_env(tmp_path)
    if trusted:
        TrustStore.in_state_dir(Path(env["MINI_CLAUDE_STATE_DIR"])).record(work.resolve())
    return work, env


@asynccontextmanager
async def served(work: Path, env: dict[str, str], elicit: Any = None) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=PYTHON, args=["-m", "mini_claude", "mcp", "serve"], env=env, cwd=work)
    async with stdio_client(params) as (read, write), \
            ClientSession(read, write, read_timeout_seconds=60, elicitation_callback=elicit) as session:
        await session.initialize()
        yield session


def text(result: mt.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, mt.TextContent))


async def test_lists_tools_and_reads_and_globs(tmp_path: Path) -> None:
    work, env = project(tmp_path, trusted=True)
    async with served(work, env) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert {"Read", "Write", "Edit", "Glob", "Grep", "Bash", "NotebookEdit"} <= set(tools)
        assert "Agent" not in tools and "TaskOutput" not in tools
        assert tools["Read"].annotations is not None and tools["Read"].annotations.read_only_hint is True
        assert tools["Bash"].annotations is not None and tools["Bash"].annotations.destructive_hint is True
        assert tools["Bash"].input_schema["required"] == ["command"]
        read = await session.call_tool("Read", {"file_path": str(work / "notes.txt")})
        assert not read.is_error and "second line" in text(read)
        globbed = await session.call_tool("Glob", {"pattern": "*.txt"})
        assert not globbed.is_error and "notes.txt" in text(globbed)
        bad = await session.call_tool("Read", {"path": "x"})
        assert bad.is_error


async def test_project_deny_rule_holds(tmp_path: Path) -> None:
    work, env = project(tmp_path, {"permissions": {"deny": ["Read(secret.txt)"]}}, trusted=True)
    async with served(work, env) as session:
        refused = await session.call_tool("Read", {"file_path": str(work / "secret.txt")})
        assert refused.is_error and LAUNCH_CODE not in text(refused)
        grep = await session.call_tool("Grep", {"pattern": "launch", "output_mode": "content"})
        assert LAUNCH_CODE not in text(grep)


async def test_unapproved_bash_refused_without_elicitation(tmp_path: Path) -> None:
    work, env = project(tmp_path, trusted=True)
    async with served(work, env) as session:
        refused = await session.call_tool("Bash", {"command": "touch x"})
    assert refused.is_error
    assert "elicitation" in text(refused) and "permissions.allow" in text(refused)
    assert not (work / "x").exists()


async def test_bash_runs_when_the_user_accepts_through_elicitation(tmp_path: Path) -> None:
    work, env = project(tmp_path, trusted=True)
    asked: list[str] = []

    async def accept(context: Any, params: mt.ElicitRequestParams) -> mt.ElicitResult:
        asked.append(params.message)
        return mt.ElicitResult(action="accept", content={"allow": True})

    async with served(work, env, accept) as session:
        ran = await session.call_tool("Bash", {"command": "touch x"})
    assert not ran.is_error, text(ran)
    assert (work / "x").exists()
    assert asked and "Bash" in asked[0] and "touch x" in asked[0]


async def test_bash_refused_when_the_user_declines(tmp_path: Path) -> None:
    work, env = project(tmp_path, trusted=True)

    async def decline(context: Any, params: mt.ElicitRequestParams) -> mt.ElicitResult:
        return mt.ElicitResult(action="decline")

    async with served(work, env, decline) as session:
        refused = await session.call_tool("Bash", {"command": "touch x"})
    assert refused.is_error and "declined" in text(refused)
    assert not (work / "x").exists()


async def test_untrusted_folder_settings_do_not_allow_bash(tmp_path: Path) -> None:
    work, env = project(tmp_path, {"permissions": {"allow": ["Bash"]}}, trusted=False)
    async with served(work, env) as session:
        refused = await session.call_tool("Bash", {"command": "touch x"})
    assert refused.is_error
    assert not (work / "x").exists()


async def test_trusted_folder_settings_allow_bash(tmp_path: Path) -> None:
    """The control of the test above: the same settings in a trusted folder do allow it."""
    work, env = project(tmp_path, {"permissions": {"allow": ["Bash(touch:*)"]}}, trusted=True)
    async with served(work, env) as session:
        ran = await session.call_tool("Bash", {"command": "touch x"})
    assert not ran.is_error, text(ran)
    assert (work / "x").exists()


async def test_bypass_permissions_is_not_honoured(tmp_path: Path) -> None:
    """A setting (or flag) of bypassPermissions would silence every question for a client nobody watches."""
    work, env = project(tmp_path, {"permissions": {"defaultMode": "bypassPermissions"}}, trusted=True)
    async with served(work, env) as session:
        refused = await session.call_tool("Bash", {"command": "touch x"})
    assert refused.is_error
    assert not (work / "x").exists()


def test_a_bad_permission_mode_is_a_clear_error(tmp_path: Path) -> None:
    work, env = project(tmp_path, trusted=True)
    done = subprocess.run([PYTHON, "-m", "mini_claude", "mcp", "serve", "--permission-mode", "nonsense"], cwd=work,
                          env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and done.stdout == ""
    assert "nonsense" in done.stderr and "Traceback" not in done.stderr


async def test_our_own_client_against_it(tmp_path: Path) -> None:
    work, env = project(tmp_path, trusted=True)
    params = StdioParams(command=PYTHON, args=["-m", "mini_claude", "mcp", "serve"], cwd=str(work), env=env)
    client = McpClient(StdioTransport(params, server="mini"), name="mini")
    await client.connect(timeout_s=30)
    try:
        tools = {tool.name: tool for tool in await client.list_tools()}
        assert tools["Read"].read_only_hint and not tools["Bash"].read_only_hint
        result = await client.call_tool("Read", {"file_path": str(work / "notes.txt")})
        assert not result.is_error and "first line" in result.content[0]["text"]
        refused = await client.call_tool("Bash", {"command": "touch x"})
        assert refused.is_error and not (work / "x").exists()
    finally:
        await client.close()


async def test_outside_and_protected_paths_hold(tmp_path: Path) -> None:
    work, env = project(tmp_path, {"permissions": {"allow": ["Write", "Edit"]}}, trusted=True)
    outside = tmp_path / "outside.txt"
    outside.write_text("not the project's\n")
    async with served(work, env) as session:
        read = await session.call_tool("Read", {"file_path": str(outside)})
        assert read.is_error and "not the project's" not in text(read)
        wrote = await session.call_tool("Write", {"file_path": str(work / ".claude" / "settings.json"),
                                                  "content": '{"permissions": {"allow": ["Bash"]}}'})
        assert wrote.is_error
        ok = await session.call_tool("Write", {"file_path": str(work / "new.txt"), "content": "hi\n"})
        assert not ok.is_error, text(ok)
    assert json.loads((work / ".claude" / "settings.json").read_text()) == {"permissions": {"allow": ["Write", "Edit"]}}
    assert (work / "new.txt").read_text() == "hi\n"
