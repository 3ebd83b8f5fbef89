"""Deferred MCP tools and the `ToolSearch` tool (issue 13's first part): when the MCP tool definitions would take
too much of the context window, they are not sent; the model gets `ToolSearch` and, in the system prompt, the
servers with their tools' names. What a search finds is sent with every later request of the session; a deferred
tool the model calls by name without searching is loaded and run. With `native` (Anthropic's own API, by default)
a search answers with `tool_reference` blocks and the found tools go as `defer_loading` definitions that the API
loads where they are referenced, as Claude Code sends them: the tools sent up front stay the same, and so does the
prompt cache. An API that refuses that gets the found definitions in full from then on (`refused`).

`MINI_CLAUDE_TOOL_SEARCH`: `auto` (default: defer when the definitions exceed 10% of the context window), `auto:N`
(N %), `true` (always), `false` (never). Definitions are counted as JSON characters / 4; when that estimate is
near the threshold (within `COUNT_BAND` either way) and the backend can count (Anthropic's count-tokens endpoint),
the API's count decides instead, once per tool list. A server whose config says `"alwaysLoad": true` always has its
tools sent.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from mini_claude.errors import ModelError
from mini_claude.mcp.manager import McpManager
from mini_claude.models.base import tool_references
from mini_claude.tools.base import ToolContext, ToolResult
from mini_claude.tools.mcp_tool import McpToolAdapter
from mini_claude.tools.tool_index import IndexedTool, ToolIndex

__all__ = ["COUNT_BAND", "DEFAULT_PERCENT", "DeferredTools", "ServerBudget", "ToolSearchTool", "budget_note",
           "definition_tokens", "names_fit", "off_note"]

log = logging.getLogger(__name__)

DEFAULT_PERCENT = 10.0
COUNT_BAND = 1.5  # the API is asked only when the estimate is within this factor of the threshold
COUNT_TIMEOUT_S = 5.0
COUNT_PLAUSIBLE = 4.0  # a count more than 4x off the estimate (either way) is not believed
CountTokens = Callable[[Sequence[McpToolAdapter]], Awaitable[int]]
DEFAULT_LIMIT = 5
MAX_LIMIT = 20
# what a refusal of deferred loading says: the field, the block, the beta, the feature (lower case)
_REFUSAL_WORDS = ("defer_loading", "tool_reference", "advanced-tool-use", "anthropic-beta", "tool search")
MORE_NAMES = 10  # after the loaded matches, the names of the next ten, not loaded
NAMES_SHARE = 0.05  # the deferred tools' names are listed while they cost at most this share of the window


@runtime_checkable
class ManagedAdapters(Protocol):
    """Adapters that come from a manager (McpToolAdapters): a search can wait for its servers (`settle`)."""

    manager: McpManager

    def __call__(self) -> list[McpToolAdapter]: ...


@runtime_checkable
class SwitchedAdapters(Protocol):
    """Adapters that know which tools `disabledMcpTools` switched off (McpToolAdapters)."""

    def switched_off_by_server(self) -> dict[str, list[McpToolAdapter]]: ...


def definition_tokens(tools: Sequence[McpToolAdapter]) -> int:
    """A close local estimate of what the definitions cost in a request: their JSON, 4 characters a token."""
    return sum(t.definition_chars for t in tools) // 4  # each adapter measured its JSON once


def names_fit(chars: int, context_tokens: int) -> bool:
    """Whether tool names of `chars` characters (4 a token) may be listed in the system prompt."""
    return chars / 4 <= context_tokens * NAMES_SHARE


@dataclass(frozen=True)
class ServerBudget:
    """What one server's tool definitions cost, and whether they are sent (`mcp list`, `/mcp`)."""

    tools: int
    tokens: int
    deferred: bool


def budget_note(budget: ServerBudget | None) -> str:
    """`~2.9k tokens` or `~2.9k tokens, deferred` ("" for a server without tools)."""
    if budget is None or not budget.tools:
        return ""
    tokens = budget.tokens
    size = f"~{tokens}" if tokens < 1000 else f"~{tokens / 1000:.1f}k"
    return f"{size} tokens" + (", deferred" if budget.deferred else "")


