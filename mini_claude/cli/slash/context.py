"""`/context`: what fills the model's context window, part by part — each part of the system prompt (the brief, the
environment, MCP server instructions, skills, the deferred tool names…), the blocks that open the conversation (the
memory files, the git status), the built-in tools' definitions, each MCP server's (deferred tools are not sent, so
not counted: they are named apart), the conversation — with token estimates, each part's share of the window, and a
bar.

The numbers are the agent's own: JSON characters / 4 per part, scaled so that they add up to
`ContextWindow.estimate` (which the last API report calibrates). Where the backend can count (Anthropic's
count-tokens endpoint, `ToolCounter`) the tool definitions are counted by the API instead, within
`COUNT_TIMEOUT_S`; if that fails the estimate stands, and the line says which it is.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mini_claude.agent.compaction import CHARS_PER_TOKEN, CLEAR_AT, COMPACT_AT
from mini_claude.agent.opening import MEMORY_LABEL
from mini_claude.agent.system_prompt import PromptPart
from mini_claude.models.base import ToolCounter, ToolSpec
from mini_claude.tools.base import Tool
from mini_claude.tools.mcp_tool import McpToolAdapter
from mini_claude.tools.tool_search import off_note

__all__ = ["BAR_CELLS", "COUNT_TIMEOUT_S", "ContextPart", "ContextReport", "context_lines", "measure_context"]

BAR_CELLS = 50
COUNT_TIMEOUT_S = 5.0
FREE_MARK = "·"
MEMORY_MARK = "M"
# the bar's letter for each part of the system prompt (any other part: S)
_PROMPT_MARKS = {"brief": "S", "environment": "E", "MCP server instructions": "I", "skills": "K",
                 "deferred MCP tool names": "N"}
_PROMPT_NOTES = {"deferred MCP tool names": "for ToolSearch"}


@dataclass
class ContextPart:
    """One part of the window: its label, the bar letter, its tokens and a note (`12 tools`)."""

    label: str
    mark: str
    tokens: int
    note: str = ""


@dataclass
class ContextReport:
    model: str
    window: int
    parts: list[ContextPart]
    tools_counted: bool  # the tool definitions were counted by the API, not estimated
    deferred: list[str] = field(default_factory=list)  # "web: 40 tools (~25.1k tokens) not sent"
    memory_files: list[tuple[str, int]] = field(default_factory=list)  # (path, tokens)
    # "probe: 2 tools off (saves ~310 tokens) (disabledMcpTools)", "web: server off (saves ~2k tokens, as last listed)"
    switched_off: list[str] = field(default_factory=list)

    @property
    def used(self) -> int:
        return sum(part.tokens for part in self.parts)


async def measure_context(parts: Any) -> ContextReport:
    """What the next request of this session (`SessionParts`) would carry, by part."""
    agent = parts.agent
    system = agent.system_prompt()
    prompt: list[PromptPart] = parts.prompt_parts() if parts.prompt_parts is not None else \
        [PromptPart("system prompt", system)]
    tools: Sequence[Tool] = agent.tools()
    specs = [ToolSpec(t.name, t.description, t.input_schema) for t in tools]
    memory = parts.memory
    history = agent.history
    # the blocks that open the conversation (CLAUDE.md, the git status): counted apart, and out of the messages
    # where the history already holds them
    opening = parts.opening.parts(history) if parts.opening is not None else []
    coming = [{"type": "text", "text": part.text} for part in opening if not part.in_history]
    request = [*history[:-1], {**history[-1], "content": [*coming, *history[-1]["content"]]}] \
        if coming and history and history[-1]["role"] == "user" else \
        [*history, *([{"role": "user", "content": coming}] if coming else [])]
    builtin = [t for t in tools if not isinstance(t, McpToolAdapter)]
    servers: dict[str, list[Tool]] = {}
    for tool in tools:
        if isinstance(tool, McpToolAdapter):
            servers.setdefault(tool.server, []).append(tool)
    opening_tokens = {part.label: _json_tokens({"type": "text", "text": part.text}) for part in opening}
    in_history = sum(opening_tokens[part.label] for part in opening if part.in_history)
    raw = {**{f"prompt:{i}": len(part.text) // CHARS_PER_TOKEN for i, part in enumerate(prompt)},
           **{f"open:{label}": tokens for label, tokens in opening_tokens.items()},
           "builtin": _definition_tokens(builtin),
           "messages": max(0, _json_tokens(history) - in_history),
           **{f"mcp:{name}": _definition_tokens(group) for name, group in servers.items()}}
    total = agent.context.estimate(system, request, specs)
    factor = total / max(1, sum(raw.values())) if total else 1.0
    scaled = {key: round(value * factor) for key, value in raw.items()}
    counted = await _counted(agent.model, specs)
    tool_keys = ["builtin", *(f"mcp:{name}" for name in servers)]
    if counted is not None:  # the API's count, shared out among the groups as the estimate splits them
        estimated = sum(raw[key] for key in tool_keys) or 1
        for key in tool_keys:
            scaled[key] = round(counted * raw[key] / estimated)
    report = ContextReport(agent.model.name, agent.context.tokens, [], counted is not None)
    for i, part in enumerate(prompt):
        label = part.label if part.label == "system prompt" else f"system prompt: {part.label}"
        report.parts.append(ContextPart(label, _PROMPT_MARKS.get(part.label, "S"), scaled[f"prompt:{i}"],
                                        _PROMPT_NOTES.get(part.label, "")))
    files = memory.files if memory is not None else []
    for part in opening:
        memory_part = part.label == MEMORY_LABEL
        report.parts.append(ContextPart(part.label, MEMORY_MARK if memory_part else "G", scaled[f"open:{part.label}"],
                                        _count(len(files), "file") if memory_part else "a snapshot"))
        if memory_part:
            report.memory_files = [(str(f.path), round(len(f.text) // CHARS_PER_TOKEN * factor)) for f in files]
    report.parts.append(ContextPart("built-in tools", "T", scaled["builtin"], _count(len(builtin), "tool")))
    for name, group in sorted(servers.items()):
        report.parts.append(ContextPart(f"MCP tools: {name}", "P", scaled[f"mcp:{name}"], _count(len(group), "tool")))
    report.parts.append(ContextPart("messages", "C", scaled["messages"], _count(len(history), "message")))
    report.deferred = _deferred(parts.deferred, servers)
    if parts.deferred is not None:  # what `disabledMcpTools` keeps out of every request
        report.switched_off = [f"{server}: {off_note(group)} (disabledMcpTools)" for server, group
                               in sorted(parts.deferred.switched_off().items())]
    report.switched_off += _servers_off(parts.manager)
    return report


def _servers_off(manager: Any) -> list[str]:
    """`probe: server off (saves ~240 tokens, as last listed)` for each server switched off in this session."""
    from mini_claude.cli.mcp.live_switch import server_off_tokens
    from mini_claude.mcp.manager import ServerStatus
    from mini_claude.mcp.tool_switches import server_off_note

    return [f"{state.name}: {server_off_note(server_off_tokens(manager, state))}"
            for state in manager.states.values() if state.status is ServerStatus.DISABLED]


def context_lines(report: ContextReport) -> list[str]:
    """The report as text: the total and its share, a bar, one row per part, what is not sent, the free room."""
    window = max(1, report.window)
    used = report.used
    lines = [f"context: ~{_k(used)} of {_k(report.window)} tokens ({_pct(used, window)}) · model {report.model}",
             f"[{_bar(report.parts, window)}]"]
    rows = [(part.mark, part.label, part.tokens, part.note) for part in report.parts]
    width = max(len(label) for _, label, _, _ in rows)
    for mark, label, tokens, note in rows:
        lines.append(f"  {mark} {label:<{width}}  {_k(tokens):>7}  {_pct(tokens, window):>6}  {note}".rstrip())
        if mark == MEMORY_MARK:
            lines += [f"      {path}  ~{_k(tokens_of)}" for path, tokens_of in report.memory_files]
    free = max(0, report.window - used)
    lines.append(f"  {FREE_MARK} {'free':<{width}}  {_k(free):>7}  {_pct(free, window):>6}")
    for note in report.deferred:
        lines.append(f"  deferred, not sent: {note}")
    for note in report.switched_off:
        lines.append(f"  switched off, never sent: {note}")
    how = "tool definitions counted by the API, the rest" if report.tools_counted else "all parts"
    lines.append(f"  {how} estimated (JSON characters / {CHARS_PER_TOKEN}, calibrated by the last request); old "
                 f"tool results are cleared at {CLEAR_AT:.0%} of the window and the conversation is compacted at "
                 f"{COMPACT_AT:.0%} (/compact does it now)")
    return [line.replace("\n", "\\n") for line in lines]  # a repository's name cannot start a line of its own


async def _counted(model: Any, specs: list[ToolSpec]) -> int | None:
    """The API's count of what the tool definitions add to a request; None when the backend cannot count or the
    count failed or took longer than `COUNT_TIMEOUT_S` (the estimate stands)."""
    if not specs or not isinstance(model, ToolCounter):
        return None
    try:
        return await asyncio.wait_for(model.count_tool_tokens(specs), COUNT_TIMEOUT_S)
    except asyncio.CancelledError:
        raise
    except Exception:  # an optional refinement: whatever went wrong, the estimate is shown
        return None


def _deferred(deferred: Any, offered: dict[str, list[Tool]]) -> list[str]:
    if deferred is None:
        return []
    notes = []
    for server, budget in sorted(deferred.budget().items()):
        waiting = budget.tools - len(offered.get(server, ()))
        if budget.deferred and waiting > 0:
            notes.append(f"{server}: {_count(waiting, 'tool')} of {budget.tools} (~{_k(budget.tokens)} tokens for "
                         "all of them) wait behind ToolSearch")
    return notes


def _definition_tokens(tools: Sequence[Tool]) -> int:
    return sum(_json_tokens({"name": t.name, "description": t.description, "input_schema": t.input_schema})
               for t in tools)


def _json_tokens(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, default=str)) // CHARS_PER_TOKEN


def _bar(parts: list[ContextPart], window: int) -> str:
    """`BAR_CELLS` cells: each part's letter over its share (a part above zero gets at least one), dots for free."""
    cells: list[str] = []
    for part in parts:
        if part.tokens > 0:
            cells += [part.mark] * max(1, round(part.tokens * BAR_CELLS / window))
    cells = cells[:BAR_CELLS]
    return "".join(cells) + FREE_MARK * (BAR_CELLS - len(cells))


def _k(tokens: int) -> str:
    if tokens >= 1_000_000:
        return f"{tokens / 1_000_000:.1f}".removesuffix(".0") + "M"
    return str(tokens) if tokens < 1000 else f"{tokens / 1000:.1f}".removesuffix(".0") + "k"


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
