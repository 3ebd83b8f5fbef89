"""The view's CSP and `allow` attribute: exact header strings for the default, a partial grant and every directive;
injection attempts through server metadata dropped; and a property: whatever a server declares and the user
approves, the header names no origin outside the approved set and carries no directive of the server's making."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from mini_claude.mcp.apps.csp import (
    DEFAULT_CSP,
    AppliedCsp,
    allow_attribute,
    build_view_csp,
    granted_permissions,
    normalize_source,
)
from mini_claude.mcp.apps.meta import ViewCspDeclared

SPEC_DEFAULT = ("default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
                "img-src 'self' data:; media-src 'self' data:; connect-src 'none';")
MAP = ViewCspDeclared(  # server-map 2.0.3's declaration
    connect_domains=("https://*.openstreetmap.org", "https://cesium.com", "https://*.cesium.com"),
    resource_domains=("https://*.openstreetmap.org", "https://cesium.com", "https://*.cesium.com"))


def test_the_default_is_the_spec_default_plus_frame_object_and_base() -> None:
    assert DEFAULT_CSP == SPEC_DEFAULT + " frame-src 'none'; object-src 'none'; base-uri 'self'"
    assert build_view_csp(None) == AppliedCsp(DEFAULT_CSP)
    assert build_view_csp(None, ["https://cesium.com"]) == AppliedCsp(DEFAULT_CSP)


def test_declared_but_not_approved_is_the_default_and_says_why() -> None:
    applied = build_view_csp(MAP)
    assert applied.header == DEFAULT_CSP
    assert applied.granted == {}
    assert applied.dropped[:2] == ("connectDomains 'https://*.openstreetmap.org': not approved by the user",
                                   "connectDomains 'https://cesium.com': not approved by the user")
    assert len(applied.dropped) == 6
    assert applied.unapproved == ("https://*.openstreetmap.org", "https://cesium.com",
                                  "https://*.cesium.com")  # each once, in order


def test_a_partial_grant_names_only_the_approved_origins() -> None:
    applied = build_view_csp(MAP, ["https://*.openstreetmap.org", "HTTPS://Cesium.com/", "https://other.example"])
    assert applied.header == (
        "default-src 'none'; "
        "script-src 'self' 'unsafe-inline' https://*.openstreetmap.org https://cesium.com; "
        "style-src 'self' 'unsafe-inline' https://*.openstreetmap.org https://cesium.com; "
        "img-src 'self' data: https://*.openstreetmap.org https://cesium.com; "
        "font-src https://*.openstreetmap.org https://cesium.com; "
        "media-src 'self' data: https://*.openstreetmap.org https://cesium.com; "
        "connect-src https://*.openstreetmap.org https://cesium.com; "
        "frame-src 'none'; object-src 'none'; base-uri 'self'")
    assert applied.granted == {"connectDomains": ["https://*.openstreetmap.org", "https://cesium.com"],
                               "resourceDomains": ["https://*.openstreetmap.org", "https://cesium.com"]}
    assert applied.unapproved == ("https://*.cesium.com",)  # the one origin left unapproved


def test_frames_base_uri_and_websockets() -> None:
    declared = ViewCspDeclared(connect_domains=("wss://live.example.com:8443",),
                               frame_domains=("https://www.youtube.com", "wss://www.youtube.com"),
                               base_uri_domains=("https://cdn.example.com",))
    approved = ["wss://live.example.com:8443", "https://www.youtube.com", "https://cdn.example.com",
                "wss://www.youtube.com"]
    applied = build_view_csp(declared, approved)
    assert applied.header == (
        "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; media-src 'self' data:; connect-src wss://live.example.com:8443; "
        "frame-src https://www.youtube.com; object-src 'none'; base-uri https://cdn.example.com")
    assert applied.granted == {"connectDomains": ["wss://live.example.com:8443"],
                               "frameDomains": ["https://www.youtube.com"],
                               "baseUriDomains": ["https://cdn.example.com"]}
    assert applied.dropped == ("frameDomains 'wss://www.youtube.com': not an https origin",)


INJECTIONS = [
    "https://a.com; script-src *", "https://a.com,https://b.com", "'unsafe-eval'", "*", "https://*", "https://*.com",
    "http://plain.example.com", "javascript:alert(1)", "data:", "blob:", "https://a.com/path", "https://a.com:0",
    "https://a.com:65536", "https://a.com 'unsafe-inline'", "https://a.com\nscript-src *", "https://a.com\t",
    "https://\"a.com\"", "https://a..com", "https://-a.com", "https://xn--80ak6aa92e.com:443/x", "https://[::1]",
    "https://localhost", "https://a.com'", "wss://*.a.com", "https://a.*.com", "https://user@a.com",
    "https://a.com?x", "https://a.com#x", "https://é.com", "'self'", "https:", "https://a.com;",
]


def test_injection_attempts_are_dropped_even_when_approved() -> None:
    declared = ViewCspDeclared(connect_domains=tuple(INJECTIONS), resource_domains=tuple(INJECTIONS))
    applied = build_view_csp(declared, INJECTIONS)
    assert applied.header == DEFAULT_CSP
    assert applied.granted == {}
    assert len(applied.dropped) == 2 * len(INJECTIONS)
    for entry in INJECTIONS:
        assert normalize_source(entry, allow_wss=True) is None, entry


def test_accepted_source_forms() -> None:
    assert normalize_source("https://a.example.com") == "https://a.example.com"
    assert normalize_source("https://*.Example.com/") == "https://*.example.com"
    assert normalize_source("https://1.2.3.4:8443") == "https://1.2.3.4:8443"
    assert normalize_source("wss://a.example.com") is None
    assert normalize_source("wss://a.example.com", allow_wss=True) == "wss://a.example.com"


def test_permissions_are_asked_and_approved() -> None:
    asked = {"camera", "clipboardWrite", "geolocation"}
    assert allow_attribute(asked) == ""
    assert allow_attribute(asked, {"clipboardWrite", "camera", "microphone"}) == "camera; clipboard-write"
    assert granted_permissions(asked, {"clipboardWrite", "camera"}) == {"camera": {}, "clipboardWrite": {}}
    assert allow_attribute(set(), {"camera"}) == ""


_DIRECTIVES = {"default-src", "script-src", "style-src", "img-src", "font-src", "media-src", "connect-src",
               "frame-src", "object-src", "base-uri"}
_KEYWORDS = {"'none'", "'self'", "'unsafe-inline'", "data:"}
_host = st.from_regex(r"[a-z]{1,5}(\.[a-z]{1,5}){1,2}", fullmatch=True)
_entry = st.one_of(
    st.builds(lambda h: f"https://{h}", _host),
    st.builds(lambda h: f"https://*.{h}", _host),
    st.builds(lambda h, p: f"wss://{h}:{p}", _host, st.integers(1, 65535)),
    st.builds(lambda h, junk: f"https://{h}{junk}", _host, st.text(min_size=1, max_size=12)),
    st.text(max_size=30),
)
_lists = st.lists(_entry, max_size=6).map(tuple)


@settings(max_examples=150, deadline=None)
@given(connect=_lists, resource=_lists, frame=_lists, base=_lists, approved=st.lists(_entry, max_size=8),
       use_declared=st.booleans())
def test_the_header_never_names_an_unapproved_origin_nor_a_smuggled_directive(
        connect: tuple[str, ...], resource: tuple[str, ...], frame: tuple[str, ...], base: tuple[str, ...],
        approved: list[str], use_declared: bool) -> None:
    declared = ViewCspDeclared(connect, resource, frame, base) if use_declared else None
    applied = build_view_csp(declared, approved)
    approved_sources = {s for a in approved if (s := normalize_source(a, allow_wss=True))}
    header = applied.header
    assert re.fullmatch(r"[\x21-\x7e ]+", header), header  # one line, printable, no tab or newline
    directives = header.split("; ")
    names = [d.split(" ")[0] for d in directives]
    assert set(names) <= _DIRECTIVES and len(names) == len(set(names))
    for directive in directives:
        for source in directive.split(" ")[1:]:
            assert source in _KEYWORDS or source in approved_sources, source
    for key, values in applied.granted.items():
        assert values and set(values) <= approved_sources, key
    if not applied.granted:
        assert header == DEFAULT_CSP
