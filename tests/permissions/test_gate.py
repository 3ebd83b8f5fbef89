"""The gate: rule order, every mode x tool category, asking, "always", non-interactive messages."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from mini_claude.permissions import Decision, PermissionGate, PermissionMode, RuleSet
from mini_claude.settings import Settings, SettingsRule
from mini_claude.tools.base import ToolContext, ToolResult


@dataclass
class FakeTool:
    name: str
    read_only: bool = False
    description: str = "fake"
    input_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object"})

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult.text("ok")


READ = FakeTool("Read", read_only=True)
GLOB = FakeTool("Glob", read_only=True)
GREP = FakeTool("Grep", read_only=True)
WRITE = FakeTool("Write")
EDIT = FakeTool("Edit")
BASH = FakeTool("Bash")
MCP_RO = FakeTool("mcp__docs__search", read_only=True)
MCP_RW = FakeTool("mcp__docs__delete", read_only=False)

ARGS: dict[str, dict[str, Any]] = {
    "Read": {"file_path": "a.txt"},
    "Glob": {"pattern": "*.py"},
    "Grep": {"pattern": "x"},
    "Write": {"file_path": "a.txt", "content": "x"},
    "Edit": {"file_path": "a.txt", "old_string": "a", "new_string": "b"},
    "Bash": {"command": "git status"},
    "mcp__docs__search": {"q": "x"},
    "mcp__docs__delete": {"id": 1},
}


class Asker:
    """A scripted user: answers in order, records what it was asked."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[str, dict[str, Any]]] = []

    async def __call__(self, tool: Any, args: dict[str, Any]) -> str:
        self.asked.append((tool.name, args))
        return self.answers.pop(0)


def make_gate(tmp_path: Path, mode: str = "default", *, allow: tuple[str, ...] = (), deny: tuple[str, ...] = (),
              ask_rules: tuple[str, ...] = (), ask: Asker | None = None, server_of: Any = None) -> PermissionGate:
    settings = Settings(
        permissions_allow=[SettingsRule(t, ".claude/settings.json", f"permissions.allow[{i}]")
                           for i, t in enumerate(allow)],
        permissions_deny=[SettingsRule(t, ".claude/settings.json", f"permissions.deny[{i}]")
                          for i, t in enumerate(deny)],
        permissions_ask=[SettingsRule(t, "~/.claude/settings.json", f"permissions.ask[{i}]")
                         for i, t in enumerate(ask_rules)],
    )
    return PermissionGate(PermissionMode.parse(mode), RuleSet.from_settings(settings), ask=ask, cwd=tmp_path,
                          home=tmp_path / "home", server_of=server_of)


async def check(gate: PermissionGate, tool: FakeTool, args: dict[str, Any] | None = None) -> Decision:
    return await gate.check(tool, ARGS[tool.name] if args is None else args)


# ------------------------------------------------------------------------------------------------------- modes


def test_mode_names_parse() -> None:
    assert [PermissionMode.parse(n) for n in ("default", "acceptEdits", "plan", "bypassPermissions")] == [
        PermissionMode.DEFAULT, PermissionMode.ACCEPT_EDITS, PermissionMode.PLAN, PermissionMode.BYPASS]
    assert PermissionMode.parse("acceptedits") is PermissionMode.ACCEPT_EDITS
    with pytest.raises(ValueError) as info:
        PermissionMode.parse("yolo")
    assert str(info.value) == ("unknown permission mode 'yolo' (expected one of: default, acceptEdits, plan, "
                               "bypassPermissions)")


# "run" = allowed without asking, "ask" = the user is asked, "deny" = refused without asking
MATRIX = {
    "default":           {"Read": "run", "Glob": "run", "Grep": "run", "Write": "ask",
                          "Edit": "ask", "Bash": "ask", "mcp__docs__search": "ask",
                          "mcp__docs__delete": "ask"},
    "acceptEdits":       {"Read": "run", "Glob": "run", "Grep": "run", "Write": "run",
                          "Edit": "run", "Bash": "ask", "mcp__docs__search": "ask",
                          "mcp__docs__delete": "ask"},
    "plan":              {"Read": "run", "Glob": "run", "Grep": "run", "Write": "deny",
                          "Edit": "deny", "Bash": "deny", "mcp__docs__search": "ask",  # a claim, not a grant
                          "mcp__docs__delete": "deny"},
    "bypassPermissions": {"Read": "run", "Glob": "run", "Grep": "run", "Write": "run",
                          "Edit": "run", "Bash": "run", "mcp__docs__search": "run",
                          "mcp__docs__delete": "run"},
}
TOOLS = [READ, GLOB, GREP, WRITE, EDIT, BASH, MCP_RO, MCP_RW]


