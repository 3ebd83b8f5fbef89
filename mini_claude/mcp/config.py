"""MCP server configuration in Claude Code's files and formats: reading, validating, expanding and editing.

Sources, in order; a later source replaces an earlier one's server of the same name (the whole entry):

    ~/.claude.json            "mcpServers"                          scope "user"
    ~/.claude/settings.json   "mcpServers"                          scope "user"
    .claude/settings.json     "mcpServers"                          scope "project"
    .mcp.json                 "mcpServers", or the bare name map    scope "project"
    ~/.claude.json            "projects"[<abs cwd>]["mcpServers"]   scope "local"
    each --mcp-config value   a file path or inline JSON            scope "cli"

Every problem is one `ConfigError` naming the file and the key path (`.mcp.json: mcpServers.db.command:
missing`). A broken entry is skipped with its error, a broken file costs only that file; nothing here raises
while loading. `${VAR}` and `${VAR:-default}` are expanded in command, args, env values, cwd, url, header
values and the string values of `oauth`. The writers (`add_server`, `remove_server`) edit the same files Claude Code's `claude mcp add/remove`
do, keeping every other key, atomically.
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import os
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from mini_claude.errors import ConfigError
from mini_claude.jsonfile import json_type, parse_json_object, read_json_object
from mini_claude.net.urls import display_url

__all__ = [
    "CLAUDE_JSON_DISPLAY",
    "MCP_JSON_DISPLAY",
    "PROJECT_SETTINGS_DISPLAY",
    "SCOPES",
    "SERVER_TYPES",
    "USER_SETTINGS_DISPLAY",
    "WRITABLE_SCOPES",
    "LoadedConfig",
    "ServerConfig",
    "add_server",
    "expand_vars",
    "load_mcp_config",
    "mask_secrets",
    "remove_server",
    "validate_entry",
]

log = logging.getLogger(__name__)

CLAUDE_JSON_DISPLAY = "~/.claude.json"
USER_SETTINGS_DISPLAY = "~/.claude/settings.json"
PROJECT_SETTINGS_DISPLAY = ".claude/settings.json"
MCP_JSON_DISPLAY = ".mcp.json"
CLI_DISPLAY = "--mcp-config"

SERVER_TYPES = ("stdio", "http", "sse")
PROTOCOL_VERSION_CHOICES = ("auto", "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
_TYPE_ALIASES = {"stdio": "stdio", "http": "http", "sse": "sse", "streamable-http": "http", "streamableHttp": "http"}
SCOPES = ("user", "project", "local", "cli")
WRITABLE_SCOPES = ("local", "project", "user")
MASK = "***"

_VAR_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_PLAIN_KEY_RE = re.compile(r"^[A-Za-z0-9_-]+$")


@dataclass(frozen=True)
class ServerConfig:
    """One server, validated and with `${VAR}`s expanded. `raw` is the entry exactly as written."""

    name: str
    type: str  # "stdio" | "http" | "sse"
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    headers_helper: str | None = None  # `headersHelper`: a command printing a JSON object of extra headers
    oauth: dict[str, Any] = field(default_factory=dict)  # `oauth`: parsed by mini_claude.mcp.auth.settings
    protocol_version: str | None = None  # `protocolVersion`: pin the era ("2026-07-28", "2025-11-25", ...)
    timeout_ms: int | None = None
    disabled: bool = False
    include_tools: tuple[str, ...] | None = None
    exclude_tools: tuple[str, ...] = ()
    scope: str = "user"  # "user" | "project" | "local" | "cli"
    source: str = ""  # display path of the file ("~/…" or relative to cwd), or "--mcp-config" / "--mcp-config #2"
    raw: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        # never the values of env, headers or oauth (nor `raw`, which holds them all), nor a URL's userinfo/query
        url = display_url(self.url) if self.url is not None else None
        return (f"ServerConfig(name={self.name!r}, type={self.type!r}, command={self.command!r}, url={url!r}, "
                f"env={sorted(self.env)!r}, headers={sorted(self.headers)!r}, oauth={sorted(self.oauth)!r}, "
                f"scope={self.scope!r}, source={self.source!r})")

    def needs_project_approval(self) -> bool:
        """Project-level servers (checked into a repository) never start without the user's approval."""
        return self.scope == "project"


