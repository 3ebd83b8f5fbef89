"""Qualified tool names: `mcp__<server>__<tool>`, as the model sees them, and the table that routes them back.

The model APIs accept tool names matching `^[a-zA-Z0-9_-]{1,64}$`, while MCP server and tool names may be any
string. The mapping here is deterministic (same raw names, same qualified name, on every run and machine) and
routing never splits a qualified name on `__`: `ToolNameTable` remembers which (server, tool) pair each name
stands for.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator

__all__ = [
    "HASH_SUFFIX_LEN",
    "MAX_TOOL_NAME_LEN",
    "MCP_PREFIX",
    "TOOL_NAME_RE",
    "ServerNames",
    "ToolNameTable",
    "qualify_tool_name",
    "sanitize_server_name",
]

MCP_PREFIX = "mcp__"
_DELIMITER = "__"
MAX_TOOL_NAME_LEN = 64
# "_" + 8 hex digits of sha256: 32 bits, so two different raw pairs share a suffix ~1 in 4 billion times; the
# table below resolves even that.
_HASH_HEX_LEN = 8
HASH_SUFFIX_LEN = 1 + _HASH_HEX_LEN
TOOL_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

_ILLEGAL = re.compile(r"[^A-Za-z0-9_-]")


def _sanitize(text: str) -> str:
    return _ILLEGAL.sub("_", text)


def _short_hash(server: str, tool: str, salt: int = 0) -> str:
    raw = f"{server}\0{tool}" if salt == 0 else f"{server}\0{tool}\0{salt}"
    # surrogatepass: names come from JSON, which can carry lone surrogates; never crash on them.
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_HEX_LEN]


def _is_unambiguous(server: str, tool: str) -> bool:
    """True when "mcp__<server>__<tool>" is a valid name that no other (server, tool) pair can produce.

    Reading the name back, the server is everything up to the first "__" after the prefix. That recovers the
    pair exactly when the server is non-empty, uses only legal characters, contains no "__" and does not end
    in "_" (otherwise "a_" + "__" + "b" and "a" + "__" + "_b" would both read "mcp__a___b").
    """
    return (
        bool(server)
        and _ILLEGAL.search(server) is None
        and _ILLEGAL.search(tool) is None
        and _DELIMITER not in server
        and not server.endswith("_")
        and len(MCP_PREFIX) + len(server) + len(_DELIMITER) + len(tool) <= MAX_TOOL_NAME_LEN
    )


def _hashed_name(server: str, tool: str, salt: int = 0) -> str:
    base = _sanitize(f"{MCP_PREFIX}{server}{_DELIMITER}{tool}")
    return base[: MAX_TOOL_NAME_LEN - HASH_SUFFIX_LEN] + "_" + _short_hash(server, tool, salt)


def qualify_tool_name(server: str, tool: str) -> str:
    """The name the model sees for `tool` of `server`. Always matches `TOOL_NAME_RE`.

    The rule, exactly:

    1. If "mcp__<server>__<tool>" is already a legal name of at most 64 characters *and* reads back to one
       pair only (the server is non-empty, contains no "__" and does not end with "_"), it is the name:
       `qualify_tool_name("demo", "add") == "mcp__demo__add"`.
    2. Otherwise the name is "mcp__<server>__<tool>" with every character outside [A-Za-z0-9_-] replaced by
       "_", cut to its first 55 characters, then "_" and the first 8 hex digits of sha256 of the RAW
       "<server>\\0<tool>" (UTF-8): at most 64 characters.

    So any lossy or ambiguous name carries a hash of the raw names: "foo.bar" and "foo_bar" never collide
    (the first gets a suffix, the second does not, and two suffixed names differ unless sha256's first 32
    bits collide). The one residual risk, a hash collision or a tool named like someone else's suffixed
    name, is resolved by `ToolNameTable`.
    """
    if _is_unambiguous(server, tool):
        return f"{MCP_PREFIX}{server}{_DELIMITER}{tool}"
    return _hashed_name(server, tool)


def sanitize_server_name(name: str) -> str:
    """A server name safe to show in one-line messages and tool-name-like contexts: characters outside
    [A-Za-z0-9_-] become "_" ("" becomes "_"). Not unique; never use it to route."""
    return _sanitize(name) or "_"


class ServerNames:
    """One server's tools with their `qualify_tool_name`s, worked out once per listing (as the server comes up),
    for `ToolNameTable.combine` to put together without naming every tool again."""

    def __init__(self, server: str, tools: Iterable[str]) -> None:
        self.pairs = list(dict.fromkeys((str(server), str(tool)) for tool in tools))
        self.names = [qualify_tool_name(*pair) for pair in self.pairs]


class ToolNameTable:
    """Qualified name ↔ (server, raw tool name), for a set of tools across servers.

    Each pair gets `qualify_tool_name(server, tool)`. If two different pairs still end up with the same name,
    the pair that sorts first (by server, then tool) keeps it and each other pair gets the hashed form salted
    with 1, 2, … until the name is free. The result depends only on the set of pairs, not their order.
    Duplicate pairs are listed once.
    """

    @classmethod
    def combine(cls, servers: Iterable[ServerNames]) -> ToolNameTable:
        """The table of several servers' tools, each already named (`ServerNames`): linear, and equal to
        `ToolNameTable(all pairs)`. Two servers' names can only meet through a hash collision or a tool named like
        another's hashed name; then the table is built the general way."""
        parts = list(servers)
        table = cls.__new__(cls)
        table._by_name, table._by_pair = {}, {}
        for part in parts:
            for pair, name in zip(part.pairs, part.names, strict=True):
                if name in table._by_name or pair in table._by_pair:
                    return cls(pair for part in parts for pair in part.pairs)
                table._by_name[name] = pair
                table._by_pair[pair] = name
        table._order = list(table._by_name)
        return table

    def __init__(self, pairs: Iterable[tuple[str, str]]) -> None:
        unique = list(dict.fromkeys((str(s), str(t)) for s, t in pairs))
        by_name: dict[str, list[tuple[str, str]]] = {}
        for pair in unique:
            by_name.setdefault(qualify_tool_name(*pair), []).append(pair)
        self._by_name: dict[str, tuple[str, str]] = {}
        self._by_pair: dict[tuple[str, str], str] = {}
        losers: list[tuple[str, str]] = []
        for name, group in by_name.items():
            group.sort()
            self._assign(name, group[0])
            losers.extend(group[1:])
        for pair in sorted(losers):
            salt = 1
            name = _hashed_name(*pair, salt=salt)
            while name in self._by_name:
                salt += 1
                name = _hashed_name(*pair, salt=salt)
            self._assign(name, pair)
        # Keep the caller's order for iteration (tool lists are shown in it).
        self._order = [self._by_pair[pair] for pair in unique]

    def _assign(self, name: str, pair: tuple[str, str]) -> None:
        self._by_name[name] = pair
        self._by_pair[pair] = name

    def qualified(self, server: str, tool: str) -> str:
        """The qualified name of `tool` of `server`. Raises KeyError for a pair the table was not built with."""
        return self._by_pair[(server, tool)]

    def lookup(self, qualified_name: str) -> tuple[str, str] | None:
        """(server, raw tool name) for a qualified name, or None when no tool has that name."""
        return self._by_name.get(qualified_name)

    def __contains__(self, qualified_name: object) -> bool:
        return qualified_name in self._by_name

    def __iter__(self) -> Iterator[str]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)