@pytest.mark.parametrize("mode", list(MATRIX))
@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
async def test_every_mode_and_tool_category(mode: str, tool: FakeTool, tmp_path: Path) -> None:
    asker = Asker("no")
    decision = await check(make_gate(tmp_path, mode, ask=asker), tool)
    expected = MATRIX[mode][tool.name]
    if expected == "run":
        assert decision.allowed and asker.asked == []
    elif expected == "ask":
        assert asker.asked == [(tool.name, ARGS[tool.name])]
        assert decision == Decision(False, f"permission denied for {tool.name}: the user declined this tool call")
    else:
        assert asker.asked == []
        assert decision == Decision(False, f"permission denied for {tool.name}: plan mode is read-only: only "
                                           "read-only tools can run; describe the change in your plan instead "
                                           "of making it")


async def test_allowed_reasons(tmp_path: Path) -> None:
    assert (await check(make_gate(tmp_path), READ)).reason == "read-only tool"
    assert (await check(make_gate(tmp_path, "plan"), READ)).reason == "read-only tool in plan mode"
    assert (await check(make_gate(tmp_path, "acceptEdits"), EDIT)).reason == "acceptEdits mode"
    assert (await check(make_gate(tmp_path, "bypassPermissions"), BASH)).reason == "bypassPermissions mode"
    d = await check(make_gate(tmp_path, allow=("Bash(git status:*)",)), BASH)
    assert d == Decision(True, 'allowed by rule "Bash(git status:*)" in .claude/settings.json')


# --------------------------------------------------------------------------------------------------- rule order


async def test_deny_beats_allow(tmp_path: Path) -> None:
    gate = make_gate(tmp_path, allow=("Bash",), deny=("Bash(rm:*)",))
    d = await check(gate, BASH, {"command": "rm -rf build"})
    assert d == Decision(False, 'permission denied for Bash: denied by rule "Bash(rm:*)" in .claude/settings.json')
    assert (await check(gate, BASH, {"command": "ls"})).allowed


@pytest.mark.parametrize("mode", ["bypassPermissions", "acceptEdits", "plan", "default"])
async def test_deny_beats_every_mode(mode: str, tmp_path: Path) -> None:
    gate = make_gate(tmp_path, mode, deny=("Read(.env)", "Edit(docs/**)", "mcp__docs"))
    assert not (await check(gate, READ, {"file_path": ".env"})).allowed
    d = await check(gate, WRITE, {"file_path": "docs/a.md", "content": ""})
    assert d == Decision(False, 'permission denied for Write: denied by rule "Edit(docs/**)" in '
                                '.claude/settings.json')
    assert not (await check(gate, MCP_RO)).allowed


async def test_deny_catches_a_part_of_a_compound_command_in_bypass(tmp_path: Path) -> None:
    gate = make_gate(tmp_path, "bypassPermissions", deny=("Bash(git push:*)",))
    assert not (await check(gate, BASH, {"command": "git add . && git commit -m x && git push --force"})).allowed


async def test_cli_rules(tmp_path: Path) -> None:
    rules = RuleSet().with_cli(allow=["Bash(git log:*) Read"], deny=["Bash(git log -p:*)"])
    gate = PermissionGate(PermissionMode.DEFAULT, rules, ask=None, cwd=tmp_path)
    assert (await check(gate, BASH, {"command": "git log --oneline"})).reason == \
        'allowed by rule "Bash(git log:*)" from --allowedTools'
    assert (await check(gate, BASH, {"command": "git log -p"})).reason == \
        'permission denied for Bash: denied by rule "Bash(git log -p:*)" from --disallowedTools'


async def test_ask_rule_beats_allow_rule(tmp_path: Path) -> None:
    asker = Asker("yes")
    gate = make_gate(tmp_path, allow=("Bash(git:*)",), ask_rules=("Bash(git push:*)",), ask=asker)
    assert (await check(gate, BASH, {"command": "git pull"})).allowed and asker.asked == []
    assert (await check(gate, BASH, {"command": "git push"})) == Decision(True, "allowed by the user")
    assert asker.asked == [("Bash", {"command": "git push"})]


async def test_ask_rule_asks_for_a_read_only_tool_even_in_plan_mode(tmp_path: Path) -> None:
    asker = Asker("no")
    gate = make_gate(tmp_path, "plan", ask_rules=("Read(secrets/**)",), ask=asker)
    assert not (await check(gate, READ, {"file_path": "secrets/k"})).allowed
    assert asker.asked == [("Read", {"file_path": "secrets/k"})]


async def test_bypass_skips_ask_rules(tmp_path: Path) -> None:
    gate = make_gate(tmp_path, "bypassPermissions", ask_rules=("Bash(git push:*)",))
    assert (await check(gate, BASH, {"command": "git push"})).allowed


