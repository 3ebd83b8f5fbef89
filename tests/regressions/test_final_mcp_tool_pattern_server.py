"""A tool pattern rule names one server's tools (final attack, finding 2): `mcp__good__ec*` matched every tool of a
server named `good__ec` (hashed names such as `mcp__good__ec__t_<hash>`) by plain wildcard matching."""

from __future__ import annotations

from pathlib import Path

from mini_claude.mcp.naming import qualify_tool_name
from mini_claude.permissions.paths import MatchEnv
from mini_claude.permissions.patterns import mcp_rule_matches


def test_a_tool_pattern_does_not_reach_a_server_whose_name_extends_it(tmp_path: Path) -> None:
    env = MatchEnv(cwd=tmp_path, home=tmp_path)
    other = qualify_tool_name("good__ec", "t")
    assert not mcp_rule_matches("mcp__good__ec*", other, env, server="good__ec")
    assert mcp_rule_matches("mcp__good__ec*", "mcp__good__echo", env, server="good")  # its own server's tools still
    assert mcp_rule_matches("mcp__*", other, env, server="good__ec")  # every server's, as before