@dataclass
class LoadedConfig:
    """The merged servers, plus every problem found (errors skip an entry or file; warnings do not)."""

    servers: dict[str, ServerConfig] = field(default_factory=dict)
    errors: list[ConfigError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


# ---- reading -----------------------------------------------------------------------------------------------------


def load_mcp_config(
    *,
    cwd: Path,
    home: Path,
    env: Mapping[str, str],
    extra: Sequence[str] = (),
    strict: bool = False,
) -> LoadedConfig:
    """Read every source (only the `extra` --mcp-config values when `strict`), merged. Never raises for
    content problems: they are in `errors` / `warnings`."""
    result = LoadedConfig()
    # Warnings are kept per server so that only the entries actually used (not overridden, not disabled)
    # produce them.
    warnings_of: dict[str, list[str]] = {}

    def take(servers: list[tuple[ServerConfig, list[str]]]) -> None:
        for cfg, warnings in servers:
            result.servers[cfg.name] = cfg
            warnings_of[cfg.name] = warnings

    if not strict:
        claude_json_path = home / ".claude.json"
        claude_json = read_json_object(claude_json_path, CLAUDE_JSON_DISPLAY, result.errors)
        if claude_json is not None:
            take(_servers_in(claude_json, CLAUDE_JSON_DISPLAY, "user", env, result.errors, bare_ok=False))
        user_settings = home / ".claude" / "settings.json"
        data = read_json_object(user_settings, USER_SETTINGS_DISPLAY, result.errors)
        if data is not None:
            take(_servers_in(data, USER_SETTINGS_DISPLAY, "user", env, result.errors, bare_ok=False))
        project_settings = cwd / ".claude" / "settings.json"
        if not _same_file(project_settings, user_settings):  # run from ~, it is the user file: read it once
            data = read_json_object(project_settings, PROJECT_SETTINGS_DISPLAY, result.errors)
            if data is not None:
                take(_servers_in(data, PROJECT_SETTINGS_DISPLAY, "project", env, result.errors, bare_ok=False))
        data = read_json_object(cwd / ".mcp.json", MCP_JSON_DISPLAY, result.errors)
        if data is not None:
            take(_servers_in(data, MCP_JSON_DISPLAY, "project", env, result.errors, bare_ok=True))
        if claude_json is not None:
            take(_local_servers(claude_json, cwd, env, result.errors))

    inline_count = 0
    for value in extra:
        if value.lstrip().startswith("{"):
            inline_count += 1
            display = CLI_DISPLAY if inline_count == 1 else f"{CLI_DISPLAY} #{inline_count}"
            data = parse_json_object(value, display, result.errors)
        else:
            display = _display_cli_path(value, home)
            path = Path(value).expanduser()
            path = path if path.is_absolute() else cwd / path
            if not path.exists():
                result.errors.append(ConfigError("no such file", file=CLI_DISPLAY, key=value))
                continue
            data = read_json_object(path, display, result.errors)
        if data is not None:
            take(_servers_in(data, display, "cli", env, result.errors, bare_ok=True))

    for name, cfg in result.servers.items():
        if not cfg.disabled:
            result.warnings.extend(warnings_of.get(name, []))
    return result


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
) -> list[tuple[ServerConfig, list[str]]]:
    """The valid servers of one file's `mcpServers` (or, where `bare_ok`, of a bare name → entry map)."""
    if "mcpServers" in data:
        servers, key = data["mcpServers"], _join(base, "mcpServers")
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
        cfg, entry_errors, warnings = _parse_entry(name, entry, file=display, key=_server_key(key, name),
                                                   env=env, scope=scope)
        errors.extend(entry_errors)
        if cfg is not None:
            loaded.append((cfg, warnings))
    return loaded


def _local_servers(
    claude_json: dict[str, Any], cwd: Path, env: Mapping[str, str], errors: list[ConfigError]
) -> list[tuple[ServerConfig, list[str]]]:
    projects = claude_json.get("projects")
    if projects is None:
        return []
    if not isinstance(projects, dict):
        errors.append(ConfigError(f"must be an object, got {json_type(projects)}", file=CLAUDE_JSON_DISPLAY,
                                  key="projects"))
        return []
    project_key = _project_key(projects, cwd)
    if project_key is None:
        return []
    project = projects[project_key]
    base = f"projects[{json.dumps(project_key, ensure_ascii=False)}]"
    if not isinstance(project, dict):
        errors.append(ConfigError(f"must be an object, got {json_type(project)}", file=CLAUDE_JSON_DISPLAY,
                                  key=base))
        return []
    return _servers_in(project, CLAUDE_JSON_DISPLAY, "local", env, errors, bare_ok=False, base=base)


def _project_key(projects: dict[str, Any], cwd: Path) -> str | None:
    """The key of `cwd` in ~/.claude.json "projects": its absolute path as given, else its resolved path."""
    for candidate in _project_key_candidates(cwd):
        if candidate in projects:
            return candidate
    return None


def _project_key_candidates(cwd: Path) -> list[str]:
    absolute = str(cwd.absolute())
    try:
        resolved = str(cwd.resolve())
    except OSError:
        resolved = absolute
    return list(dict.fromkeys([absolute, resolved]))


# ---- one entry ---------------------------------------------------------------------------------------------------


def validate_entry(name: str, entry: Any, *, file: str | None = None, key: str | None = None) -> list[ConfigError]:
    """The problems of one server entry as it would be written (variables are not expanded, and a URL that
    still holds a `${VAR}` is not checked). `key` defaults to `mcpServers.<name>`."""
    _, errors, _ = _parse_entry(name, entry, file=file, key=key or _server_key("mcpServers", name), env=None,
                                scope="cli")
    return errors


def _parse_entry(
    name: Any,
    entry: Any,
    *,
    file: str | None,
    key: str,
    env: Mapping[str, str] | None,
    scope: str,
) -> tuple[ServerConfig | None, list[ConfigError], list[str]]:
    """Validate and expand one entry. `env` None means validate only (no expansion)."""
    errors: list[ConfigError] = []
    warnings: list[str] = []

    def bad(sub: str | None, message: str) -> None:
        errors.append(ConfigError(message, file=file, key=_join(key, sub) if sub else key))

    if not isinstance(name, str) or not name:
        bad(None, "server name must not be empty")
        return None, errors, warnings
    if not isinstance(entry, dict):
        bad(None, f"must be an object, got {json_type(entry)}")
        return None, errors, warnings

    def expand(value: str, sub: str) -> str:
        if env is None:
            return value
        expanded, missing = expand_vars(value, env)
        for var in missing:
            warnings.append(f"{file}: {_join(key, sub)}: environment variable {var} is not set "
                            f"(kept ${{{var}}} literally)")
        return expanded

    def string(sub: str) -> str | None:
        value = entry.get(sub)
        if value is None:
            return None
        if not isinstance(value, str):
            bad(sub, f"must be a string, got {json_type(value)}")
            return None
        return value

    def strings(sub: str) -> list[str] | None:
        value = entry.get(sub)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            bad(sub, "must be a list of strings")
            return None
        return list(value)

    def string_map(sub: str) -> dict[str, str]:
        value = entry.get(sub)
        if value is None:
            return {}
        if not isinstance(value, dict):
            bad(sub, f"must be an object of strings, got {json_type(value)}")
            return {}
        result = {}
        for k, v in value.items():
            if isinstance(v, str):
                result[k] = expand(v, _server_key(sub, k))
            else:
                bad(_server_key(sub, k), f"must be a string, got {json_type(v)}")
        return result

    declared = entry.get("type")
    if declared is None:
        kind = "http" if entry.get("url") is not None and entry.get("command") is None else "stdio"
    elif isinstance(declared, str) and declared in _TYPE_ALIASES:
        kind = _TYPE_ALIASES[declared]
    else:
        bad("type", f"unknown type {json.dumps(declared, ensure_ascii=False)} (use stdio, http or sse)")
        kind = None

    command = url = None
    if kind == "stdio":
        if "command" not in entry or entry["command"] is None:
            bad("command", "missing")
        elif not isinstance(entry["command"], str) or not entry["command"].strip():
            bad("command", "must be a non-empty string")
        else:
            command = expand(entry["command"], "command")
    elif kind in ("http", "sse"):
        raw_url = entry.get("url")
        if raw_url is None:
            bad("url", "missing")
        elif not isinstance(raw_url, str):
            bad("url", f"must be a string, got {json_type(raw_url)}")
        else:
            url = expand(raw_url, "url")
            if (env is not None or "${" not in raw_url) and not _is_http_url(url):
                # Quote what is written, not the expansion: a URL may carry a token.
                bad("url", f"not a URL: {json.dumps(raw_url, ensure_ascii=False)}")

    args = [expand(a, f"args[{i}]") for i, a in enumerate(strings("args") or [])]
    env_map = string_map("env")
    headers = string_map("headers")
    cwd = string("cwd")
    if cwd is not None:
        cwd = expand(cwd, "cwd")

    timeout = entry.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int) or timeout <= 0):
        bad("timeout", "must be a positive integer (milliseconds)")
        timeout = None
    disabled = entry.get("disabled", False)
    if not isinstance(disabled, bool):
        bad("disabled", "must be true or false")
        disabled = False
    include = strings("includeTools")
    exclude = strings("excludeTools")

    headers_helper = string("headersHelper")
    if headers_helper is not None and not headers_helper.strip():
        bad("headersHelper", "must be a non-empty command")
        headers_helper = None
    oauth = _oauth_entry(entry.get("oauth"), expand, bad)
    protocol_version = entry.get("protocolVersion")
    if protocol_version is not None and protocol_version not in PROTOCOL_VERSION_CHOICES:
        bad("protocolVersion", f"unknown protocol version {json.dumps(protocol_version, ensure_ascii=False)} "
            f"(use {', '.join(PROTOCOL_VERSION_CHOICES)})")
        protocol_version = None

    if errors or kind is None:
        return None, errors, warnings
    cfg = ServerConfig(
        name=name,
        type=kind,
        command=command,
        args=tuple(args),
        env=env_map,
        cwd=cwd,
        url=url,
        headers=headers,
        headers_helper=headers_helper,
        oauth=oauth,
        protocol_version=protocol_version,
        timeout_ms=timeout,
        disabled=disabled,
        include_tools=tuple(include) if include is not None else None,
        exclude_tools=tuple(exclude or ()),
        scope=scope,
        source=file or "",
        raw=copy.deepcopy(entry),
    )
    return cfg, errors, list(dict.fromkeys(warnings))


