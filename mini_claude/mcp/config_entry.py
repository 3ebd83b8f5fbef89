"""One MCP server entry of a Claude Code config file → a validated, `${VAR}`-expanded `ServerConfig`.

Every key an entry may hold is one row of `_FIELDS`: the key as written, the `ServerConfig` attribute it fills,
the converter that checks (and expands) a present value, and which server types it applies to. Every problem
is one `ConfigError` naming the file and the key path (`.mcp.json: mcpServers.db.command: missing`); an entry
with any error yields no `ServerConfig`. `${VAR}` and `${VAR:-default}` are expanded in command, args, env
values, cwd, url, header values and the string values of `oauth`; an unset variable without a default stays
literally and is one warning. In a project-scope entry (a file of the repository: `.mcp.json`,
`.claude/settings.json`) a variable naming one of the agent's own credentials (`AGENT_CREDENTIAL_VARS`) expands
to "" with a warning: a repository must not be able to send the user's model key to a server of its choosing.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit

from mini_claude.errors import ConfigError
from mini_claude.jsonfile import json_type
from mini_claude.mcp.protocol import LOG_LEVELS
from mini_claude.net.urls import display_url
from mini_claude.secrets import AGENT_CREDENTIAL_VARS  # no stdio server or headersHelper inherits them

if TYPE_CHECKING:
    from mini_claude.mcp.transports.inprocess import MessagePeer

__all__ = [
    "AGENT_CREDENTIAL_VARS",
    "PROTOCOL_VERSION_CHOICES",
    "SAMPLING_POLICIES",
    "SERVER_TYPES",
    "ParsedEntry",
    "ServerConfig",
    "expand_vars",
    "join_key",
    "parse_entry",
    "sdk_server_config",
    "server_key",
    "validate_entry",
]

# Scopes whose files come with the repository (untrusted), as opposed to the user's own files and flags.
_PROJECT_SCOPE = "project"

# "sdk": a server living in this process (mini_claude.mcp.server), reached without a process or a socket
SERVER_TYPES = ("stdio", "http", "sse", "sdk")
SAMPLING_POLICIES = ("ask", "allow", "deny")
PROTOCOL_VERSION_CHOICES = ("auto", "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
_TYPE_ALIASES = {"stdio": "stdio", "http": "http", "sse": "sse", "streamable-http": "http", "streamableHttp": "http",
                 "sdk": "sdk"}

_VAR_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_PLAIN_KEY_RE = re.compile(r"^[A-Za-z0-9_-]+$")


@dataclass(frozen=True)
class ServerConfig:
    """One server, validated and with `${VAR}`s expanded. `raw` is the entry exactly as written."""

    name: str
    type: str  # "stdio" | "http" | "sse" | "sdk"
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
    sampling: str = "ask"  # `sampling`: "ask" | "allow" | "deny" (mini_claude.mcp.host.sampling)
    log_level: str | None = None  # `logLevel`: sent as logging/setLevel once connected
    always_load: bool = False  # `alwaysLoad`: its tools are always sent, never deferred behind ToolSearch
    disabled: bool = False
    include_tools: tuple[str, ...] | None = None
    exclude_tools: tuple[str, ...] = ()
    scope: str = "user"  # "user" | "project" | "local" | "cli"
    source: str = ""  # display path of the file ("~/…" or relative to cwd), or "--mcp-config" / "--mcp-config #2"
    raw: dict[str, Any] = field(default_factory=dict)
    # a "sdk" server's live server object (an McpServerCore, or any MessagePeer). Never read from a file: a file's
    # "sdk" entry has none, and connecting it needs a peer supplied by the program (connect.build_transport)
    instance: MessagePeer | None = field(default=None, compare=False)

    def __repr__(self) -> str:
        # never the values of env, headers or oauth (nor `raw`, which holds them all), nor a URL's userinfo/query
        url = display_url(self.url) if self.url is not None else None
        return (f"ServerConfig(name={self.name!r}, type={self.type!r}, command={self.command!r}, url={url!r}, "
                f"env={sorted(self.env)!r}, headers={sorted(self.headers)!r}, oauth={sorted(self.oauth)!r}, "
                f"scope={self.scope!r}, source={self.source!r})")

    def needs_project_approval(self) -> bool:
        """Project-level servers (checked into a repository) never start without the user's approval."""
        return self.scope == "project"


class ParsedEntry(NamedTuple):
    """The outcome of one entry: its config (None when any error), its errors, and its unset-variable warnings."""

    config: ServerConfig | None
    errors: list[ConfigError]
    warnings: list[str]


