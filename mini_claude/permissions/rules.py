"""Permission rules in Claude Code syntax, and how a rule matches a tool call.

Rule forms (`Tool` or `Tool(specifier)`):

    Bash                    every shell command            Bash(*) is the same
    Bash(git status)        exactly that command
    Bash(git status:*)      that command, alone or followed by arguments (word boundary: not `git statusx`)
    Bash(npm run *)         `*` matches any text; a trailing ` *` also matches the bare `npm run`
    Read / Edit / Write / Glob / Grep            every call of that tool
    Read(src/**)  Edit(docs/**)                  gitignore-style globs relative to cwd; `//abs/path` is absolute,
                                                 `~/path` is under home, `/path` is relative to cwd (the project)
    mcp__server  mcp__server__*                  every tool of that MCP server (its resource reads included)
    mcp__server__tool                            one MCP tool
    ReadMcpResourceTool(server)                  reading (listing) that server's resources; without a specifier,
    ListMcpResourcesTool(server)                 any server's
    WebFetch(domain:example.com)                 fetching a URL on that host; `domain:*.example.com` also its
                                                 subdomains; a bare `WebFetch` every host

A `Read` rule also covers Glob and Grep (and the files a Skill call reads), an `Edit` rule also covers Write and
NotebookEdit (as in Claude Code). Unknown tool names
are kept and match nothing but a tool of that exact name. The built-in tools carry Claude Code's names; their
former names (`read_file` -> Read, `bash` -> Bash, ...) are still accepted in rules.

Matching the specifiers lives in patterns.py (commands, MCP names) and paths.py (file paths); finding the commands
a shell command line runs, which every Bash rule is matched against, lives in shell.py (on a tree-sitter-bash parse:
bash_tree.py, bash_script.py); what a call is to the rules (its tool name, path, servers, host) in calls.py. This
module holds the parsed rule, the rule set and its deny / ask / allow lookups.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mini_claude.errors import ConfigError
from mini_claude.permissions.calls import (
    CLAUDE_TOOL_NAMES,
    PATH_TOOLS,
    SERVER_TOOLS,
    WEB_FETCH,
    ToolCall,
    claude_tool_name,
)
from mini_claude.permissions.paths import MatchEnv, PathPattern
from mini_claude.permissions.patterns import (
    MCP_PREFIX,
    CommandPattern,
    mcp_rule_matches,
    mcp_rule_names_server,
)
from mini_claude.permissions.shell import (
    ShellCommand,
    deny_candidates,
    normalize_ws,
    split_shell_command,
    strip_harmless_wrappers,
)

if TYPE_CHECKING:
    from mini_claude.settings import Settings, SettingsRule

__all__ = [
    "CLAUDE_TOOL_NAMES",
    "MCP_PREFIX",
    "MatchEnv",
    "Rule",
    "RuleSet",
    "ShellCommand",
    "ToolCall",
    "blanks_only",
    "claude_tool_name",
    "parse_rule",
    "split_rule_list",
    "split_shell_command",
]

# A rule naming the key covers calls of these tools.
_RULE_COVERS: Mapping[str, frozenset[str]] = {
    "Read": frozenset({"Read", "Glob", "Grep", "Skill"}),
    "Edit": frozenset({"Edit", "Write", "NotebookEdit"}),
}
_DOMAIN_RE = re.compile(r"^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$")
_TOOL_NAME_RE = re.compile(r"^[A-Za-z0-9_.\-*]+$")


# --------------------------------------------------------------------------------------------------------- rules


@dataclass(frozen=True)
class Rule:
    """One parsed rule. `source` says where it came from: a settings file (display form), a CLI flag such as
    `--allowedTools`, or `session` (answered "always")."""

    text: str
    tool: str
    specifier: str | None
    source: str
    key: str | None = None
    command: CommandPattern | None = field(default=None, repr=False, compare=False)
    path: PathPattern | None = field(default=None, repr=False, compare=False)

    def describe(self) -> str:
        """`"Bash(rm:*)" in .claude/settings.json` / `"Bash(rm:*)" from --disallowedTools`."""
        if self.source == "session":
            return f'"{self.text}" (allowed for this session)'
        preposition = "from" if self.source.startswith("-") else "in"
        return f'"{self.text}" {preposition} {self.source}'

    @property
    def is_mcp(self) -> bool:
        return self.tool.startswith(MCP_PREFIX)

    def covers_tool(self, call: ToolCall, env: MatchEnv) -> bool:
        """Does this rule name the called tool (ignoring any specifier)? A server-wide MCP rule (`mcp__evil`,
        `mcp__evil__*`) also names the resource tools' calls that reach that server."""
        if self.is_mcp:
            if call.servers:
                return any(self.names_server(server) for server in call.servers)
            return call.is_mcp and mcp_rule_matches(self.tool, call.name, env, server=call.own_server)
        return call.claude_name in _RULE_COVERS.get(self.tool, frozenset({self.tool}))

    def names_server(self, server: str) -> bool:
        """Is this an MCP rule for all of `server` (`mcp__server`, `mcp__server__*`, `mcp__*`, `mcp__serv*`)?"""
        return mcp_rule_names_server(self.tool, server)

    def matches_servers(self, call: ToolCall, *, every: bool) -> bool:
        """For rules of the resource tools: does the specifier (a server name) name any (deny/ask) or every
        (allow) server the call reaches? Without a specifier, it names them all."""
        if self.specifier is None:
            return True
        hits = [server == self.specifier for server in call.servers]
        return bool(hits) and (all(hits) if every else any(hits))

    def matches_domain(self, call: ToolCall) -> bool:
        """For `WebFetch(domain:host)`: is the call's URL on that host (`*.host`: or a subdomain of it)?"""
        host = call.host
        if self.specifier is None or host is None:
            return False
        domain = self.specifier.removeprefix("domain:").lower()
        if domain.startswith("*."):
            return host.endswith(domain[1:])
        return host == domain

    def matches_path_call(self, call: ToolCall, env: MatchEnv, *, every: bool) -> bool:
        """For file rules: any (deny/ask) or every (allow) path the call touches matches."""
        if self.path is None:
            return self.specifier is None
        paths = call.paths(env.cwd)
        if not paths:
            return False
        if every:
            return all(self.path.matches(p, env, resolved_only=True) for p in paths)
        searches = call.claude_name in ("Glob", "Grep")
        return any(self.path.matches(p, env) or (searches and self.path.matches(p, env, inside=True))
                   for p in paths)



