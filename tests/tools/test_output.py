"""cap_result: big results go to a spill file and a preview that names it."""

from __future__ import annotations

from pathlib import Path

from mini_claude.tools.base import ToolContext, ToolResult
from mini_claude.tools.builtins import builtin_tools
from mini_claude.tools.output import cap_result
from mini_claude.tools.read import ReadFileTool


def test_small_result_unchanged(ctx: ToolContext) -> None:
    result = ToolResult.text("short")
    assert cap_result(result, ctx, tool_name="bash", max_chars=100) is result
    assert not ctx.spill_dir.exists()


async def test_big_result_spills_and_preview_names_path(ctx: ToolContext) -> None:
    text = "\n".join(f"row {i}" for i in range(20_000))
    capped = cap_result(ToolResult.text(text, is_error=True), ctx, tool_name="mcp__srv__dump", max_chars=5000)
    assert capped.is_error
    shown = capped.as_text()
    assert len(shown) <= 5000
    spilled = [p for p in ctx.spill_dir.iterdir()]
    assert len(spilled) == 1
    path = spilled[0]
    assert path.read_text() == text
    assert str(path) in shown and "Read" in shown and "offset" in shown and "limit" in shown
    assert "row 0" in shown and "row 19999" in shown
    # The model can follow the note.
    page = await ReadFileTool().run({"file_path": str(path), "offset": 100, "limit": 2}, ctx)
    assert page.as_text().splitlines()[:2] == ["   100\trow 99", "   101\trow 100"]


def test_images_kept_when_text_spills(ctx: ToolContext) -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
    result = ToolResult([{"type": "text", "text": "x" * 10_000}, image])
    capped = cap_result(result, ctx, tool_name="t", max_chars=1000)
    assert capped.content[-1] == image
    assert Path(capped.content[0]["text"].split("saved to ")[1].split(". ")[0]).exists()


def test_builtin_tools_fresh_and_well_formed() -> None:
    first, second = builtin_tools(), builtin_tools()
    assert [t.name for t in first] == ["Read", "Write", "Edit", "NotebookEdit", "Glob", "Grep", "Bash", "TaskOutput",
                                       "TaskStop", "WebFetch", "WebSearch", "TodoWrite", "ExitPlanMode"]
    assert all(a is not b for a, b in zip(first, second, strict=True))
    read_only = {t.name: t.read_only for t in first}
    assert read_only == {"Read": True, "Write": False, "Edit": False, "NotebookEdit": False, "Glob": True, "Grep": True,
                         "Bash": False, "TaskOutput": True, "TaskStop": False,
                         "WebFetch": True, "WebSearch": True, "TodoWrite": True,  # both still ask: they send out
                         "ExitPlanMode": False}
    for tool in first:
        assert tool.description and len(tool.description) > 40
        schema = tool.input_schema
        # TaskStop takes its task as `task_id` or Claude Code's older `shell_id`: neither alone is required
        assert schema["type"] == "object" and (schema.get("required") or tool.name == "TaskStop")
        assert set(schema.get("required", [])) <= set(schema["properties"])
