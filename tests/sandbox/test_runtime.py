"""The session's sandbox with real bwrap and real processes: the Bash tool's commands (foreground, background) are
confined, timeouts and cancellation still end the whole group, placeholders go away, excluded commands run
outside, a sandbox that cannot start is said once; and the gate's part (auto-allow, asking to leave, refusing)."""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.sandbox.bwrap import find_bwrap
from mini_claude.tools.base import Tool, ToolContext
from mini_claude.tools.shell import BashTool
from tests.helpers import eventually
from tests.sandbox.conftest import make_sandbox

pytestmark = [pytest.mark.timeout(30),
              pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap is not installed")]


def marked_alive(marker: str) -> bool:
    """Is a process whose command line holds `marker` still running (not a zombie)?"""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            cmdline = Path(entry.path, "cmdline").read_bytes()
            state = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state not in ("Z", "X") and b"bwrap" not in cmdline.split(b"\0")[0]:
            return True
    return False



def tool_and_ctx(place: dict[str, Path], warnings: list[str] | None = None, **config: Any
                 ) -> tuple[BashTool, ToolContext]:
    tool = BashTool()
    tool.sandbox = make_sandbox(place, warnings, **config)
    return tool, ToolContext(cwd=place["work"], spill_dir=place["state"] / "spill")


async def test_writes_reads_and_placeholders(place: dict[str, Path]) -> None:
    tool, ctx = tool_and_ctx(place)
    work = place["work"]
    ok = await tool.run({"command": "echo hi > a.txt && cat a.txt && echo t > /tmp/t && cat /tmp/t && ls -A /run"},
                        ctx)
    assert not ok.is_error and ok.as_text() == "hi\nt"  # and /run is empty
    blocked = await tool.run({"command": f"touch {place['outside']}/x"}, ctx)
    assert blocked.is_error and "Read-only file system" in blocked.as_text() and "[sandbox]" in blocked.as_text()
    made = await tool.run({"command": "echo '{}' > .mcp.json; mkdir -p .claude/commands; echo x > CLAUDE.md"}, ctx)
    assert made.is_error and "[sandbox]" in made.as_text()
    secret = await tool.run({"command": f"cat {place['home']}/.ssh/id_rsa; cat ~/.netrc"}, ctx)
    assert "KEY" not in secret.as_text() and "password" not in secret.as_text()
    assert "secret places" in secret.as_text()
    # nothing is left behind: no placeholder, no file the command tried to create
    assert sorted(p.name for p in work.iterdir()) == [".git", "a.txt"]
    assert not (place["outside"] / "x").exists()


async def test_timeout_and_cancel_end_the_whole_confined_group(place: dict[str, Path]) -> None:
    tool, ctx = tool_and_ctx(place)
    marker = f"{time.time_ns() % 10**6 + 1000}.{uuid.uuid4().int % 10**6}"
    result = await tool.run({"command": f"sleep {marker} & sleep {marker}", "timeout": 500}, ctx)
    assert result.is_error and "timed out" in result.as_text()
    await eventually(lambda: not marked_alive(marker), "the timed-out group to be gone")

    marker2 = f"{time.time_ns() % 10**6 + 2000}.{uuid.uuid4().int % 10**6}"
    task = asyncio.create_task(tool.run({"command": f"sleep {marker2} & sleep {marker2}; wait"}, ctx))
    await eventually(lambda: marked_alive(marker2), "the command to start")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await eventually(lambda: not marked_alive(marker2), "the cancelled group to be gone")


async def test_a_background_command_is_confined_too(place: dict[str, Path]) -> None:
    tool, ctx = tool_and_ctx(place)
    started = await tool.run({"command": f"echo bg > in.txt; touch {place['outside']}/bg 2>&1; echo done",
                              "run_in_background": True}, ctx)
    assert not started.is_error
    [task] = ctx.background.tasks()
    assert await ctx.background.wait(task, 10)
    text, _ = ctx.background.read_new(task)
    assert "Read-only file system" in text and "done" in text
    assert (place["work"] / "in.txt").read_text() == "bg\n" and not (place["outside"] / "bg").exists()
    await ctx.background.aclose()


async def test_an_excluded_command_runs_outside(place: dict[str, Path]) -> None:
    tool, ctx = tool_and_ctx(place, excluded_commands=("touch",))
    result = await tool.run({"command": f"echo x && touch {place['outside']}/ex"}, ctx)
    assert not result.is_error and (place["outside"] / "ex").exists()


async def test_leaving_is_refused_when_unsandboxed_commands_are_off(place: dict[str, Path]) -> None:
    tool, ctx = tool_and_ctx(place, allow_unsandboxed=False)
    result = await tool.run({"command": "true", "dangerouslyDisableSandbox": True}, ctx)
    assert result.is_error and "allowUnsandboxedCommands is false" in result.as_text()
    blocked = await tool.run({"command": f"touch {place['outside']}/y"}, ctx)
    assert "Running outside the sandbox is turned off" in blocked.as_text()


async def test_no_sandbox_is_said_once_and_commands_run_as_before(place: dict[str, Path],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINI_CLAUDE_BWRAP", "/bin/false")
    warnings: list[str] = []
    tool, ctx = tool_and_ctx(place, warnings)
    for _ in range(2):
        result = await tool.run({"command": f"touch {place['outside']}/plain"}, ctx)
        assert not result.is_error
    assert len(warnings) == 1 and "cannot start" in warnings[0] and "/bin/false" in warnings[0]
    assert tool.sandbox is not None and "unavailable" in tool.sandbox.status_lines()[0]
    gate = gate_of(place, tool)
    asked: list[str] = []
    decision = await gate.check(tool, {"command": "ls"}, )
    assert not decision.allowed  # no ask callback: what would be asked is refused, as without a sandbox
    gate.ask = asking(asked)
    assert (await gate.check(tool, {"command": "ls"})).allowed and asked == ["ls"]


async def test_fail_if_unavailable_refuses(place: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINI_CLAUDE_BWRAP", "/nonexistent/bwrap")
    tool, ctx = tool_and_ctx(place, [], fail_if_unavailable=True)
    result = await tool.run({"command": "true"}, ctx)
    assert result.is_error and "failIfUnavailable" in result.as_text()


def asking(log: list[str], answer: str = "yes") -> Any:
    async def ask(tool: Tool, args: dict[str, Any]) -> str:
        log.append(str(args.get("command")))
        return answer
    return ask


def gate_of(place: dict[str, Path], tool: BashTool, *, deny: tuple[str, ...] = (), ask_rules: tuple[str, ...] = (),
            allow: tuple[str, ...] = ()) -> PermissionGate:
    rules = RuleSet.from_strings(allow=allow, deny=deny, ask=ask_rules)
    return PermissionGate(PermissionMode.DEFAULT, rules, ask=None, cwd=place["work"], home=place["home"],
                          sandbox=tool.sandbox)


async def test_the_gate_auto_allows_sandboxed_commands_only(place: dict[str, Path]) -> None:
    tool, _ = tool_and_ctx(place)
    asked: list[str] = []
    gate = gate_of(place, tool, deny=("Bash(rm:*)",), ask_rules=("Bash(git push:*)",))
    gate.ask = asking(asked, "no")
    auto = await gate.check(tool, {"command": "make test"})
    assert auto.allowed and "sandbox" in auto.reason and asked == []
    assert not (await gate.check(tool, {"command": "rm -rf x"})).allowed  # deny rules still refuse
    assert not (await gate.check(tool, {"command": "git push origin"})).allowed and asked == ["git push origin"]
    out = await gate.check(tool, {"command": "make test", "dangerouslyDisableSandbox": True})
    assert not out.allowed and asked[-1] == "make test"  # leaving the sandbox always asks
    allowed_rule = gate_of(place, tool, allow=("Bash(make:*)",))
    allowed_rule.ask = asking(asked, "no")
    assert not (await allowed_rule.check(tool, {"command": "make", "dangerouslyDisableSandbox": True})).allowed
    assert asked[-1] == "make"  # even an allow rule does not skip that question


async def test_the_gate_without_auto_allow_or_for_excluded_commands_asks(place: dict[str, Path]) -> None:
    tool, _ = tool_and_ctx(place, auto_allow=False)
    asked: list[str] = []
    gate = gate_of(place, tool)
    gate.ask = asking(asked)
    assert (await gate.check(tool, {"command": "make"})).allowed and asked == ["make"]
    tool2, _ = tool_and_ctx(place, excluded_commands=("docker",))
    gate2 = gate_of(place, tool2)
    gate2.ask = asking(asked)
    assert (await gate2.check(tool2, {"command": "docker ps"})).allowed and asked[-1] == "docker ps"
    refused = gate_of(place, tool_and_ctx(place, allow_unsandboxed=False)[0])
    refused_tool = BashTool()
    refused_tool.sandbox = refused.sandbox
    decision = await refused.check(refused_tool, {"command": "ls", "dangerouslyDisableSandbox": True})
    assert not decision.allowed and "allowUnsandboxedCommands" in decision.reason


async def test_a_working_folder_reached_through_a_link_is_writable_both_ways(place: dict[str, Path]) -> None:
    link = place["outside"] / "link"
    link.symlink_to(place["work"])
    place = {**place, "work": link}
    tool, ctx = tool_and_ctx(place)
    result = await tool.run({"command": f"echo a > a.txt && echo b > {place['work'].resolve()}/b.txt && cat a.txt b.txt"},
                            ctx)
    assert not result.is_error and result.as_text() == "a\nb"
    blocked = await tool.run({"command": "echo x >> .git/config"}, ctx)
    assert "Read-only file system" in blocked.as_text()