def off_note(switched_off: Sequence[McpToolAdapter]) -> str:
    """`2 tools off (saves ~310 tokens)` for a server's switched-off tools ("" when none is off)."""
    if not switched_off:
        return ""
    tokens = definition_tokens(switched_off)
    size = f"~{tokens}" if tokens < 1000 else f"~{tokens / 1000:.1f}k"
    count = len(switched_off)
    return f"{count} tool{'s' if count != 1 else ''} off (saves {size} tokens)"


class DeferredTools:
    """Which MCP tools are sent, which are one search away, and which the model has found."""

    def __init__(self, adapters: Callable[[], list[McpToolAdapter]], *, setting: str, context_tokens: int,
                 native: bool = False) -> None:
        self._adapters = adapters
        self.mode, self.percent = _parse(setting)
        self.context_tokens = context_tokens
        # native: the API loads what a search found where its result references it (`tool_reference` blocks and
        # `defer_loading` definitions, as Claude Code does on Anthropic's API), so the tools sent before the
        # conversation stay the same and the prompt cache stays valid; off, found definitions are sent in full
        self.native = native
        self.loaded: set[str] = set()
        self.referenced: set[str] = set()  # the loaded tools a kept ToolSearch result references (native)
        self._measured: tuple[list[McpToolAdapter], bool] | None = None  # (the list it was decided for, deferring)
        # (the list, its definitions' tokens as calibrate settled them: the API's count, or the estimate)
        self._tokens: tuple[list[McpToolAdapter], int] | None = None
        self._indexed: list[McpToolAdapter] | None = None
        self._index = ToolIndex([])

    def deferring(self) -> bool:
        """Decided once per tool list (the adapters hand out the same list until a server's tools change): asked
        several times for every model request, it must not measure every definition each time."""
        adapters = self._adapters()
        if self._measured is None or self._measured[0] is not adapters:
            if self.mode == "never":
                decision = False
            elif self.mode == "always":
                decision = any(not _always_loaded(a) for a in adapters)
            else:  # only what could be deferred counts: alwaysLoad servers' tools are sent anyway
                tokens = (self._tokens[1] if self._tokens is not None and self._tokens[0] is adapters
                          else definition_tokens(self._deferrable(adapters)))
                decision = tokens > self._threshold()
            self._measured = (adapters, decision)
        return self._measured[1]

    async def calibrate(self, count: CountTokens) -> None:
        """Before a model request: when the local estimate is within `COUNT_BAND` of the threshold, where it could
        be wrong about the decision, ask `count` (the API's count-tokens endpoint; bounded by `COUNT_TIMEOUT_S`, and
        on any failure the estimate stands). Once per tool list: far from the threshold nothing is asked."""
        adapters = self._adapters()
        if self.mode != "auto" or (self._tokens is not None and self._tokens[0] is adapters):
            return
        deferrable = self._deferrable(adapters)
        estimate, threshold = definition_tokens(deferrable), self._threshold()
        counted = None
        if deferrable and threshold / COUNT_BAND <= estimate <= threshold * COUNT_BAND:
            try:
                counted = await asyncio.wait_for(count(deferrable), COUNT_TIMEOUT_S)
            except Exception as exc:  # an optional refinement: whatever went wrong, the estimate decides
                log.debug("count-tokens unavailable (%s): the local estimate decides", type(exc).__name__)
            else:
                log.debug("MCP tool definitions: ~%d tokens estimated, %d counted", estimate, counted)
                if not estimate / COUNT_PLAUSIBLE <= counted <= estimate * COUNT_PLAUSIBLE:
                    counted = None  # a gateway that answers the same number whatever it is sent: not a count
        self._tokens = (adapters, estimate if counted is None else counted)
        self._measured = None

    def _threshold(self) -> float:
        return self.context_tokens * self.percent / 100

    @staticmethod
    def _deferrable(adapters: list[McpToolAdapter]) -> list[McpToolAdapter]:
        return [a for a in adapters if not _always_loaded(a)]

    def budget(self) -> dict[str, ServerBudget]:
        """Per server: how many tools, their definitions' estimated tokens, and whether they are deferred."""
        by_server: dict[str, list[McpToolAdapter]] = {}
        for adapter in self._adapters():
            by_server.setdefault(adapter.server, []).append(adapter)
        deferring = self.deferring()
        return {server: ServerBudget(len(tools), definition_tokens(tools),
                                     deferring and not _always_loaded(tools[0]))
                for server, tools in by_server.items()}

    def switched_off(self) -> dict[str, list[McpToolAdapter]]:
        """Per server, its tools `disabledMcpTools` switches off (never offered; what they would cost is saved)."""
        return self._adapters.switched_off_by_server() if isinstance(self._adapters, SwitchedAdapters) else {}

    def offered(self) -> list[McpToolAdapter]:
        adapters = self._adapters()
        if not self.deferring():
            return adapters
        return [a for a in adapters if a.name in self.loaded or _always_loaded(a)]

    async def settle(self) -> list[str]:
        """Before a search: wait (bounded by the startup timeout) for servers still starting or restarting and for
        every tools/list_changed already sent to be applied (McpManager.settle_for_search), so a search never
        answers from a partial or stale index; returns the servers still not ready ("name (status)")."""
        if not isinstance(self._adapters, ManagedAdapters):
            return []
        manager = self._adapters.manager
        return await manager.settle_for_search(manager.startup_timeout)

    def index(self) -> ToolIndex:
        adapters = self._adapters()
        if adapters is not self._indexed:
            self._index = ToolIndex([IndexedTool(a.name, a.server, a.mcp_tool.name, a.description, a.input_schema)
                                     for a in adapters])
            self._indexed = adapters
        return self._index

    def resolve(self, name: str) -> McpToolAdapter | None:
        """A deferred tool the model called by name: loaded from now on."""
        found = next((a for a in self._adapters() if a.name == name), None)
        if found is not None:
            self.loaded.add(name)
        return found

    def forget(self, history: Sequence[Mapping[str, Any]] = ()) -> None:
        """`/clear`, a compaction or a resumed conversation: the found definitions are sent again only once found
        again — except those the kept conversation still names (a call, or a kept ToolSearch result)."""
        if not self.loaded:
            return
        kept = json.dumps(list(history), ensure_ascii=False, default=str)
        self.loaded = {name for name in self.loaded if name in kept}
        self.referenced &= tool_references(history)

    def deferred_names(self) -> set[str]:
        """The found tools sent as `defer_loading` (DeferredLoading, agent/loop.py): those a kept search result
        references. A tool called by name without a search, or kept only by a mention, is sent in full."""
        return self.referenced & self.loaded if self.native else set()

    def sent_in_full(self) -> set[str]:
        """The MCP tools every request carries whole: alwaysLoad servers' and those called by name (not searched)."""
        return (self.loaded - self.referenced) | {a.name for a in self._adapters() if _always_loaded(a)}

    def refused(self, error: ModelError) -> bool:
        """The API refused a request (HTTP 400) over deferred loading: a proxy, or a model or API version without it.
        From now on found tools are sent in full (their references go as text). True when that changed anything."""
        text = str(error).lower()
        if not self.native or error.status != 400 or not any(word in text for word in _REFUSAL_WORDS):
            return False
        log.warning("the model API refused deferred tool loading (%s): found tools are sent in full from now on",
                    str(error)[:200])
        self.native = False
        return True

    def prompt_section(self) -> str:
        """The servers with how many of their tools are deferred, and the tools' names while they cost at most
        `NAMES_SHARE` of the context window (`names_fit`): Claude Code lists every name, which lets the model pick
        with `select:`; past that share (thousands of tools) the model is told the counts and searches."""
        if not self.deferring():
            return ""
        by_server: dict[str, list[str]] = {}
        for adapter in self._adapters():
            if not _always_loaded(adapter):  # found tools stay listed: the prompt stays the same (and cached)
                by_server.setdefault(adapter.server, []).append(adapter.name)
        if not by_server:
            return ""
        names = names_fit(sum(len(name) + 2 for names in by_server.values() for name in names), self.context_tokens)
        lines = ["MCP tools are not listed in full to save context. Find them with ToolSearch (keywords or a "
                 "sentence; `select:name1,name2` for exact names); what it finds can be called from your next "
                 "step. The servers and their deferred tools:"]
        for server, listed in sorted(by_server.items()):
            count = f"{len(listed)} tool{'s' if len(listed) != 1 else ''}"
            lines.append(f"- {server} ({count}): {', '.join(listed)}" if names else f"- {server}: {count}")
        return "\n".join(lines)


