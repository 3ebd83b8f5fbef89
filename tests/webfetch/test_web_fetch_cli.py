"""Issue 21, acceptance 1 (web fetch): the real CLI (`python -m mini_claude -p`) against the mock model and a loopback
HTTP server — HTML in, Markdown out; a redirect to another host refused without a rule; `WebFetch(domain:…)` rules
allow, deny and ask; plan mode asks (here: refuses, nobody can be asked)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mini_claude.permissions import PermissionMode
from mini_claude.permissions.gate import PermissionGate
from mini_claude.permissions.rules import RuleSet
from mini_claude.tools.web_fetch import WebFetchTool
from tests.integration.conftest import Cli, answer, result_text, tool_results, tool_use
from tests.webfetch.conftest import SiteServer

pytestmark = pytest.mark.timeout(120)


def fetch_call(url: str) -> dict[str, Any]:
    return tool_use("WebFetch", {"url": url, "prompt": "summarise"})


def test_fetch_turns_html_into_markdown_for_the_model(cli: Cli, site: SiteServer) -> None:
    mock = cli.mock([fetch_call(site.url("/page")), answer("read it")])
    r = cli.run("-p", "read the page", "--allowedTools", "WebFetch(domain:127.0.0.1)")
    assert r.rc == 0, r.stderr
    assert r.stdout.strip() == "read it"
    [result] = tool_results(mock)
    text = result_text(result)
    assert not result.get("is_error")
    assert "# Hello" in text and "A [link](/docs) and **bold** text." in text and "steal()" not in text
    offered = {t["name"]: t for t in mock.requests[0]["body"]["tools"]}
    assert set(offered["WebFetch"]["input_schema"]["properties"]) == {"url", "prompt"}
    assert offered["WebFetch"]["input_schema"]["required"] == ["url", "prompt"]


def test_redirect_to_another_host_refused_without_a_rule(cli: Cli, site: SiteServer) -> None:
    other = site.url("/page", host="localhost")
    mock = cli.mock([fetch_call(site.url("/other")), fetch_call(other), answer("done")])
    r = cli.run("-p", "read it", "--allowedTools", "WebFetch(domain:127.0.0.1)")
    assert r.rc == 0 and "denied on the way" in r.stderr, r.stderr  # a call was denied
    first, second = tool_results(mock)
    assert "REDIRECT DETECTED" in result_text(first)
    assert f'- url: "{other}"' in result_text(first)
    # the model follows the redirect itself: the gate checks localhost, which no rule allows
    assert second.get("is_error") is True
    assert "permission denied for WebFetch: not allowed in non-interactive mode" in result_text(second)
    assert '"WebFetch' in result_text(second)  # the rule that would allow it
    assert site.hits == [f"127.0.0.1:{site.port}/other"]  # localhost never reached


def test_rule_for_the_other_host_lets_the_redirect_be_followed(cli: Cli, site: SiteServer) -> None:
    other = site.url("/page", host="localhost")
    mock = cli.mock([fetch_call(site.url("/other")), fetch_call(other), answer("done")])
    r = cli.run("-p", "read it", "--allowedTools", "WebFetch(domain:127.0.0.1)", "WebFetch(domain:localhost)")
    assert r.rc == 0, r.stderr
    _, second = tool_results(mock)
    assert not second.get("is_error") and "# Hello" in result_text(second)
    assert site.hits[-1] == f"localhost:{site.port}/page"


def test_without_a_rule_nothing_is_fetched_and_deny_beats_allow(cli: Cli, site: SiteServer) -> None:
    mock = cli.mock([fetch_call(site.url("/page")), answer("done")])
    r = cli.run("-p", "read it")
    [result] = tool_results(mock)
    assert r.rc == 0 and "denied on the way" in r.stderr and result.get("is_error") is True
    assert "not allowed in non-interactive mode" in result_text(result)
    mock = cli.mock([fetch_call(site.url("/page")), answer("done")])
    cli.run("-p", "read it", "--allowedTools", "WebFetch", "--disallowedTools", "WebFetch(domain:127.0.0.1)")
    [result] = tool_results(mock)
    assert 'denied by rule "WebFetch(domain:127.0.0.1)" from --disallowedTools' in result_text(result)
    assert site.hits == []


async def test_plan_mode_and_ask_rules_ask(tmp_path: Path) -> None:
    asked: list[str] = []

    async def ask(tool: Any, args: dict[str, Any]) -> str:
        asked.append(args["url"])
        return "no"

    tool, args = WebFetchTool(), {"url": "https://example.com/a", "prompt": "p"}
    for mode, rules in ((PermissionMode.PLAN, RuleSet()), (PermissionMode.DEFAULT, RuleSet()),
                        (PermissionMode.DEFAULT, RuleSet.from_strings(allow=["WebFetch"],
                                                                      ask=["WebFetch(domain:example.com)"]))):
        gate = PermissionGate(mode, rules, ask=ask, cwd=tmp_path, home=tmp_path)
        decision = await gate.check(tool, args)
        assert not decision.allowed and "declined" in decision.reason
    assert len(asked) == 3
    gate = PermissionGate(PermissionMode.PLAN, RuleSet.from_strings(allow=["WebFetch(domain:example.com)"]),
                          ask=ask, cwd=tmp_path, home=tmp_path)
    assert (await gate.check(tool, args)).allowed
    assert not (await gate.check(tool, {"url": "https://example.org/", "prompt": "p"})).allowed
