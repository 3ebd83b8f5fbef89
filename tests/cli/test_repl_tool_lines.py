"""Tool calls people can read, in a real terminal (tmux), against the scripted mock model and real files (issue 29):
`● Read(calc.py)` with `⎿  Read 2 lines` under it, `● Edit(calc.py)` with its counts and its diff (the file really
changed), `● Bash(…)` with its first output lines folded, an MCP tool's call with its arguments and its output; a
spinner whose seconds count while a 5-second command runs; Ctrl+O at the prompt printing the folded output whole;
a sub-agent's permission question asked while its Agent call runs, not drawn over by the spinner."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from cli_helpers import Terminal, start_repl

from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from tests.helpers import ROOT

pytestmark = pytest.mark.timeout(120)

PROBE = ROOT / "tests" / "mcp" / "servers" / "probe_server.py"
SPINNER = re.compile(r"Running(?: \d+ tools)?… (\d+)s · esc or ctrl\+c to interrupt")
SLOW = "seq 1 12; sleep 5"


def _mock(turns: list[dict[str, object]]) -> MockModelServer:
    return MockModelServer(parse_scenario({"turns": turns}, source="test"))


def _call(name: str, **args: object) -> dict[str, object]:
    return {"content": [{"type": "tool_use", "name": name, "input": args}]}


def _seconds(screen: str) -> list[int]:
    return [int(n) for n in SPINNER.findall(screen)]


def _after(screen: str, marker: str) -> str:
    """What the screen shows after the last `marker`."""
    return screen.rsplit(marker, 1)[1] if marker in screen else ""


def test_tool_lines_summaries_spinner_and_ctrl_o(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    mock = _mock([_call("Read", file_path="calc.py"),
                  _call("Edit", file_path="calc.py", old_string="return a + b", new_string="return a - b"),
                  _call("Bash", command=SLOW),
                  _call("mcp__probe__echo", text="hello world"),
                  {"content": [{"type": "text", "text": "ALL DONE"}]}])
    url = mock.start()
    servers = json.dumps({"mcpServers": {"probe": {"command": sys.executable, "args": [str(PROBE)]}}})
    term = start_repl(tmp_path, work, url, "tools", "--yolo", "--strict-mcp-config", "--mcp-config", servers)
    try:
        term.wait_for(lambda s: "/help for commands" in s and "MCP probe: ready" in s, "the prompt, probe ready")
        term.enter("fix calc")
        # the spinner counts while the command runs: two different seconds seen, the later one larger
        term.wait_for(lambda s: bool(_seconds(s)), "the spinner under the running command")
        first = _seconds(term.screen())[-1]
        term.wait_for(lambda s: any(n > first for n in _seconds(s)), "the spinner's seconds moving", within_s=10)
        screen = term.screen()
        assert f"● Bash({SLOW})\n" in screen and SPINNER.search(_after(screen, f"● Bash({SLOW})")), screen
        term.wait_for(lambda s: "ALL DONE" in s, "the answer")
        screen = term.screen()
        assert not SPINNER.search(screen), "the spinner is gone once no tool runs\n" + screen
        assert "● Read(calc.py)\n  ⎿  Read 2 lines\n● Edit(calc.py)\n" in screen, screen
        assert "  ⎿  Updated calc.py with 1 addition and 1 removal\n" in screen, screen
        diff = _after(screen, "Updated calc.py with 1 addition and 1 removal").split("● Bash(", 1)[0]
        assert "-    return a + b" in diff and "+    return a - b" in diff and "def add(a, b):" in diff, screen
        assert (work / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"
        assert (f"● Bash({SLOW})\n  ⎿  1\n     2\n     3\n     4\n     5\n     … +7 lines (ctrl+o to expand)\n"
                in screen), screen
        assert '● mcp__probe__echo(text: "hello world")\n  ⎿  probe-echo:echo:hello world\n' in screen, screen
        assert "→ " not in screen and "{\"" not in screen  # no raw JSON arguments any more
        # Ctrl+O at the prompt: the folded output, whole, under its call line again
        term.keys("C-o")
        term.wait_for(lambda s: s.count(f"● Bash({SLOW})") == 2 and "     12\n" in _after(s, f"● Bash({SLOW})"),
                      "the folded output expanded")
        expanded = _after(term.screen(), f"● Bash({SLOW})")
        assert expanded.startswith("\n  ⎿  1\n" + "".join(f"     {n}\n" for n in range(2, 13))), expanded
        term.keys("C-d")
    finally:
        term.close()
        mock.stop()


def test_a_question_asked_while_a_tool_runs_is_not_drawn_over(tmp_path: Path) -> None:
    """A sub-agent asks before its command runs, while the parent's Agent call (and its spinner) is live: the
    spinner leaves the screen for the question and comes back once it is answered."""
    work = tmp_path / "work"
    work.mkdir()
    mock = _mock([_call("Agent", description="make a file", prompt="touch made", subagent_type="general-purpose"),
                  _call("Bash", command="sleep 3; touch made"),
                  {"content": [{"type": "text", "text": "child saw: {{last_tool_result}}"}]},
                  {"content": [{"type": "text", "text": "PARENT DONE"}]}])
    url = mock.start()
    term: Terminal = start_repl(tmp_path, work, url, "question")
    try:
        term.wait_for(lambda s: "/help for commands" in s, "the prompt")
        term.enter("go")
        term.wait_for(lambda s: s.rstrip().endswith("[y/a/n]"), "the permission question, on the last line")
        screen = term.screen()
        assert "● Agent(general-purpose: make a file)\n" in screen, screen
        assert not SPINNER.search(screen), "no spinner while the question is asked\n" + screen
        term.keys("y", "Enter")
        term.wait_for(lambda s: bool(SPINNER.search(_after(s, "● general-purpose › Bash(sleep 3; touch made)"))),
                      "the spinner back while the command runs")
        term.wait_for(lambda s: "PARENT DONE" in s, "the parent's answer")
        screen = term.screen()
        assert "● general-purpose › Bash(sleep 3; touch made)\n  ⎿  (no output)\n" in screen, screen
        assert "  ⎿  Agent(general-purpose: make a file): child saw: (no output)\n" in screen, screen
        assert (work / "made").exists()
        term.keys("C-d")
    finally:
        term.close()
        mock.stop()
