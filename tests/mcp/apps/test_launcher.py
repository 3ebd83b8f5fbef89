"""When the browser opens on the views page: "never" never, a headless or SSH session only through $BROWSER, and
`webbrowser` in a thread that cannot hang or raise into the caller. One end-to-end run goes through a real $BROWSER
program in a child Python (webbrowser reads $BROWSER once per process)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import webbrowser
from pathlib import Path

import pytest

from mini_claude.mcp.apps import launcher
from mini_claude.mcp.apps.launcher import browser_expected, open_in_browser
from tests.helpers import ROOT

URL = "http://127.0.0.1:1/token/"


@pytest.mark.parametrize(("env", "platform", "expected"), [
    ({}, "linux", False),
    ({"DISPLAY": ":0"}, "linux", True),
    ({"WAYLAND_DISPLAY": "wayland-0"}, "linux", True),
    ({"DISPLAY": ":0", "SSH_CONNECTION": "1.2.3.4 5 6.7.8.9 22"}, "linux", False),
    ({"DISPLAY": ":0", "SSH_TTY": "/dev/pts/1"}, "linux", False),
    ({"SSH_TTY": "/dev/pts/1", "BROWSER": "lynx"}, "linux", True),
    ({"BROWSER": "firefox"}, "linux", True),
    ({}, "darwin", True),
    ({"SSH_CONNECTION": "x"}, "darwin", False),
    ({}, "win32", True),
])
def test_whether_a_browser_is_expected(env: dict[str, str], platform: str, expected: bool) -> None:
    assert browser_expected(env, platform) is expected


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []

    def fake_open(url: str, new: int = 0, autoraise: bool = True) -> bool:
        seen.append(url)
        return True

    monkeypatch.setattr(webbrowser, "open", fake_open)
    for name in ("BROWSER", "SSH_CONNECTION", "SSH_TTY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DISPLAY", ":0")
    return seen


def test_never_and_unknown_modes_never_open(calls: list[str]) -> None:
    assert open_in_browser(URL, "never") is False
    assert open_in_browser(URL, "always") is False
    assert calls == []


def test_auto_opens_where_a_browser_is_expected(calls: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    assert open_in_browser(URL, "auto") is True
    assert calls == [URL]
    monkeypatch.setenv("SSH_CONNECTION", "1.2.3.4 5 6.7.8.9 22")
    assert open_in_browser(URL, "auto") is False
    assert calls == [URL]


def test_a_failing_or_hanging_launcher_never_reaches_the_caller(calls: list[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(url: str, new: int = 0, autoraise: bool = True) -> bool:
        raise webbrowser.Error("no runnable browser")

    monkeypatch.setattr(webbrowser, "open", broken)
    assert open_in_browser(URL, "auto") is False
    release = threading.Event()

    def hanging(url: str, new: int = 0, autoraise: bool = True) -> bool:
        release.wait(10)
        return True

    monkeypatch.setattr(webbrowser, "open", hanging)
    monkeypatch.setattr(launcher, "OPEN_TIMEOUT_S", 0.1)
    try:
        assert open_in_browser(URL, "auto") is True  # still launching: it was asked
    finally:
        release.set()


def fake_browser(tmp_path: Path, argv_file: Path) -> tuple[Path, dict[str, str]]:
    """A browser program that writes its argument to `argv_file`, and an environment with no display and no SSH
    (so only $BROWSER decides)."""
    program = tmp_path / "fake-browser"
    program.write_text(f'#!/bin/sh\nprintf "%s" "$1" > {argv_file}\n')
    program.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "SSH_CONNECTION",
                                                            "SSH_TTY")}
    return program, env


def test_a_real_browser_program_from_the_browser_variable(tmp_path: Path) -> None:
    opened = tmp_path / "opened"
    program, env = fake_browser(tmp_path, opened)
    code = f"from mini_claude.mcp.apps.launcher import open_in_browser; print(open_in_browser({URL!r}, 'auto'))"
    for browser, printed in ((str(program), "True"), ("", "False")):
        run = subprocess.run([sys.executable, "-c", code], env={**env, "BROWSER": browser}, cwd=ROOT,
                             capture_output=True, text=True, timeout=30)
        assert run.stdout.strip() == printed, run.stderr
    assert opened.read_text() == URL


def test_the_views_page_reaches_the_browser_without_its_token_on_the_command_line(tmp_path: Path) -> None:
    """Round 6: a browser's command line is readable by every user of the machine (`ps`); the views page's URL holds
    the session's token. With `private`, the browser gets a file only this user can read, which leads on to the URL;
    without it (a link a view asked to open) the URL itself."""
    secret_url = "http://127.0.0.1:45678/TOKEN-abcdef123456/"
    argv_file = tmp_path / "argv"
    program, env = fake_browser(tmp_path, argv_file)
    code = ("import pathlib, stat, sys; from mini_claude.mcp.apps.launcher import open_in_browser; "
            f"print(open_in_browser({secret_url!r}, 'auto', private=True)); "
            f"arg = pathlib.Path({str(argv_file)!r}).read_text(); "
            "path = pathlib.Path(arg.removeprefix('file://')); "
            "print(oct(stat.S_IMODE(path.stat().st_mode)), oct(stat.S_IMODE(path.parent.stat().st_mode))); "
            "print(path.read_text())")
    run = subprocess.run([sys.executable, "-c", code], env={**env, "BROWSER": str(program)}, cwd=ROOT,
                         capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr
    printed, modes, page = run.stdout.split("\n", 2)
    assert printed == "True"
    handed = argv_file.read_text()
    assert handed.startswith("file://") and "TOKEN" not in handed
    assert modes == "0o600 0o700"
    assert f'content="0;url={secret_url}"' in page and 'name="referrer" content="no-referrer"' in page
    assert not Path(handed.removeprefix("file://")).exists()  # removed when the process ended
