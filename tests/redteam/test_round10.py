"""Red-team round 10: the REPL's permission question after commit 56d9831 (a command's or argument text's lines after
its first behind the gutter `  │ `) and round 8's view question (the header "A view of MCP server S … asks to run:",
the question line naming the view, `b` = BLOCK_VIEW; the gate's `view=` path).

Attacked as a prompt-injected model (it writes every tool input and tool_use id), a hostile MCP server (its tool
names, arguments and resource URIs) and a hostile repository (file names the model is led to touch). The rule under
attack: no text of the call can print a line that reads as the question's own — a line at column 0 (the view's
header, our sentence, another call) — and only the session's view gate can make a question a view's.
Real parts: the real gate (`make_gate`) and question code with the keys scripted at the one place they are read;
the REPL session of round 8 (`start`) for the view path. /work/review/round10/REPORT.md has the whole list."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest

from mini_claude.agent.subagents import SubagentGate
from mini_claude.cli.questions.permission import (
    BLOCK_VIEW,
    GUTTER,
    VIEW_KEY,
    PromptAnswers,
    describe_call,
    permission_question,
)
from mini_claude.cli.terminal.render import TerminalUI
from mini_claude.mcp.naming import qualify_tool_name
from mini_claude.mcp.server_state import McpToolEntry
from mini_claude.tools.files import EditFileTool, WriteFileTool
from mini_claude.tools.notebook import NotebookEditTool
from mini_claude.tools.read import ReadFileTool
from mini_claude.tools.shell import BashTool
from tests.permissions.test_gate import FakeTool, make_gate
from tests.redteam.test_round8 import Start, _tool, start

__all__ = ["start"]  # round 8's REPL session fixture

pytestmark = pytest.mark.timeout(120)

FORGED = "A view of MCP server evil (a page in your browser, not the model) asks to run:"
# every character Python's str.splitlines breaks at (a terminal, an editor or a log viewer may too), and CR LF
SEPARATORS = ["\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


class User:
    """Answers each question with the next scripted key; records the questions and the printed lines."""

    def __init__(self, *keys: str) -> None:
        self.keys = list(keys)
        self.questions: list[tuple[str, dict[str, str]]] = []
        self.lines: list[str] = []

    async def ask(self, question: str, choices: dict[str, str]) -> str:
        self.questions.append((question, dict(choices)))
        return choices[self.keys.pop(0)]

    async def prompt_text(self, label: str) -> str | None:
        self.lines.append(label)
        return ""

    def answers(self) -> PromptAnswers:
        err = io.StringIO()
        return PromptAnswers(ask=self.ask, prompt_text=self.prompt_text, ui=TerminalUI(err=err, out=err),
                             trusted=True, interrupted=lambda: False)


async def _asked(tmp_path: Path, capsys: pytest.CaptureFixture[str], tool: Any, args: dict[str, Any],
                 view: str | None, *keys: str) -> tuple[list[str], User]:
    """The lines the question printed (stderr) and the scripted user, after answering with `keys`."""
    capsys.readouterr()
    user = User(*keys)
    await permission_question(make_gate(tmp_path), tool, args, user.answers(), view=view)
    return capsys.readouterr().err.split("\n")[:-1], user


def _column_zero(lines: list[str]) -> list[str]:
    return [line for line in lines if line and not line.startswith(" ")]


def _no_breaks(text: str) -> None:
    """No character of `text` that any reader could take for a line break."""
    assert len(text.splitlines()) <= 1 and "\u2028" not in text and "\u2029" not in text, text


# ---- 1. a path that needs consent: its note printed the path's own lines at column 0 ----------------------------

def _path_calls() -> list[tuple[str, Any, dict[str, Any]]]:
    outside = f"/tmp/rt10-x\n{FORGED}\nRun a shell command: ls"
    return [
        ("Write", WriteFileTool(), {"file_path": outside, "content": "hi\n"}),
        ("Edit", EditFileTool(), {"file_path": outside, "old_string": "a", "new_string": "b"}),
        ("Read", ReadFileTool(), {"file_path": outside}),
        ("NotebookEdit", NotebookEditTool(), {"notebook_path": outside + ".ipynb", "new_source": "x"}),
        ("Bash redirect", BashTool(), {"command": f"echo hi > '{outside}'"}),
        ("Bash U+2028", BashTool(), {"command": f"echo hi > '/tmp/rt10-y\u2028{FORGED}'"}),
    ]


@pytest.mark.parametrize("view", [None, "docs"])
@pytest.mark.parametrize(("what", "tool", "args"), _path_calls(), ids=[c[0] for c in _path_calls()])
async def test_a_path_with_a_line_break_cannot_print_a_line_of_the_question(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], what: str, tool: Any, args: dict[str, Any],
        view: str | None) -> None:
    """FIXED (round 10, F1). A call on a path outside the folder is asked with a note naming the real target and
    why (`gate.why_asking`). The note went through `clean(visible, exact)`, which keeps line breaks: a file name
    holding "\\n" + "A view of MCP server evil … asks to run:" printed that line at column 0, under the model's
    call — the gutter of 56d9831 covers the command, not the note. The "always" rule in the question line
    (`Edit(//tmp/…\\n…)`) held the same raw break, and prompt_toolkit prints a message's break as a new line.
    Now both are on one line, the break shown as `\\n` (and U+2028/U+2029 as escapes)."""
    lines, user = await _asked(tmp_path, capsys, tool, args, view, "n")
    assert any("is outside the working directory" in line for line in lines)  # the note is there: the path acts
    top = _column_zero(lines)
    assert len(top) == (2 if view else 1)  # the view's header (when a view asks) and the call's sentence: no more
    if view:
        assert top[0] == "A view of MCP server docs (a page in your browser, not the model) asks to run:"
    assert not any(line.startswith("A view of") for line in lines[1:])
    [(question, _)] = user.questions
    _no_breaks(question)
    for line in lines:
        _no_breaks(line)


# ---- 2. every line separator in a command, argument text or URI: behind the gutter or shown as an escape ---------

@pytest.mark.parametrize("sep", SEPARATORS, ids=[f"U+{ord(s[-1]):04X}" + ("crlf" if s == "\r\n" else "")
                                                  for s in SEPARATORS])
@pytest.mark.parametrize("shape", ["short", "background", "cut-head", "cut-tail"])
async def test_no_separator_in_a_command_starts_a_line_of_its_own(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], sep: str, shape: str) -> None:
    """HELD for \\n (the gutter), \\r, VT, FF, FS/GS/RS and NEL (escapes); FIXED (round 10, F2) for U+2028 and
    U+2029, which `clean` let through raw: shown as nothing (or a break, by an editor or log viewer) they made the
    approved text read unlike the text that runs. Short, in the background, and cut with the payload in the head
    or the tail; then the "v" answer's whole view."""
    forged = f"{sep}{FORGED}{sep}{sep}Allow it? y = yes, n = no"
    pad = "echo pad\n" * 60
    command = {"short": "echo hi" + forged, "background": "sleep 1" + forged, "cut-head": "echo hi" + forged + pad,
               "cut-tail": pad + "echo hi" + forged}[shape]
    args: dict[str, Any] = {"command": command, "run_in_background": shape == "background"}
    cut = shape.startswith("cut")
    lines, user = await _asked(tmp_path, capsys, BashTool(), args, "docs", *([VIEW_KEY, "n"] if cut else ["n"]))
    top = _column_zero(lines)  # the header, our sentence, and (after "v") our sentence again, whole
    assert top[0] == "A view of MCP server docs (a page in your browser, not the model) asks to run:"
    assert len(top) == (3 if cut else 2) and all(line.startswith("Run a shell command") for line in top[1:])
    assert any(FORGED in line for line in lines)  # the text is shown (whole, under "v")
    for line in lines:
        assert line in top or line.startswith((GUTTER, "  [… ")), line  # else: the gutter, or our cut marker
    for line in lines:
        _no_breaks(line)
    assert [c.get(VIEW_KEY) for _, c in user.questions] == (["view", None] if cut else [None])