async def test_read_only_mcp_tool_runs_when_allowed_by_rule(tmp_path: Path) -> None:
    gate = make_gate(tmp_path, allow=("mcp__docs",))
    assert (await check(gate, MCP_RO)) == Decision(True, 'allowed by rule "mcp__docs" in .claude/settings.json')


async def test_mcp_server_rule_uses_the_lookup(tmp_path: Path) -> None:
    tool = FakeTool("mcp__a__b__search")
    lookup = {"mcp__a__b__search": "a__b"}.get
    gate = make_gate(tmp_path, allow=("mcp__a",), server_of=lookup)
    assert not (await gate.check(tool, {})).allowed
    gate = make_gate(tmp_path, allow=("mcp__a__b",), server_of=lookup)
    assert (await gate.check(tool, {})).allowed


async def test_compound_command_asks_unless_every_part_is_allowed(tmp_path: Path) -> None:
    asker = Asker("no")
    gate = make_gate(tmp_path, allow=("Bash(git status:*)",), ask=asker)
    assert not (await check(gate, BASH, {"command": "git status && rm -rf /"})).allowed
    assert asker.asked == [("Bash", {"command": "git status && rm -rf /"})]


# ---------------------------------------------------------------------------------------------- non-interactive


async def test_non_interactive_bash_message(tmp_path: Path) -> None:
    d = await check(make_gate(tmp_path), BASH, {"command": "git status --short"})
    assert d == Decision(False, 'permission denied for Bash: not allowed in non-interactive mode; allow with --yolo '
                                'or add "Bash(git status:*)" to permissions.allow in .claude/settings.json')


@pytest.mark.parametrize(("tool", "args", "rules"), [
    (BASH, {"command": "ls -la"}, '"Bash(ls:*)"'),
    (BASH, {"command": "python3 -m pytest -q"}, '"Bash(python3 -m pytest:*)"'),
    (BASH, {"command": "git status && npm run build && git status"}, '"Bash(git status:*)", "Bash(npm run:*)"'),
    (BASH, {"command": "echo $(date)"}, '"Bash(echo $(date))"'),
    (BASH, {"command": "FOO=1 make"}, '"Bash(FOO=1 make)"'),
    (EDIT, None, '"Edit"'),
    (WRITE, None, '"Write"'),
    (MCP_RW, None, '"mcp__docs__delete"'),
    (MCP_RO, None, '"mcp__docs__search"'),
])
async def test_non_interactive_suggests_what_allows_it(tool: FakeTool, args: dict[str, Any] | None, rules: str,
                                                       tmp_path: Path) -> None:
    d = await check(make_gate(tmp_path), tool, args)
    assert d == Decision(False, f"permission denied for {tool.name}: not allowed in non-interactive mode; allow "
                                f"with --yolo or add {rules} to permissions.allow in .claude/settings.json")


async def test_non_interactive_suggests_only_the_parts_not_yet_allowed(tmp_path: Path) -> None:
    gate = make_gate(tmp_path, allow=("Bash(git status:*)",))
    d = await check(gate, BASH, {"command": "git status && cargo test"})
    assert d.reason.endswith('add "Bash(cargo test:*)" to permissions.allow in .claude/settings.json')


async def test_non_interactive_with_an_ask_rule(tmp_path: Path) -> None:
    d = await check(make_gate(tmp_path, ask_rules=("Bash(git push:*)",)), BASH, {"command": "git push"})
    assert d == Decision(False, 'permission denied for Bash: rule "Bash(git push:*)" in ~/.claude/settings.json '
                                'requires asking first, which is not possible in non-interactive mode; allow with '
                                '--yolo')


# ------------------------------------------------------------------------------------------------------ always


async def test_always_remembers_a_bash_prefix(tmp_path: Path) -> None:
    asker = Asker("always")
    gate = make_gate(tmp_path, ask=asker)
    d = await check(gate, BASH, {"command": "git status"})
    assert d == Decision(True, 'allowed by the user; "Bash(git status:*)" allowed for the rest of this session')
    d = await check(gate, BASH, {"command": "git status --short"})
    assert d == Decision(True, 'allowed by rule "Bash(git status:*)" (allowed for this session)')
    assert len(asker.asked) == 1
    # ...but only that prefix
    asker.answers.append("no")
    assert not (await check(gate, BASH, {"command": "git push"})).allowed
    assert len(asker.asked) == 2


async def test_always_on_a_compound_command_remembers_only_that_exact_command(tmp_path: Path) -> None:
    asker = Asker("always", "no")
    gate = make_gate(tmp_path, ask=asker)
    assert gate.always_rules(BASH, {"command": "make && rm -rf out"}) == ["Bash(make && rm -rf out)"]
    assert (await check(gate, BASH, {"command": "make && rm -rf out"})).allowed
    assert (await check(gate, BASH, {"command": "make  &&  rm -rf out"})).allowed
    assert not (await check(gate, BASH, {"command": "rm -rf /"})).allowed
    assert len(asker.asked) == 2


