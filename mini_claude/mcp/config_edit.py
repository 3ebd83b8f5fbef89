"""Editing the MCP config files (`mcp add` / `mcp remove`) and masking an entry's secrets for display.

The writers edit the same files Claude Code's `claude mcp add/remove` do: scope "local" is
~/.claude.json "projects"[<cwd>]["mcpServers"], "project" is .mcp.json, "user" is ~/.claude.json "mcpServers".
Every other key of the file is kept, the file is replaced atomically, and a file that cannot be read is never
overwritten (it may hold much more than MCP servers).
"""

from __future__ import annotations

import copy
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from mini_claude.errors import ConfigError
from mini_claude.jsonfile import (
    MAX_CLAUDE_JSON_BYTES,
    MAX_JSON_FILE_BYTES,
    json_type,
    read_json_object,
    write_json_atomic,
)
from mini_claude.mcp.config import (
    CLAUDE_JSON_DISPLAY,
    MCP_JSON_DISPLAY,
    PROJECT_SETTINGS_DISPLAY,
    USER_SETTINGS_DISPLAY,
    project_key,
    project_key_candidates,
)
from mini_claude.mcp.config_entry import server_key, validate_entry

__all__ = ["MASK", "WRITABLE_SCOPES", "add_server", "mask_secrets", "remove_server", "scopes_holding",
           "set_server_enabled"]

log = logging.getLogger(__name__)

WRITABLE_SCOPES = ("local", "project", "user")
MASK = "***"
# ~/.claude.json holds account data: a new one is private; a new .mcp.json is meant to be shared
_NEW_CLAUDE_JSON_MODE = 0o600
_NEW_MCP_JSON_MODE = 0o644


# ---- writing -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Target:
    """Where one scope's servers live: the file, its display name and the key path of its server map."""

    scope: str
    path: Path
    display: str
    key: str
    cwd: Path

    def servers(self, data: dict[str, Any], create: bool) -> dict[str, Any] | None:
        """The server map inside the file's `data` (created when `create`; None when absent and not)."""
        if self.scope == "project" and "mcpServers" not in data and data:
            return data  # keep a bare-form .mcp.json ({"name": {...}}) bare
        if self.scope in ("user", "project"):
            return _child_map(data, "mcpServers", create, self.display, "")
        projects = _child_map(data, "projects", create, self.display, "")
        if projects is None:
            return None
        # Claude Code keys projects by the resolved working directory.
        key = project_key(projects, self.cwd) or project_key_candidates(self.cwd)[-1]
        project = _child_map(projects, key, create, self.display, "projects")
        if project is None:
            return None
        return _child_map(project, "mcpServers", create, self.display,
                          f"projects[{json.dumps(key, ensure_ascii=False)}]")

    @property
    def new_mode(self) -> int:
        return _NEW_CLAUDE_JSON_MODE if self.path.name == ".claude.json" else _NEW_MCP_JSON_MODE


def _target(scope: str, *, cwd: Path, home: Path) -> _Target:
    if scope == "user":
        return _Target(scope, home / ".claude.json", CLAUDE_JSON_DISPLAY, "mcpServers", cwd)
    if scope == "project":
        return _Target(scope, cwd / ".mcp.json", MCP_JSON_DISPLAY, "mcpServers", cwd)
    if scope == "local":
        resolved = json.dumps(project_key_candidates(cwd)[-1], ensure_ascii=False)
        return _Target(scope, home / ".claude.json", CLAUDE_JSON_DISPLAY, f"projects[{resolved}].mcpServers", cwd)
    raise ConfigError(f"unknown scope {json.dumps(scope)} (use local, project or user)", key="--scope")


def _child_map(parent: dict[str, Any], name: str, create: bool, display: str, base: str) -> dict[str, Any] | None:
    child = parent.get(name)
    if child is None:
        if not create:
            return None
        child = parent[name] = {}
    if not isinstance(child, dict):
        key = server_key(base, name) if base else name
        raise ConfigError(f"must be an object, got {json_type(child)}; fix the file by hand", file=display,
                          key=key)
    return child


def _load_for_edit(path: Path, display: str) -> dict[str, Any]:
    errors: list[ConfigError] = []
    data = read_json_object(path, display, errors,
                            max_bytes=MAX_CLAUDE_JSON_BYTES if path.name == ".claude.json" else MAX_JSON_FILE_BYTES)
    if errors:
        # Never overwrite a file we could not read: it may hold much more than MCP servers.
        raise errors[0]
    return data if data is not None else {}


def add_server(
    name: str,
    entry: dict[str, Any],
    *,
    scope: str,
    cwd: Path,
    home: Path,
    replace: bool = False,
) -> Path:
    """Write `entry` as server `name` in the file of `scope` ("local" → ~/.claude.json projects[<cwd>],
    "project" → .mcp.json, "user" → ~/.claude.json), keeping everything else in the file. Returns the file.
    Raises ConfigError for an invalid entry, an unreadable file, or a name that exists there (unless
    `replace`)."""
    target = _target(scope, cwd=cwd, home=home)
    errors = validate_entry(name, entry, file=target.display, key=server_key(target.key, name))
    if errors:
        raise errors[0]
    data = _load_for_edit(target.path, target.display)
    servers = target.servers(data, True)
    assert servers is not None  # create=True always yields the map (or raises)
    if name in servers and not replace:
        raise ConfigError(f"already exists in {scope} config (remove it first: mini-claude mcp remove -s {scope} "
                          f"{name})", file=target.display, key=server_key(target.key, name))
    servers[name] = copy.deepcopy(entry)
    write_json_atomic(target.path, data, new_mode=target.new_mode)
    log.debug("wrote %s", target.path)
    return target.path


def remove_server(name: str, *, scope: str | None, cwd: Path, home: Path) -> list[Path]:
    """Remove server `name` from the file of `scope`, or (scope None) from the one writable scope that has it.
    Returns the files changed. Raises ConfigError when it is not found (naming a read-only file that defines
    it, if any), and, without `scope`, when several scopes have it (naming them: Claude Code refuses too)."""
    if scope is None:
        holding = scopes_holding(name, cwd=cwd, home=home)
        if len(holding) > 1:
            options = " or ".join(f"-s {one}" for one in holding)
            raise ConfigError(f"MCP server {json.dumps(name, ensure_ascii=False)} exists in several scopes "
                              f"({', '.join(holding)}); say which to remove with {options}")
    scopes = WRITABLE_SCOPES if scope is None else (scope,)
    changed: list[Path] = []
    for one in scopes:
        target = _target(one, cwd=cwd, home=home)
        if not target.path.exists():
            continue
        data = _load_for_edit(target.path, target.display)
        servers = target.servers(data, False)
        if servers is None or name not in servers:
            continue
        del servers[name]
        write_json_atomic(target.path, data, new_mode=target.new_mode)
        log.debug("wrote %s", target.path)
        changed.append(target.path)
    if changed:
        return changed
    where = "local, project or user" if scope is None else scope
    message = f"no MCP server named {json.dumps(name, ensure_ascii=False)} in {where} config"
    elsewhere = _defined_in_settings(name, cwd=cwd, home=home)
    if elsewhere:
        message += f" (it is defined in {elsewhere}: edit that file)"
    raise ConfigError(message)


def scopes_holding(name: str, *, cwd: Path, home: Path) -> list[str]:
    """The writable scopes whose file defines server `name` (files that cannot be read count as not holding it)."""
    found: list[str] = []
    for one in WRITABLE_SCOPES:
        target = _target(one, cwd=cwd, home=home)
        try:
            servers = target.servers(_load_for_edit(target.path, target.display), False) \
                if target.path.exists() else None
        except ConfigError:
            continue
        if servers is not None and name in servers:
            found.append(one)
    return found


def _defined_in_settings(name: str, *, cwd: Path, home: Path) -> str | None:
    for path, display in ((cwd / ".claude" / "settings.json", PROJECT_SETTINGS_DISPLAY),
                          (home / ".claude" / "settings.json", USER_SETTINGS_DISPLAY)):
        data = read_json_object(path, display, [])
        servers = data.get("mcpServers") if data else None
        if isinstance(servers, dict) and name in servers:
            return display
    return None


# ---- secrets -----------------------------------------------------------------------------------------------------


_SECRET_WORDS = ("secret", "password", "assertion", "privatekey", "credential")
_NOT_SECRET_SUFFIXES = ("file", "url", "uri", "endpoint", "issuer", "id", "algorithm")


def mask_secrets(entry: dict[str, Any]) -> dict[str, Any]:
    """A copy of `entry` safe to print: every env value and header value is "***", so is every secret in
    `oauth` (nested too: `enterprise.idpClientSecret`, `enterprise.idToken`, `privateKey`, `assertion`, ...),
    and a `url` written with a password or query values shows them as "***"."""
    masked = copy.deepcopy(entry)
    for sub in ("env", "headers"):
        if sub not in masked:
            continue
        value = masked[sub]
        masked[sub] = {k: MASK for k in value} if isinstance(value, dict) else MASK
    if "oauth" in masked:
        masked["oauth"] = _mask_oauth(masked["oauth"])
    url = masked.get("url")
    if isinstance(url, str):
        masked["url"] = _mask_url(url)
    return masked


def _is_secret_key(key: str) -> bool:
    """`oauth` keys whose values are secrets (clientSecret, privateKey, assertion, enterprise.idpClientSecret,
    enterprise.idToken, ...); the ones naming where a secret lives (privateKeyFile, idTokenFile) are not."""
    lowered = key.lower()
    if lowered.endswith(_NOT_SECRET_SUFFIXES):
        return False
    return lowered.endswith("token") or any(word in lowered for word in _SECRET_WORDS)


def _mask_oauth(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: MASK if isinstance(k, str) and _is_secret_key(k) and v is not None else _mask_oauth(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_mask_oauth(v) for v in value]
    return value


def _mask_url(url: str) -> str:
    """`url` with the password of its userinfo and the value of each query parameter replaced by "***" (the rest,
    `${VAR}`s included, as written)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}:{MASK}@{host}" if ":" in userinfo else f"{MASK}@{host}"
    query = "&".join(f"{pair.split('=', 1)[0]}={MASK}" if "=" in pair else pair
                     for pair in parts.query.split("&")) if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


# ---- switching a server off for one project (Claude Code's `disabledMcpServers`) --------------------------------


def set_server_enabled(name: str, enabled: bool, *, cwd: Path, home: Path) -> Path:
    """Add `name` to (`enabled` False) or remove it from `projects[<cwd>].disabledMcpServers` in ~/.claude.json,
    the list Claude Code's `/mcp` keeps; everything else in the file is kept. Returns the file."""
    path = home / ".claude.json"
    data = _load_for_edit(path, CLAUDE_JSON_DISPLAY)
    projects = _child_map(data, "projects", True, CLAUDE_JSON_DISPLAY, "")
    assert projects is not None
    key = project_key(projects, cwd) or project_key_candidates(cwd)[-1]
    project = _child_map(projects, key, True, CLAUDE_JSON_DISPLAY, "projects")
    assert project is not None
    current = project.get("disabledMcpServers")
    names = [n for n in current if isinstance(n, str)] if isinstance(current, list) else []
    if enabled:
        names = [n for n in names if n != name]
    elif name not in names:
        names.append(name)
    project["disabledMcpServers"] = names
    write_json_atomic(path, data, new_mode=_NEW_CLAUDE_JSON_MODE)
    return path