class ToolSearchTool:
    name = "ToolSearch"
    description = ("Find MCP tools that are not loaded yet, by keywords or a description of the task (e.g. "
                   "\"create a github issue\"), or exactly with `select:mcp__server__tool,...`. Returns the best "
                   "matches with their names and what they do; call them by name afterwards.")
    read_only = True

    def __init__(self, deferred: DeferredTools) -> None:
        self.deferred = deferred
        self.input_schema: dict[str, Any] = {"type": "object", "additionalProperties": False, "required": ["query"], "properties": {
            "query": {"type": "string", "description": "Keywords, a sentence, or select:name1,name2"},
            "max_results": {"type": "integer", "description": f"How many results (default {DEFAULT_LIMIT})"}}}

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            return ToolResult.error("query must be a non-empty string")
        limit = args.get("max_results")
        limit = limit if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0 else DEFAULT_LIMIT
        limit = min(limit, MAX_LIMIT)
        selecting = query.strip().startswith("select:")
        not_ready = await self.deferred.settle()
        missing = (f"\nNot searched (not ready yet): {', '.join(not_ready)}; search again later to include "
                   "their tools.") if not_ready else ""
        ranked = self.deferred.index().search(query, limit if selecting else limit + MORE_NAMES)
        if not ranked:
            return ToolResult.text(f"No MCP tool matches {query!r}. Try other words, or a server's name.{missing}")
        found, more = ranked[:limit], ranked[limit:]
        whole = self.deferred.sent_in_full() if self.deferred.native else set()
        lines = []
        for tool in found:
            self.deferred.loaded.add(tool.qualified_name)
            first = (tool.description.strip().splitlines() or [""])[0][:200]
            params = ", ".join(list((tool.input_schema.get("properties") or {}).keys())[:10])
            lines.append(f"{tool.qualified_name}: {first}" + (f" (parameters: {params})" if params else ""))
        text = "\n".join(lines) + "\n\nThese tools can be called from your next step."
        if more:  # the next few by rank, names only: the right tool is often just below the cut (bench/README.md)
            text += ("\nLess likely matches, not loaded (`select:` them if one fits better): "
                     + ", ".join(t.qualified_name for t in more))
        text += missing
        # native: the API puts each definition where its reference is; the result carries nothing else (as Claude
        # Code sends it), the listing goes beside it. A tool already sent whole stays so (the tools sent up front
        # must not change)
        referable = [t.qualified_name for t in found if t.qualified_name not in whole]
        if not self.deferred.native or not referable:
            return ToolResult.text(text)
        self.deferred.referenced.update(referable)
        return ToolResult([{"type": "tool_reference", "tool_name": name} for name in referable], aside=text)


def _always_loaded(adapter: McpToolAdapter) -> bool:
    """The server's config says `"alwaysLoad": true`."""
    state = adapter.manager.states.get(adapter.server)
    return state is not None and state.config.always_load


def _parse(setting: str) -> tuple[str, float]:
    text = setting.strip().lower()
    if text in ("true", "1", "yes", "on", "always"):
        return "always", DEFAULT_PERCENT
    if text in ("false", "0", "no", "off", "never"):
        return "never", DEFAULT_PERCENT
    if text.startswith("auto:"):
        try:
            return "auto", max(0.0, float(text[5:]))
        except ValueError:
            return "auto", DEFAULT_PERCENT
    return "auto", DEFAULT_PERCENT