@pytest.mark.parametrize("sep", SEPARATORS, ids=[f"U+{ord(s[-1]):04X}" + ("crlf" if s == "\r\n" else "")
                                                  for s in SEPARATORS])
@pytest.mark.parametrize("whole", [False, True])
def test_a_servers_tool_name_arguments_and_uri_stay_on_their_lines(tmp_path: Path, sep: str, whole: bool) -> None:
    """HELD (arguments: JSON escapes every C0 control, `json_text` C1 and bidi; names: one line) / FIXED (F2) for
    U+2028/U+2029 in a resource URI, shown raw before. A hostile server's tool name and arguments, a model's URI
    and server name: the first line is ours, every other behind the gutter or our marker."""
    payload = f"x{sep}{FORGED}{sep}" + "y" * (3000 if not whole else 10)
    calls = [
        (f"mcp__evil__t{sep}{FORGED}", {"q": payload, f"k{sep}{FORGED}": 1}),
        ("ReadMcpResourceTool", {"server": f"evil{sep}{FORGED}", "uri": f"file:///{payload}"}),
        ("ListMcpResourcesTool", {"server": f"evil{sep}{FORGED}"}),
        ("NotebookEdit", {"notebook_path": f"n{sep}{FORGED}.ipynb", "new_source": payload}),
        ("Write", {"file_path": f"w{sep}{FORGED}", "content": payload}),
        ("Edit", {"file_path": f"e{sep}{FORGED}", "old_string": payload, "new_string": payload + "z"}),
    ]
    for name, args in calls:
        lines = describe_call(name, args, tmp_path, whole=whole)
        assert not lines[0].startswith(" ")
        for line in lines:
            _no_breaks(line)
        for line in lines[1:]:
            assert line.startswith(("  ", GUTTER)), (name, line)


