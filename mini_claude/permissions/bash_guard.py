"""What a Bash deny or ask rule still does in bypassPermissions mode, beyond matching: refuse a command it cannot
see through.

A deny rule (`Bash(rm:*)`) matches the commands a command line names (shell.py). Some command lines run programs
no matcher can name: code made from data (`${x@P}`, arithmetic over a variable), a shell reading a pipe, a program
that runs code from its arguments (code_runners.py). Outside bypass mode such a command is opaque, so it asks;
in bypass mode nothing asks, so while a Bash deny or ask rule is in force the gate refuses it and says why.
"""

from __future__ import annotations

from mini_claude.permissions.paths import MatchEnv
from mini_claude.permissions.rules import RuleSet, ToolCall
from mini_claude.permissions.shell import deny_view

__all__ = ["bypass_refusal"]


def bypass_refusal(rules: RuleSet, call: ToolCall, env: MatchEnv) -> str | None:
    """Why bypass mode refuses this call, or None. Only a Bash call with a Bash deny or ask rule in force (one
    that names commands) can be refused; run after the deny rules themselves were checked."""
    if call.claude_name != "Bash" or call.command is None:
        return None
    in_force = [("deny", r) for r in rules.deny if r.command is not None and r.covers_tool(call, env)]
    in_force += [("ask", r) for r in rules.ask if r.command is not None and r.covers_tool(call, env)]
    if not in_force:
        return None
    why = deny_view(call.command).why_hidden
    if not why:
        return None
    kind, rule = in_force[0]
    return (f"{why}, so {kind} rule {rule.describe()} cannot see what it runs; bypassPermissions mode refuses "
            "such a command while a Bash deny or ask rule is in force")
