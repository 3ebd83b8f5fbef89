"""What opens a conversation (agent/opening.py) in a real REPL session: `start_session` in a temporary project with a
CLAUDE.md, the real Anthropic client against the mock model; `/clear` and `/compact` through the REPL's own
dispatch. The memory reminder opens the first request, and opens it again, once, after each."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from mini_claude.agent.memory import Memory, MemoryFile
from mini_claude.agent.opening import GIT_LABEL, MEMORY_LABEL, Opening
from mini_claude.cli.main import build_parser
from mini_claude.cli.repl import Repl
from mini_claude.cli.session_args import start_session
from mini_claude.cli.terminal.render import TerminalUI
from mini_claude.git_snapshot import GitSnapshot
from mini_claude.models.base import SUMMARY_SYSTEM_PROMPT
from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from tests.integration.conftest import answer

pytestmark = pytest.mark.timeout(60)

RULES = "Project rule: MARKER-RULES"


def _system(body: dict[str, object]) -> str:
    system = body["system"]
    return system if isinstance(system, str) else "".join(b["text"] for b in system)  # type: ignore[union-attr,index]


def _first_texts(body: dict[str, object]) -> list[str]:
    messages = body["messages"]
    assert isinstance(messages, list)
    return [b["text"] for b in messages[0]["content"] if b.get("type") == "text"]


async def test_clear_and_compact_open_the_conversation_again_once(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    (work / "CLAUDE.md").write_text(RULES + "\n")
    turns = [answer(text) for text in ("one", "two", "three", "summary of it all", "four")]
    mock = MockModelServer(parse_scenario({"turns": turns}, source="test"))
    url = mock.start()
    for name in [n for n in os.environ if n.startswith(("ANTHROPIC_", "OPENAI_", "MINI_CLAUDE_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MINI_CLAUDE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "x")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    monkeypatch.chdir(work)
    args = build_parser().parse_args([])
    repl = Repl(args)
    repl.ui = TerminalUI(out=io.StringIO(), err=io.StringIO())
    repl.parts = await start_session(args, repl.ui)
    try:
        await repl.run_turn("first")
        await repl._slash("/clear")
        await repl._slash("/model claude-haiku-4-5-20251001")  # the environment names the model of each request
        await repl.run_turn("second")
        await repl.run_turn("third")
        await repl._slash("/compact")
        await repl.run_turn("fourth")
    finally:
        await repl.parts.manager.aclose()
        mock.stop()
    bodies = [r["body"] for r in mock.requests if r["path"] == "/v1/messages"]
    worked = [b for b in bodies if b.get("system") != SUMMARY_SYSTEM_PROMPT]
    assert len(worked) == 4 and len(bodies) == 5
    memory = repl.parts.memory.reminder()
    assert RULES in memory and _first_texts(worked[0]) == [memory, "first"]
    assert _first_texts(worked[1]) == [memory, "second"]  # after /clear: opened again
    assert f"- Model: {worked[0]['model']} (Claude " in _system(worked[0])
    assert "\n- Model: claude-haiku-4-5-20251001 (Claude Haiku)" in _system(worked[1])
    assert json.dumps(worked[2]["messages"]).count("MARKER-RULES") == 1
    after = _first_texts(worked[3])  # after /compact: before the summary, once
    assert after[0] == memory and after[1].startswith("[Summary of the earlier conversation")
    assert json.dumps(worked[3]["messages"]).count("MARKER-RULES") == 1
    assert all("MARKER-RULES" not in json.dumps(b["system"]) for b in bodies)


async def test_the_opening_by_history() -> None:
    import asyncio

    memory = Memory([MemoryFile(Path("/p/CLAUDE.md"), "tabs", "project")])
    done: asyncio.Future[GitSnapshot | None] = asyncio.get_running_loop().create_future()
    done.set_result(GitSnapshot("main", "", ["abc first"]))
    opening = Opening(memory, done)
    blocks = await opening([])
    assert [b["text"] for b in blocks] == [memory.reminder(), done.result().reminder()]  # type: ignore[union-attr]
    assert [(p.label, p.in_history) for p in opening.parts([])] == [(MEMORY_LABEL, False), (GIT_LABEL, False)]
    history = [{"role": "user", "content": [*blocks, {"type": "text", "text": "hi"}]},
               {"role": "assistant", "content": [{"type": "text", "text": "yes"}]}]
    assert await opening(history) == []  # a resumed conversation that holds it: nothing again
    assert [(p.label, p.in_history) for p in opening.parts(history)] == [(MEMORY_LABEL, True), (GIT_LABEL, True)]
    memory.files.append(MemoryFile(Path("/p/CLAUDE.local.md"), "mine", "local"))
    [update] = await opening(history)
    assert "The memory files changed during this conversation" in update["text"] and "mine" in update["text"]
    history.append({"role": "user", "content": [update, {"type": "text", "text": "next"}]})
    assert await opening(history) == []  # the update sent once
    cancelled: asyncio.Future[GitSnapshot | None] = asyncio.get_running_loop().create_future()
    cancelled.cancel()
    assert [b["text"] for b in await Opening(Memory(), cancelled)([])] == []
