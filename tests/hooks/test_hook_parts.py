"""The parts of hooks on their own: the matcher (cases measured against Claude Code's binary), the settings section,
a hook's reply, the runner's bounds (output cap, a hook that never reads stdin, cancellation), the permission gate's
`hook=` parameter, and the loop's SubagentStop and PreCompact points."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from mini_claude.agent.compaction import ContextWindow
from mini_claude.agent.loop import Agent
from mini_claude.hooks import HookPermission, Hooks, HookSession, StopVerdict, matcher_matches
from mini_claude.hooks.replies import read_reply
from mini_claude.hooks.runner import MAX_OUTPUT_BYTES, CommandRun, run_command
from mini_claude.models.base import AssistantTurn
from mini_claude.permissions.rules import CLAUDE_TOOL_NAMES
from mini_claude.settings import Settings, SettingsHook, load_settings
from mini_claude.tools.base import ToolContext
from tests.helpers import eventually, wait_gone
from tests.permissions.test_gate import ARGS, BASH, READ, WRITE, Asker, make_gate

pytestmark = pytest.mark.timeout(60)

# (matcher, fires for Bash?) as Claude Code 2.1.197 decided for a Bash call, measured offline against the mock
MEASURED_FOR_BASH = [
    ("Bas", False), ("^Ba.h$", True), ("bash", False), ("*", True), ("", True), ("Read|Bash", True),
    ("Bash|Rea", True), ("B.*", True), ("ash", False), ("Bash(echo:*)", False), (" Bash ", True), ("Bash|", True),
    (".*", True), ("(Bash)", True), ("Ba[s]h", True), ("BASH", False), ("Bash*", True), ("as.", True),
    ("^Bas", True), ("a.h", True), ("B.", True), ("Bash ", True), ("Read | Bash", True), ("Read|Bash ", True),
    ("b.sh", False), ("(?i)bash", False), ("Ba\\w+", True), ("[", False), ("Read|", False), ("Bash$", True),
    ("X|Bash|Y", True),
]
MEASURED_FOR_MCP = [("mcp__probe__.*", True), ("mcp__probe", False), ("mcp__probe__echo", True), ("mcp__.*", True),
                    ("echo", False), ("mcp__probe__*", True), ("probe", False)]


@pytest.mark.parametrize(("matcher", "fires"), MEASURED_FOR_BASH)
def test_matcher_as_claude_code_reads_it_for_bash(matcher: str, fires: bool) -> None:
    assert matcher_matches(matcher, "Bash") is fires


@pytest.mark.parametrize(("matcher", "fires"), MEASURED_FOR_MCP)
def test_matcher_as_claude_code_reads_it_for_mcp(matcher: str, fires: bool) -> None:
    assert matcher_matches(matcher, "mcp__probe__echo") is fires


def test_settings_hooks_keep_file_key_and_timeout(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "work"
    for folder in (home, cwd):
        (folder / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "guard", "timeout": 5}]}]}}))
    (cwd / ".claude" / "settings.local.json").write_text(json.dumps({"hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "check", "timeout": -1},
                            {"type": "command", "command": "ok"}]}],
        "PostToolUse": "nope"}}))
    settings = load_settings(cwd=cwd, home=home)
    assert settings.hooks == [
        SettingsHook("PreToolUse", "Bash", "guard", 5.0, "~/.claude/settings.json", "hooks.PreToolUse[0].hooks[0]"),
        SettingsHook("Stop", "", "ok", None, ".claude/settings.local.json", "hooks.Stop[0].hooks[1]")]
    errors = sorted(str(e) for e in settings.errors)
    assert any("hooks.Stop[0].hooks[0].timeout" in e and "above 0" in e for e in errors), errors
    assert any("hooks.PostToolUse" in e and "expected a list" in e for e in errors), errors


def _hook(event: str = "PreToolUse", command: str = "x") -> SettingsHook:
    return SettingsHook(event, "", command, None, "~/.claude/settings.json", f"hooks.{event}[0].hooks[0]")


def test_reply_reading_follows_claude_code() -> None:
    blocked = read_reply(_hook(), CommandRun(2, '{"decision": "approve"}', "nope\n", 0.1))
    assert blocked.block == "nope" and blocked.permission is None  # exit 2: JSON ignored
    failed = read_reply(_hook(), CommandRun(1, "", "bad", 0.1))
    assert failed.block is None and failed.problems == ["failed with exit code 1: bad"]
    no_event_name = read_reply(_hook(), CommandRun(0, json.dumps(
        {"hookSpecificOutput": {"permissionDecision": "allow"}}), "", 0.1))
    assert no_event_name.permission is None and "hookEventName" in no_event_name.problems[0]
    legacy = read_reply(_hook(), CommandRun(0, '{"decision": "block", "reason": "old"}', "", 0.1))
    assert legacy.permission == "deny" and legacy.permission_reason == "old"
    stop = read_reply(_hook("PostToolUse"), CommandRun(0, '{"continue": false, "stopReason": "enough"}', "", 0.1))
    assert stop.stop == "enough"
    plain = read_reply(_hook("SessionStart"), CommandRun(0, "{not json\n", "", 0.1))
    assert plain.plain == "{not json"


async def test_runner_caps_output_and_survives_a_hook_that_ignores_stdin(tmp_path: Path) -> None:
    big = json.dumps({"x": "y" * 3_000_000}).encode()  # far more than a pipe holds, never read
    run = await run_command("head -c 3000000 /dev/zero | tr '\\0' a; echo done >&2", big, cwd=tmp_path,
                            env={"PATH": "/usr/bin:/bin"}, timeout_s=20)
    assert run.exit_code == 0 and run.stderr.strip() == "done"
    assert len(run.stdout.encode()) <= MAX_OUTPUT_BYTES + 20 and run.stdout.endswith("[output cut]")


async def test_cancelling_a_hook_kills_its_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    task = asyncio.ensure_future(run_command(f"sleep 300 & echo $! > {pidfile}; wait", b"{}", cwd=tmp_path,
                                             env={"PATH": "/usr/bin:/bin"}, timeout_s=60))
    await eventually(lambda: pidfile.exists() and pidfile.read_text().strip(), "the hook's child started")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_gone(int(pidfile.read_text()))


# -------------------------------------------------------------------------------------------- the gate's hook=


async def test_gate_hook_deny_beats_allow_rules_and_bypass(tmp_path: Path) -> None:
    deny = HookPermission("deny", "hook says no")
    for gate in (make_gate(tmp_path, allow=("Write",)), make_gate(tmp_path, "bypassPermissions")):
        decision = await gate.check(WRITE, ARGS["Write"], hook=deny)
        assert not decision.allowed and decision.reason == "hook says no"


async def test_gate_hook_allow_is_an_allow_rule_for_one_call(tmp_path: Path) -> None:
    allow = HookPermission("allow", "formatter")
    gate = make_gate(tmp_path)
    assert (await gate.check(WRITE, ARGS["Write"], hook=allow)).allowed
    assert not (await gate.check(WRITE, ARGS["Write"])).allowed  # for that call only
    denied = await make_gate(tmp_path, deny=("Write",)).check(WRITE, ARGS["Write"], hook=allow)
    assert not denied.allowed and "denied by rule" in denied.reason
    planned = await make_gate(tmp_path, "plan").check(WRITE, ARGS["Write"], hook=allow)
    assert not planned.allowed and "plan mode" in planned.reason
    asker = Asker("no")
    asked = await make_gate(tmp_path, ask_rules=("Bash",), ask=asker).check(BASH, ARGS["Bash"], hook=allow)
    assert not asked.allowed and asker.asked  # an ask rule still asks
    secret = await make_gate(tmp_path).check(READ, {"file_path": str(tmp_path / ".env")}, hook=allow)
    assert not secret.allowed and "needs the user's approval" in secret.reason  # a secret still asks


async def test_gate_hook_ask_asks_even_where_a_rule_allows(tmp_path: Path) -> None:
    ask = HookPermission("ask", "deleting files")
    asker = Asker("yes")
    assert (await make_gate(tmp_path, allow=("Bash",), ask=asker).check(BASH, ARGS["Bash"], hook=ask)).allowed
    assert asker.asked == [("Bash", ARGS["Bash"])]
    asker = Asker("no")
    assert not (await make_gate(tmp_path, "bypassPermissions", ask=asker).check(BASH, ARGS["Bash"], hook=ask)).allowed
    assert asker.asked
    refused = await make_gate(tmp_path, allow=("Bash",)).check(BASH, ARGS["Bash"], hook=ask)
    assert not refused.allowed and "deleting files" in refused.reason and "non-interactive" in refused.reason


# ------------------------------------------------------------------------------------- the loop's hook points


class _Scripted:
    name = "scripted"

    def __init__(self, *texts: str) -> None:
        self.texts = list(texts)

    async def complete(self, **kwargs: Any) -> AssistantTurn:
        return AssistantTurn(content=[{"type": "text", "text": self.texts.pop(0)}], stop_reason="end_turn")


def _hooks(tmp_path: Path, hooks: list[SettingsHook]) -> Hooks:
    session = HookSession(cwd=tmp_path, home=tmp_path, env={"PATH": "/usr/bin:/bin"}, session_id=lambda: "s1",
                          transcript_path=lambda: "", permission_mode=lambda: "default",
                          tool_names=CLAUDE_TOOL_NAMES)
    return Hooks(hooks, session)


async def test_a_subagent_fires_subagent_stop_not_stop(tmp_path: Path) -> None:
    log = tmp_path / "events.log"
    record = f"cat >> {log}; echo >> {log}"
    hooks = _hooks(tmp_path, [SettingsHook(event, "", record, None, "~/.claude/settings.json", "k")
                              for event in ("Stop", "SubagentStop")])

    class Gate:
        async def check(self, tool: Any, args: Any, *, hook: HookPermission | None = None) -> Any:
            raise AssertionError("no tools here")

    ctx = ToolContext(cwd=tmp_path, spill_dir=tmp_path / "spill")
    sub = Agent(model=_Scripted("sub done"), tools=list, gate=Gate(), ctx=ctx, system="s", hooks=hooks, subagent=True)
    assert (await sub.run("task")).text == "sub done"
    main = Agent(model=_Scripted("main done"), tools=list, gate=Gate(), ctx=ctx, system="s", hooks=hooks)
    assert (await main.run("task")).text == "main done"
    events = [json.loads(line)["hook_event_name"] for line in log.read_text().splitlines() if line.strip()]
    assert events == ["SubagentStop", "Stop"]
    assert await hooks.subagent_stop("x", True) == StopVerdict()


async def test_subagent_stop_is_matched_by_the_agent_type_and_names_it(tmp_path: Path) -> None:
    # Matching hooks run in parallel, so each writes a file of its own (one shared log would interleave).
    hooks = _hooks(tmp_path, [SettingsHook("SubagentStop", matcher, f"cat > {tmp_path / tag}.json", None,
                                           "~/.claude/settings.json", "k")
                              for matcher, tag in (("Explore", "explore-only"), ("", "every"), ("^rev.*", "rev"))])

    class Gate:
        async def check(self, tool: Any, args: Any, *, hook: HookPermission | None = None) -> Any:
            raise AssertionError("no tools here")

    ctx = ToolContext(cwd=tmp_path, spill_dir=tmp_path / "spill")
    sub = Agent(model=_Scripted("done"), tools=list, gate=Gate(), ctx=ctx, system="s", hooks=hooks, subagent=True,
                agent=("reviewer", "a1b2"))
    assert (await sub.run("task")).text == "done"
    fired = sorted(name.removesuffix(".json") for name in os.listdir(tmp_path) if name.endswith(".json"))
    assert fired == ["every", "rev"]
    for tag in fired:
        data = json.loads((tmp_path / f"{tag}.json").read_text())
        assert (data["agent_type"], data["agent_id"]) == ("reviewer", "a1b2")


async def test_pre_compact_fires_before_the_summary(tmp_path: Path) -> None:
    seen: list[tuple[str, str]] = []

    async def before(trigger: str, focus: str) -> None:
        seen.append((trigger, focus))

    window = ContextWindow(1000)
    window.before_compact = before
    history = [{"role": "user", "content": [{"type": "text", "text": f"q{i}"}]} if i % 2 == 0 else
               {"role": "assistant", "content": [{"type": "text", "text": f"a{i}"}]} for i in range(8)]
    assert await window.compact(_Scripted("summary"), history, focus="the API", trigger="manual")  # type: ignore[arg-type]
    assert seen == [("manual", "the API")]
    assert isinstance(Settings().hooks, list)
