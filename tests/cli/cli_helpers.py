"""Helpers for the CLI tests (imported as `cli_helpers`): reading the mock model's request log, and driving the real
REPL in a terminal (tmux). Environments and running `python -m mini_claude` come from tests/helpers.py
(`clean_env`, `anthropic_env`, `run_cli`)."""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.helpers import PYTHON, ROOT, require_program, wait_until

__all__ = ["Terminal", "read_log", "start_repl", "start_terminal"]

TMUX_POLL_S = 0.1  # each poll runs tmux


def read_log(path: Path) -> list[dict[str, Any]]:
    """The mock's request log (one JSON object a line)."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


class Terminal:
    """A tmux session running the REPL: what it shows (scrollback included), and keys typed into it."""

    def __init__(self, tmux: str, session: str) -> None:
        self.tmux, self.session = tmux, session

    def screen(self) -> str:
        return subprocess.run([self.tmux, "capture-pane", "-p", "-J", "-S", "-400", "-t", self.session],
                              capture_output=True, text=True, timeout=10).stdout

    def keys(self, *keys: str) -> None:
        subprocess.run([self.tmux, "send-keys", "-t", self.session, *keys], check=True, timeout=10)

    def enter(self, line: str) -> None:
        subprocess.run([self.tmux, "send-keys", "-t", self.session, "-l", line], check=True, timeout=10)
        self.keys("Enter")

    def wait_for(self, condition: Callable[[str], bool], what: str, within_s: float = 20) -> None:
        try:
            wait_until(lambda: condition(self.screen()), what, within_s=within_s, poll_s=TMUX_POLL_S)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n--- screen ---\n{self.screen()}") from None

    def close(self) -> None:
        subprocess.run([self.tmux, "kill-session", "-t", self.session], capture_output=True, timeout=10)


def start_terminal(tmp_path: Path, work: Path, name: str, args: list[str], env: dict[str, str]) -> Terminal:
    """`python -m mini_claude ARGS` in `work` in a terminal, with `env` added to HOME and state in `tmp_path`
    (close() it after). When it exits, the terminal stays, showing `[exit CODE]` under what it printed."""
    tmux = require_program("tmux", "drives mini-claude in a real terminal")
    session = f"mc-cli-{tmp_path.parent.name}-{tmp_path.name}-{name}"
    extra = "".join(f"{k}={shlex.quote(v)} " for k, v in env.items())
    cmd = (f"cd {shlex.quote(str(work))} && {extra}HOME={tmp_path} MINI_CLAUDE_STATE_DIR={tmp_path / 'state'} "
           f"PYTHONPATH={ROOT} {PYTHON} -m mini_claude {' '.join(shlex.quote(a) for a in args)}; "
           'echo "[exit $?]"; sleep 300')
    subprocess.run([tmux, "new-session", "-d", "-s", session, "-x", "200", "-y", "50", cmd], check=True, timeout=10)
    return Terminal(tmux, session)


def start_repl(tmp_path: Path, work: Path, url: str, name: str, *args: str) -> Terminal:
    """The REPL in `work` against the mock model at `url`, HOME and state in `tmp_path` (close() it after)."""
    return start_terminal(tmp_path, work, name, list(args), {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "x"})
