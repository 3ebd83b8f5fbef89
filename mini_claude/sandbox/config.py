"""The `sandbox` settings key, in Claude Code's shape, and how the settings files combine into one `SandboxConfig`.

Keys read (Claude Code's names and meanings): `enabled`, `autoAllowBashIfSandboxed`, `excludedCommands`,
`allowUnsandboxedCommands`, `failIfUnavailable`, and under `network`: `allowedDomains`, `allowUnixSockets`,
`allowAllUnixSockets`, `allowLocalBinding`, `httpProxyPort`. Unknown keys are left alone (a newer Claude Code's file
must not be an error); a known key with a wrong type is one error naming it.

Files are layered as settings.py reads them (user, project, local, then `--settings`). The user's own files may set
anything. A repository's files (`.claude/settings.json`, `.claude/settings.local.json`) come with the code the
sandbox exists to contain, so — trusted folder or not — they may only make it stricter: turn it on, turn off the
auto-allow, forbid unsandboxed runs, shorten the allowed domain list; never turn it off, exclude a command, add a
domain, open sockets or local binding, or pick the proxy's port. What they try beyond that is dropped and reported.
Nothing here imports another mini_claude package.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

__all__ = ["SandboxConfig", "merge_sandbox"]

Report = Callable[[str, str], None]  # (key, message)

_UNTRUSTED_NOTE = ("ignored: a repository's settings may turn the sandbox on or make it stricter, never turn it off "
                   "or widen it")


@dataclass(frozen=True)
class SandboxConfig:
    """The merged `sandbox` settings. None: not set by any file (the defaults below apply)."""

    enabled: bool | None = None
    auto_allow: bool | None = None  # autoAllowBashIfSandboxed
    excluded_commands: tuple[str, ...] = ()
    allow_unsandboxed: bool | None = None  # allowUnsandboxedCommands
    fail_if_unavailable: bool | None = None
    allowed_domains: tuple[str, ...] | None = None  # None: network off; () also off
    allow_unix_sockets: tuple[str, ...] = ()
    allow_all_unix_sockets: bool | None = None
    allow_local_binding: bool | None = None
    http_proxy_port: int | None = None

    @property
    def is_enabled(self) -> bool:
        """Off unless a file turns it on (Claude Code's default)."""
        return self.enabled is True

    @property
    def auto_allows(self) -> bool:
        """`autoAllowBashIfSandboxed`: Claude Code's default is true."""
        return self.auto_allow is not False

    @property
    def unsandboxed_allowed(self) -> bool:
        """`allowUnsandboxedCommands`: whether `dangerouslyDisableSandbox` may be asked for (default true)."""
        return self.allow_unsandboxed is not False

    @property
    def network_on(self) -> bool:
        return bool(self.allowed_domains)

    def describe(self) -> list[str]:
        """The resolved values, one `key: value` line each (for `/sandbox` and `doctor`)."""
        domains = ", ".join(self.allowed_domains) if self.allowed_domains else "none (network off)"
        return [
            f"enabled: {str(self.is_enabled).lower()}",
            f"autoAllowBashIfSandboxed: {str(self.auto_allows).lower()}",
            f"allowUnsandboxedCommands: {str(self.unsandboxed_allowed).lower()}",
            f"excludedCommands: {', '.join(self.excluded_commands) or 'none'}",
            f"network.allowedDomains: {domains}",
        ]


def merge_sandbox(current: SandboxConfig, raw: Any, *, trusted: bool, bad: Report) -> SandboxConfig:
    """`current` with one file's `sandbox` value on top. `trusted`: the user's own file or command line; else a
    repository's file, which may only narrow (see the module docstring). Problems go to `bad(key, message)`."""
    if not isinstance(raw, dict):
        bad("sandbox", f"expected an object, got {_type(raw)}")
        return current
    found: dict[str, Any] = {}
    for key, field in (("enabled", "enabled"), ("autoAllowBashIfSandboxed", "auto_allow"),
                       ("allowUnsandboxedCommands", "allow_unsandboxed"), ("failIfUnavailable", "fail_if_unavailable")):
        value = _bool(raw, key, "sandbox", bad)
        if value is not None:
            found[field] = value
    excluded = _strings(raw, "excludedCommands", "sandbox", bad)
    network = raw.get("network")
    net: dict[str, Any] = {}
    if network is not None and not isinstance(network, dict):
        bad("sandbox.network", f"expected an object, got {_type(network)}")
    elif isinstance(network, dict):
        domains = _strings(network, "allowedDomains", "sandbox.network", bad)
        if domains is not None:
            net["allowed_domains"] = tuple(d.strip().lower() for d in domains if d.strip())
        sockets = _strings(network, "allowUnixSockets", "sandbox.network", bad)
        if sockets is not None:
            net["allow_unix_sockets"] = tuple(sockets)
        for key, field in (("allowAllUnixSockets", "allow_all_unix_sockets"),
                           ("allowLocalBinding", "allow_local_binding")):
            value = _bool(network, key, "sandbox.network", bad)
            if value is not None:
                net[field] = value
        port = network.get("httpProxyPort")
        if port is not None:
            if isinstance(port, int) and not isinstance(port, bool) and 0 < port < 65536:
                net["http_proxy_port"] = port
            else:
                bad("sandbox.network.httpProxyPort", f"expected a port number, got {_type(port)}")
    if trusted:
        if excluded is not None:
            found["excluded_commands"] = tuple(excluded)
        return replace(current, **found, **net)
    return _narrowed(current, found, excluded, net, bad)


def _narrowed(current: SandboxConfig, found: dict[str, Any], excluded: list[str] | None, net: dict[str, Any],
              bad: Report) -> SandboxConfig:
    """What a repository's file may change: only towards a stricter sandbox."""
    keep: dict[str, Any] = {}
    stricter = {"enabled": True, "auto_allow": False, "allow_unsandboxed": False, "fail_if_unavailable": True}
    names = {"enabled": "enabled", "auto_allow": "autoAllowBashIfSandboxed",
             "allow_unsandboxed": "allowUnsandboxedCommands", "fail_if_unavailable": "failIfUnavailable"}
    for field, value in found.items():
        if value == stricter[field]:
            keep[field] = value
        elif getattr(current, field) is not None and getattr(current, field) != value:
            bad(f"sandbox.{names[field]}", _UNTRUSTED_NOTE)
    if excluded:
        bad("sandbox.excludedCommands", _UNTRUSTED_NOTE)
    if "allowed_domains" in net:
        mine = current.allowed_domains or ()
        theirs = net["allowed_domains"]
        kept = tuple(d for d in mine if d in theirs)  # the repository can only shorten the user's list
        if set(theirs) - set(mine):
            bad("sandbox.network.allowedDomains", "a repository's settings may only shorten the user's list: the "
                                                  "domains it adds are ignored")
        if current.allowed_domains is not None:
            keep["allowed_domains"] = kept
    for field, key in (("allow_unix_sockets", "allowUnixSockets"), ("allow_all_unix_sockets", "allowAllUnixSockets"),
                       ("allow_local_binding", "allowLocalBinding"), ("http_proxy_port", "httpProxyPort")):
        if net.get(field):
            bad(f"sandbox.network.{key}", _UNTRUSTED_NOTE)
    return replace(current, **keep)


def _bool(raw: dict[str, Any], key: str, where: str, bad: Report) -> bool | None:
    value = raw.get(key)
    if value is None or isinstance(value, bool):
        return value
    bad(f"{where}.{key}", f"expected true or false, got {_type(value)}")
    return None


def _strings(raw: dict[str, Any], key: str, where: str, bad: Report) -> list[str] | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return list(value)
    bad(f"{where}.{key}", f"expected a list of strings, got {_type(value)}")
    return None


def _type(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list",
            dict: "an object"}.get(type(value), type(value).__name__)
