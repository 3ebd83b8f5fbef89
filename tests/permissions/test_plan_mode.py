"""Hole 6: plan mode is never more permissive than default mode. An MCP tool's `readOnlyHint: true` is the server's
claim, not a grant: such a tool is asked in plan mode exactly as in default mode. Read-only built-ins still run."""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_claude.permissions import Decision, PermissionGate, PermissionMode, RuleSet
from tests.integration.conftest import Cli, answer, probe_entry, result_text, tool_results, tool_use
from tests.permissions.test_gate import GLOB, GREP, MCP_RO, MCP_RW, READ, Asker, FakeTool

pytestmark = pytest.mark.timeout(120)


def gate(tmp_path: Path, mode: str, *, allow: tuple[str, ...] = (), ask_rules: tuple[str, ...] = (),
         ask: Asker | None = None) -> PermissionGate:
    return PermissionGate(PermissionMode.parse(mode), RuleSet.from_strings(allow=allow, ask=ask_rules,
                          source=".claude/settings.json"), ask=ask, cwd=tmp_path, home=tmp_path / "home")


@pytest.mark.parametrize("answer_", ["yes", "no"])
async def test_read_only_mcp_tool_is_asked_in_plan_mode_as_in_default(tmp_path: Path, answer_: str) -> None:
    decisions = {}
    for mode in ("default", "plan"):
        asker = Asker(answer_)
        decisions[mode] = await gate(tmp_path, mode, ask=asker).check(MCP_RO, {"q": "x"})
        assert asker.asked == [("mcp__docs__search", {"q": "x"})]
    assert decisions["plan"] == decisions["default"]
    assert decisions["plan"].allowed is (answer_ == "yes")


async def test_non_interactive_plan_mode_denies_it_with_the_default_mode_text(tmp_path: Path) -> None:
    plan = await gate(tmp_path, "plan").check(MCP_RO, {"q": "x"})
    assert plan == await gate(tmp_path, "default").check(MCP_RO, {"q": "x"})
    assert plan == Decision(False, 'permission denied for mcp__docs__search: not allowed in non-interactive mode; '
                                   'allow with --yolo or add "mcp__docs__search" to permissions.allow in '
                                   ".claude/settings.json")


async def test_rules_apply_to_it_as_in_default_mode(tmp_path: Path) -> None:
    assert (await gate(tmp_path, "plan", allow=("mcp__docs",)).check(MCP_RO, {})) == \
        Decision(True, 'allowed by rule "mcp__docs" in .claude/settings.json')
    asker = Asker("no")
    d = await gate(tmp_path, "plan", allow=("mcp__docs",), ask_rules=("mcp__docs__search",), ask=asker).check(
        MCP_RO, {})
    assert not d.allowed and len(asker.asked) == 1
    # an allow rule still does not lift plan mode for a tool that does not even claim to be read-only
    d = await gate(tmp_path, "plan", allow=("mcp__docs",)).check(MCP_RW, {})
    assert d.reason.startswith("permission denied for mcp__docs__delete: plan mode is read-only")


@pytest.mark.parametrize("tool", [READ, GLOB, GREP], ids=lambda t: t.name)
async def test_read_only_builtins_still_run_in_plan_mode(tmp_path: Path, tool: FakeTool) -> None:
    asker = Asker()
    d = await gate(tmp_path, "plan", ask=asker).check(tool, {"path": "a.txt", "pattern": "x"})
    assert d == Decision(True, "read-only tool in plan mode") and asker.asked == []


@pytest.mark.parametrize("mode", ["default", "plan"])
def test_cli_plan_mode_does_not_run_a_tool_that_claims_read_only(tmp_path: Path, mode: str) -> None:
    cli = Cli(tmp_path)
    try:
        config = cli.config_file({"p": probe_entry()})
        mock = cli.mock([tool_use("mcp__p__peek"), answer("peek: {{last_tool_result_is_error}}")])
        r = cli.run("-p", "plan it", "--mcp-config", config, "--permission-mode", mode)
        assert r.rc == 0 and "denied on the way" in r.stderr, r.stderr  # answered; a call was denied on the way
        (peek,) = tool_results(mock)
        assert peek.get("is_error") is True
        assert result_text(peek) == ('permission denied for mcp__p__peek: not allowed in non-interactive mode; '
                                     'allow with --yolo or add "mcp__p__peek" to permissions.allow in '
                                     ".claude/settings.json")
        assert r.stdout.strip() == "peek: true"  # before the fix, plan mode ran it and the model got "peeked"
    finally:
        cli.close()
