"""`/mcp enable|disable NAME[/TOOL] -s user|project|local` in a real REPL session (start_session in a temporary
project and home, the probe stdio server, the real Anthropic client against the mock model), per scope and for a
server and a single tool: the switch is written to that scope's settings file, applies to the running session at
once (a server switched off is stopped and its tools leave the next request; switched on it is started again; a
tool leaves and comes back), and the same holds from a linked git worktree of the repository, whose local choice is
written to the main worktree's file. The picker (`/mcp disable` without a name) is driven through `Repl.choose`."""

from __future__ import annotations

import io
import json
import re
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from mini_claude.cli.repl import Repl
from mini_claude.cli.terminal.picker import Option
from mini_claude.mcp.manager import ServerStatus
from mini_claude.models.mock_server import MockModelServer
from tests.cli.repl_in_process import InProcessRepls
from tests.integration.conftest import answer, probe_entry

pytestmark = pytest.mark.timeout(90)

Start = Callable[..., Awaitable[tuple[Repl, MockModelServer, io.StringIO]]]


@pytest.fixture
async def start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Start]:
    """A REPL session started in the folder given (the probe server from --mcp-config)."""
    repls = InProcessRepls(tmp_path, monkeypatch)
    monkeypatch.setenv("MINI_CLAUDE_TOOL_SEARCH", "false")

    async def begin(folder: Path, *flags: str) -> tuple[Repl, MockModelServer, io.StringIO]:
        repl, mock, err = await repls.start(
            folder, ["--mcp-config", json.dumps({"mcpServers": {"probe": probe_entry()}}), *flags],
            [answer(f"a{i}") for i in range(6)])
        await repl.parts.manager.wait_started(timeout=20)
        return repl, mock, err

    yield begin
    await repls.close()


def _files(work: Path, home: Path) -> dict[str, Path]:
    return {"user": home / ".claude" / "settings.json", "project": work / ".claude" / "settings.json",
            "local": work / ".claude" / "settings.local.json"}


def _mcp_tools(request: dict[str, Any]) -> list[str]:
    return [t["name"] for t in request["body"].get("tools", []) if t["name"].startswith("mcp__")]


@pytest.mark.parametrize("scope", ["user", "project", "local"])
async def test_a_server_switched_in_each_scope_stops_and_starts_in_the_session(
        start: Start, tmp_path: Path, scope: str, capsys: pytest.CaptureFixture[str]) -> None:
    work = tmp_path / "work"
    work.mkdir()
    repl, mock, err = await start(work)
    file = _files(work, tmp_path / "home")[scope]
    await repl._slash(f"/mcp disable probe -s {scope}")
    assert json.loads(file.read_text())["disabledMcpServers"] == ["probe"]
    assert repl.parts.manager.states["probe"].status is ServerStatus.DISABLED
    assert "stopped, saves ~" in err.getvalue()
    await repl.run_turn("one")
    assert _mcp_tools(mock.requests[-1]) == []
    saved = re.search(r"stopped, saves ~(\d+) tokens a request", err.getvalue())
    assert saved is not None
    capsys.readouterr()
    await repl._slash("/context")  # what the switch saves, measured on the tools as last listed
    context = capsys.readouterr().out
    shown = re.search(r"^    switched off, never sent: probe: server off \(saves ~(\d+) tokens, as last listed\)$",
                      context, re.M)
    assert shown is not None, context
    assert shown.group(1) == saved.group(1)  # the same definitions, measured the same way
    await repl._slash("/mcp")  # the panel says it too
    panel = capsys.readouterr().out
    assert f"server off (saves ~{saved.group(1)} tokens, as last listed)" in panel, panel
    await repl._slash(f"/mcp enable probe --scope {scope}")
    assert json.loads(file.read_text())["disabledMcpServers"] == []
    assert repl.parts.manager.states["probe"].status is ServerStatus.READY, err.getvalue()
    await repl.run_turn("two")
    assert "mcp__probe__poke" in _mcp_tools(mock.requests[-1])


