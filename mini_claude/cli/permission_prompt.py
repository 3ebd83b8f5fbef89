"""The REPL's permission question: what the call will do in words, a diff preview for edits and writes, and the
choices — yes / yes and don't ask again for *this rule* (saved to `.claude/settings.local.json`, and shown) /
no, optionally telling the model what to do instead. Everything shown goes through `clean`."""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

from mini_claude.cli.render import clean
from mini_claude.errors import ConfigError
from mini_claude.jsonfile import read_json_object, write_json_atomic

__all__ = ["LOCAL_SETTINGS", "describe_call", "save_allow_rules"]

LOCAL_SETTINGS = Path(".claude") / "settings.local.json"
MAX_DIFF_LINES = 40
_ARG_CHARS = 300


def describe_call(name: str, args: dict[str, Any], cwd: Path) -> list[str]:
    """Lines saying what the call will do (the first one a sentence, then any preview)."""
    path = args.get("path") if isinstance(args.get("path"), str) else None
    if name == "bash":
        return [f"Run a shell command: {clean(str(args.get('command', '')))[:_ARG_CHARS * 2]}"]
    if name == "edit_file" and path is not None:
        old, new = str(args.get("old_string", "")), str(args.get("new_string", ""))
        before = _read(cwd / path)
        if old and old in before:  # the file as it would become, with its context
            after = before.replace(old, new) if args.get("replace_all") is True else before.replace(old, new, 1)
            return [f"Edit {clean(path)}", *_diff(before, after, path)]
        return [f"Edit {clean(path)}", *_diff(old, new, path)]
    if name == "write_file" and path is not None:
        target = cwd / path
        before = _read(target)
        content = str(args.get("content", ""))
        verb = "Overwrite" if target.exists() else "Create"
        return [f"{verb} {clean(path)} ({len(content.splitlines())} lines)", *_diff(before, content, path)]
    if name.startswith("mcp__"):
        server = name.split("__")[1] if name.count("__") >= 2 else "?"
        text = json.dumps(args, ensure_ascii=False)[:_ARG_CHARS]
        return [f"Call {clean(name)} (MCP server {clean(server)}) with {clean(text)}"]
    text = json.dumps(args, ensure_ascii=False)[:_ARG_CHARS]
    return [f"Use {clean(name)} with {clean(text)}"]


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
    except OSError:
        return ""


def _diff(before: str, after: str, path: str) -> list[str]:
    lines = list(difflib.unified_diff(before.splitlines(), after.splitlines(), f"a/{path}", f"b/{path}",
                                      lineterm="", n=2))
    shown = [clean(line) for line in lines[:MAX_DIFF_LINES]]
    if len(lines) > MAX_DIFF_LINES:
        shown.append(f"… ({len(lines) - MAX_DIFF_LINES} more diff lines)")
    return [f"  {line}" for line in shown]


def save_allow_rules(cwd: Path, rules: list[str]) -> Path:
    """Add `rules` to `permissions.allow` in the project's `.claude/settings.local.json` (created when missing;
    everything else in it kept). Raises ConfigError when the file cannot be read as JSON (it is not overwritten)."""
    path = cwd / LOCAL_SETTINGS
    errors: list[ConfigError] = []
    data = read_json_object(path, str(LOCAL_SETTINGS), errors)
    if errors:
        raise errors[0]
    data = data if data is not None else {}
    permissions = data.setdefault("permissions", {})
    if not isinstance(permissions, dict):
        raise ConfigError("permissions must be an object; fix the file by hand", file=str(LOCAL_SETTINGS))
    allow = permissions.setdefault("allow", [])
    if not isinstance(allow, list):
        raise ConfigError("permissions.allow must be a list; fix the file by hand", file=str(LOCAL_SETTINGS))
    allow.extend(rule for rule in rules if rule not in allow)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, data, new_mode=0o600)
    return path