def parse_rule(text: str, *, source: str, key: str | None = None) -> Rule:
    """Parse one rule string. Raises ConfigError (file=`source` unless it is a CLI flag, key=`key`) naming the
    rule when it is malformed."""

    def fail(why: str) -> ConfigError:
        if source.startswith("-"):
            return ConfigError(f'invalid permission rule "{text}": {why}', key=key or source)
        return ConfigError(f'invalid permission rule "{text}": {why}', file=source, key=key)

    raw = text.strip()
    if not raw:
        raise fail("empty rule")
    paren = raw.find("(")
    if paren == -1:
        tool, spec = raw, None
        if ")" in raw:
            raise fail('unexpected ")"')
    else:
        if not raw.endswith(")"):
            raise fail('missing closing ")"')
        tool, spec = raw[:paren].strip(), raw[paren + 1 : -1]
        if not tool:
            raise fail("missing tool name before \"(\"")
        if not spec.strip():
            raise fail(f'empty specifier (write "{tool}" to match every call)')
        spec = spec.strip()
    if not _TOOL_NAME_RE.match(tool):
        raise fail("a tool name may contain only letters, digits, '_', '-', '.' and '*'")
    tool = claude_tool_name(tool)
    if spec == "*":
        spec = None
    command = path = None
    if spec is not None:
        if tool.startswith(MCP_PREFIX):
            raise fail('MCP rules take no "(...)": write "mcp__server" or "mcp__server__tool"')
        try:
            if tool == "Bash":
                command = CommandPattern.parse(spec)
            elif tool in PATH_TOOLS:
                path = PathPattern.parse(spec)
            elif tool in SERVER_TOOLS and ("*" in spec or "(" in spec):
                raise ValueError("the specifier is one MCP server's name, without wildcards")
            elif tool == WEB_FETCH and not (spec.startswith("domain:") and _DOMAIN_RE.match(spec[7:].lower())):
                raise ValueError('write "WebFetch(domain:example.com)" (or "domain:*.example.com")')
        except ValueError as exc:
            raise fail(str(exc)) from None
    return Rule(raw, tool, spec, source, key, command, path)


