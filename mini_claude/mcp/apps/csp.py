"""The Content-Security-Policy and Permission Policy a view gets: what its server declared, cut to what the user
granted, never looser than the spec's restrictive default.

`build_view_csp(declared, approved)`:
- `declared` is the resource's `_meta.ui.csp` (meta.py `ViewCspDeclared`, or None when the server declared none);
- `approved` is the set of origins the USER granted this server (from settings the session side reads; empty by
  default). A project file can never put an origin here; that is the session side's rule.
- A declared entry is granted only when it is a well-formed source (below) AND equal to an approved one (both
  compared after lower-casing and dropping one trailing `/`). The result is therefore declared ∩ approved.

Well-formed sources are origins only: `https://host[:port]`, `https://*.host[:port]` (a wildcard of at least two
labels, so `https://*.com` is refused) and, in `connectDomains` only, `wss://host[:port]`. A host is ASCII
letters, digits, `-` and dots, with at least one dot. Everything else is dropped: other schemes (`http:`, `data:`,
`javascript:`), a bare `*`, keywords such as `'unsafe-eval'`, paths, and any `;`, `,`, quote or whitespace (the CSP
injection a hostile server would try through its metadata).

`DEFAULT_CSP` (nothing granted) is the spec default plus `frame-src 'none'; object-src 'none'; base-uri 'self'`.
A grant only ever adds the granted origins to a directive (`connect-src`, `frame-src` and `base-uri` name just the
granted origins instead of `'none'` / `'self'`, as the spec's sketch does); `font-src` appears only with granted
resource domains. `AppliedCsp.header` is the exact header; `AppliedCsp.granted` is what to report to the view as
`hostCapabilities.sandbox.csp` (only the lists that got something); `AppliedCsp.dropped` lists each declared entry
that was refused and why, for the audit log, and `AppliedCsp.unapproved` the well-formed ones the user has not
approved (what the user could grant: the terminal names them once).

`allow_attribute(permissions, approved)` gives the iframe `allow` attribute for the asked ∩ approved permissions
(`camera; microphone; geolocation; clipboard-write`, in that order), "" for none; `granted_permissions` gives the
matching `hostCapabilities.sandbox.permissions`. Pure functions, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from mini_claude.mcp.apps.meta import PERMISSION_NAMES, ViewCspDeclared

__all__ = ["DEFAULT_CSP", "AppliedCsp", "allow_attribute", "build_view_csp", "granted_permissions",
           "normalize_source"]

DEFAULT_CSP = ("default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
               "img-src 'self' data:; media-src 'self' data:; connect-src 'none'; frame-src 'none'; "
               "object-src 'none'; base-uri 'self'")

_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_HOST = rf"{_LABEL}(?:\.{_LABEL})+"
_PORT = r"(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?"
_HTTPS = re.compile(rf"https://(?:\*\.)?{_HOST}{_PORT}")
_WSS = re.compile(rf"wss://{_HOST}{_PORT}")
_MAX_SOURCE_CHARS = 256

_PERMISSION_FEATURES = {"camera": "camera", "microphone": "microphone", "geolocation": "geolocation",
                        "clipboardWrite": "clipboard-write"}


@dataclass(frozen=True)
class AppliedCsp:
    """The policy one view is served with."""

    header: str
    granted: dict[str, list[str]] = field(default_factory=dict)  # hostCapabilities.sandbox.csp
    dropped: tuple[str, ...] = ()  # "connectDomains 'https://x.com': not approved by the user", …
    unapproved: tuple[str, ...] = ()  # the well-formed declared sources the user has not approved, in order


def normalize_source(entry: str, *, allow_wss: bool = False) -> str | None:
    """`entry` as a CSP source we accept (lower-cased, one trailing `/` dropped), or None when it is not one."""
    if not isinstance(entry, str) or len(entry) > _MAX_SOURCE_CHARS:
        return None
    source = entry.lower()
    if source.endswith("/"):
        source = source[:-1]
    if _HTTPS.fullmatch(source) or (allow_wss and _WSS.fullmatch(source)):
        return source
    return None


def build_view_csp(declared: ViewCspDeclared | None, approved: Iterable[str] = ()) -> AppliedCsp:
    """The view's CSP: declared ∩ approved, on top of `DEFAULT_CSP` (see the module docstring)."""
    approved_set = {source for entry in approved
                    if (source := normalize_source(entry, allow_wss=True)) is not None}
    if declared is None:
        return AppliedCsp(DEFAULT_CSP)
    dropped: list[str] = []
    unapproved: list[str] = []
    connect = _grant("connectDomains", declared.connect_domains, approved_set, dropped, unapproved, allow_wss=True)
    resource = _grant("resourceDomains", declared.resource_domains, approved_set, dropped, unapproved)
    frame = _grant("frameDomains", declared.frame_domains, approved_set, dropped, unapproved)
    base = _grant("baseUriDomains", declared.base_uri_domains, approved_set, dropped, unapproved)
    extra = "".join(f" {source}" for source in resource)
    directives = [
        "default-src 'none'",
        f"script-src 'self' 'unsafe-inline'{extra}",
        f"style-src 'self' 'unsafe-inline'{extra}",
        f"img-src 'self' data:{extra}",
        *([f"font-src {' '.join(resource)}"] if resource else []),
        f"media-src 'self' data:{extra}",
        f"connect-src {' '.join(connect) or _NONE}",
        f"frame-src {' '.join(frame) or _NONE}",
        "object-src 'none'",
        f"base-uri {' '.join(base) or _SELF}",
    ]
    granted = {key: list(values) for key, values in (("connectDomains", connect), ("resourceDomains", resource),
                                                      ("frameDomains", frame), ("baseUriDomains", base)) if values}
    return AppliedCsp("; ".join(directives), granted, tuple(dropped), tuple(dict.fromkeys(unapproved)))


_NONE = "'none'"
_SELF = "'self'"


def _grant(key: str, entries: Iterable[str], approved: set[str], dropped: list[str], unapproved: list[str], *,
           allow_wss: bool = False) -> list[str]:
    granted: list[str] = []
    for entry in entries:
        source = normalize_source(entry, allow_wss=allow_wss)
        if source is None:
            dropped.append(f"{key} {entry[:80]!r}: not an https origin{' or wss origin' if allow_wss else ''}")
        elif source not in approved:
            dropped.append(f"{key} {source!r}: not approved by the user")
            unapproved.append(source)
        elif source not in granted:
            granted.append(source)
    return granted


def granted_permissions(permissions: Iterable[str], approved: Iterable[str] = ()) -> dict[str, dict[str, object]]:
    """`hostCapabilities.sandbox.permissions`: each asked and approved permission as `{name: {}}`."""
    chosen = set(permissions) & set(approved)
    return {name: {} for name in PERMISSION_NAMES if name in chosen}


def allow_attribute(permissions: Iterable[str], approved: Iterable[str] = ()) -> str:
    """The view iframe's `allow` attribute for the asked ∩ approved permissions; "" when none."""
    return "; ".join(_PERMISSION_FEATURES[name] for name in granted_permissions(permissions, approved))
