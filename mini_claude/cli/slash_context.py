"""`/context`: what fills the model's context window, part by part — the system prompt, the memory files in it, the
built-in tools' definitions, each MCP server's (deferred tools are not sent, so not counted: they are named apart),
the conversation — with token estimates, each part's share of the window, and a bar.

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
from mini_claude.agent.system_prompt import MAX_SERVER_INSTRUCTIONS_CHARS
from mini_claude.models.base import ToolCounter, ToolSpec
from mini_claude.tools.base import Tool
from mini_claude.tools.mcp_tool import McpToolAdapter

__all__ = ["BAR_CELLS", "COUNT_TIMEOUT_S", "ContextPart", "ContextReport", "context_lines", "measure_context"]

BAR_CELLS = 50
COUNT_TIMEOUT_S = 5.0
FREE_MARK = "·"


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

    @property
    def used(self) -> int:
        return sum(part.tokens for part in self.parts)


async def measure_context(parts: Any) -> ContextReport:
    """What the next request of this session (`SessionParts`) would carry, by part."""
    agent = parts.agent
    system = agent.system_prompt()
    tools: Sequence[Tool] = agent.tools()
    specs = [ToolSpec(t.name, t.description, t.input_schema) for t in tools]
    memory = parts.memory
    section = memory.prompt_section() if memory is not None else ""
    memory_chars = len(section) if section and section in system else 0
    instructions_chars = sum(len(text) for text in _instructions(parts.manager) if text in system)
    deferred_note = parts.deferred.prompt_section() if parts.deferred is not None else ""
    names_chars = len(deferred_note) if deferred_note and deferred_note in system else 0
    builtin = [t for t in tools if not isinstance(t, McpToolAdapter)]
    servers: dict[str, list[Tool]] = {}
    for tool in tools:
        if isinstance(tool, McpToolAdapter):
            servers.setdefault(tool.server, []).append(tool)
    rest = len(system) - memory_chars - instructions_chars - names_chars
    raw = {"system": rest // CHARS_PER_TOKEN, "memory": memory_chars // CHARS_PER_TOKEN,
           "instructions": instructions_chars // CHARS_PER_TOKEN, "names": names_chars // CHARS_PER_TOKEN,
           "builtin": _definition_tokens(builtin), "messages": _json_tokens(agent.history),
           **{f"mcp:{name}": _definition_tokens(group) for name, group in servers.items()}}
    total = agent.context.estimate(system, agent.history, specs)
    factor = total / max(1, sum(raw.values())) if total else 1.0
    scaled = {key: round(value * factor) for key, value in raw.items()}
    counted = await _counted(agent.model, specs)
    tool_keys = ["builtin", *(f"mcp:{name}" for name in servers)]
    if counted is not None:  # the API's count, shared out among the groups as the estimate splits them
        estimated = sum(raw[key] for key in tool_keys) or 1
        for key in tool_keys:
            scaled[key] = round(counted * raw[key] / estimated)
    report = ContextReport(agent.model.name, agent.context.tokens, [], counted is not None)
    report.parts.append(ContextPart("system prompt", "S", scaled["system"]))
    files = memory.files if memory is not None and memory_chars else []
    report.parts.append(ContextPart("memory files", "M", scaled["memory"], _count(len(files), "file")))
    report.memory_files = [(str(f.path), round(len(f.text) // CHARS_PER_TOKEN * factor)) for f in files]
    if scaled["instructions"]:
        report.parts.append(ContextPart("MCP server instructions", "I", scaled["instructions"]))
    if scaled["names"]:
        report.parts.append(ContextPart("deferred MCP tool names", "N", scaled["names"], "for ToolSearch"))
    report.parts.append(ContextPart("built-in tools", "T", scaled["builtin"], _count(len(builtin), "tool")))
    for name, group in sorted(servers.items()):
        report.parts.append(ContextPart(f"MCP tools: {name}", "P", scaled[f"mcp:{name}"], _count(len(group), "tool")))
    report.parts.append(ContextPart("messages", "C", scaled["messages"], _count(len(agent.history), "message")))
    report.deferred = _deferred(parts.deferred, servers)
    return report


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
        if mark == "M":
            lines += [f"      {path}  ~{_k(tokens_of)}" for path, tokens_of in report.memory_files]
    free = max(0, report.window - used)
    lines.append(f"  {FREE_MARK} {'free':<{width}}  {_k(free):>7}  {_pct(free, window):>6}")
    for note in report.deferred:
        lines.append(f"  deferred, not sent: {note}")
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


def _instructions(manager: Any) -> list[str]:
    """Each server's instructions as the system prompt carries them (header, text cut at its limit)."""
    blocks = []
    for name, text in manager.instructions().items():
        text = text.strip()
        if text:
            cut = text[:MAX_SERVER_INSTRUCTIONS_CHARS] + (" […]" if len(text) > MAX_SERVER_INSTRUCTIONS_CHARS else "")
            blocks.append(f'Instructions from MCP server "{name}" (its tools are named mcp__{name}__*):\n{cut}')
    return blocks


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
    return str(tokens) if tokens < 1000 else f"{tokens / 1000:.1f}".removesuffix(".0") + "k"


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
