"""The flags the Agent SDK passes, on the command line itself (no SDK needed): accepted with their meaning, or
refused with one line naming the option."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from tests.helpers import ROOT

pytestmark = pytest.mark.timeout(120)


class Run:
    def __init__(self, tmp_path: Path) -> None:
        self.work = tmp_path / "work"
        self.work.mkdir()
        (tmp_path / "home").mkdir()
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path / "home"),
                    "MINI_CLAUDE_STATE_DIR": str(tmp_path / "state"), "ANTHROPIC_API_KEY": "x",
                    "PYTHONPATH": str(ROOT)}
        self.server = MockModelServer(parse_scenario({"turns": [{"content": [{"type": "text", "text": f"a{i}"}]}
                                                                for i in range(4)]}, source="test"))
        self.env["ANTHROPIC_BASE_URL"] = self.server.start()

    def __call__(self, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "mini_claude", *args], cwd=self.work, env=self.env, text=True,
                              capture_output=True, input=stdin, timeout=60)


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Run]:
    r = Run(tmp_path)
    try:
        yield r
    finally:
        r.server.stop()


def result_of(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert proc.returncode == 0, proc.stderr
    line: dict[str, Any] = json.loads(proc.stdout.splitlines()[-1])
    return line


@pytest.mark.parametrize(("args", "says"), [
    (["--json-schema=not json"], "--json-schema: not JSON"),
    (["--json-schema=[1]"], "--json-schema: a JSON Schema object is needed"),
    (["--setting-sources=user,galaxy"], "--setting-sources: unknown source 'galaxy'"),
    (["--permission-prompt-tool=mcp__x__ask"], "--permission-prompt-tool mcp__x__ask"),
    (["--session-id=not-a-uuid"], "--session-id not-a-uuid: not a UUID"),
    (["--betas=x"], "unknown option --betas"),
    (["--system-prompt-file=/nonexistent/prompt.txt"], "--system-prompt-file /nonexistent/prompt.txt"),
])
def test_an_unusable_flag_is_refused_naming_it(run: Run, args: list[str], says: str) -> None:
    proc = run("-p", *args, "hi")
    assert proc.returncode == 2 and says in proc.stderr and len(proc.stderr.splitlines()) == 1
    assert run.server.requests == []


def test_stream_json_input_is_print_mode_and_takes_the_sdk_flags(run: Run, tmp_path: Path) -> None:
    prompt_file = tmp_path / "prompt.txt"
    prompt_file.write_text("SYSTEM-FROM-FILE")
    session = str(uuid.uuid4())
    line = json.dumps({"type": "user", "message": {"role": "user", "content": "hi"}, "session_id": "",
                       "parent_tool_use_id": None})
    proc = run("--output-format", "stream-json", "--verbose", f"--system-prompt-file={prompt_file}", "--tools=Read",
               "--setting-sources=", "--include-hook-events", "--max-thinking-tokens=0", f"--session-id={session}",
               "--debug-to-stderr", "--input-format", "stream-json", stdin=line + "\n")
    result = result_of(proc)
    assert (result["type"], result["result"], result["session_id"]) == ("result", "a0", session)
    body = run.server.requests[0]["body"]
    assert "SYSTEM-FROM-FILE" in json.dumps(body["system"])
    assert [t["name"] for t in body["tools"] if not t["name"].startswith("mcp__")] == ["Read"]
    assert "thinking" not in body or body["thinking"].get("type") == "disabled"


def test_fork_session_goes_on_under_a_new_id(run: Run) -> None:
    first = result_of(run("-p", "--output-format", "json", "hello"))
    forked = result_of(run("-p", "--output-format", "json", "--resume", first["session_id"], "--fork-session", "more"))
    assert forked["session_id"] != first["session_id"]
    again = result_of(run("-p", "--output-format", "json", "--resume", first["session_id"], "again"))
    assert again["session_id"] == first["session_id"]
    # the fork did not write into the first conversation: resuming it sends "hello", then "again", not "more"
    sent = json.dumps(run.server.requests[-1]["body"]["messages"])
    assert "hello" in sent and "again" in sent and "more" not in sent


def test_an_empty_system_prompt_replaces_the_built_in_one(run: Run) -> None:
    result_of(run("-p", "--output-format", "json", "--system-prompt=", "hi"))
    result_of(run("-p", "--output-format", "json", "hi"))
    empty, default = (r["body"] for r in run.server.requests)
    assert "system" not in empty and len(json.dumps(default["system"])) > 1000


def test_json_schema_gives_the_answer_in_its_shape(tmp_path: Path, mock_model) -> None:
    mock = mock_model([{"content": [{"type": "tool_use", "name": "StructuredOutput",
                                     "input": {"city": "Lyon", "n": 3}}]},
                       {"content": [{"type": "text", "text": "done"}]}])
    run = Run(tmp_path)
    try:
        run.env["ANTHROPIC_BASE_URL"] = mock.url
        schema = json.dumps({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
        proc = run("-p", "which city?", "--json-schema", schema, "--output-format", "json")
        assert proc.returncode == 0, proc.stderr
        assert result_of(proc)["structured_output"] == {"city": "Lyon", "n": 3}
        bad = run("-p", "x", "--json-schema", '{"type": "nonsense"}')
        assert bad.returncode != 0 and "--json-schema: not a valid JSON Schema" in bad.stderr
    finally:
        run.server.stop()
