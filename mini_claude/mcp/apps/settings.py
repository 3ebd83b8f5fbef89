"""The `mcpApps` setting: whether views of MCP Apps are shown, whether a browser opens, and which of a server's
declared domains and browser permissions the user lets its views have.

    "mcpApps": {
      "enabled": true,                 // false: no extension declared, no view shown (default true)
      "openBrowser": "auto",           // "auto": open the first view of a session; "never": print the URL only
      "approvedDomains": {"map": ["https://*.openstreetmap.org"]},   // per server; default none
      "approvedPermissions": {"scan": ["camera"]}   // per server: camera, microphone, geolocation, clipboardWrite
    }

`enabled` and `openBrowser` come from the most specific of the user's own files that sets them (--settings, then
the user's file), and a repository's files (`.claude/settings.json` and `.claude/settings.local.json`: a repository
can ship either, as settings.py and settings_trust.py treat them) may switch Apps off or the browser to "never" but
never on. `approvedDomains` and `approvedPermissions` count only from the user's own files (user, --settings): a
repository may never approve domains or permissions for views, nor borrow the user's: a grant names a server,
and a server of that name from the repository's `.mcp.json` (which shadows the user's own) gets none. Only sessions
that can show a view (the REPL, the Python API's `Client`) read it; `-p` never shows views.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SETTING_KEY", "AppsSettings", "declined_note"]

log = logging.getLogger(__name__)

SETTING_KEY = "mcpApps"
_MODES = ("auto", "never")


@dataclass(frozen=True)
class AppsSettings:
    enabled: bool = True
    open_browser: str = "auto"
    approved_domains: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    approved_permissions: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def approved_for(self, server: str) -> tuple[str, ...]:
        return tuple(self.approved_domains.get(server, ()))

    def permissions_for(self, server: str) -> tuple[str, ...]:
        return tuple(self.approved_permissions.get(server, ()))

    @classmethod
    def from_layers(cls, *, user: Mapping[str, Any], project: Mapping[str, Any], local: Mapping[str, Any],
                    flag: Mapping[str, Any]) -> AppsSettings:
        """From each settings file's raw object (settings.Settings' `user`, `project`, `local`, `flag`)."""
        own = [_section(layer) for layer in (user, flag)]  # least to most specific
        repos = [_section(project), _section(local)]  # both come with the repository
        enabled, browser = True, "auto"
        approved: dict[str, tuple[str, ...]] = {}
        permitted: dict[str, tuple[str, ...]] = {}
        for section in own:
            if isinstance(section.get("enabled"), bool):
                enabled = section["enabled"]
            if section.get("openBrowser") in _MODES:
                browser = section["openBrowser"]
            approved.update(_per_server(section.get("approvedDomains")))
            permitted.update(_per_server(section.get("approvedPermissions")))
        for repo in repos:
            if repo.get("enabled") is False:  # a repository may switch Apps off, never on
                enabled = False
            if repo.get("openBrowser") == "never":
                browser = "never"
            for key in ("approvedDomains", "approvedPermissions"):
                if key in repo:
                    log.info("mcpApps.%s in a project settings file is ignored (only your own files count)", key)
        return cls(enabled=enabled, open_browser=browser, approved_domains=approved, approved_permissions=permitted)

    @classmethod
    def from_settings(cls, settings: Any) -> AppsSettings:
        """From a `settings.Settings` (its per-file raw objects)."""
        return cls.from_layers(user=settings.user, project=settings.project, local=settings.local,
                               flag=settings.flag)


def declined_note(server: str, tool: str, domains: tuple[str, ...], permissions: tuple[str, ...] = (), *,
                  repository: bool = False) -> str:
    """The one line that tells the user a server's view declared origins or asked for browser permissions they
    have not approved, and where approving one would go (server text: the front end neutralises the line);
    `repository`: the server comes from the repository's `.mcp.json`, which no approval of a name reaches (a
    grant for `"scan"` is for the user's own server of that name, never a repository's that shadows it)."""
    named = ", ".join(domains[:5]) + (", …" if len(domains) > 5 else "")
    parts = [f"may not reach {named}"] if domains else []
    if permissions:
        parts.append(f"may not use {', '.join(permissions)}")
    keys = " / ".join(key for key, wanted in (("approvedDomains", domains), ("approvedPermissions", permissions))
                      if wanted)
    if repository:
        return (f"the view of {server}/{tool} {' and '.join(parts)}: it is a server of this repository's "
                f".mcp.json, and {SETTING_KEY}.{keys} grants only servers of your own configuration")
    return (f"the view of {server}/{tool} {' and '.join(parts)}: only what you list in {SETTING_KEY}.{keys}"
            f'["{server}"] of ~/.claude/settings.json is allowed')


def _per_server(value: Any) -> dict[str, tuple[str, ...]]:
    """`{"server": ["a", "b"]}` as server → strings; anything else in it is left out."""
    if not isinstance(value, dict):
        return {}
    return {server: tuple(item for item in listed if isinstance(item, str))
            for server, listed in value.items() if isinstance(server, str) and isinstance(listed, list)}


def _section(layer: Mapping[str, Any]) -> Mapping[str, Any]:
    value = layer.get(SETTING_KEY) if isinstance(layer, Mapping) else None
    return value if isinstance(value, dict) else {}
