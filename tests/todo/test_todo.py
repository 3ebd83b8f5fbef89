"""Issue 21, acceptance 1 (the todo list shown): `TodoWrite` keeps the session's list (each call replaces it), the
terminal shows it whole as a checklist (`-p`: on stderr, neutralised), and the gate runs it without asking."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mini_claude.permissions import PermissionMode
from mini_claude.permissions.gate import PermissionGate
from mini_claude.permissions.rules import RuleSet
from mini_claude.tools.base import ToolContext
from mini_claude.tools.todo import NOTE, TodoWriteTool
from tests.integration.conftest import Cli, answer, result_text, tool_results, tool_use


def todo(content: str, status: str, form: str | None = None) -> dict[str, str]:
    return {"content": content, "status": status, "activeForm": form or f"Doing {content}"}


PLAN = [todo("Read the code", "completed"), todo("Fix the bug", "in_progress", "Fixing the bug"),
        todo("Run the tests", "pending")]
CHECKLIST = ("Todo list (1/3 done):\n☒ Read the code\n◼ Fix the bug (Fixing the bug)\n☐ Run the tests")


async def test_each_call_replaces_the_list(tmp_path: Path) -> None:
    tool, ctx = TodoWriteTool(), ToolContext(cwd=tmp_path, spill_dir=tmp_path, home=tmp_path)
    result = await tool.run({"todos": PLAN}, ctx)
    assert result.as_text() == f"{CHECKLIST}\n\n{NOTE}"
    result = await tool.run({"todos": [todo("Run the tests", "completed")]}, ctx)
    assert [i.content for i in tool.items] == ["Run the tests"]
    assert result.as_text().startswith("Todo list (1/1 done):\n☒ Run the tests")
    assert (await tool.run({"todos": []}, ctx)).as_text().startswith("Todo list cleared")
    assert TodoWriteTool().items == []  # a fresh session starts empty
    bad = await tool.run({"todos": [{"content": "x", "status": "done", "activeForm": "x"}]}, ctx)
    assert bad.is_error and "status must be one of" in bad.as_text()


async def test_the_gate_runs_it_unasked_in_every_mode(tmp_path: Path) -> None:
    async def ask(tool: Any, args: dict[str, Any]) -> str:
        raise AssertionError("asked")

    for mode in PermissionMode:
        gate = PermissionGate(mode, RuleSet(), ask=ask, cwd=tmp_path, home=tmp_path)
        assert (await gate.check(TodoWriteTool(), {"todos": PLAN})).allowed
    gate = PermissionGate(PermissionMode.DEFAULT, RuleSet(), ask=ask, cwd=tmp_path, home=tmp_path)
    refused = await gate.check(TodoWriteTool(), {"todos": [{"content": "x"}]})
    assert not refused.allowed and "invalid input" in refused.reason


def test_print_mode_shows_the_checklist_on_stderr(cli: Cli) -> None:
    sneaky = todo("Clear \x1b[2J the screen", "pending")
    mock = cli.mock([tool_use("TodoWrite", {"todos": PLAN}), tool_use("TodoWrite", {"todos": [*PLAN, sneaky]}),
                     answer("planned")])
    r = cli.run("-p", "plan it")
    assert r.rc == 0, r.stderr
    assert r.stdout.strip() == "planned"
    shown = [line.strip().removeprefix("⎿  ") for line in r.stderr.splitlines()]
    start = shown.index("Todo list (1/3 done):")
    assert "\n".join(shown[start:start + 4]) == CHECKLIST
    assert "Todo list (1/4 done):" in shown and "\x1b" not in r.stderr  # the escape is neutralised
    assert "☐ Clear  the screen" in shown  # through render.clean: the escape sequence is dropped
    first, second = tool_results(mock)
    assert result_text(first) == f"{CHECKLIST}\n\n{NOTE}" and not first.get("is_error")
    assert not second.get("is_error")
    offered = {t["name"]: t for t in mock.requests[0]["body"]["tools"]}
    item = offered["TodoWrite"]["input_schema"]["properties"]["todos"]["items"]
    assert item["required"] == ["content", "status", "activeForm"]
    assert item["properties"]["status"]["enum"] == ["pending", "in_progress", "completed"]