class _EntryCheck:
    """Checking one entry: where it is (for messages), the environment to expand with (None: validate only), and
    the problems found so far. A project-scope entry sees the agent's credentials as set to ""."""

    def __init__(self, *, file: str | None, key: str, env: Mapping[str, str] | None, scope: str) -> None:
        self.file = file
        self.key = key
        self.project = scope == _PROJECT_SCOPE
        # The credentials read as set to "", so even `${ANTHROPIC_API_KEY:-x}` gives "" (the default is for
        # unset variables only).
        self.env: Mapping[str, str] | None = (
            {**env, **dict.fromkeys(AGENT_CREDENTIAL_VARS, "")} if env is not None and self.project else env)
        self.errors: list[ConfigError] = []
        self.warnings: list[str] = []

    def bad(self, sub: str | None, message: str) -> None:
        self.errors.append(ConfigError(message, file=self.file, key=join_key(self.key, sub) if sub else self.key))

    def expand(self, value: str, sub: str) -> str:
        if self.env is None:
            return value
        if self.project:
            named = dict.fromkeys(match.group(1) for match in _VAR_RE.finditer(value))
            for var in (v for v in named if v in AGENT_CREDENTIAL_VARS):
                self.warnings.append(f"{self.file}: {join_key(self.key, sub)}: ${{{var}}} is the agent's own "
                                     f"credential, which a project config cannot use (expanded to empty)")
        expanded, missing = expand_vars(value, self.env)
        for var in missing:
            self.warnings.append(f"{self.file}: {join_key(self.key, sub)}: environment variable {var} is not set "
                                 f"(kept ${{{var}}} literally)")
        return expanded


# ---- converters: (check, key, present value) -> the value to store; problems go to `check.bad` ----------------

_Converter = Callable[[_EntryCheck, str, Any], Any]


def _string(check: _EntryCheck, key: str, value: Any) -> str | None:
    if not isinstance(value, str):
        check.bad(key, f"must be a string, got {json_type(value)}")
        return None
    return value


def _expanded_string(check: _EntryCheck, key: str, value: Any) -> str | None:
    text = _string(check, key, value)
    return None if text is None else check.expand(text, key)


def _strings(check: _EntryCheck, key: str, value: Any) -> tuple[str, ...] | None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        check.bad(key, "must be a list of strings")
        return None
    return tuple(value)


def _expanded_strings(check: _EntryCheck, key: str, value: Any) -> tuple[str, ...] | None:
    items = _strings(check, key, value)
    return None if items is None else tuple(check.expand(v, f"{key}[{i}]") for i, v in enumerate(items))


