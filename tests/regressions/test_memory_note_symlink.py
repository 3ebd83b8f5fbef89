"""Issue 18, finding 16: `# note` in the REPL wrote through a committed `CLAUDE.md` symlink — into a file outside
the project that the memory loader itself refused to read. The writer now refuses a symlink and anything but a
regular file, saying so; the file the link points to is untouched.

The REPL case runs the real CLI in a real terminal (tmux) against the mock model; the writer is also checked on
its own with real files (a link inside the project, a dangling link, a FIFO)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from mini_claude.agent.memory import append_memory_line, load_memory
from mini_claude.errors import ConfigError
from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from tests.helpers import PYTHON, ROOT, require_program, wait_until

pytestmark = pytest.mark.timeout(90)
TMUX_POLL_S = 0.1
VICTIM_TEXT = "# my private notes\n"


def test_repl_note_does_not_write_through_a_claude_md_symlink(tmp_path: Path) -> None:
    tmux = require_program("tmux", "drives the REPL in a real terminal")
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    victim = home / "victim.md"
    victim.write_text(VICTIM_TEXT)
    (work / "CLAUDE.md").symlink_to(victim)  # what a cloned repository can commit
    mock = MockModelServer(parse_scenario({"turns": [{"content": [{"type": "text", "text": "ok"}]}] * 2}))
    url = mock.start()
    session = f"mc-note-{tmp_path.parent.name}-{tmp_path.name}"
    cmd = (f"cd {work} && PYTHONPATH={ROOT} ANTHROPIC_BASE_URL={url} ANTHROPIC_API_KEY=x HOME={home} "
           f"MINI_CLAUDE_STATE_DIR={tmp_path / 'state'} {PYTHON} -m mini_claude")
    subprocess.run([tmux, "new-session", "-d", "-s", session, "-x", "220", "-y", "40", cmd], check=True)

    def screen() -> str:
        return subprocess.run([tmux, "capture-pane", "-p", "-J", "-t", session], capture_output=True,
                              text=True).stdout

    try:
        wait_until(lambda: "/help for commands" in screen(), "the prompt", within_s=20, poll_s=TMUX_POLL_S)
        assert "leads outside the project" in screen()  # the loader refused the link
        subprocess.run([tmux, "send-keys", "-t", session, "-l", "# always use tabs"], check=True)
        subprocess.run([tmux, "send-keys", "-t", session, "Enter"], check=True)
        wait_until(lambda: "cannot add to CLAUDE.md" in screen(), "the refusal", within_s=20, poll_s=TMUX_POLL_S)
        assert "it is a symbolic link" in screen()
        assert victim.read_text() == VICTIM_TEXT
        assert (work / "CLAUDE.md").is_symlink()
    finally:
        subprocess.run([tmux, "kill-session", "-t", session], capture_output=True)
        mock.stop()


def test_writer_refuses_links_even_inside_the_project(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    target = tmp_path / "docs" / "real.md"
    target.write_text("inside\n")
    (tmp_path / "CLAUDE.md").symlink_to(target)
    with pytest.raises(ConfigError, match=r"CLAUDE\.md: not written: it is a symbolic link"):
        append_memory_line(tmp_path, "note")
    assert target.read_text() == "inside\n"
    (tmp_path / "CLAUDE.md").unlink()
    (tmp_path / "CLAUDE.md").symlink_to(tmp_path / "nowhere.md")  # dangling: O_CREAT would create the target
    with pytest.raises(ConfigError, match="it is a symbolic link"):
        append_memory_line(tmp_path, "note")
    assert not (tmp_path / "nowhere.md").exists()


def test_writer_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "CLAUDE.md")
    with pytest.raises(ConfigError, match=r"not written: not a regular file"):
        append_memory_line(tmp_path, "note")


def test_writer_appends_to_a_regular_file_the_loader_reads(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("no newline at the end")
    append_memory_line(tmp_path, "  use tabs ")
    assert (tmp_path / "CLAUDE.md").read_text() == "no newline at the end\n- use tabs\n"
    memory = load_memory(tmp_path, tmp_path / "home")
    assert "- use tabs" in memory.files[0].text
