"""REPL sessions started in this process (`start_session` with a `Repl`, no terminal), for tests that drive its
slash commands and questions directly: HOME, the state folder and the model key isolated under the test's
`tmp_path` (the caller's ANTHROPIC_/OPENAI_/MINI_CLAUDE_ variables removed), each session with its own mock model
and its stderr in a buffer. `prepare(repl)` runs before the session starts (to swap the REPL's keys, say) and may
return more `start_session` arguments. `close()` ends every session: its views, its servers, its mock."""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mini_claude.cli.main import build_parser
from mini_claude.cli.repl import Repl
from mini_claude.cli.session_args import start_session
from mini_claude.cli.terminal.render import TerminalUI
from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario

__all__ = ["InProcessRepls"]


class InProcessRepls:
    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.home = tmp_path / "home"
        (self.home / ".claude").mkdir(parents=True)
        for name in [n for n in os.environ if n.startswith(("ANTHROPIC_", "OPENAI_", "MINI_CLAUDE_"))]:
            monkeypatch.delenv(name)
        monkeypatch.setenv("HOME", str(self.home))
        monkeypatch.setenv("MINI_CLAUDE_STATE_DIR", str(tmp_path / "state"))
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
        self._monkeypatch = monkeypatch
        self._opened: list[tuple[Repl, MockModelServer]] = []

    async def start(self, folder: Path, args: list[str], turns: list[dict[str, Any]], *,
                    prepare: Callable[[Repl], dict[str, Any] | None] | None = None
                    ) -> tuple[Repl, MockModelServer, io.StringIO]:
        """A session in `folder` with the command line `args`, its model answering `turns`."""
        mock = MockModelServer(parse_scenario({"turns": turns}, source="test"))
        self._monkeypatch.setenv("ANTHROPIC_BASE_URL", mock.start())
        self._monkeypatch.chdir(folder)
        parsed = build_parser().parse_args(args)
        repl = Repl(parsed)
        err = io.StringIO()
        repl.ui = TerminalUI(out=io.StringIO(), err=err)
        more = prepare(repl) if prepare is not None else None
        self._opened.append((repl, mock))
        repl.parts = await start_session(parsed, repl.ui, **(more or {}))
        return repl, mock, err

    async def close(self) -> None:
        for repl, mock in self._opened:
            if repl.parts is not None:
                if repl.parts.apps is not None:
                    await repl.parts.apps.aclose()
                await repl.parts.manager.aclose()
            mock.stop()