def split_rule_list(values: Iterable[str]) -> list[str]:
    """CLI rule lists: each value may hold several rules separated by commas or spaces outside parentheses
    (`--allowedTools "Bash(git log:*) Read,Edit"`)."""
    rules: list[str] = []
    for value in values:
        depth = 0
        cur: list[str] = []
        for ch in value:
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth = max(0, depth - 1)
            if depth == 0 and (ch == "," or ch.isspace()):
                if cur:
                    rules.append("".join(cur))
                cur = []
                continue
            cur.append(ch)
        if cur:
            rules.append("".join(cur))
    return rules


# ------------------------------------------------------------------------------------------------------ rule set


@dataclass(frozen=True)
class RuleSet:
    """Allow, deny and ask rules, in the order they were given. `errors` lists rules that failed to parse
    (those rules are dropped)."""

    allow: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()
    ask: tuple[Rule, ...] = ()
    errors: tuple[ConfigError, ...] = ()

    @classmethod
    def from_settings(cls, settings: Settings) -> RuleSet:
        """The rules of merged settings; a malformed rule becomes an entry in `errors` naming file and key."""
        lists: dict[str, list[Rule]] = {"allow": [], "deny": [], "ask": []}
        errors: list[ConfigError] = []
        sources: dict[str, Sequence[SettingsRule]] = {
            "allow": settings.permissions_allow, "deny": settings.permissions_deny, "ask": settings.permissions_ask,
        }
        for kind, items in sources.items():
            for item in items:
                try:
                    lists[kind].append(parse_rule(item.text, source=item.file, key=item.key))
                except ConfigError as exc:
                    errors.append(exc)
        return cls(tuple(lists["allow"]), tuple(lists["deny"]), tuple(lists["ask"]), tuple(errors))

    @classmethod
    def from_strings(cls, *, allow: Iterable[str] = (), deny: Iterable[str] = (), ask: Iterable[str] = (),
                     source: str = "rules") -> RuleSet:
        """Rules from plain strings (tests, programmatic use). Raises ConfigError on a malformed rule."""
        return cls(
            tuple(parse_rule(t, source=source) for t in allow),
            tuple(parse_rule(t, source=source) for t in deny),
            tuple(parse_rule(t, source=source) for t in ask),
        )

    def with_cli(self, *, allow: Iterable[str] = (), deny: Iterable[str] = ()) -> RuleSet:
        """Add `--allowedTools` / `--disallowedTools` rules. Raises ConfigError naming the flag and the rule on a
        malformed one: a typo in a deny rule given on the command line must not be silently dropped."""
        added_allow = tuple(parse_rule(t, source="--allowedTools") for t in split_rule_list(allow))
        added_deny = tuple(parse_rule(t, source="--disallowedTools") for t in split_rule_list(deny))
        return RuleSet(self.allow + added_allow, self.deny + added_deny, self.ask, self.errors)

    def with_allow(self, rules: Iterable[str], *, source: str = "session") -> RuleSet:
        """A copy with more allow rules (raises ConfigError on a malformed one)."""
        return RuleSet(self.allow + tuple(parse_rule(t, source=source) for t in rules), self.deny, self.ask,
                       self.errors)

    def match_deny(self, call: ToolCall, env: MatchEnv) -> Rule | None:
        """The first deny rule matching any part of the call."""
        return _match_any(self.deny, call, env)

    def match_ask(self, call: ToolCall, env: MatchEnv) -> Rule | None:
        """The first ask rule matching any part of the call."""
        return _match_any(self.ask, call, env)

    def match_allow(self, call: ToolCall, env: MatchEnv) -> tuple[Rule, ...] | None:
        """The allow rule(s) that together allow the whole call, or None. For a compound shell command every
        part must be allowed (possibly by different rules)."""
        rules = [r for r in self.allow if r.covers_tool(call, env)]
        if not rules:
            return None
        for rule in rules:
            if rule.command is None and rule.path is None and rule.specifier is None:
                if call.servers and rule.is_mcp and not all(rule.names_server(s) for s in call.servers):
                    continue  # `mcp__a` allows reading a's resources, not a listing that reaches b too
                return (rule,)
        if call.claude_name == WEB_FETCH:
            return next(((rule,) for rule in rules if rule.matches_domain(call)), None)
        if call.claude_name in SERVER_TOOLS:
            for rule in rules:
                if not rule.is_mcp and rule.matches_servers(call, every=True):
                    return (rule,)
            return None
        if call.claude_name == "Bash":
            return _bash_allow(rules, call.command)
        for rule in rules:
            if rule.path is not None and rule.matches_path_call(call, env, every=True):
                return (rule,)
        return None

    def unallowed_command_parts(self, command: str, env: MatchEnv) -> list[str]:
        """The simple commands of `command` no allow rule covers (harmless wrappers stripped)."""
        call = ToolCall("Bash", {"command": command})
        rules = [r for r in self.allow if r.command is not None and r.covers_tool(call, env)]
        split = split_shell_command(command)
        return [part for k, part in enumerate(split.parts)
                if _rule_for_part(rules, part, split.risks[k] if k < len(split.risks) else ()) is None]


def _match_any(rules: Iterable[Rule], call: ToolCall, env: MatchEnv) -> Rule | None:
    candidates: list[str] | None = None
    for rule in rules:
        if not rule.covers_tool(call, env):
            continue
        if rule.command is None and rule.path is None:
            if rule.specifier is None:
                return rule
            if call.claude_name in SERVER_TOOLS and rule.matches_servers(call, every=False):
                return rule
            if call.claude_name == WEB_FETCH and rule.matches_domain(call):
                return rule
            continue  # a specifier this tool does not understand matches nothing
        if rule.command is not None:
            if call.claude_name != "Bash" or call.command is None:
                continue
            if candidates is None:
                candidates = deny_candidates(call.command)
            if any(rule.command.matches(c) for c in candidates):
                return rule
        elif rule.matches_path_call(call, env, every=False):
            return rule
    return None


def _bash_allow(rules: list[Rule], command: str | None) -> tuple[Rule, ...] | None:
    if command is None:
        return None
    if blanks_only(command):  # `echo x;echo<newline>rm -rf ~` is not `Bash(echo x; echo rm -rf ~)`
        whole = normalize_ws(command)
        for rule in rules:
            if rule.command is not None and rule.command.exact and rule.command.matches(whole):
                return (rule,)
    split = split_shell_command(command)
    if split.opaque or not split.parts:
        return None
    used: list[Rule] = []
    for k, part in enumerate(split.parts):
        # a part's text leaves its redirections out: an exact rule for it did not name the file it writes
        redirected = k < len(split.writes) and any(w.index < 0 for w in split.writes[k])
        part_rule = _rule_for_part(rules, part, split.risks[k] if k < len(split.risks) else (), exact=not redirected)
        if part_rule is None:
            return None
        if part_rule not in used:
            used.append(part_rule)
    return tuple(used)


def blanks_only(command: str) -> bool:
    """Is every whitespace character inside `command` (its ends aside) a space or a tab, which the shell reads
    alike? Only then may it be compared with an exact rule whitespace-collapsed: a newline ends a command where a
    space does not, and `\\r`, `\\v` or a no-break space are part of a word to the shell."""
    return all(ch in " \t" for ch in command.strip() if ch.isspace())


def _rule_for_part(rules: Iterable[Rule], part: str, risks: Sequence[tuple[int, str]] = (), *,
                   exact: bool = True) -> Rule | None:
    """The first rule allowing `part`. A part that runs code from its arguments (`risks`: where such a word starts
    in `part`) is allowed only by a rule whose literal text reaches past each of those words: a wildcard is
    blind to what it lets through (`Bash(git:*)` does not allow `git -c alias.x=!sh x`). With `exact` False (the
    part redirects to a file its text leaves out) only wildcard rules apply: `Bash(echo hi)` named no file."""
    texts = (part, strip_harmless_wrappers(part))
    for rule in rules:
        if rule.command is None or (rule.command.exact and not exact):
            continue
        for text in texts:
            cut = len(part) - len(text)  # the stripped text is a suffix of the part
            reach = len(text) if rule.command.exact else len(rule.command.literal)
            if rule.command.matches(text) and all(offset - cut < reach for offset, _ in risks):
                return rule
    return None
