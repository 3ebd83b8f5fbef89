"""`/sandbox`: the OS sandbox's state (on or off, whether it can start here, the resolved settings), and turning it
on or off for this session (`/sandbox on|off`) or for every session (`/sandbox save on|off`: `sandbox.enabled` in
the user's ~/.claude/settings.json, everything else in that file kept).

The state comes from the session's `Sandbox` (mini_claude/sandbox/runtime.py); asking for it probes the platform
if no command has yet, so the answer says whether a sandbox can really start.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mini_claude.errors import ConfigError
from mini_claude.jsonfile import read_json_object, write_json_atomic
from mini_claude.paths import user_home
from mini_claude.sandbox.runtime import Sandbox
from mini_claude.settings import USER_SETTINGS_DISPLAY

__all__ = ["SANDBOX_HELP", "SANDBOX_USAGE", "sandbox_command"]

SANDBOX_HELP = "the OS sandbox for shell commands: its state; /sandbox on|off (this session), /sandbox save on|off"
SANDBOX_USAGE = "/sandbox [on|off|save on|save off]"


async def sandbox_command(parts: Any, rest: str) -> list[str]:
    """The lines `/sandbox REST` prints (raises ConfigError when the user's settings cannot be written)."""
    sandbox = parts.gate.sandbox
    if not isinstance(sandbox, Sandbox):
        return ["sandbox: not available in this session"]
    words = rest.split()
    if words[:1] == ["save"] and len(words) == 2 and words[1] in ("on", "off"):
        path = user_home(parts.env) / ".claude" / "settings.json"
        _save_enabled(path, words[1] == "on")
        sandbox.set_enabled(words[1] == "on")
        saved = [f"sandbox.enabled = {str(words[1] == 'on').lower()} saved in {USER_SETTINGS_DISPLAY}"]
        return saved + await _state(sandbox)
    if words in (["on"], ["off"]):
        sandbox.set_enabled(words[0] == "on")
        return [f"sandbox turned {words[0]} for this session"] + await _state(sandbox)
    if words:
        return [f"usage: {SANDBOX_USAGE}"]
    return await _state(sandbox)


async def _state(sandbox: Sandbox) -> list[str]:
    if sandbox.enabled:
        await sandbox.available()
    return sandbox.status_lines()


def _save_enabled(path: Path, on: bool) -> None:
    errors: list[ConfigError] = []
    data = read_json_object(path, USER_SETTINGS_DISPLAY, errors)
    if errors:
        raise errors[0]
    data = dict(data or {})
    section = data.get("sandbox")
    section = dict(section) if isinstance(section, dict) else {}
    section["enabled"] = on
    data["sandbox"] = section
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, data, new_mode=0o600)
