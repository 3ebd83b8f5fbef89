"""Issue 21, plan approval in `-p --permission-mode plan`: nobody can approve the plan, so ExitPlanMode is refused as
needing approval (an is_error tool_result, listed in the json's `permission_denials`; exit code 0 as the model
answered, as in Claude Code) and plan mode stays on — the model's next write is still refused. A PreToolUse hook
sees the call like any other, and its JSON `allow` does not approve the plan. (Claude Code 2.1.197 does not offer
the tool in `-p` at all — its call is answered "No such tool available" — and older versions refused it as needing
approval: `permission_denials` either way.)"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from mini_claude.permissions.gate import PLAN_MODE_TEXT
from tests.integration.conftest import Cli, answer, result_text, tool_results, tool_use

pytestmark = pytest.mark.timeout(120)

ALLOW = json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                                           "permissionDecisionReason": "plans are fine"}})


def test_print_mode_refuses_it_and_stays_in_plan_mode(tmp_path: Path) -> None:
    cli = Cli(tmp_path)
    try:
        seen = tmp_path / "hook-payload.json"
        command = f"cat > {shlex.quote(str(seen))}; echo {shlex.quote(ALLOW)}"
        (cli.home / ".claude").mkdir()
        (cli.home / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [
            {"matcher": "ExitPlanMode", "hooks": [{"type": "command", "command": command}]}]}}))
        plan = "# Plan\n1. write a.txt"
        mock = cli.mock([tool_use("ExitPlanMode", {"plan": plan}),
                         tool_use("Write", {"file_path": "a.txt", "content": "x"}),
                         answer("still planning")])
        r = cli.run("-p", "go", "--permission-mode", "plan", "--output-format", "json")
        assert r.rc == 0 and "2 tool calls were denied on the way\n" in r.stderr, r.stderr
        exit_plan, write = tool_results(mock)
        assert exit_plan.get("is_error") is True and write.get("is_error") is True
        assert result_text(exit_plan) == (
            "permission denied for ExitPlanMode: leaving plan mode needs the user's approval of the plan, which is "
            "not possible in non-interactive mode; plan mode stays on: give the plan as your answer instead")
        assert result_text(write) == f"permission denied for Write: {PLAN_MODE_TEXT}"
        assert not (cli.work / "a.txt").exists()
        result = r.json()
        assert result["result"] == "still planning"
        assert [(d["tool_name"], d["tool_input"]) for d in result["permission_denials"]] == [
            ("ExitPlanMode", {"plan": plan}), ("Write", {"file_path": "a.txt", "content": "x"})]
        payload = json.loads(seen.read_text())
        assert (payload["hook_event_name"], payload["tool_name"], payload["tool_input"], payload["permission_mode"]) \
            == ("PreToolUse", "ExitPlanMode", {"plan": plan}, "plan")
    finally:
        cli.close()
