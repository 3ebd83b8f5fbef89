"""The `hooks` section of a settings file (mini_claude.settings reads the files and merges them): Claude Code's
hook events, `SettingsHook` (one `type: command` hook with the file and key it came from) and the parsing of the
section's `{event: [{matcher, hooks: [...]}]}` shape, each malformed piece reported (through `bad`) by its key.
Running the hooks is mini_claude.hooks' business.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mini_claude.jsonfile import json_type

__all__ = ["HOOK_EVENTS", "SettingsHook", "merge_hooks"]


@dataclass(frozen=True)
class SettingsHook:
    """One `type: command` hook of the `hooks` section: the event, the matcher as written (empty: every call), the
    command, its timeout in seconds (None: the default), and the file (display form) and key it came from
    (`hooks.PreToolUse[0].hooks[1]`). Running it is mini_claude.hooks' business."""

    event: str
    matcher: str
    command: str
    timeout_s: float | None
    file: str
    key: str


# Claude Code's hook events (mini_claude.hooks runs them); the `hooks` keys a settings file may use.
HOOK_EVENTS = ("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SubagentStop", "SessionStart", "SessionEnd",
               "PreCompact", "Notification")


def merge_hooks(target: list[SettingsHook], section: Any, display: str, bad: Callable[[str, str], None]) -> None:
    """The `hooks` section in Claude Code's shape: `{"PreToolUse": [{"matcher": "Bash", "hooks": [{"type":
    "command", "command": "...", "timeout": 30}]}], ...}`. Every well-formed hook is kept; each malformed piece is
    one error naming its key, and only that piece is dropped. Appends each hook to `target`, in file order."""
    if not isinstance(section, dict):
        bad("hooks", f"expected an object of hook events, got {json_type(section)}")
        return
    for event, groups in section.items():
        key = f"hooks.{event}"
        if event not in HOOK_EVENTS:
            bad(key, f"unknown hook event {event!r} (expected one of: {', '.join(HOOK_EVENTS)})")
            continue
        if not isinstance(groups, list):
            bad(key, f"expected a list of {{matcher, hooks}} objects, got {json_type(groups)}")
            continue
        for index, group in enumerate(groups):
            where = f"{key}[{index}]"
            if not isinstance(group, dict):
                bad(where, f"expected an object with matcher and hooks, got {json_type(group)}")
                continue
            matcher = group.get("matcher", "")
            if matcher is None:
                matcher = ""
            if not isinstance(matcher, str):
                bad(f"{where}.matcher", f"expected a string, got {json_type(matcher)}")
                continue
            commands = group.get("hooks")
            if not isinstance(commands, list):
                bad(f"{where}.hooks", f"expected a list of hooks, got {json_type(commands)}")
                continue
            for number, item in enumerate(commands):
                hook = _parse_hook(item, f"{where}.hooks[{number}]", bad)
                if hook is not None:
                    target.append(SettingsHook(event, matcher, hook[0], hook[1], display,
                                                 f"{where}.hooks[{number}]"))


def _parse_hook(item: Any, key: str, bad: Callable[[str, str], None]) -> tuple[str, float | None] | None:
    """(command, timeout in seconds) of one `{"type": "command", "command": ..., "timeout": ...}`, else None."""
    if not isinstance(item, dict):
        bad(key, f"expected a hook object, got {json_type(item)}")
        return None
    kind = item.get("type", "command")
    if kind != "command":
        bad(f"{key}.type", f"hook type {kind!r} is not supported (only \"command\")")
        return None
    command = item.get("command")
    if not isinstance(command, str) or not command.strip():
        bad(f"{key}.command", f"expected a command string, got {json_type(command)}")
        return None
    timeout = item.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0):
        bad(f"{key}.timeout", f"expected a number of seconds above 0, got {json_type(timeout)}")
        return None
    return command, float(timeout) if timeout is not None else None
