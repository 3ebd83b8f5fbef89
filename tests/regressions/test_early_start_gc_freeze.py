"""The agent half's import thread (session/preload.py) froze every object the process held when it finished, the event
loop's included: the servers had been starting meanwhile, so each one's first client, transport and tool list went
into the collector's permanent generation, and after a restart (`/mcp` restart, a crash healed) the old client was
never collected. The import now freezes nothing; the collector is only paused while it runs."""

from __future__ import annotations

import gc
import io
import sys
import threading
import types
import uuid
import weakref
from pathlib import Path

import pytest

import mini_claude.session.start as session_module
from mini_claude.cli.main import build_parser
from mini_claude.cli.session_args import options_from_args
from mini_claude.cli.terminal.render import TerminalUI
from mini_claude.mcp.manager import ServerState, ServerStatus
from tests.helpers import eventually, session_home
from tests.integration.conftest import PROBE

pytestmark = pytest.mark.timeout(60)


async def test_a_server_up_while_the_agent_half_is_imported_is_collected_after_a_restart(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mods = tmp_path / "mods"
    mods.mkdir()
    session_home(tmp_path, monkeypatch, {"probe": {"command": sys.executable, "args": [str(PROBE)]}})
    # one more module for the import thread, imported only once the server is up: the thread's end (where it
    # froze) comes after the server's client exists, as it does whenever a server starts faster than the import
    gate_name, slow_name = f"early_start_gate_{uuid.uuid4().hex}", f"early_start_slow_{uuid.uuid4().hex}"
    up = threading.Event()
    gate = types.ModuleType(gate_name)
    gate.up = up  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, gate_name, gate)
    (mods / f"{slow_name}.py").write_text(f"import {gate_name}\nassert {gate_name}.up.wait(30)\n")
    monkeypatch.syspath_prepend(str(mods))

    def server_changed(state: ServerState) -> None:
        if state.status is ServerStatus.READY:
            up.set()

    assert gc.isenabled()
    frozen_before = gc.get_freeze_count()
    ui = TerminalUI(print_mode=True, out=io.StringIO(), err=io.StringIO())
    parts = await session_module.start_session(options_from_args(build_parser().parse_args([]), Path.cwd()), ui, on_server_change=server_changed,
                                               imports=(slow_name,))
    try:
        assert slow_name in sys.modules and gc.isenabled()
        manager = parts.manager
        first = manager.states["probe"].client
        assert first is not None
        old = weakref.ref(first)
        del first
        assert (await manager.restart("probe")).status is ServerStatus.READY
        await eventually(lambda: gc.collect() >= 0 and old() is None, "the restarted server's old client collected")
        assert gc.get_freeze_count() == frozen_before
    finally:
        await parts.manager.aclose()
