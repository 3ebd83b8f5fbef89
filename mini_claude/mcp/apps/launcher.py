"""Whether and how the browser opens on a session's views page (setting `apps.openBrowser`: "auto" | "never").

`open_in_browser(url, mode)` returns True when a browser was asked to open `url`, False otherwise; it never raises
and never waits more than `OPEN_TIMEOUT_S`. The caller prints the URL either way, so a False is never a dead end.

- "never" (or any other mode than "auto") → False.
- "auto": when `$BROWSER` is set, it is honoured (through `webbrowser`, which reads it). Without it, a machine with
  no display (Linux and other X11 systems with neither `$DISPLAY` nor `$WAYLAND_DISPLAY`) or a session over SSH
  (`$SSH_CONNECTION` / `$SSH_TTY`) gets False, since a browser would open, if anywhere, on a screen the user cannot
  see. Otherwise `webbrowser.open(url)` runs in a daemon thread, since some launchers wait for the browser to exit:
  one still running after `OPEN_TIMEOUT_S` counts as opened (True); one that failed or raised gives False.
"""

from __future__ import annotations

import os
import sys
import threading
import webbrowser
from collections.abc import Mapping

__all__ = ["OPEN_TIMEOUT_S", "browser_expected", "open_in_browser"]

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


def open_in_browser(url: str, mode: str) -> bool:
    """Ask the user's browser to open `url` when `mode` is "auto" and a browser is expected; never raises."""
    if mode != "auto" or not browser_expected():
        return False
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
