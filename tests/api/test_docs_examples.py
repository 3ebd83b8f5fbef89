"""Every Python example in docs/API.md, run as written (a subprocess, as a user would run it) against the mock model
with a scenario that makes the model do what the example expects; each must exit 0 and print what it promises."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.api.conftest import ApiWorld, call, text

DOC = Path(__file__).resolve().parents[2] / "docs" / "API.md"
BLOCK_RE = re.compile(r"```python\n(.*?)```", re.S)

# (a phrase the example holds, the model's turns, what its output must show)
EXAMPLES: list[tuple[str, list[dict[str, Any]], str]] = [
    ('query(prompt="What is 2 + 2?"', [text("4")], "Claude: 4"),
    ("Remember the number 7.", [text("noted"), text("You gave me 7.")], "You gave me 7."),
    ('create_sdk_mcp_server("calc"', [call("mcp__calc__add", a=2, b=3), text("2 + 3 = {{last_tool_result}}")],
     "2 + 3 = 5"),
    ('@tool("survey"', [call("mcp__poll__survey", topic="indentation"), text("most prefer tabs"),
                        text("The survey says: {{last_tool_result}}")], "most prefer tabs"),
    ("def no_rm(", [call("Bash", command="rm -rf /tmp/nothing-here"), text("I was stopped: {{last_tool_result}}")],
     "deleting files is not allowed here"),
    ("def can_use_tool(", [call("Bash", command="ls"), text("refused: {{last_tool_result}}")],
     "only git commands, please"),
    ("SCHEMA = ", [call("StructuredOutput", city="Paris", population=2100000), text("done")],
     "{'city': 'Paris', 'population': 2100000}"),
]


def test_every_example_is_listed_here() -> None:
    blocks = BLOCK_RE.findall(DOC.read_text(encoding="utf-8"))
    assert len(blocks) == len(EXAMPLES)
    for block, (phrase, _, _) in zip(blocks, EXAMPLES, strict=True):
        assert phrase in block


@pytest.mark.parametrize(("phrase", "turns", "shown"), EXAMPLES, ids=[e[0][:24] for e in EXAMPLES])
def test_the_example_runs(phrase: str, turns: list[dict[str, Any]], shown: str, world: ApiWorld, mock_model,
                          tmp_path: Path) -> None:
    block = next(b for b in BLOCK_RE.findall(DOC.read_text(encoding="utf-8")) if phrase in b)
    script = tmp_path / "example.py"
    script.write_text(block, encoding="utf-8")
    mock = mock_model(turns)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(DOC.parents[1]), **world.env(mock.url)}
    done = subprocess.run([sys.executable, str(script)], cwd=world.project, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert shown in done.stdout, done.stdout + done.stderr