def _oauth_entry(value: Any, expand: Callable[[str, str], str],
                 bad: Callable[[str | None, str], None]) -> dict[str, Any]:
    """The `oauth` object with `${VAR}` expanded in its string values (its keys are checked by
    `mini_claude.mcp.auth.settings`, which owns their meaning)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        bad("oauth", f"must be an object, got {json_type(value)}")
        return {}
    return {k: expand(v, _server_key("oauth", k)) if isinstance(v, str) else copy.deepcopy(v)
            for k, v in value.items()}


def expand_vars(text: str, env: Mapping[str, str]) -> tuple[str, list[str]]:
    """Expand `${VAR}` and `${VAR:-default}` in `text`. Returns the text and the names of unset variables
    without a default (their `${VAR}` is kept literally). A variable set to "" expands to "" (as in Claude
    Code; the default is for unset variables only). `$VAR` without braces is not expanded."""
    missing: list[str] = []

    def replace(match: re.Match[str]) -> str:
        var, default = match.group(1), match.group(2)
        if var in env:
            return env[var]
        if default is not None:
            return default
        missing.append(var)
        return match.group(0)

    return _VAR_RE.sub(replace, text), list(dict.fromkeys(missing))


def _is_http_url(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def _server_key(base: str, name: str) -> str:
    """`base.name`, or `base["na.me"]` when the name would not read as one key."""
    part = name if _PLAIN_KEY_RE.match(name) else f"[{json.dumps(name, ensure_ascii=False)}]"
    if part.startswith("["):
        return base + part
    return _join(base, part)


def _join(base: str, sub: str) -> str:
    if not base:
        return sub
    return base + sub if sub.startswith("[") else f"{base}.{sub}"




# ---- secrets -----------------------------------------------------------------------------------------------------


_SECRET_WORDS = ("secret", "password", "assertion", "privatekey", "credential")
_NOT_SECRET_SUFFIXES = ("file", "url", "uri", "endpoint", "issuer", "id", "algorithm")


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


# ---- writing -----------------------------------------------------------------------------------------------------


@dataclass
class _Target:
    """Where one scope's servers live: the file, its display name, the key path, and how to reach the map."""

    path: Path
    display: str
    key: str
    servers: Callable[[dict[str, Any], bool], dict[str, Any] | None]  # (file data, create) -> the server map