def _string_map(check: _EntryCheck, key: str, value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        check.bad(key, f"must be an object of strings, got {json_type(value)}")
        return {}
    result = {}
    for k, v in value.items():
        if isinstance(v, str):
            result[k] = check.expand(v, server_key(key, k))
        else:
            check.bad(server_key(key, k), f"must be a string, got {json_type(v)}")
    return result


def _command(check: _EntryCheck, key: str, value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip():
        check.bad(key, "must be a non-empty string")
        return None
    return check.expand(value, key)


def _url(check: _EntryCheck, key: str, value: Any) -> str | None:
    raw = _string(check, key, value)
    if raw is None:
        return None
    url = check.expand(raw, key)
    # Validate-only (no env) leaves a URL holding a ${VAR} unchecked: it is only a URL once expanded.
    if (check.env is not None or "${" not in raw) and not _is_http_url(url):
        # Quote what is written, not the expansion: a URL may carry a token.
        check.bad(key, f"not a URL: {json.dumps(raw, ensure_ascii=False)}")
    return url


def _headers_helper(check: _EntryCheck, key: str, value: Any) -> str | None:
    command = _string(check, key, value)
    if command is not None and not command.strip():
        check.bad(key, "must be a non-empty command")
        return None
    return command


def _positive_ms(check: _EntryCheck, key: str, value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        check.bad(key, "must be a positive integer (milliseconds)")
        return None
    return value


def _boolean(check: _EntryCheck, key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        check.bad(key, "must be true or false")
        return False
    return value


def _oauth(check: _EntryCheck, key: str, value: Any) -> dict[str, Any]:
    """The `oauth` object with `${VAR}` expanded in its string values (its keys are checked by
    `mini_claude.mcp.auth.settings`, which owns their meaning)."""
    if not isinstance(value, dict):
        check.bad(key, f"must be an object, got {json_type(value)}")
        return {}
    return {k: check.expand(v, server_key(key, k)) if isinstance(v, str) else copy.deepcopy(v)
            for k, v in value.items()}


def _choice(choices: tuple[str, ...]) -> _Converter:
    def convert(check: _EntryCheck, key: str, value: Any) -> str | None:
        if value not in choices:
            check.bad(key, f"must be one of {', '.join(choices)}, got {json.dumps(value, ensure_ascii=False)[:60]}")
            return None
        return str(value)
    return convert


def _protocol_version(check: _EntryCheck, key: str, value: Any) -> str | None:
    if value not in PROTOCOL_VERSION_CHOICES:
        check.bad(key, f"unknown protocol version {json.dumps(value, ensure_ascii=False)} "
                       f"(use {', '.join(PROTOCOL_VERSION_CHOICES)})")
        return None
    return str(value)


@dataclass(frozen=True)
class _Field:
    """One key of a server entry. Absent (or null, where `null_ok`) leaves the `ServerConfig` default, unless
    `required`, which makes it "missing"."""

    key: str
    attr: str
    convert: _Converter
    kinds: tuple[str, ...] = SERVER_TYPES  # the server types the key is read for
    required: bool = False
    null_ok: bool = True


# In the order their problems are reported (and their `${VAR}` warnings given).
_FIELDS: tuple[_Field, ...] = (
    _Field("command", "command", _command, kinds=("stdio",), required=True),
    _Field("url", "url", _url, kinds=("http", "sse"), required=True),
    _Field("args", "args", _expanded_strings),
    _Field("env", "env", _string_map),
    _Field("headers", "headers", _string_map),
    _Field("cwd", "cwd", _expanded_string),
    _Field("timeout", "timeout_ms", _positive_ms),
    _Field("disabled", "disabled", _boolean, null_ok=False),
    _Field("includeTools", "include_tools", _strings),
    _Field("excludeTools", "exclude_tools", _strings),
    _Field("headersHelper", "headers_helper", _headers_helper),
    _Field("oauth", "oauth", _oauth),
    _Field("protocolVersion", "protocol_version", _protocol_version),
    _Field("sampling", "sampling", _choice(SAMPLING_POLICIES)),
    _Field("logLevel", "log_level", _choice(LOG_LEVELS)),
    _Field("alwaysLoad", "always_load", _boolean, null_ok=False),
)


# ---- one entry ---------------------------------------------------------------------------------------------------


def validate_entry(name: str, entry: Any, *, file: str | None = None, key: str | None = None) -> list[ConfigError]:
    """The problems of one server entry as it would be written (variables are not expanded, and a URL that
    still holds a `${VAR}` is not checked). `key` defaults to `mcpServers.<name>`."""
    return parse_entry(name, entry, file=file, key=key or server_key("mcpServers", name), env=None,
                       scope="cli").errors


def parse_entry(
    name: Any,
    entry: Any,
    *,
    file: str | None,
    key: str,
    env: Mapping[str, str] | None,
    scope: str,
) -> ParsedEntry:
    """Validate and expand one entry found at `file`: `key`. `env` None means validate only (no expansion)."""
    check = _EntryCheck(file=file, key=key, env=env, scope=scope)
    if not isinstance(name, str) or not name:
        check.bad(None, "server name must not be empty")
        return ParsedEntry(None, check.errors, check.warnings)
    if not isinstance(entry, dict):
        check.bad(None, f"must be an object, got {json_type(entry)}")
        return ParsedEntry(None, check.errors, check.warnings)

    kind = _server_type(check, entry)
    values: dict[str, Any] = {}
    for spec in _FIELDS:
        # an unknown type still gets its common fields checked; only the type-specific ones are skipped
        if kind not in spec.kinds if kind is not None else spec.kinds != SERVER_TYPES:
            continue
        if spec.key not in entry or (entry[spec.key] is None and spec.null_ok):
            if spec.required:
                check.bad(spec.key, "missing")
            continue
        values[spec.attr] = spec.convert(check, spec.key, entry[spec.key])

    if check.errors or kind is None:
        return ParsedEntry(None, check.errors, check.warnings)
    cfg = ServerConfig(name=name, type=kind, scope=scope, source=file or "", raw=copy.deepcopy(entry), **values)
    return ParsedEntry(cfg, check.errors, list(dict.fromkeys(check.warnings)))


def sdk_server_config(name: str, instance: MessagePeer, *, scope: str = "cli", source: str = "Python API",
                      **fields: Any) -> ServerConfig:
    """The config of a server living in this process (`"type": "sdk"`); `fields` are other `ServerConfig`
    attributes (`timeout_ms`, `include_tools`, `sampling`, ...)."""
    if not isinstance(name, str) or not name:
        raise ConfigError("an in-process MCP server needs a non-empty name", key="mcpServers")
    return ServerConfig(name=name, type="sdk", instance=instance, scope=scope, source=source,
                        raw={"type": "sdk", "name": name}, **fields)


def _server_type(check: _EntryCheck, entry: dict[str, Any]) -> str | None:
    """The entry's transport: its `type` (aliases allowed), else http for a bare `url`, else stdio."""
    declared = entry.get("type")
    if declared is None:
        return "http" if entry.get("url") is not None and entry.get("command") is None else "stdio"
    if isinstance(declared, str) and declared in _TYPE_ALIASES:
        return _TYPE_ALIASES[declared]
    check.bad("type", f"unknown type {json.dumps(declared, ensure_ascii=False)} (use stdio, http or sse)")
    return None


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


# ---- key paths in messages ---------------------------------------------------------------------------------------


def server_key(base: str, name: str) -> str:
    """`base.name`, or `base["na.me"]` when the name would not read as one key."""
    if _PLAIN_KEY_RE.match(name):
        return join_key(base, name)
    return base + f"[{json.dumps(name, ensure_ascii=False)}]"


def join_key(base: str, sub: str) -> str:
    """`base.sub` (`base[...]` when `sub` is an index); `sub` alone when there is no base."""
    if not base:
        return sub
    return base + sub if sub.startswith("[") else f"{base}.{sub}"
