"""cli/terminal/tool_lines.py: the call line (`Read(calc.py)`, the key argument per tool, MCP tools' first
arguments) and the summary under it, computed from what the real tools return (Read, Write, Edit, Bash, Grep, Glob
run on real files); hostile text in arguments shown, never obeyed; the REPL's TerminalUI putting them together
(labels when calls finish out of order, folding, Ctrl+O's text, no spinner off a terminal)."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mini_claude.cli.terminal.render import TerminalUI
from mini_claude.cli.terminal.tool_lines import CALL_LIMIT, Body, call_line, result_body, result_summary
from mini_claude.secrets import SECRETS, register_credentials
from mini_claude.tools.base import ToolContext, ToolResult
from mini_claude.tools.files import EditFileTool, WriteFileTool
from mini_claude.tools.glob import GlobTool
from mini_claude.tools.grep import GrepTool
from mini_claude.tools.read import ReadFileTool
from mini_claude.tools.shell import BashTool

pytestmark = pytest.mark.timeout(60)

# what a terminal would obey or hide: ESC (CSI, OSC 8 link), BEL, a C1 CSI, RLO, a zero-width joiner, a tag char
HOSTILE = "x\x1b[2J\x1b]8;;http://evil.example/\x07y\x9b31m\u202eexe.txt\u200d\U000e0041"
RAW = ("\x1b", "\x07", "\x9b", "\u202e", "\u200d", "\U000e0041", "\n", "\r")


def assert_raw_free(text: str) -> None:
    for ch in RAW:
        assert ch not in text, f"{ch!r} in {text!r}"


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[ToolContext]:
    work = tmp_path / "work"
    work.mkdir()
    context = ToolContext(cwd=work, spill_dir=tmp_path / "spill")
    yield context
    asyncio.run(context.background.aclose())


def run(tool: Any, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    result: ToolResult = asyncio.run(tool.run(args, ctx))
    return result


# ---- the call line ------------------------------------------------------------------------------------------------

def test_call_line_shows_each_tools_key_argument(tmp_path: Path) -> None:
    cwd = tmp_path / "proj"
    assert call_line("Read", {"file_path": str(cwd / "src" / "calc.py"), "limit": 5}, cwd) == "Read(src/calc.py)"
    assert call_line("Read", {"file_path": "calc.py"}, cwd) == "Read(calc.py)"
    assert call_line("Read", {"file_path": "/etc/hosts"}, cwd) == "Read(/etc/hosts)"  # outside: as given
    assert call_line("Edit", {"file_path": "../other/a.py", "old_string": "a", "new_string": "b"}, cwd) == \
        "Edit(../other/a.py)"
    assert call_line("Write", {"file_path": str(cwd / "x.py"), "content": "secret body"}, cwd) == "Write(x.py)"
    assert call_line("NotebookEdit", {"notebook_path": "nb.ipynb", "new_source": "x"}, cwd) == "NotebookEdit(nb.ipynb)"
    assert call_line("Bash", {"command": "npm test", "timeout": 1000}, cwd) == "Bash(npm test)"
    assert call_line("Grep", {"pattern": "TODO", "output_mode": "content"}, cwd) == "Grep(TODO)"
    assert call_line("Grep", {"pattern": "TODO", "path": str(cwd / "src")}, cwd) == \
        'Grep(pattern: "TODO", path: "src")'
    assert call_line("Glob", {"pattern": "**/*.py"}, cwd) == "Glob(**/*.py)"
    assert call_line("WebFetch", {"url": "https://example.org/a", "prompt": "sum"}, cwd) == \
        "WebFetch(https://example.org/a)"
    assert call_line("WebSearch", {"query": "mini-claude release"}, cwd) == "WebSearch(mini-claude release)"
    assert call_line("Agent", {"description": "find the bug", "prompt": "…", "subagent_type": "Explore"}, cwd) == \
        "Agent(Explore: find the bug)"
    assert call_line("Task", {"description": "find the bug", "prompt": "…"}, cwd) == "Task(find the bug)"
    # a sub-agent's call: its label, then the same form
    assert call_line("general-purpose › Bash", {"command": "ls"}, cwd) == "general-purpose › Bash(ls)"


def test_call_line_of_mcp_and_other_tools_shows_their_first_arguments() -> None:
    assert call_line("mcp__github__create_issue", {"title": "Crash on start", "body": "Steps", "labels": ["bug"]}) == \
        'mcp__github__create_issue(title: "Crash on start", body: "Steps", …)'
    assert call_line("mcp__demo__add", {"a": 17, "b": 25}) == "mcp__demo__add(a: 17, b: 25)"
    assert call_line("mcp__probe__peek", {}) == "mcp__probe__peek"  # nothing to show: the name alone
    assert call_line("TodoWrite", {"todos": [{"content": "a", "status": "pending"}]}) == \
        'TodoWrite(todos: [{"content": "a", "status": "pending"}])'
    long = call_line("mcp__s__t", {"text": "y" * 10_000})
    assert long.startswith('mcp__s__t(text: "yyy') and long.endswith('…")') and len(long) < 120, long


def test_call_line_shows_escapes_bidi_and_newlines_instead_of_obeying_them() -> None:
    line = call_line("Bash", {"command": f"echo {HOSTILE}\nrm -rf ~\tdone"})
    assert_raw_free(line)
    assert line == ("Bash(echo x\\x1b[2J\\x1b]8;;http://evil.example/\\x07y\\x9b31m\\u202eexe.txt\\u200d\\U000e0041"
                    "\\nrm -rf ~\\tdone)")
    # in a path, an MCP value, a key, a tool name: shown too
    assert call_line("Read", {"file_path": HOSTILE}) == \
        "Read(x\\x1b[2J\\x1b]8;;http://evil.example/\\x07y\\x9b31m\\u202eexe.txt\\u200d\\U000e0041)"
    mcp = call_line("mcp__evil\u202e__t\x1b[2J", {"k\x1b": "v\nw\u202e"})
    assert_raw_free(mcp)
    assert mcp == 'mcp__evil\\u202e__t\\x1b[2J(k\\x1b: "v\\nw\\u202e")'


def test_call_line_of_a_10k_command_is_one_cut_line() -> None:
    line = call_line("Bash", {"command": "echo " + "a\n" * 5_000})
    assert "\n" not in line and line.startswith("Bash(echo a\\na\\n") and line.endswith("…)")
    assert len(line) == len("Bash()") + CALL_LIMIT


def test_call_line_masks_known_secrets() -> None:
    register_credentials({"ANTHROPIC_API_KEY": "sk-ant-test-0123456789abcdef"}, ["ANTHROPIC_API_KEY"])
    try:
        line = call_line("Bash", {"command": "curl -H 'x-api-key: sk-ant-test-0123456789abcdef' api"})
        assert "sk-ant-test" not in line and "[secret ANTHROPIC_API_KEY]" in line, line
    finally:
        SECRETS.clear()


# ---- the summary, from the real tools' results ----------------------------------------------------------------

def test_summaries_of_file_tools(ctx: ToolContext) -> None:
    calc = ctx.cwd / "calc.py"
    calc.write_text("def add(a, b):\n    return a + b\n")
    read = run(ReadFileTool(), {"file_path": "calc.py"}, ctx)
    assert result_summary("Read", {"file_path": "calc.py"}, read, ctx.cwd) == "Read 2 lines"
    one = run(ReadFileTool(), {"file_path": "calc.py", "limit": 1}, ctx)
    assert result_summary("Read", {"file_path": "calc.py"}, one, ctx.cwd) == "Read 1 line"
    edit_args = {"file_path": str(calc), "old_string": "    return a + b\n", "new_string": "    c = a + b\n    return c\n"}
    edit = run(EditFileTool(), edit_args, ctx)
    assert not edit.is_error, edit.as_text()
    assert result_summary("Edit", edit_args, edit, ctx.cwd) == "Updated calc.py with 2 additions and 1 removal"
    assert result_body("Edit", edit, 4).lines == []  # the diff is shown apart (render.py)
    write_args = {"file_path": "pkg/x.py", "content": "a\nb\nc\n"}
    write = run(WriteFileTool(), write_args, ctx)
    assert result_summary("Write", write_args, write, ctx.cwd) == "Wrote 3 lines to pkg/x.py"
    assert result_body("Write", write, 2, write_args) == Body(["   1 a", "   2 b"], 1, "   1 a\n   2 b\n   3 c")
    hostile = {"file_path": "h.txt", "content": f"{HOSTILE}\n"}
    assert result_body("Write", run(WriteFileTool(), hostile, ctx), 4, hostile).lines == [
        "   1 x\\x1b[2J\\x1b]8;;http://evil.example/\\x07y\\x9b31m\\u202eexe.txt\u200d\\U000e0041"]
    missing = run(ReadFileTool(), {"file_path": "nope.py"}, ctx)
    summary = result_summary("Read", {"file_path": "nope.py"}, missing, ctx.cwd)
    assert summary.startswith("Error: ") and "nope.py does not exist" in summary, summary


def test_summaries_of_searches(ctx: ToolContext) -> None:
    for name in ("a.py", "b.py", "c.txt"):
        (ctx.cwd / name).write_text("alpha\nbeta alpha\n")
    files = run(GrepTool(), {"pattern": "alpha"}, ctx)
    assert result_summary("Grep", {"pattern": "alpha"}, files, ctx.cwd) == "Found 3 files"
    content_args = {"pattern": "alpha", "output_mode": "content", "glob": "*.py"}
    lines = run(GrepTool(), content_args, ctx)
    assert result_summary("Grep", content_args, lines, ctx.cwd) == "Found 4 lines"
    count_args = {"pattern": "alpha", "output_mode": "count"}
    counts = run(GrepTool(), count_args, ctx)
    assert result_summary("Grep", count_args, counts, ctx.cwd) == "Found 6 matches in 3 files"
    none = run(GrepTool(), {"pattern": "zeta"}, ctx)
    assert result_summary("Grep", {"pattern": "zeta"}, none, ctx.cwd) == "No matches"
    glob = run(GlobTool(), {"pattern": "*.py"}, ctx)
    assert result_summary("Glob", {"pattern": "*.py"}, glob, ctx.cwd) == "Found 2 files"
    one = run(GlobTool(), {"pattern": "*.txt"}, ctx)
    assert result_summary("Glob", {"pattern": "*.txt"}, one, ctx.cwd) == "Found 1 file"
    nothing = run(GlobTool(), {"pattern": "*.rs"}, ctx)
    assert result_summary("Glob", {"pattern": "*.rs"}, nothing, ctx.cwd) == "Found 0 files"


def test_summary_of_a_command_is_its_output_folded_and_its_exit_code(ctx: ToolContext) -> None:
    seq = run(BashTool(), {"command": "seq 1 12"}, ctx)
    assert result_summary("Bash", {}, seq, ctx.cwd) == "1"
    body = result_body("Bash", seq, 4)
    assert body.lines == ["2", "3", "4", "5"] and body.hidden == 7
    assert body.full == "\n".join(str(n) for n in range(1, 13))
    failed = run(BashTool(), {"command": "echo bad; echo worse; exit 3"}, ctx)
    assert result_summary("Bash", {}, failed, ctx.cwd) == "Error: exit code 3"
    assert result_body("Bash", failed, 4).lines == ["bad", "worse"]
    silent = run(BashTool(), {"command": "true"}, ctx)
    assert result_summary("Bash", {}, silent, ctx.cwd) == "(no output)"
    # output a command wrote: escape sequences and hidden characters removed, as for all such prose
    hostile = run(BashTool(), {"command": "printf 'ok \\033[2J\\342\\200\\256done\\n\\tnext\\n'"}, ctx)
    assert result_summary("Bash", {}, hostile, ctx.cwd) == "ok done"
    assert result_body("Bash", hostile, 4).lines == ["    next"]


def test_summary_of_mcp_results_and_errors() -> None:
    ok = ToolResult.text("created #12\nhttps://example.org/12")
    assert result_summary("mcp__github__create_issue", {"title": "x"}, ok) == "created #12"
    assert result_body("mcp__github__create_issue", ok, 4).lines == ["https://example.org/12"]
    failed = ToolResult.error("probe \x1b]8;;http://evil/\x07failure\nsecond line")
    assert result_summary("mcp__probe__fail", {}, failed) == "Error: probe failure"
    assert result_body("mcp__probe__fail", failed, 4).lines == ["second line"]
    assert result_summary("mcp__s__t", {}, ToolResult([])) == "(No output)"
    huge = ToolResult.text("z" * 10_000)
    assert len(result_summary("mcp__s__t", {}, huge)) == 200


# ---- TerminalUI: how they are printed ----------------------------------------------------------------------------

def _ui() -> tuple[TerminalUI, io.StringIO]:
    err = io.StringIO()
    return TerminalUI(print_mode=True, out=io.StringIO(), err=err), err


def test_results_finishing_out_of_order_say_which_call_they_belong_to(tmp_path: Path) -> None:
    ui, err = _ui()
    ui.cwd = tmp_path
    ui.tool_started("Bash", {"command": "sleep 1; echo slow"})
    ui.tool_started("Grep", {"pattern": "a"})
    ui.tool_finished("Grep", ToolResult.text("a.py"))
    ui.tool_finished("Bash", ToolResult.text("slow"))
    ui.tool_started("Read", {"file_path": str(tmp_path / "a.py")})
    ui.tool_finished("Read", ToolResult.text("     1\tx"))
    assert err.getvalue().splitlines() == [
        "● Bash(sleep 1; echo slow)",
        "● Grep(a)",
        "  ⎿  Found 1 file",  # right under its own call line
        "  ⎿  Bash(sleep 1; echo slow): slow",  # another call's line came in between: labelled
        "● Read(a.py)",
        "  ⎿  Read 1 line",
    ]


def test_folded_output_and_expand_last() -> None:
    ui, err = _ui()
    ui.tool_started("Bash", {"command": "seq 1 10"})
    ui.tool_finished("Bash", ToolResult.text("\n".join(str(n) for n in range(1, 11))))
    assert err.getvalue().splitlines()[-2:] == ["     5", "     … +5 lines"]  # no key hint off a terminal
    assert ui.expand_last()
    assert err.getvalue().splitlines()[-11:] == ["● Bash(seq 1 10)", "  ⎿  1",
                                                 *(f"     {n}" for n in range(2, 11))]


def test_edit_diff_shown_under_its_summary_off_a_terminal() -> None:
    ui, err = _ui()
    ui.tool_started("Edit", {"file_path": "a.py", "old_string": "1", "new_string": "2"})
    ui.tool_finished("Edit", ToolResult.text("Edited /w/a.py: replaced 1 occurrence.\n--- /w/a.py\n+++ /w/a.py\n"
                                             "@@ -1 +1 @@\n-x = 1\n+x = 2\x1b[2J"))
    assert err.getvalue().splitlines() == ["● Edit(a.py)", "  ⎿  Updated a.py with 1 addition and 1 removal",
                                           "     @@ -1 +1 @@", "     -x = 1", "     +x = 2\\x1b[2J"]


def test_no_spinner_off_a_terminal() -> None:
    out = io.StringIO()
    ui = TerminalUI(out=out, err=io.StringIO(), rich_output=False)
    ui.tool_started("Bash", {"command": "sleep 5"})
    ui.tool_finished("Bash", ToolResult.text("(no output)"))
    assert out.getvalue() == "● Bash(sleep 5)\n  ⎿  (no output)\n"
