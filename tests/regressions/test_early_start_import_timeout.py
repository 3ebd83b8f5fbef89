"""An import of the agent half that never ends (a stalled file system) is one MiniClaudeError naming the modules
and the limit, not "unexpected error: TimeoutError()" (review of the early start)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

import mini_claude.session.preload as preload
from mini_claude.errors import MiniClaudeError


async def test_an_import_past_its_limit_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()

    def stalled(name: str) -> Any:
        release.wait(10)  # the thread is let go at the end of the test

    monkeypatch.setattr(preload.importlib, "import_module", stalled)
    try:
        with pytest.raises(MiniClaudeError, match=r"importing mini_claude\.never_here took over 0\.2s"):
            await preload.import_in_background("mini_claude.never_here", timeout_s=0.2)
    finally:
        release.set()
