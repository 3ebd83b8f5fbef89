"""Red team (WebFetch): "always" for a host no `WebFetch(domain:…)` rule can name (`[::1]`, `my_host`) broke the turn.

The gate offered `WebFetch(domain:::1)`, which the rule parser refuses, so the user's "always" raised ConfigError
inside the gate: the call got no decision and the turn failed (and the REPL had already saved the malformed rule
to .claude/settings.local.json). Now no rule is offered for such a host, and "always" is a yes for this call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mini_claude.permissions import PermissionMode
from mini_claude.permissions.gate import PermissionGate
from mini_claude.permissions.rules import RuleSet
from mini_claude.tools.web_fetch import WebFetchTool


async def test_always_for_a_host_no_rule_can_name_is_a_yes_that_remembers_nothing(tmp_path: Path) -> None:
    asked: list[str] = []

    async def ask(tool: Any, args: dict[str, Any]) -> str:
        asked.append(args["url"])
        return "always"

    gate = PermissionGate(PermissionMode.DEFAULT, RuleSet(), ask=ask, cwd=tmp_path, home=tmp_path)
    tool = WebFetchTool()
    for url in ("http://[::1]:8080/", "http://my_host/x"):
        args = {"url": url, "prompt": "p"}
        assert gate.always_rules(tool, args) == []
        decision = await gate.check(tool, args)
        assert decision.allowed and decision.reason == "allowed by the user (no rule can name this host: nothing " \
                                                        "is remembered)"
        assert (await gate.check(tool, args)).allowed  # asked again: nothing was remembered
    assert asked == ["http://[::1]:8080/", "http://[::1]:8080/", "http://my_host/x", "http://my_host/x"]
    assert gate.always_rules(tool, {"url": "https://Example.com./a", "prompt": "p"}) == ["WebFetch(domain:example.com)"]