async def test_always_remembers_other_tools_by_name(tmp_path: Path) -> None:
    asker = Asker("always", "always")
    gate = make_gate(tmp_path, ask=asker)
    assert (await check(gate, EDIT)).allowed
    assert (await check(gate, EDIT, {"file_path": "other.txt"})).allowed
    assert (await check(gate, MCP_RW)).allowed
    assert (await check(gate, MCP_RW, {"id": 2})).allowed
    assert [name for name, _ in asker.asked] == ["Edit", "mcp__docs__delete"]
    assert [r.text for r in gate.rules.allow] == ["Edit", "mcp__docs__delete"]


async def test_yes_does_not_remember(tmp_path: Path) -> None:
    asker = Asker("yes", "yes")
    gate = make_gate(tmp_path, ask=asker)
    await check(gate, BASH)
    await check(gate, BASH)
    assert len(asker.asked) == 2


async def test_always_does_not_override_deny(tmp_path: Path) -> None:
    gate = make_gate(tmp_path, deny=("Bash(git push:*)",), ask=Asker("always"))
    assert (await check(gate, BASH, {"command": "git status"})).allowed
    gate.allow_for_session(["Bash"])
    assert not (await check(gate, BASH, {"command": "git push"})).allowed


async def test_concurrent_asks_are_serialized_and_always_covers_the_waiting_call(tmp_path: Path) -> None:
    active = 0
    seen_concurrent = False
    calls = 0

    async def slow_ask(tool: Any, args: dict[str, Any]) -> str:
        nonlocal active, seen_concurrent, calls
        calls += 1
        active += 1
        seen_concurrent = seen_concurrent or active > 1
        await asyncio.sleep(0.01)
        active -= 1
        return "always"

    gate = PermissionGate(PermissionMode.DEFAULT, RuleSet(), ask=slow_ask, cwd=tmp_path)
    decisions = await asyncio.gather(*(gate.check(MCP_RO, {"q": str(i)}) for i in range(3)))
    assert all(d.allowed for d in decisions)
    assert calls == 1 and not seen_concurrent


@pytest.mark.parametrize("command", ["ls -la", "python3 -m pytest -q", "git status && npm run build",
                                     "echo $(date)", "FOO=1 make", "npm test > out.txt"])
async def test_suggested_rules_really_allow_the_call(command: str, tmp_path: Path) -> None:
    gate = make_gate(tmp_path)
    args = {"command": command}
    suggested = gate.suggested_rules(BASH, args)
    assert (await gate.check(BASH, args)).allowed is False
    gate.allow_for_session(suggested)
    assert (await gate.check(BASH, args)).allowed


@pytest.mark.parametrize(("command", "rule"), [
    ("python3 main.py", "Bash(python3 main.py)"),  # Bash(python3:*) would read as "any Python code"
    ("node scripts/x.js --fast", "Bash(node scripts/x.js --fast)"),
    ("git -c core.pager=cat log", "Bash(git -c core.pager=cat log)"),
    ("python -m pytest -q", "Bash(python -m pytest:*)"),
    ("git status -s", "Bash(git status:*)"),
    ("npm run build", "Bash(npm run:*)"),
    ("ls -la", "Bash(ls:*)"),
])
def test_always_offers_the_narrowest_rule_that_allows_the_command(tmp_path: Path, command: str, rule: str) -> None:
    gate = make_gate(tmp_path)
    assert gate.always_rules(BASH, {"command": command}) == [rule]
    assert gate.suggested_rules(BASH, {"command": command}) == [rule]
    allowed = make_gate(tmp_path, allow=(rule,))
    assert asyncio.run(check(allowed, BASH, {"command": command})).allowed


def test_always_for_a_web_fetch_names_its_host(tmp_path: Path) -> None:
    fetch = FakeTool("WebFetch", read_only=True)
    args = {"url": "https://Docs.Example.com/a?b=1", "prompt": "summarise"}
    assert make_gate(tmp_path).always_rules(fetch, args) == ["WebFetch(domain:docs.example.com)"]
    assert make_gate(tmp_path).suggested_rules(fetch, args) == ["WebFetch(domain:docs.example.com)"]
    allowed = make_gate(tmp_path, allow=("WebFetch(domain:docs.example.com)",))
    assert asyncio.run(check(allowed, fetch, args)).allowed
    assert not asyncio.run(check(allowed, fetch, {"url": "https://evil.example.net/", "prompt": "x"})).allowed
