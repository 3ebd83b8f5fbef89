"""Red team (WebFetch): the host the permission rules judge must be the host the fetch connects to.

The rules read a URL's host with `urllib.parse.urlsplit` (permissions/calls.py), while httpx connects to its own
reading: IDNA-encoded, with `。` (U+3002), `．` (U+FF0E) and `｡` (U+FF61) as dots. So `http://127。0。0。1/` was judged
as the host `127。0。0。1` — no `WebFetch(domain:127.0.0.1)` deny rule matched — and fetched from 127.0.0.1: a
prompt-injected model walked past the user's deny rule. Now such a URL is refused before any rule is weighed, naming
the host to write instead, and the tool refuses it too (a redirect, or a caller without the gate)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mini_claude.permissions import PermissionMode
from mini_claude.permissions.gate import PermissionGate
from mini_claude.permissions.rules import RuleSet
from mini_claude.tools.base import ToolContext
from mini_claude.tools.web_fetch import WebFetchTool, fetch_host
from tests.integration.conftest import Cli, answer, result_text, tool_results, tool_use
from tests.webfetch.conftest import SiteServer, site

__all__ = ["site"]  # the fixture, imported for this module

pytestmark = pytest.mark.timeout(120)

DOTS = ("\u3002", "\uff0e", "\uff61")


def test_a_deny_rule_holds_against_a_host_written_with_other_dots(cli: Cli, site: SiteServer) -> None:
    disguised = [f"http://{dot.join(['127', '0', '0', '1'])}:{site.port}/page" for dot in DOTS]
    mock = cli.mock([*(tool_use("WebFetch", {"url": url, "prompt": "p"}) for url in disguised), answer("done")])
    r = cli.run("-p", "read it", "--allowedTools", "WebFetch", "--disallowedTools", "WebFetch(domain:127.0.0.1)")
    results = tool_results(mock)
    assert len(results) == 3
    for result in results:
        assert result.get("is_error") is True
        assert ('permission denied for WebFetch: the rules would read the host of this URL as "127' in
                result_text(result))
        assert 'write the URL with the host "127.0.0.1"' in result_text(result)
    assert r.rc == 0 and "denied on the way" in r.stderr, r.stderr
    assert site.hits == []  # nothing reached the denied host


async def test_the_gate_and_the_tool_refuse_a_host_read_two_ways(site: SiteServer, tmp_path: Path) -> None:
    asked: list[Any] = []

    async def ask(tool: Any, args: dict[str, Any]) -> str:
        asked.append(args)
        return "yes"

    tool = WebFetchTool()
    gate = PermissionGate(PermissionMode.BYPASS, RuleSet.from_strings(deny=["WebFetch(domain:127.0.0.1)"]),
                          ask=ask, cwd=tmp_path, home=tmp_path)
    for url in (f"http://127\u30020\u30020\u30021:{site.port}/page", "http://b\u00fccher.example/",
                f"http://localhost\uff0e:{site.port}/page"):
        decision = await gate.check(tool, {"url": url, "prompt": "p"})
        assert not decision.allowed and "the rules would read the host" in decision.reason, url
        result = await tool.run({"url": url, "prompt": "p"}, ToolContext(cwd=tmp_path, spill_dir=tmp_path / "s",
                                                                         home=tmp_path))
        assert result.is_error and "the rules would read the host" in result.as_text(), url
    assert asked == [] and site.hits == []
    # the plain forms are untouched: the deny rule denies, another host is allowed in bypass mode
    assert not (await gate.check(tool, {"url": site.url("/page"), "prompt": "p"})).allowed
    assert (await gate.check(tool, {"url": site.url("/page", host="localhost"), "prompt": "p"})).allowed
    assert (await gate.check(tool, {"url": "https://xn--bcher-kva.example/", "prompt": "p"})).allowed


def test_fetch_host_is_the_host_httpx_connects_to() -> None:
    assert fetch_host("http://127\u30020\u30020\u30021:80/") == "127.0.0.1"
    assert fetch_host("HTTPS://Example.COM./x") == "example.com"
    assert fetch_host("http://b\u00fccher.example/") == "xn--bcher-kva.example"
    assert fetch_host("http://[::1]:8080/") == "::1"
    assert fetch_host("ftp://example.com/") is None and fetch_host("http:///x") is None
