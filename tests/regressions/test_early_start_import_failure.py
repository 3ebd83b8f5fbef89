"""An import that fails in the agent half's import thread (session/preload.py; a broken install) while the servers are
up: `start_session` raises that very error, once, in the event loop's task; the servers already started are stopped
and reaped; the collector the thread paused runs again. (The fleet test stretches the import with a stand-in; this
one goes through the real thread.)"""

from __future__ import annotations

import gc
import io
import sys
import threading
import types
import uuid
from pathlib import Path

import pytest

import mini_claude.session.start as session_module
from mini_claude.cli.main import build_parser
from mini_claude.cli.session_args import options_from_args
from mini_claude.cli.terminal.render import TerminalUI
from mini_claude.mcp.manager import ServerState, ServerStatus
from tests.helpers import assert_pid_gone, read_pidfile, session_home
from tests.integration.conftest import PROBE

pytestmark = pytest.mark.timeout(60)


async def test_an_import_failing_in_the_thread_is_raised_once_and_the_servers_are_reaped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mods, pids = tmp_path / "mods", tmp_path / "pids"
    mods.mkdir()
    session_home(tmp_path, monkeypatch,
                 {"probe": {"command": sys.executable, "args": [str(PROBE), "--pidfile", str(pids)]}})
    # a module that fails to import once the server is up (so there is a started server to stop)
    gate_name, broken_name = f"early_start_gate_{uuid.uuid4().hex}", f"early_start_broken_{uuid.uuid4().hex}"
    up = threading.Event()
    gate = types.ModuleType(gate_name)
    gate.up = up  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, gate_name, gate)
    (mods / f"{broken_name}.py").write_text(f"import {gate_name}\nassert {gate_name}.up.wait(30)\n"
                                            "raise ImportError('a broken install')\n")
    monkeypatch.syspath_prepend(str(mods))

    def server_changed(state: ServerState) -> None:
        if state.status is ServerStatus.READY:
            up.set()

    err = io.StringIO()
    ui = TerminalUI(print_mode=True, out=io.StringIO(), err=err)
    assert gc.isenabled()
    with pytest.raises(ImportError, match=r"^a broken install$") as raised:
        await session_module.start_session(options_from_args(build_parser().parse_args([]), Path.cwd()), ui, on_server_change=server_changed,
                                           imports=(broken_name,))
    assert raised.value.__context__ is None  # raised as it was, not while handling another error
    assert broken_name not in sys.modules and gc.isenabled()
    assert "broken install" not in err.getvalue()  # said once, by whoever catches it (cli/main.py)
    assert_pid_gone(read_pidfile(pids), within_s=5)