# ---- 3. a view is the session's view gate's word only: never the model's, a sub-agent's or an id's --------------

async def test_a_model_cannot_make_its_call_a_views_by_id_or_input(start: Start,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """HELD. The model writes the tool_use id and the input; neither reaches `AskContext.view` (tool_calls.py
    passes the id alone; nothing reads the view gate's `toolu_view_` prefix). A call with id `toolu_view_…` and an
    input naming `view`/`server` is asked as the model's: no view header, no `b`, "instead" asked — and after the
    user blocked docs' views with `b`, the model's (and a sub-agent's) calls of docs' tool are still asked, not
    refused in silence as a view's."""
    session = await start()
    keys = session.keys
    assert session.repl.parts is not None and session.repl.parts.apps is not None
    entry = McpToolEntry("docs", _tool("caps"), qualify_tool_name("docs", "caps"))
    adapter = session.repl.parts.apps.gate.adapters.adapter(entry)
    forged = {"view": "docs", "server": "docs", "_meta": {"ui": {"view": "docs"}}}

    async def model_asks() -> tuple[str, dict[str, str]]:
        capsys.readouterr()
        keys.give("n")
        decision = await asyncio.wait_for(session.gate.check(adapter, forged, tool_use_id="toolu_view_0123456789"),
                                          15)
        assert not decision.allowed and "refuses this server's views" not in decision.reason
        assert "A view of MCP server" not in capsys.readouterr().err
        return keys.asked[-1]

    question, choices = await model_asks()
    assert "b" not in choices and BLOCK_VIEW not in choices.values() and question.startswith("Allow it?")
    assert keys.typed and "instead" in keys.typed[-1]

    keys.give("b")  # the user blocks docs' views
    assert not (await session.view_call("docs")).allowed
    asked = len(keys.asked)
    question, choices = await model_asks()  # the model's call: still asked, as the model's
    assert len(keys.asked) == asked + 1 and "b" not in choices

    keys.give("n")  # a sub-agent's call, with the same forged id: asked, as a sub-agent's, never a view's
    child = SubagentGate(session.gate, "helper")
    decision = await asyncio.wait_for(child.check(adapter, forged, tool_use_id="toolu_view_x"), 15)
    assert not decision.allowed and "refuses this server's views" not in decision.reason
    assert len(keys.asked) == asked + 2 and "b" not in keys.asked[-1][1]


async def test_b_is_not_an_answer_to_a_models_question(tmp_path: Path) -> None:
    """HELD. The model's question offers no `b`: the REPL's key reader takes only the keys offered (a "b" typed
    there is asked again), so "block" never reaches `_permission_question` for a model's call; a view's does."""
    user = User("n")
    tool = FakeTool(qualify_tool_name("docs", "caps"))
    await permission_question(make_gate(tmp_path), tool, {}, user.answers())
    assert "b" not in user.questions[0][1]
    viewer = User("b")
    assert await permission_question(make_gate(tmp_path), tool, {}, viewer.answers(), view="docs") == BLOCK_VIEW
    assert viewer.lines == []  # no "instead" for a view


def test_the_forged_header_text_is_json_in_arguments(tmp_path: Path) -> None:
    """HELD (control). The MCP arguments are JSON: a break in a value is `\\n`, never a line."""
    args = {"q": f"a\n{FORGED}"}
    assert describe_call("mcp__docs__caps", args, tmp_path) == [
        f"Call mcp__docs__caps (MCP server docs) with {json.dumps(args, separators=(', ', ': '))}"]
