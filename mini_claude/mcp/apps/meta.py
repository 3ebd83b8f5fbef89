"""A `ui://` resource's `_meta.ui` (SEP-1865 `UIResourceMeta`) and its HTML, read from untrusted server data.

`resource_meta(content_item, list_entry=None)` reads `_meta.ui` from the `resources/read` content item, or, when the
item carries none, from the `resources/list` entry (the spec puts it on either). The result is plain frozen data:

- `csp`: the four declared domain lists (`ViewCspDeclared`), or None when the server declared no `csp` at all;
- `permissions`: the browser features the view asks for (camera, microphone, geolocation, clipboardWrite);
- `domain`: the dedicated origin the server asks for (kept for the log; a loopback host cannot honour it);
- `prefers_border`: True / False / None (host decides).

Everything is bounded: at most `MAX_DOMAINS` entries per list, each a string of at most `MAX_DOMAIN_CHARS`. A
field of the wrong type, or an entry over a bound, is dropped and named in `warnings` (one line each, for the log);
it never raises. Whether a kept domain is an origin a CSP may name is csp.py's decision, not this module's.

`read_view_html(content_item)` returns the HTML document: `text`, or base64 `blob` decoded as UTF-8, with mime type
`text/html;profile=mcp-app` and at most `MAX_HTML_BYTES`; anything else raises `ViewResourceError` (a ValueError).

No I/O here.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mini_claude.mcp.apps.channel import MIME_TYPE

__all__ = [
    "MAX_DOMAINS",
    "MAX_DOMAIN_CHARS",
    "MAX_HTML_BYTES",
    "PERMISSION_NAMES",
    "UiResourceMeta",
    "ViewCspDeclared",
    "ViewResourceError",
    "read_view_html",
    "resource_meta",
]

MAX_DOMAINS = 32
MAX_DOMAIN_CHARS = 256
MAX_HTML_BYTES = 8 * 1024 * 1024
MAX_DOMAIN_FIELD_CHARS = 253  # `domain`: a DNS name's limit
PERMISSION_NAMES = ("camera", "microphone", "geolocation", "clipboardWrite")
_CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")


class ViewResourceError(ValueError):
    """A `ui://` resource cannot be shown: wrong mime type, no content, bad base64, not UTF-8, or too large."""


@dataclass(frozen=True)
class ViewCspDeclared:
    """The domains a view's server declared (`_meta.ui.csp`), bounded but not yet checked as CSP sources."""

    connect_domains: tuple[str, ...] = ()
    resource_domains: tuple[str, ...] = ()
    frame_domains: tuple[str, ...] = ()
    base_uri_domains: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, list[str]]:
        """The spec's camelCase shape, every list present (for logs and traces)."""
        return {"connectDomains": list(self.connect_domains), "resourceDomains": list(self.resource_domains),
                "frameDomains": list(self.frame_domains), "baseUriDomains": list(self.base_uri_domains)}


@dataclass(frozen=True)
class UiResourceMeta:
    """A view resource's `_meta.ui`, parsed. `warnings` names every field or entry that was dropped."""

    csp: ViewCspDeclared | None = None
    permissions: frozenset[str] = frozenset()  # a subset of PERMISSION_NAMES
    domain: str | None = None
    prefers_border: bool | None = None
    warnings: tuple[str, ...] = ()


def resource_meta(content_item: Mapping[str, Any], list_entry: Mapping[str, Any] | None = None) -> UiResourceMeta:
    """The `_meta.ui` of a `resources/read` content item, or of the `resources/list` entry when the item has none."""
    ui = _ui_of(content_item)
    if ui is None and list_entry is not None:
        ui = _ui_of(list_entry)
    if ui is None:
        return UiResourceMeta()
    warnings: list[str] = []
    csp = _csp(ui.get("csp"), warnings) if "csp" in ui else None
    permissions = _permissions(ui.get("permissions"), warnings)
    domain = ui.get("domain")
    if domain is not None and not (isinstance(domain, str) and 0 < len(domain) <= MAX_DOMAIN_FIELD_CHARS):
        warnings.append("_meta.ui.domain ignored: not a string of 1..253 characters")
        domain = None
    border = ui.get("prefersBorder")
    if border is not None and not isinstance(border, bool):
        warnings.append("_meta.ui.prefersBorder ignored: not a boolean")
        border = None
    return UiResourceMeta(csp=csp, permissions=permissions, domain=domain, prefers_border=border,
                          warnings=tuple(warnings))


