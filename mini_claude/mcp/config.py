"""MCP server configuration in Claude Code's files: finding the sources, reading them, and merging them.

Sources, in order; a later source replaces an earlier one's server of the same name (the whole entry):

    ~/.claude.json            "mcpServers"                          scope "user"
    ~/.claude/settings.json   "mcpServers"                          scope "user"
    .claude/settings.json     "mcpServers"                          scope "project"
    .mcp.json                 "mcpServers", or the bare name map    scope "project"
                              (of every folder from / down to cwd: the nearest file wins, as in Claude Code)
    ~/.claude.json            "projects"[<root>]["mcpServers"]      scope "local" (root: the git root, else cwd)
    each --mcp-config value   a file path or inline JSON            scope "cli"

Every problem is one `ConfigError` naming the file and the key path (`.mcp.json: mcpServers.db.command:
missing`). A broken entry is skipped with its error, a broken file costs only that file; nothing here raises
while loading. Files are read through `jsonfile`'s bounded door (regular files only, a size cap, a depth limit),
inline `--mcp-config` JSON with the same depth limit. One entry's validation and `${VAR}` expansion live in `config_entry` (`ServerConfig`,
`expand_vars`, `validate_entry` and `AGENT_CREDENTIAL_VARS` are re-exported here; a project-scope entry cannot
expand the agent's own credentials); the writers behind `mcp add/remove` and secret
masking live in `config_edit`.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mini_claude.errors import ConfigError
from mini_claude.jsonfile import MAX_CLAUDE_JSON_BYTES, json_type, parse_json_object, read_json_object
from mini_claude.mcp.config_entry import (
    AGENT_CREDENTIAL_VARS,
    SERVER_TYPES,
    ServerConfig,
    expand_vars,
    join_key,
    parse_entry,
    server_key,
    validate_entry,
)
from mini_claude.settings import PROJECT_SETTINGS_DISPLAY, USER_SETTINGS_DISPLAY

__all__ = [
    "AGENT_CREDENTIAL_VARS",
    "CLAUDE_JSON_DISPLAY",
    "CLI_DISPLAY",
    "MCP_JSON_DISPLAY",
    "PROJECT_SETTINGS_DISPLAY",
    "SCOPES",
    "SERVER_TYPES",
    "USER_SETTINGS_DISPLAY",
    "LoadedConfig",
    "ServerConfig",
    "disabled_servers",
    "expand_vars",
    "load_mcp_config",
    "project_key",
    "project_key_candidates",
    "project_root",
    "validate_entry",
]

CLAUDE_JSON_DISPLAY = "~/.claude.json"
MCP_JSON_DISPLAY = ".mcp.json"
CLI_DISPLAY = "--mcp-config"

SCOPES = ("user", "project", "local", "cli")


@dataclass
class LoadedConfig:
    """The merged servers, plus every problem found (errors skip an entry or file; warnings do not)."""

    servers: dict[str, ServerConfig] = field(default_factory=dict)
    errors: list[ConfigError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


# One source's valid servers, each with its unset-variable warnings.
_Found = list[tuple[ServerConfig, list[str]]]


def load_mcp_config(
    *,
    cwd: Path,
    home: Path,
    env: Mapping[str, str],
    extra: Sequence[str] = (),
    strict: bool = False,
    sources: Collection[str] | None = None,
) -> LoadedConfig:
    """Read every source (only the `extra` --mcp-config values when `strict`; of the files, only those of the
    scopes in `sources`: user, project, local, as `--setting-sources`; None: all), merged. Never raises for
    content problems: they are in `errors` / `warnings`."""
    result = LoadedConfig()
    # Warnings are kept per server so that only the entries actually used (not overridden, not disabled)
    # produce them.
    warnings_of: dict[str, list[str]] = {}

    def take(servers: _Found) -> None:
        for cfg, warnings in servers:
            result.servers[cfg.name] = cfg
            warnings_of[cfg.name] = warnings

    if not strict:
        for found in _file_sources(cwd=cwd, home=home, env=env, errors=result.errors, sources=sources):
            take(found)
    for found in _cli_sources(extra, cwd=cwd, home=home, env=env, errors=result.errors):
        take(found)

    for name, cfg in result.servers.items():
        if not cfg.disabled:
            result.warnings.extend(warnings_of.get(name, []))
    return result


def _file_sources(*, cwd: Path, home: Path, env: Mapping[str, str], errors: list[ConfigError],
                  sources: Collection[str] | None = None) -> list[_Found]:
    """The servers of the config files, one list per source, lowest precedence first."""
    found: list[_Found] = []
    wanted = frozenset(sources) if sources is not None else frozenset(("user", "project", "local"))
    claude_json = read_json_object(home / ".claude.json", CLAUDE_JSON_DISPLAY, errors,
                                   max_bytes=MAX_CLAUDE_JSON_BYTES)
    if claude_json is not None and "user" in wanted:
        found.append(_servers_in(claude_json, CLAUDE_JSON_DISPLAY, "user", env, errors, bare_ok=False))
    user_settings = home / ".claude" / "settings.json"
    data = read_json_object(user_settings, USER_SETTINGS_DISPLAY, errors) if "user" in wanted else None
    if data is not None:
        found.append(_servers_in(data, USER_SETTINGS_DISPLAY, "user", env, errors, bare_ok=False))
    project_settings = cwd / ".claude" / "settings.json"
    if "project" in wanted and not _same_file(project_settings, user_settings):  # from ~ it is the user file
        data = read_json_object(project_settings, PROJECT_SETTINGS_DISPLAY, errors)
        if data is not None:
            found.append(_servers_in(data, PROJECT_SETTINGS_DISPLAY, "project", env, errors, bare_ok=False))
    for folder, display in _mcp_json_folders(cwd) if "project" in wanted else []:  # the nearest one wins
        data = read_json_object(folder / ".mcp.json", display, errors)
        if data is not None:
            found.append(_servers_in(data, display, "project", env, errors, bare_ok=True))
    if claude_json is not None and "local" in wanted:
        found.append(_local_servers(claude_json, cwd, env, errors))
    return found


def _mcp_json_folders(cwd: Path) -> list[tuple[Path, str]]:
    """The folders whose `.mcp.json` count, furthest first, with each file's display name: `cwd` and every folder
    above it, as Claude Code reads them (a session started in a subfolder of a project has the root's servers)."""
    start = Path(cwd).absolute()
    folders = [start, *start.parents]
    return [(folder, MCP_JSON_DISPLAY if depth == 0 else "../" * depth + MCP_JSON_DISPLAY)
            for depth, folder in reversed(list(enumerate(folders)))]


def project_root(cwd: Path) -> Path:
    """The folder a project's local servers and switches are keyed by in ~/.claude.json, as Claude Code keys them:
    the nearest folder at or above `cwd` holding `.git`, else `cwd` itself."""
    start = Path(cwd).absolute()
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start


def _cli_sources(extra: Sequence[str], *, cwd: Path, home: Path, env: Mapping[str, str],
                 errors: list[ConfigError]) -> list[_Found]:
    """The servers of each --mcp-config value (inline JSON or a file path), in order."""
    found: list[_Found] = []
    inline_count = 0
    for value in extra:
        if value.lstrip().startswith("{"):
            inline_count += 1
            display = CLI_DISPLAY if inline_count == 1 else f"{CLI_DISPLAY} #{inline_count}"
            data = parse_json_object(value, display, errors)
        else:
            display = _display_cli_path(value, home)
            path = Path(value).expanduser()
            path = path if path.is_absolute() else cwd / path
            if not path.exists():
                errors.append(ConfigError("no such file", file=CLI_DISPLAY, key=value))
                continue
            data = read_json_object(path, display, errors)
        if data is not None:
            found.append(_servers_in(data, display, "cli", env, errors, bare_ok=True))
    return found


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _display_cli_path(value: str, home: Path) -> str:
    path = Path(value).expanduser()
    if path.is_absolute():
        with contextlib.suppress(ValueError):
            return "~/" + path.relative_to(home).as_posix()
    return value


def _servers_in(
    data: dict[str, Any],
    display: str,
    scope: str,
    env: Mapping[str, str],
    errors: list[ConfigError],
    *,
    bare_ok: bool,
    base: str = "",
) -> _Found:
    """The valid servers of one file's `mcpServers` (or, where `bare_ok`, of a bare name → entry map)."""
    if "mcpServers" in data:
        servers, key = data["mcpServers"], join_key(base, "mcpServers")
    elif bare_ok:
        servers, key = data, base
    else:
        return []
    if servers is None:
        return []
    if not isinstance(servers, dict):
        errors.append(ConfigError(f"must be an object mapping server names to their config, got "
                                  f"{json_type(servers)}", file=display, key=key or None))
        return []
    loaded = []
    for name, entry in servers.items():
        parsed = parse_entry(name, entry, file=display, key=server_key(key, name), env=env, scope=scope)
        errors.extend(parsed.errors)
        if parsed.config is not None:
            loaded.append((parsed.config, parsed.warnings))
    return loaded


def _local_servers(
    claude_json: dict[str, Any], cwd: Path, env: Mapping[str, str], errors: list[ConfigError]
) -> _Found:
    projects = claude_json.get("projects")
    if projects is None:
        return []
    if not isinstance(projects, dict):
        errors.append(ConfigError(f"must be an object, got {json_type(projects)}", file=CLAUDE_JSON_DISPLAY,
                                  key="projects"))
        return []
    key = project_key(projects, cwd)
    if key is None:
        return []
    project = projects[key]
    base = f"projects[{json.dumps(key, ensure_ascii=False)}]"
    if not isinstance(project, dict):
        errors.append(ConfigError(f"must be an object, got {json_type(project)}", file=CLAUDE_JSON_DISPLAY,
                                  key=base))
        return []
    return _servers_in(project, CLAUDE_JSON_DISPLAY, "local", env, errors, bare_ok=False, base=base)


def project_key(projects: dict[str, Any], cwd: Path) -> str | None:
    """The key of the project of `cwd` in ~/.claude.json "projects" (see `project_key_candidates`)."""
    for candidate in project_key_candidates(cwd):
        if candidate in projects:
            return candidate
    return None


def project_key_candidates(cwd: Path) -> list[str]:
    """The keys the project of `cwd` (`project_root`: its git root, else `cwd`) may have in ~/.claude.json
    "projects": absolute, then resolved (one when they agree)."""
    root = project_root(cwd)
    absolute = str(root)
    try:
        resolved = str(root.resolve())
    except OSError:
        resolved = absolute
    return list(dict.fromkeys([absolute, resolved]))


def disabled_servers(*, cwd: Path, home: Path) -> list[str]:
    """The servers switched off for this project (`projects[<cwd>].disabledMcpServers` in ~/.claude.json, the
    user's own file: `mini-claude mcp disable NAME`, Claude Code's `/mcp`). Unreadable means none."""
    data = read_json_object(home / ".claude.json", CLAUDE_JSON_DISPLAY, [], max_bytes=MAX_CLAUDE_JSON_BYTES)
    projects = data.get("projects") if data is not None else None
    key = project_key(projects, cwd) if isinstance(projects, dict) else None
    project = projects.get(key) if isinstance(projects, dict) and key is not None else None
    names = project.get("disabledMcpServers") if isinstance(project, dict) else None
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []
