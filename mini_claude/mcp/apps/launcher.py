"""Whether and how the browser opens on a session's views page (setting `apps.openBrowser`: "auto" | "never").

`open_in_browser(url, mode)` returns True when a browser was asked to open `url`, False otherwise; it never raises
and never waits more than `OPEN_TIMEOUT_S`. The caller prints the URL either way, so a False is never a dead end.

- "never" (or any other mode than "auto") → False.
- "auto": when `$BROWSER` is set, it is honoured (through `webbrowser`, which reads it). Without it, a machine with
  no display (Linux and other X11 systems with neither `$DISPLAY` nor `$WAYLAND_DISPLAY`) or a session over SSH
  (`$SSH_CONNECTION` / `$SSH_TTY`) gets False, since a browser would open, if anywhere, on a screen the user cannot
  see. Otherwise `webbrowser.open(url)` runs in a daemon thread, since some launchers wait for the browser to exit:
  one still running after `OPEN_TIMEOUT_S` counts as opened (True); one that failed or raised gives False.

`private=True` (the views page, whose URL holds the session's token): the browser is not handed the URL on its
command line, which every user of the machine can read (`ps`), but a file only this user can read (mode 0600 in a
0700 folder) whose one job is to send the browser on to the URL (`hand_off_file`). The files go when the process
ends.
"""

from __future__ import annotations

import atexit
import html
import os
import shutil
import sys
import tempfile
import threading
import webbrowser
from collections.abc import Mapping
from pathlib import Path

__all__ = ["OPEN_TIMEOUT_S", "browser_expected", "hand_off_file", "open_in_browser"]

OPEN_TIMEOUT_S = 5.0


def browser_expected(env: Mapping[str, str] | None = None, platform: str | None = None) -> bool:
    """Whether opening a browser here would put it where the user sits (see the module docstring)."""
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    if env.get("BROWSER"):
        return True
    if env.get("SSH_CONNECTION") or env.get("SSH_TTY"):
        return False
    if platform.startswith(("win", "cygwin", "darwin")):
        return True
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


_hand_off_dir: Path | None = None


def hand_off_file(url: str) -> Path:
    """A page only this user can read that sends the browser on to `url` at once (no referrer). Raises OSError."""
    global _hand_off_dir
    if _hand_off_dir is None or not _hand_off_dir.is_dir():
        _hand_off_dir = Path(tempfile.mkdtemp(prefix="mini-claude-views-"))  # mode 0700
        atexit.register(shutil.rmtree, _hand_off_dir, True)
    fd, name = tempfile.mkstemp(prefix="open-", suffix=".html", dir=_hand_off_dir)  # mode 0600
    target = html.escape(url, quote=True)
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        file.write(f'<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer">'
                   f'<meta http-equiv="refresh" content="0;url={target}"><title>mini-claude views</title>'
                   f'<p><a href="{target}" rel="noreferrer">Open the mini-claude views page</a></p>\n')
    return Path(name)


def open_in_browser(url: str, mode: str, *, private: bool = False) -> bool:
    """Ask the user's browser to open `url` when `mode` is "auto" and a browser is expected; never raises.
    `private`: hand the browser a file that leads to `url` instead of `url` itself (see the module docstring)."""
    if mode != "auto" or not browser_expected():
        return False
    if private:
        try:
            url = hand_off_file(url).as_uri()
        except OSError:
            return False  # the caller prints the URL: the user opens it
    outcome: list[bool] = []

    def run() -> None:
        try:
            outcome.append(bool(webbrowser.open(url, new=2)))
        except Exception:  # webbrowser can fail in many ways (a broken $BROWSER, no launcher); none is fatal
            outcome.append(False)

    thread = threading.Thread(target=run, name="mini-claude-open-browser", daemon=True)
    try:
        thread.start()
    except RuntimeError:
        return False
    thread.join(OPEN_TIMEOUT_S)
    if thread.is_alive():
        return True
    return bool(outcome and outcome[0])