def _target(scope: str, *, cwd: Path, home: Path) -> _Target:
    if scope == "user":
        return _Target(home / ".claude.json", CLAUDE_JSON_DISPLAY, "mcpServers",
                       lambda data, create: _child_map(data, "mcpServers", create, CLAUDE_JSON_DISPLAY, ""))
    if scope == "project":

        def project_servers(data: dict[str, Any], create: bool) -> dict[str, Any] | None:
            # Keep a bare-form .mcp.json ({"name": {...}}) bare.
            if "mcpServers" not in data and data:
                return data
            return _child_map(data, "mcpServers", create, MCP_JSON_DISPLAY, "")

        return _Target(cwd / ".mcp.json", MCP_JSON_DISPLAY, "mcpServers", project_servers)
    if scope == "local":
        candidates = _project_key_candidates(cwd)

        def local_servers(data: dict[str, Any], create: bool) -> dict[str, Any] | None:
            projects = _child_map(data, "projects", create, CLAUDE_JSON_DISPLAY, "")
            if projects is None:
                return None
            # Claude Code keys projects by the resolved working directory.
            key = _project_key(projects, cwd) or candidates[-1]
            project = _child_map(projects, key, create, CLAUDE_JSON_DISPLAY, "projects")
            if project is None:
                return None
            return _child_map(project, "mcpServers", create, CLAUDE_JSON_DISPLAY,
                              f"projects[{json.dumps(key, ensure_ascii=False)}]")

        return _Target(home / ".claude.json", CLAUDE_JSON_DISPLAY,
                       f"projects[{json.dumps(candidates[-1], ensure_ascii=False)}].mcpServers", local_servers)
    raise ConfigError(f"unknown scope {json.dumps(scope)} (use local, project or user)", key="--scope")


def _child_map(parent: dict[str, Any], name: str, create: bool, display: str, base: str) -> dict[str, Any] | None:
    child = parent.get(name)
    if child is None:
        if not create:
            return None
        child = parent[name] = {}
    if not isinstance(child, dict):
        key = _server_key(base, name) if base else name
        raise ConfigError(f"must be an object, got {json_type(child)}; fix the file by hand", file=display,
                          key=key)
    return child


def _load_for_edit(path: Path, display: str) -> dict[str, Any]:
    errors: list[ConfigError] = []
    data = read_json_object(path, display, errors)
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
    errors = validate_entry(name, entry, file=target.display, key=_server_key(target.key, name))
    if errors:
        raise errors[0]
    data = _load_for_edit(target.path, target.display)
    servers = target.servers(data, True)
    assert servers is not None
    if name in servers and not replace:
        raise ConfigError(f"already exists in {scope} config (remove it first: mini-claude mcp remove -s {scope} "
                          f"{name})", file=target.display, key=_server_key(target.key, name))
    servers[name] = copy.deepcopy(entry)
    _write_json_atomic(target.path, data, private=target.path.name == ".claude.json")
    return target.path


def remove_server(name: str, *, scope: str | None, cwd: Path, home: Path) -> list[Path]:
    """Remove server `name` from the file of `scope`, or (scope None) from every writable scope that has it.
    Returns the files changed. Raises ConfigError when it is not found (naming a read-only file that defines
    it, if any)."""
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
        _write_json_atomic(target.path, data, private=target.path.name == ".claude.json")
        changed.append(target.path)
    if changed:
        return changed
    where = "local, project or user" if scope is None else scope
    message = f"no MCP server named {json.dumps(name, ensure_ascii=False)} in {where} config"
    elsewhere = _defined_in_settings(name, cwd=cwd, home=home)
    if elsewhere:
        message += f" (it is defined in {elsewhere}: edit that file)"
    raise ConfigError(message)


def _defined_in_settings(name: str, *, cwd: Path, home: Path) -> str | None:
    for path, display in ((cwd / ".claude" / "settings.json", PROJECT_SETTINGS_DISPLAY),
                          (home / ".claude" / "settings.json", USER_SETTINGS_DISPLAY)):
        data = read_json_object(path, display, [])
        servers = data.get("mcpServers") if data else None
        if isinstance(servers, dict) and name in servers:
            return display
    return None


def _write_json_atomic(path: Path, data: Any, *, private: bool) -> None:
    """Write pretty JSON through a temp file and a rename, so a crash never leaves half a file. The file
    keeps its mode; a new ~/.claude.json is 0600 (it holds account data), a new .mcp.json 0644."""
    if path.is_symlink():  # dotfile managers symlink ~/.claude.json: write the file, keep the link
        path = path.resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o600 if private else 0o644
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    log.debug("wrote %s", path)
