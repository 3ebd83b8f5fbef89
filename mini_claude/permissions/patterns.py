"""Rule specifiers and how they match: Bash command patterns (`Bash(git log:*)`, `Bash(npm run *)`) and MCP tool
names (`mcp__server`, `mcp__server__*`, `mcp__server__tool`). File-path globs are in `paths.py`.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass

from mini_claude.permissions.paths import MatchEnv
from mini_claude.permissions.shell import normalize_ws

__all__ = [
    "MCP_PREFIX",
    "CommandPattern",
    "mcp_rule_matches",
    "mcp_rule_names_server",
]

MCP_PREFIX = "mcp__"


@dataclass(frozen=True)
class CommandPattern:
    """A Bash rule's specifier."""

    text: str
    regex: re.Pattern[str] | None  # None: exact match on `text`

    @classmethod
    def parse(cls, spec: str) -> CommandPattern:
        spec = normalize_ws(spec)
        if spec.endswith(":*"):
            prefix = spec[:-2].rstrip()
            if "*" in prefix:
                raise ValueError('":*" may only end the pattern; use "*" for other wildcards')
            return cls(spec, re.compile(re.escape(prefix) + r"(?:\s.*)?", re.S))
        if ":*" in spec:
            raise ValueError('":*" may only end the pattern')
        if "*" not in spec:
            return cls(spec, None)
        pieces = spec.split("*")
        out: list[str] = []
        for index, piece in enumerate(pieces):
            last = index == len(pieces) - 1
            if not last and index == len(pieces) - 2 and pieces[-1] == "" and piece.endswith(" "):
                # trailing " *": the bare command matches too (`npm run *` matches `npm run`)
                out.append(re.escape(piece[:-1]) + r"(?:\s.*)?")
                break
            out.append(re.escape(piece))
            if not last:
                out.append(".*")
        return cls(spec, re.compile("".join(out), re.S))

    @property
    def exact(self) -> bool:
        return self.regex is None

    @property
    def literal(self) -> str:
        """The text the pattern spells out before its first wildcard (all of it for an exact rule): what the
        user wrote down, as opposed to what the wildcard lets through unseen."""
        if self.regex is None:
            return self.text
        if self.text.endswith(":*") and "*" not in self.text[:-2]:
            return self.text[:-2].rstrip()
        return self.text.split("*", 1)[0]

    def matches(self, text: str) -> bool:
        if self.regex is None:
            return text == self.text
        return self.regex.fullmatch(text) is not None


def mcp_rule_matches(rule_tool: str, qualified: str, env: MatchEnv, *, server: str | None = None) -> bool:
    """Does MCP rule `rule_tool` (`mcp__server`, `mcp__server__*`, `mcp__server__tool`, or a pattern with `*` such
    as `mcp__*` or `mcp__git*`) name the tool called `qualified`? The server is `server` (the tool's own) when
    given, else from `env.server_of` when known, else from the name's prefix."""
    if rule_tool == qualified:
        return True
    if server is None and env.server_of is not None:
        server = env.server_of(qualified)
    if server is not None:
        # The lookup knows the real server name, which may itself contain "__": never split the name.
        if mcp_rule_names_server(rule_tool, server):
            return True
    elif qualified.startswith(_server_body(rule_tool) + "__"):
        return True
    # `mcp__s__*` is the server-wide form (decided above: it must not match server `s__x`'s tools by pattern)
    pattern = "*" in rule_tool and (not rule_tool.endswith("__*") or rule_tool == MCP_PREFIX + "*")
    if pattern and server is not None and not rule_tool.startswith(f"{MCP_PREFIX}{server}__"):
        # a tool pattern names one server's tools: `mcp__good__ec*` is not server `good__ec`'s every tool
        return False
    return pattern and fnmatch.fnmatchcase(qualified, rule_tool)


def mcp_rule_names_server(rule_tool: str, server: str) -> bool:
    """Does MCP rule `rule_tool` name all of `server` (`mcp__server`, `mcp__server__*`, `mcp__*`, `mcp__serv*`)?
    A rule naming one tool (`mcp__server__tool`, `mcp__server__ec*`) does not."""
    body = _server_body(rule_tool)
    if "*" not in body:
        return body == MCP_PREFIX + server
    return fnmatch.fnmatchcase(MCP_PREFIX + server, body) and "__" not in body[len(MCP_PREFIX):].replace("*", "")


def _server_body(rule_tool: str) -> str:
    """`mcp__s__*` -> `mcp__s`; `mcp__*` -> `mcp__*` (every server); `mcp__s` -> `mcp__s`."""
    if rule_tool == MCP_PREFIX + "*":
        return rule_tool
    return rule_tool[:-3] if rule_tool.endswith("__*") else rule_tool
