"""A `ui://` resource's `_meta.ui` and HTML, read from what servers really send (the example servers' shapes) and
from hostile or broken input: exact parsed values, the content item before the list entry, bounds, warnings."""

from __future__ import annotations

import base64

import pytest

from mini_claude.mcp.apps.meta import (
    MAX_DOMAINS,
    MAX_HTML_BYTES,
    UiResourceMeta,
    ViewCspDeclared,
    ViewResourceError,
    read_view_html,
    resource_meta,
)

MIME = "text/html;profile=mcp-app"
PDF_ITEM = {  # server-pdf 2.0.4's resources/read content item, HTML cut
    "uri": "ui://pdf-viewer/mcp-app.html", "mimeType": MIME, "text": "<!doctype html><p>pdf</p>",
    "_meta": {"ui": {"permissions": {"clipboardWrite": {}},
                     "csp": {"connectDomains": ["https://unpkg.com"], "resourceDomains": ["https://unpkg.com"]}}},
}


def test_no_meta_anywhere_is_the_empty_default() -> None:
    assert resource_meta({"uri": "ui://x", "mimeType": MIME, "text": ""}) == UiResourceMeta()
    assert resource_meta({"_meta": None}, {"_meta": {"ui": "nope"}}) == UiResourceMeta()


def test_the_pdf_servers_meta_parses_exactly() -> None:
    assert resource_meta(PDF_ITEM) == UiResourceMeta(
        csp=ViewCspDeclared(connect_domains=("https://unpkg.com",), resource_domains=("https://unpkg.com",)),
        permissions=frozenset({"clipboardWrite"}))


def test_the_content_item_wins_over_the_list_entry_which_is_the_fallback() -> None:
    listed = {"uri": "ui://x", "_meta": {"ui": {"prefersBorder": True, "domain": "abc.example.com"}}}
    assert resource_meta(PDF_ITEM, listed).prefers_border is None  # the item's own _meta.ui is used whole
    fallback = resource_meta({"uri": "ui://x", "mimeType": MIME, "text": ""}, listed)
    assert fallback == UiResourceMeta(prefers_border=True, domain="abc.example.com")


def test_csp_present_but_empty_differs_from_csp_absent() -> None:
    assert resource_meta({"_meta": {"ui": {"csp": {}}}}).csp == ViewCspDeclared()
    assert resource_meta({"_meta": {"ui": {}}}).csp is None


def test_wrong_types_are_dropped_with_a_warning_each() -> None:
    meta = resource_meta({"_meta": {"ui": {
        "csp": {"connectDomains": "https://a.example.com", "frameDomains": [1, None, "", "https://f.example.com"]},
        "permissions": {"camera": "yes", "microphone": {}, "usb": {}, "serial": {}},
        "domain": 42,
        "prefersBorder": "true",
    }}})
    assert meta.csp == ViewCspDeclared(frame_domains=("https://f.example.com",))
    assert meta.permissions == frozenset({"microphone"})
    assert meta.domain is None and meta.prefers_border is None
    assert meta.warnings == (
        "_meta.ui.csp.connectDomains ignored: not a list",
        "_meta.ui.csp.frameDomains: 3 entry(ies) dropped (not a string of 1..256 characters)",
        "_meta.ui.permissions.camera ignored: not an object",
        "_meta.ui.permissions: 2 unknown permission(s) ignored",
        "_meta.ui.domain ignored: not a string of 1..253 characters",
        "_meta.ui.prefersBorder ignored: not a boolean",
    )


def test_a_csp_that_is_not_an_object_allows_nothing() -> None:
    meta = resource_meta({"_meta": {"ui": {"csp": ["https://a.example.com"]}}})
    assert meta.csp == ViewCspDeclared()
    assert meta.warnings == ("_meta.ui.csp ignored: not an object (no outside domain is allowed)",)


def test_domain_lists_are_bounded_and_deduplicated() -> None:
    many = [f"https://h{i}.example.com" for i in range(MAX_DOMAINS + 10)]
    meta = resource_meta({"_meta": {"ui": {"csp": {"resourceDomains": ["https://a.example.com"] * 3 + many,
                                                   "connectDomains": ["https://" + "a" * 300 + ".com"]}}}})
    assert meta.csp is not None
    assert meta.csp.resource_domains == ("https://a.example.com", *many[: MAX_DOMAINS - 1])
    assert meta.csp.connect_domains == ()
    assert "_meta.ui.csp.resourceDomains: only the first 32 entries kept" in meta.warnings


def test_html_from_text_and_from_base64_blob() -> None:
    assert read_view_html(PDF_ITEM) == "<!doctype html><p>pdf</p>"
    blob = base64.b64encode("<p>é</p>".encode()).decode()
    assert read_view_html({"mimeType": MIME, "blob": blob}) == "<p>é</p>"
    assert read_view_html({"mimeType": "text/html; profile=mcp-app", "text": "x"}) == "x"


@pytest.mark.parametrize(("item", "message"), [
    ({"mimeType": "text/html", "text": "x"}, "a view resource must have mimeType 'text/html;profile=mcp-app', got 'text/html'"),
    ({"text": "x"}, "a view resource must have mimeType 'text/html;profile=mcp-app', got None"),
    ({"mimeType": MIME}, "a view resource must carry its HTML in 'text' or base64 'blob'"),
    ({"mimeType": MIME, "blob": "not base64!"}, "the view resource's 'blob' is not valid base64"),
    ({"mimeType": MIME, "blob": base64.b64encode(b"\xff\xfe").decode()}, "the view resource's 'blob' is not UTF-8 text"),
    ({"mimeType": MIME, "text": "x" * (MAX_HTML_BYTES + 1)}, "the view's HTML is over 8388608 bytes"),
    ({"mimeType": MIME, "text": "é" * (MAX_HTML_BYTES // 2 + 1)}, "the view's HTML is over 8388608 bytes"),
    ({"mimeType": MIME, "blob": base64.b64encode(b"x" * (MAX_HTML_BYTES + 1)).decode()},
     "the view's HTML is over 8388608 bytes"),
])
def test_bad_html_content_is_a_clear_value_error(item: dict[str, object], message: str) -> None:
    with pytest.raises(ViewResourceError) as caught:
        read_view_html(item)
    assert str(caught.value) == message
    assert isinstance(caught.value, ValueError)
