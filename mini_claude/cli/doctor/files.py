"""The doctor's file sections: the settings files (managed, user, project, local, `--settings`) — each found, valid
or its errors, what it contributes (rules, hooks, env, MCP keys, model, mode) and what an untrusted folder's files
have ignored, and the keys each sets that mini-claude does not act on (named, a misspelling as a problem) —; the
memory files (CLAUDE.md and their imports); the MCP config files (`.mcp.json` of the folder and
those above it, `~/.claude.json`, the settings files' `mcpServers`, `--mcp-config`) with their servers and errors.

Values are never shown but a mode, model or output style name: `env` is listed by variable names, rules by counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mini_claude.agent.memory import load_memory
from mini_claude.cli.doctor.rows import Row, Scene, Section
from mini_claude.errors import ConfigError
from mini_claude.mcp.config import CLAUDE_JSON_DISPLAY, LoadedConfig
from mini_claude.mcp.manager import ServerStatus
from mini_claude.permissions import RuleSet
from mini_claude.settings import (
    LOCAL_SETTINGS_DISPLAY,
    PROJECT_SETTINGS_DISPLAY,
    USER_SETTINGS_DISPLAY,
    KeyReport,
)

__all__ = ["MANAGED_SETTINGS", "mcp_config_section", "memory_section", "settings_section"]

# where Claude Code reads an administrator's settings on Linux; mini-claude does not apply them (README)
MANAGED_SETTINGS = Path("/etc/claude-code/managed-settings.json")
MAX_NAMES_SHOWN = 8


def settings_section(scene: Scene, *, managed: Path = MANAGED_SETTINGS) -> Section:
    section = Section("settings", "Settings")
    trust = scene.trust
    how = f"trusted ({trust.source})" if trust.trusted else "not trusted (mini-claude trust): its files may only restrict"
    section.add("folder", f"{trust.folder}: {how}", folder=str(trust.folder), trusted=trust.trusted)
    if managed.exists():
        section.add("managed", f"{managed}: found, not applied", path=str(managed), applied=False).note(
            "mini-claude does not read managed settings: the administrator's rules there do not bind it")
    rule_errors = RuleSet.from_settings(scene.settings).errors
    files = [("user", scene.home / ".claude" / "settings.json", USER_SETTINGS_DISPLAY, scene.settings.user),
             ("project", scene.cwd / ".claude" / "settings.json", PROJECT_SETTINGS_DISPLAY, scene.settings.project),
             ("local", scene.cwd / ".claude" / "settings.local.json", LOCAL_SETTINGS_DISPLAY, scene.settings.local)]
    if scene.settings.flag or any(e.file == scene.settings.flag_display for e in scene.settings.errors):
        files.append(("flag", Path(scene.settings.flag_display), scene.settings.flag_display, scene.settings.flag))
    for kind, path, display, raw in files:
        errors = [e for e in (*scene.settings.errors, *rule_errors) if e.file == display]
        loaded = display in scene.settings.loaded_files
        if kind != "flag" and not loaded and not errors:
            section.add(kind, f"{path}: not present", path=str(path), present=False)
            continue
        shown = display if kind == "flag" else str(path)
        contributes = _contributions(raw, display, scene) if loaded else {}
        keys = scene.settings.key_reports.get(display) if loaded else None
        summary = ", ".join(_describe(contributes)) or (
            ("nothing mini-claude acts on" if keys else "nothing") if loaded else "unreadable")
        row = section.add(kind, f"{shown}: {summary}", path=shown, present=True, valid=not errors,
                          contributes=contributes)
        for err in errors:
            row.problem("invalid-settings", str(err), _settings_fix(err, shown))
        if keys:
            _name_keys(row, keys, shown)
        if kind in ("project", "local") and not trust.trusted:
            dropped = [entry[len(display) + 1:] for entry in scene.ignored if entry.startswith(display + " ")]
            if dropped:
                row.data["ignored"] = dropped
                row.note(f"ignored while the folder is untrusted: {', '.join(dropped)} (mini-claude trust "
                         f"{trust.folder} applies them)")
    return section


def _name_keys(row: Row, keys: KeyReport, shown: str) -> None:
    """The keys of a file that do nothing here: Claude Code settings mini-claude lacks (a note: they are left for
    Claude Code), and keys that are no setting at all (a problem: most likely a misspelling)."""
    row.data["ignored_keys"] = list(keys.ignored)
    row.data["unknown_keys"] = [key for key, _ in keys.unknown]
    if keys.ignored:
        row.note(f"ignored keys: {', '.join(keys.ignored)} (Claude Code settings mini-claude does not act on; "
                 "harmless, they stay for Claude Code)")
    for key, near in keys.unknown:
        fix = f"did you mean {near}? rename it in {shown}" if near else f"remove it from {shown}, or fix its spelling"
        row.problem("unknown-setting", f"{key}: not a Claude Code or mini-claude setting", fix)


def _settings_fix(err: ConfigError, shown: str) -> str:
    if err.key is None:
        return f"fix {shown} (it must be one JSON object), or remove it"
    return f"fix {err.key} in {shown} (until then that part is ignored)"


def _contributions(raw: Mapping[str, Any], display: str, scene: Scene) -> dict[str, Any]:
    perms = raw.get("permissions") if isinstance(raw.get("permissions"), dict) else {}
    assert isinstance(perms, dict)
    found: dict[str, Any] = {}
    for name in ("allow", "ask", "deny"):
        items = perms.get(name)
        if isinstance(items, list) and items:
            found[name] = sum(isinstance(item, str) for item in items)
    if isinstance(perms.get("additionalDirectories"), list) and perms["additionalDirectories"]:
        found["additionalDirectories"] = len(perms["additionalDirectories"])
    if isinstance(perms.get("defaultMode"), str):
        found["defaultMode"] = perms["defaultMode"]
    hooks = [h for h in scene.settings.hooks if h.file == display]
    if hooks:
        found["hooks"] = len(hooks)
    if isinstance(raw.get("env"), dict) and raw["env"]:
        found["env"] = sorted(str(name) for name in raw["env"])
    if isinstance(raw.get("mcpServers"), dict) and raw["mcpServers"]:
        found["mcpServers"] = len(raw["mcpServers"])
    for key in ("enabledMcpjsonServers", "disabledMcpjsonServers"):
        if isinstance(raw.get(key), list) and raw[key]:
            found[key] = len(raw[key])
    if raw.get("enableAllProjectMcpServers") is True:
        found["enableAllProjectMcpServers"] = True
    if isinstance(raw.get("model"), str):
        found["model"] = raw["model"]
    if raw.get("apiKeyHelper"):
        found["apiKeyHelper"] = True
    if isinstance(raw.get("outputStyle"), str):
        found["outputStyle"] = raw["outputStyle"]
    return found


def _describe(found: Mapping[str, Any]) -> list[str]:
    words: list[str] = []
    rules = [f"{found[k]} {k}" for k in ("allow", "ask", "deny") if k in found]
    if rules:
        words.append(" / ".join(rules) + " rule" + ("s" if sum(found[k] for k in ("allow", "ask", "deny")
                                                            if k in found) != 1 else ""))
    if "defaultMode" in found:
        words.append(f"defaultMode {found['defaultMode']}")
    if "additionalDirectories" in found:
        words.append(f"{found['additionalDirectories']} additional director"
                     f"{'ies' if found['additionalDirectories'] != 1 else 'y'}")
    if "hooks" in found:
        words.append(f"{found['hooks']} hook{'s' * (found['hooks'] != 1)}")
    if "env" in found:
        names = found["env"]
        more = f" +{len(names) - MAX_NAMES_SHOWN}" if len(names) > MAX_NAMES_SHOWN else ""
        words.append(f"env {', '.join(names[:MAX_NAMES_SHOWN])}{more}")
    if "mcpServers" in found:
        words.append(f"{found['mcpServers']} MCP server{'s' * (found['mcpServers'] != 1)}")
    for key in ("enableAllProjectMcpServers", "enabledMcpjsonServers", "disabledMcpjsonServers"):
        if key in found:
            words.append(key if found[key] is True else f"{key} ({found[key]})")
    if "model" in found:
        words.append(f"model {found['model']}")
    if "apiKeyHelper" in found:
        words.append("apiKeyHelper")
    if "outputStyle" in found:
        words.append(f"outputStyle {found['outputStyle']}")
    return words


def memory_section(scene: Scene) -> Section:
    section = Section("memory", "Memory files")
    memory = load_memory(scene.cwd, scene.home)
    for item in memory.files:
        by = f", imported by {item.imported_by}" if item.imported_by is not None else ""
        section.add(item.kind, f"{item.path} ({len(item.text):,} characters{by})", path=str(item.path),
                    characters=len(item.text))
    if memory.warnings:
        row = section.add("problems", f"{len(memory.warnings)} file(s) or import(s) not loaded")
        for warning in memory.warnings:
            row.problem("memory-not-loaded", warning, "fix or remove that file or @import (the rest is loaded)")
    return section


def mcp_config_section(scene: Scene, config: LoadedConfig, held: Mapping[str, tuple[ServerStatus, str]]) -> Section:
    """Each MCP config file that was read or failed: the servers it gives (those not overridden by a later file),
    whether project servers wait for approval, and each error or warning with the file and key."""
    section = Section("mcp-config", "MCP config files")
    rows: dict[str, Row] = {}

    def row_for(display: str) -> Row:
        if display not in rows:
            rows[display] = section.add(display, "", file=display, servers=[])
        return rows[display]

    for path in _mcp_json_files(scene.cwd):
        row_for(_mcp_json_display(path, scene.cwd)).data["path"] = str(path)
    if (scene.home / ".claude.json").is_file():
        row_for(CLAUDE_JSON_DISPLAY)
    for cfg in config.servers.values():
        row_for(cfg.source).data["servers"].append(cfg.name)
    for err in config.errors:
        row_for(err.file or "MCP config").problem("invalid-mcp-config", str(err), _mcp_fix(err))
    for warning in config.warnings:
        display = warning.split(": ", 1)[0]
        row_for(display if display in rows else "MCP config").problem(
            "mcp-config-warning", warning, "set the variable in your environment (or \"env\" in "
                                           "~/.claude/settings.json), or remove the reference")
    for row in rows.values():
        names: list[str] = row.data["servers"]
        waiting = [n for n in names if n in held and held[n][0] is ServerStatus.NEEDS_APPROVAL]
        off = [n for n in names if (n in held and held[n][0] is ServerStatus.DISABLED) or config.servers[n].disabled]
        text = f"{len(names)} server{'s' * (len(names) != 1)}" + (f": {', '.join(names)}" if names else "")
        if waiting:
            text += f" · {len(waiting)} awaiting approval"
        if off:
            text += f" · {len(off)} switched off"
        row.text = text
        row.data.update(awaiting_approval=waiting, switched_off=off)
    return section


def _mcp_fix(err: ConfigError) -> str:
    where = err.file or "the MCP config"
    return f"fix {err.key} in {where} (that server is skipped until then)" if err.key else \
        f"fix {where} (it must be one JSON object), or remove it"


def _mcp_json_files(cwd: Path) -> list[Path]:
    """The `.mcp.json` files a session in `cwd` reads: of `cwd` and every folder above it, furthest first."""
    start = cwd.absolute()
    return [folder / ".mcp.json" for folder in reversed([start, *start.parents]) if (folder / ".mcp.json").exists()]


def _mcp_json_display(path: Path, cwd: Path) -> str:
    depth = len(cwd.absolute().parts) - len(path.parent.parts)
    return "../" * depth + ".mcp.json"
