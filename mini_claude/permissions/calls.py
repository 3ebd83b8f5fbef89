"""One tool call as the permission rules see it (`ToolCall`): the tool's name in Claude Code's terms, the one
`path` a file tool reads, the servers a built-in reaches, the files a Skill call reads, a web fetch's host. Both
the rules (rules.py) and the gate (gate.py) read a call only through these facts, so they read it the same way.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mini_claude.permissions.patterns import MCP_PREFIX
from mini_claude.tools.former_names import FORMER_NAMES
from mini_claude.tools.search_paths import split_glob

__all__ = ["CLAUDE_TOOL_NAMES", "PATH_TOOLS", "SERVER_TOOLS", "WEB_FETCH", "WEB_SEARCH", "ToolCall", "claude_tool_name",
           "path_key"]

# The built-in tools carry Claude Code's names; a rule may still use a former one (tools/former_names.py): old
# name -> the tool's name now.
CLAUDE_TOOL_NAMES: Mapping[str, str] = FORMER_NAMES

PATH_TOOLS = frozenset({"Read", "Edit", "Write", "Glob", "Grep", "NotebookEdit"})
# Built-in tools that reach the MCP server named in their input: a specifier names that server.
SERVER_TOOLS = frozenset({"ReadMcpResourceTool", "ListMcpResourcesTool"})
WEB_FETCH = "WebFetch"  # its specifier is `domain:host`
WEB_SEARCH = "WebSearch"  # no specifier: a `WebSearch` rule names every search (the query leaves the machine)
# The one key each file tool reads its path from (the tool's schema rejects any other key before the gate runs):
# Claude Code's, `file_path` for the tools that open one file, `path` for the searches.
_PATH_KEYS: Mapping[str, str] = {"Read": "file_path", "Edit": "file_path", "Write": "file_path",
                                 "NotebookEdit": "notebook_path", "Glob": "path", "Grep": "path"}


def claude_tool_name(name: str) -> str:
    """A tool's name as rules speak it: a built-in's former name maps to its name now (`bash` -> `Bash`); every
    other name is returned unchanged."""
    return CLAUDE_TOOL_NAMES.get(name, name)


def path_key(claude_name: str) -> str:
    """The input key a file tool reads its path from (`Read` -> `file_path`, `Grep` -> `path`)."""
    return _PATH_KEYS.get(claude_name, "path")


@dataclass(frozen=True)
class ToolCall:
    """One tool call as the rules see it."""

    name: str
    args: Mapping[str, Any] = field(default_factory=dict)
    # the MCP servers a built-in call reaches (resource tools: `ServerTool.servers_reached`)
    servers: tuple[str, ...] = ()
    # the resolved files a built-in reads beyond a `path` (the Skill tool's: `FileReader.files_read`): Read rules
    # match them as they would a Read of each
    reads: tuple[str, ...] = ()
    # an MCP tool's own server, as its adapter was made for: never looked up by name when known, since a name can
    # pass to another server (one coming up, or re-listing) between the model's answer and this check
    own_server: str | None = None

    @property
    def claude_name(self) -> str:
        return claude_tool_name(self.name)

    @property
    def is_mcp(self) -> bool:
        return self.name.startswith(MCP_PREFIX)

    @property
    def sends_to_server(self) -> bool:
        """An MCP tool, a resource read (its uri is the model's text, sent to the server), a web fetch or a web
        search (the URL or the query goes out): never an automatic read-only tool. A resource listing sends
        nothing of the model's and runs like a read-only built-in."""
        return self.is_mcp or self.claude_name in ("ReadMcpResourceTool", WEB_FETCH, WEB_SEARCH)

    @property
    def host(self) -> str | None:
        """The lower-cased host of a WebFetch call's http(s) `url`, else None."""
        value = self.args.get("url")
        if self.claude_name != WEB_FETCH or not isinstance(value, str):
            return None
        try:
            parts = urlsplit(value.strip())
            host = parts.hostname
        except ValueError:
            return None
        return host.rstrip(".") if host and parts.scheme.lower() in ("http", "https") else None

    @property
    def command(self) -> str | None:
        value = self.args.get("command")
        return value if isinstance(value, str) else None

    def paths(self, cwd: Path) -> list[str]:
        """The path(s) a file tool touches, as given (read from the one key the tool itself reads). Glob/Grep
        search cwd when given no path; a Glob pattern's literal leading directories count too (`secrets/*.txt`
        touches `secrets`, `/etc/*` touches `/etc`)."""
        if self.reads:
            return list(self.reads)
        if self.claude_name not in PATH_TOOLS:
            return []
        found: list[str] = []
        value = self.args.get(path_key(self.claude_name))
        if isinstance(value, str) and value:
            found.append(value)
        if self.claude_name in ("Glob", "Grep"):
            base = found[0] if found else str(cwd)
            if not found:
                found.append(base)
            pattern = self.args.get("pattern")
            if self.claude_name == "Glob" and isinstance(pattern, str):
                literal, _ = split_glob(pattern)
                if literal:
                    found.append(os.path.join(base, literal))
        return found
