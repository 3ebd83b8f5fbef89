"""The allow rules a permission question offers: what an "always" answer remembers (`always_rules`) and what the
non-interactive refusal suggests adding (`suggested_rules`). The gate (consent.py) works out the call's places that
need consent and whether a command writes where it cannot see, and asks here for the rules' text.

Bash: `Bash(<prefix>:*)` for a simple command (`git status`, not all of `git`; `python -m pytest`), the exact command
for a compound or opaque one, or one whose writes need consent; a path that needs consent: that exact file
(`Edit(//abs/path)`, `Read(//abs/path)`), glob characters escaped; a resource read: `ReadMcpResourceTool(server)`;
a fetch: that host; any other tool: its rule name.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from mini_claude.errors import ConfigError
from mini_claude.permissions.paths import MatchEnv
from mini_claude.permissions.rules import RuleSet, ToolCall, blanks_only
from mini_claude.permissions.shell import split_shell_command

__all__ = ["always_rules", "suggested_rules"]

# Commands whose first argument names a subcommand: "always" remembers `git status`, not all of `git`.
_SUBCOMMAND_TOOLS = frozenset({
    "git", "npm", "pnpm", "yarn", "bun", "npx", "cargo", "go", "docker", "kubectl", "pip", "pip3", "uv",
    "poetry", "gh", "brew", "apt", "apt-get", "dotnet", "mvn", "gradle", "make", "just", "rustup", "conda",
})
_PLAIN_WORD_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:+-]*$")
_PYTHON_RE = re.compile(r"^python[0-9.]*$")
_EDIT_TOOLS = frozenset({"Edit", "Write", "NotebookEdit"})
_GLOB_SPECIALS_RE = re.compile(r"([*?\[\\])")  # escaped with a backslash in an exact-path rule


def always_rules(call: ToolCall, consent_paths: Sequence[str], opaque_writes: bool, env: MatchEnv) -> list[str]:
    """The rule(s) an "always" answer would add for `call`, whose `consent_paths` need the user's consent and
    whose command writes where the gate cannot list (`opaque_writes`). [] where no rule can name it (a multi-line
    command, a host no rule can spell)."""
    outside = _file_rules(call, consent_paths)
    if outside:
        return outside
    if call.claude_name != "Bash":
        return _tool_rules(call)
    command = call.command or ""
    split = split_shell_command(command)
    if split.opaque or len(split.parts) != 1 or consent_paths or opaque_writes:
        rules = [f"Bash({' '.join(command.split())})"] if command.strip() else ["Bash"]
    else:
        rules = [_useful_prefix_rule(split.parts[0], env)]
    if not blanks_only(command) and not rules[0].endswith(":*)"):
        return []  # an exact rule cannot hold a newline: it would name another command (rules.blanks_only)
    return rules


def suggested_rules(call: ToolCall, consent_paths: Sequence[str], opaque_writes: bool, rules: RuleSet,
                    env: MatchEnv) -> list[str]:
    """Allow rules that would let `call` through (the non-interactive hint): for a compound command, one prefix
    rule per part `rules` do not allow yet."""
    outside = _file_rules(call, consent_paths)
    if outside:
        return outside
    if call.claude_name != "Bash":
        return _tool_rules(call)
    command = call.command or ""
    split = split_shell_command(command)
    if split.opaque or not split.parts or consent_paths or opaque_writes:
        return [f"Bash({' '.join(command.split())})"] if command.strip() else ["Bash"]
    parts = rules.unallowed_command_parts(command, env) or list(split.parts)
    return list(dict.fromkeys(_useful_prefix_rule(p, env) for p in parts))


def _file_rules(call: ToolCall, consent_paths: Sequence[str]) -> list[str]:
    """`Edit(//abs/path)` / `Read(//abs/path)` for each path of the call that needs consent (the resolved path,
    glob characters escaped)."""
    if call.claude_name == "Bash":
        return []  # a command's writes are remembered by the exact command
    verb = "Edit" if call.claude_name in _EDIT_TOOLS else "Read"
    escaped = (_GLOB_SPECIALS_RE.sub(r"\\\1", os.path.realpath(path)) for path in consent_paths)
    return [f"{verb}(/{path})" for path in dict.fromkeys(escaped)]


def _useful_prefix_rule(part: str, env: MatchEnv) -> str:
    """`Bash(<prefix>:*)` when that rule would allow `part` itself, else the exact `Bash(<part>)`: a prefix rule is
    blind to a code-running program's arguments (`Bash(python3:*)` does not allow `python3 main.py`, see
    code_runners.py), so offering it would save a rule that allows nothing useful — or, worse, read as "any Python
    code from now on"."""
    prefix = _prefix_rule(part)
    probe = RuleSet.from_strings(allow=[prefix])
    if probe.match_allow(ToolCall("Bash", {"command": part}), env) is not None:
        return prefix
    return f"Bash({part})"


def _tool_rules(call: ToolCall) -> list[str]:
    """The rule an "always" remembers for a call that is not Bash and not a file at a boundary."""
    if call.servers and not call.is_mcp:
        return [f"{call.claude_name}({server})" for server in call.servers] or [call.claude_name]
    if call.host is not None:  # WebFetch: that host, never every host (nothing when no rule can name it: `[::1]`)
        rule = f"{call.claude_name}(domain:{call.host})"
        try:
            RuleSet.from_strings(allow=[rule])
        except ConfigError:
            return []
        return [rule]
    return [call.claude_name]


def _prefix_rule(part: str) -> str:
    """`git status -s` -> `Bash(git status:*)`, `ls -la` -> `Bash(ls:*)`, `python -m pytest x` ->
    `Bash(python -m pytest:*)`. Parts that start oddly (quotes, `VAR=x`) get an exact rule."""
    words = part.split(" ")
    head = words[0]
    if not _PLAIN_WORD_RE.match(head.rsplit("/", 1)[-1]) or "=" in head:
        return f"Bash({part})"
    prefix = [head]
    if _PYTHON_RE.match(head) and len(words) > 2 and words[1] == "-m" and _PLAIN_WORD_RE.match(words[2]):
        prefix = words[:3]
    elif head in _SUBCOMMAND_TOOLS and len(words) > 1 and _PLAIN_WORD_RE.match(words[1]) \
            and not words[1].startswith("-"):
        prefix = words[:2]
    return f"Bash({' '.join(prefix)}:*)"