@pytest.mark.parametrize("scope", ["user", "project", "local"])
async def test_a_tool_switched_in_each_scope_leaves_and_returns(start: Start, tmp_path: Path, scope: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    repl, mock, err = await start(work)
    file = _files(work, tmp_path / "home")[scope]
    await repl._slash(f"/mcp disable probe/poke -s {scope}")
    assert json.loads(file.read_text())["disabledMcpTools"] == ["probe/poke"]
    assert "from the next request on; saves ~" in err.getvalue()
    await repl.run_turn("one")
    offered = _mcp_tools(mock.requests[-1])
    assert "mcp__probe__poke" not in offered and "mcp__probe__peek" in offered
    await repl._slash(f"/mcp enable probe/poke -s {scope}")
    assert json.loads(file.read_text())["disabledMcpTools"] == []
    await repl.run_turn("two")
    assert "mcp__probe__poke" in _mcp_tools(mock.requests[-1])


async def test_enabling_in_one_scope_says_what_still_holds_it_off(start: Start, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    repl, _mock, err = await start(work)
    await repl._slash("/mcp disable probe -s project")
    await repl._slash("/mcp enable probe -s local")
    assert "stays off: .claude/settings.json" in err.getvalue()
    assert repl.parts.manager.states["probe"].status is ServerStatus.DISABLED
    await repl._slash("/mcp disable probe/* -s user")
    await repl._slash("/mcp enable probe/peek")
    assert "lists probe/*" in err.getvalue()
    await repl._slash("/mcp enable probe -s bogus")
    assert "-s takes one of user, project, local" in err.getvalue()


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                   capture_output=True, timeout=30)


async def test_in_a_linked_worktree_local_switches_go_to_the_main_worktree(start: Start, tmp_path: Path) -> None:
    main, linked = tmp_path / "work", tmp_path / "linked"
    main.mkdir()
    _git(main, "init", "-q")
    _git(main, "commit", "-q", "--allow-empty", "-m", "start")
    _git(main, "worktree", "add", "-q", str(linked))
    repl, mock, err = await start(linked)
    await repl._slash("/mcp disable probe/poke")  # the default scope: local
    await repl._slash("/mcp disable probe -s local")
    shared = json.loads((main / ".claude" / "settings.local.json").read_text())
    assert shared == {"disabledMcpTools": ["probe/poke"], "disabledMcpServers": ["probe"]}
    assert not (linked / ".claude").exists()
    assert "the main worktree's" in err.getvalue()
    await repl.run_turn("one")
    assert _mcp_tools(mock.requests[-1]) == []
    # a session in the main worktree starts without them (the same repository's choice)
    other, _other_mock, _ = await start(main)
    assert other.parts.manager.states["probe"].status is ServerStatus.DISABLED
    await repl._slash("/mcp enable probe -s local")
    assert repl.parts.manager.states["probe"].status is ServerStatus.READY
    await repl.run_turn("two")
    offered = _mcp_tools(mock.requests[-1])
    assert "mcp__probe__peek" in offered and "mcp__probe__poke" not in offered


async def test_the_picker_lists_costs_and_switches_at_once(start: Start, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "work"
    work.mkdir()
    repl, mock, err = await start(work)
    shown: list[list[Option]] = []
    picks = iter([1, None, 0, None, 0, None])  # the first tool; then the server (off, then on again)

    async def choose(title: str, options: Sequence[Option], default: int = 0) -> int | None:
        shown.append(list(options))
        return next(picks)

    monkeypatch.setattr(repl, "choose", choose)
    await repl._slash("/mcp disable")
    first = shown[0]
    assert first[0].label == "● probe  on" and "8 of 8 tools on, ~" in first[0].detail
    assert first[1].label.strip() == "● probe/echo" and first[1].detail.endswith("tokens; off saves them")
    echo_cost = int(first[1].detail.removeprefix("~").split()[0])
    assert shown[1][1].label.strip() == "○ probe/echo" and f"on adds ~{echo_cost} tokens" in shown[1][1].detail
    assert json.loads((work / ".claude" / "settings.local.json").read_text())["disabledMcpTools"] == ["probe/echo"]
    await repl.run_turn("one")
    assert "mcp__probe__echo" not in _mcp_tools(mock.requests[-1])
    await repl._slash("/mcp disable -s user")  # the server row: off, saved in the user's file
    assert repl.parts.manager.states["probe"].status is ServerStatus.DISABLED
    assert shown[3][0].label == "○ probe  disabled" and "on adds ~" in shown[3][0].detail  # as last listed
    assert json.loads((tmp_path / "home" / ".claude" / "settings.json").read_text())["disabledMcpServers"] == \
        ["probe"]
    await repl._slash("/mcp enable -s user")
    assert repl.parts.manager.states["probe"].status is ServerStatus.READY, err.getvalue()


async def test_switching_on_never_starts_a_project_server_nobody_approved(start: Start, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    marker = tmp_path / "started"
    (work / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": probe_entry("--marker", str(marker))}}))
    repl, _mock, err = await start(work)
    assert repl.parts.manager.states["proj"].status is ServerStatus.NEEDS_APPROVAL
    await repl._slash("/mcp disable proj -s local")  # a .mcp.json server: Claude Code's key
    assert json.loads((work / ".claude" / "settings.local.json").read_text())["disabledMcpjsonServers"] == ["proj"]
    await repl._slash("/mcp enable proj -s local")
    assert "but it stays off" in err.getvalue() and "approv" in err.getvalue().split("but it stays off")[-1]
    assert repl.parts.manager.states["proj"].status is not ServerStatus.READY and not marker.exists()


async def test_with_trust_project_mcp_a_project_server_switched_on_starts(start: Start, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    marker = tmp_path / "started"
    (work / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": probe_entry("--marker", str(marker))}}))
    (work / ".claude").mkdir()
    (work / ".claude" / "settings.local.json").write_text(json.dumps({"disabledMcpjsonServers": ["proj"]}))
    repl, _mock, err = await start(work, "--trust-project-mcp")  # the user approved the project's servers
    assert repl.parts.manager.states["proj"].status is ServerStatus.DISABLED
    await repl._slash("/mcp enable proj -s local")
    assert repl.parts.manager.states["proj"].status is ServerStatus.READY, err.getvalue()
    assert marker.exists()
