"""Issue 21, `/doctor`: `doctor_report` given a running session's parts (what the REPL's `/doctor` calls) reads that
session's live servers — a ready one as it is, a failed one tried again for its cause — and its trust, instead of
starting anything anew. A real session (`start_session`, the same start the REPL makes), real MCP servers as
subprocesses, real settings files in an isolated HOME."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from mini_claude.cli.doctor.report import doctor_report
from mini_claude.cli.main import build_parser
from mini_claude.cli.session_args import start_session
from mini_claude.cli.terminal.render import TerminalUI
from mini_claude.mcp.manager import ServerStatus

pytestmark = pytest.mark.timeout(60)

FAULTY = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "faulty_server.py"


def _server(mode: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(FAULTY), "--mode", mode]}


async def test_doctor_report_reads_the_running_sessions_servers(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".claude").mkdir(parents=True)
    (work / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"mcpServers": {
        "good": _server("normal"), "broken": _server("crash_at_start")}}))
    (work / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Edit"]}}))
    for name in [k for k in os.environ if k.startswith(("ANTHROPIC_", "OPENAI_", "MINI_CLAUDE_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MINI_CLAUDE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # never called: the doctor asks no model
    monkeypatch.chdir(work)
    args = build_parser().parse_args(["--trust"])
    parts = await start_session(args, TerminalUI(print_mode=True, out=io.StringIO(), err=io.StringIO()))
    try:
        await parts.manager.wait_started(timeout=30)
        assert parts.manager.states["good"].status is ServerStatus.READY
        assert parts.manager.states["broken"].status is ServerStatus.FAILED

        out = io.StringIO()
        rc = await doctor_report(parts, out=out, as_json=True, timeout_s=15)
        report = json.loads(out.getvalue())
        assert rc == 1 and report["problem_count"] == 1, report
        rows = {row["label"]: row for row in report["sections"]["servers"]}
        assert rows["good"]["ok"] and rows["good"]["text"].startswith("ready (1 tool)"), rows["good"]
        [crash] = rows["broken"]["problems"]  # the session's failure, tried again for its cause
        assert crash["code"] == "exits-at-start"
        assert crash["cause"] == "it exited with code 3 before answering initialize: fatal: cannot load config"
        folder = report["sections"]["settings"][0]
        assert folder["label"] == "folder" and folder["data"]["trusted"] is True
        project = next(r for r in report["sections"]["settings"] if r["label"] == "project")
        assert "ignored" not in project["data"] and project["data"]["contributes"] == {"allow": 1}

        text = io.StringIO()
        assert await doctor_report(parts, out=text, timeout_s=15) == 1
        assert "  ✘ broken" in text.getvalue() and "  ✔ good         ready (1 tool)" in text.getvalue()
        assert parts.manager.states["good"].status is ServerStatus.READY  # the report touched nothing running
    finally:
        await parts.manager.aclose()