def read_view_html(content_item: Mapping[str, Any]) -> str:
    """The HTML document of a `ui://` resource's content item, checked (see the module docstring)."""
    mime = content_item.get("mimeType")
    if not isinstance(mime, str) or mime.replace(" ", "").lower() != MIME_TYPE:
        raise ViewResourceError(f"a view resource must have mimeType {MIME_TYPE!r}, got {_short(mime)}")
    text = content_item.get("text")
    if isinstance(text, str):
        if len(text) > MAX_HTML_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_HTML_BYTES:
            raise ViewResourceError(f"the view's HTML is over {MAX_HTML_BYTES} bytes")
        return text
    blob = content_item.get("blob")
    if not isinstance(blob, str):
        raise ViewResourceError("a view resource must carry its HTML in 'text' or base64 'blob'")
    if len(blob) > (MAX_HTML_BYTES + 2) // 3 * 4 + 4:
        raise ViewResourceError(f"the view's HTML is over {MAX_HTML_BYTES} bytes")
    try:
        raw = base64.b64decode(blob, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ViewResourceError("the view resource's 'blob' is not valid base64") from exc
    if len(raw) > MAX_HTML_BYTES:
        raise ViewResourceError(f"the view's HTML is over {MAX_HTML_BYTES} bytes")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ViewResourceError("the view resource's 'blob' is not UTF-8 text") from exc


def _ui_of(item: Mapping[str, Any]) -> Mapping[str, Any] | None:
    meta = item.get("_meta")
    if not isinstance(meta, Mapping):
        return None
    ui = meta.get("ui")
    return ui if isinstance(ui, Mapping) else None


def _csp(raw: object, warnings: list[str]) -> ViewCspDeclared:
    if not isinstance(raw, Mapping):
        warnings.append("_meta.ui.csp ignored: not an object (no outside domain is allowed)")
        return ViewCspDeclared()
    lists = [_domains(raw.get(key), key, warnings) for key in _CSP_KEYS]
    return ViewCspDeclared(*lists)


def _domains(raw: object, key: str, warnings: list[str]) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        warnings.append(f"_meta.ui.csp.{key} ignored: not a list")
        return ()
    kept: list[str] = []
    bad = 0
    for entry in raw:
        if len(kept) == MAX_DOMAINS:
            warnings.append(f"_meta.ui.csp.{key}: only the first {MAX_DOMAINS} entries kept")
            break
        if not isinstance(entry, str) or not entry or len(entry) > MAX_DOMAIN_CHARS:
            bad += 1
        elif entry not in kept:
            kept.append(entry)
    if bad:
        warnings.append(f"_meta.ui.csp.{key}: {bad} entry(ies) dropped (not a string of 1..{MAX_DOMAIN_CHARS} characters)")
    return tuple(kept)


def _permissions(raw: object, warnings: list[str]) -> frozenset[str]:
    if raw is None:
        return frozenset()
    if not isinstance(raw, Mapping):
        warnings.append("_meta.ui.permissions ignored: not an object")
        return frozenset()
    asked = set()
    unknown = 0
    for name, value in raw.items():
        if name not in PERMISSION_NAMES:
            unknown += 1
        elif isinstance(value, Mapping) or value is True:
            asked.add(name)
        else:
            warnings.append(f"_meta.ui.permissions.{name} ignored: not an object")
    if unknown:
        warnings.append(f"_meta.ui.permissions: {unknown} unknown permission(s) ignored")
    return frozenset(asked)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
