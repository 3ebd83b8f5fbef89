"""The WebFetch tool against a real loopback HTTP server: HTML in, Markdown out; redirects checked hop by hop; no
credentials sent; size and time caps."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from mini_claude.tools.base import ToolContext
from mini_claude.tools.web_fetch import WebFetchTool, html_to_markdown
from tests.webfetch.conftest import SiteServer


def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, spill_dir=tmp_path / "spill", home=tmp_path)


async def fetch(tmp_path: Path, url: str, tool: WebFetchTool | None = None) -> tuple[str, bool]:
    result = await (tool or WebFetchTool()).run({"url": url, "prompt": "what does it say?"}, ctx(tmp_path))
    return result.as_text(), result.is_error


async def test_html_becomes_markdown(site: SiteServer, tmp_path: Path) -> None:
    text, error = await fetch(tmp_path, site.url("/page"))
    assert not error
    assert "# Hello" in text and "A [link](/docs) and **bold** text." in text and "- one\n- two" in text
    assert "steal()" not in text and "color:red" not in text  # scripts and styles dropped
    assert "Answer this from the page below: what does it say?" in text
    assert "untrusted content" in text


def test_markdown_conversion_exact() -> None:
    assert html_to_markdown("<h2>T</h2><p>x <i>y</i></p><script>z</script>") == "## T\n\nx *y*"


async def test_same_host_redirect_followed_and_no_cookie_or_credentials_sent(
        site: SiteServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a proxy with credentials in the environment is never used (the fetch would fail through it)
    monkeypatch.setenv("HTTP_PROXY", "http://user:pw@127.0.0.1:9")
    monkeypatch.setenv("ALL_PROXY", "http://user:pw@127.0.0.1:9")
    (tmp_path / ".netrc").write_text("machine 127.0.0.1 login me password hunter2\n")
    monkeypatch.setenv("NETRC", str(tmp_path / ".netrc"))
    text, error = await fetch(tmp_path, site.url("/cookie"))
    assert not error, text
    headers = text.split("<page", 1)[1].lower()
    assert "host: 127.0.0.1" in headers
    assert "cookie" not in headers and "authorization" not in headers and "proxy" not in headers
    assert site.hits == [f"127.0.0.1:{site.port}/cookie", f"127.0.0.1:{site.port}/echo"]
    text, error = await fetch(tmp_path, site.url("/same"))
    assert not error and "# Hello" in text


async def test_redirect_to_another_host_is_not_followed(site: SiteServer, tmp_path: Path) -> None:
    text, error = await fetch(tmp_path, site.url("/other"))
    assert not error
    assert "REDIRECT DETECTED: The URL redirects to a different host." in text
    assert f'- url: "http://localhost:{site.port}/page"' in text
    assert site.hits == [f"127.0.0.1:{site.port}/other"]  # localhost never reached


@pytest.mark.parametrize(("url", "why"), [
    ("ftp://127.0.0.1/x", "only http:// and https://"),
    ("file:///etc/passwd", "only http:// and https://"),
    ("http://me:pw@127.0.0.1:1/x", "a URL with credentials"),
    ("not a url", "only http:// and https://"),
])
async def test_bad_urls_refused(tmp_path: Path, url: str, why: str) -> None:
    text, error = await fetch(tmp_path, url)
    assert error and why in text


async def test_redirect_to_other_scheme_and_loops_refused(site: SiteServer, tmp_path: Path) -> None:
    text, error = await fetch(tmp_path, site.url("/ftp"))
    assert error and "redirects to ftp://127.0.0.1/file" in text and "only http:// and https://" in text
    text, error = await fetch(tmp_path, site.url("/loop"))
    assert error and "more than 10 redirects" in text


async def test_oversized_body_is_cut(site: SiteServer, tmp_path: Path) -> None:
    text, error = await fetch(tmp_path, site.url("/big"), WebFetchTool(max_bytes=10_000))
    assert not error
    assert "only its first 10000 bytes were read" in text
    assert "x" * 10_000 in text and "x" * 10_001 not in text


async def test_slow_server_is_bounded(site: SiteServer, tmp_path: Path) -> None:
    began = time.monotonic()
    text, error = await fetch(tmp_path, site.url("/slow"), WebFetchTool(timeout_s=1.0))
    seconds = time.monotonic() - began
    assert error and "took longer than 1 s" in text
    assert seconds < 5, seconds


async def test_non_text_refused_and_http_errors_marked(site: SiteServer, tmp_path: Path) -> None:
    text, error = await fetch(tmp_path, site.url("/binary"))
    assert error and "content type image/png is not text" in text
    text, error = await fetch(tmp_path, site.url("/missing"))
    assert error and "404 Not Found" in text and "not here" in text
