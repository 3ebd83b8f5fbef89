"""How an MCP server's state reads on the terminal: the one-line status (the REPL's `/mcp` and its announcements),
the `mini-claude mcp list` row, and the `--json` record. Text only; callers print it through `render.clean`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mini_claude.mcp.manager import ServerState, ServerStatus
from mini_claude.mcp.protocol import WithheldTool
from mini_claude.tools.tool_search import ServerBudget

__all__ = ["list_row", "server_line", "startup_note", "state_record", "withheld_note"]

LOGIN_HINT = "mini-claude mcp login {name}"


def startup_note(state: ServerState) -> str:
    """`started in 0.42s` for a connected ready server whose start was timed; "" otherwise (a lost connection's
    line is about the loss, not about how fast it once started)."""
    if state.status is not ServerStatus.READY or state.lost is not None or state.startup_s is None:
        return ""
    seconds = state.startup_s
    return f"started in {seconds:.2f}s" if seconds < 10 else f"started in {seconds:.1f}s"


def server_line(state: ServerState) -> str:
    """`docs: ready (3 tools) · started in 0.42s`, `web: failed (did not start within 30s …)`."""
    detail = state.summary()
    line = f"{state.name}: {state.status.label}" + (f" ({detail})" if detail else "")
    note = startup_note(state)
    return f"{line} · {note}" if note else line


def withheld_note(withheld: Sequence[WithheldTool]) -> str:
    """`1 tool withheld: deep_tool: input schema nested deeper than 64 levels` ("" for none; several are joined
    with "; ")."""
    if not withheld:
        return ""
    n = len(withheld)
    return f"{n} tool{'s' if n != 1 else ''} withheld: " + "; ".join(str(item) for item in withheld)


def list_row(state: ServerState, name_width: int, withheld: Sequence[WithheldTool] = (), budget: str = "") -> str:
    """One row of `mcp list`: name, status, then the detail (tool count and start time, or the reason), what the
    tool definitions cost and whether they are deferred (`budget`, tools/tool_search.budget_note), then the tools
    withheld from the model (too deeply nested) with their reasons."""
    summary = state.summary()
    if state.status is ServerStatus.NEEDS_AUTH:
        hint = LOGIN_HINT.format(name=state.name)
        if hint not in summary:
            summary = f"{summary}; run `{hint}`" if summary else f"run `{hint}`"
    for note in (startup_note(state), budget, withheld_note(withheld)):
        if note:
            summary = f"{summary} · {note}"
    return f"{state.name:<{name_width}}  {state.status.label:<14}  {summary}".rstrip()


def state_record(state: ServerState, withheld: Sequence[WithheldTool] = (),
                 budget: ServerBudget | None = None) -> dict[str, Any]:
    """The `--json` form of a server's state. `startup_s`: seconds its last successful start took (null if none);
    `tool_tokens` / `deferred` (null when it offers no tools): the estimated tokens of its tool definitions and
    whether they wait behind `ToolSearch`; `withheld_tools` (only when some are): `[{"name", "reason"}]` of the tools not
    offered to the model."""
    ready = state.status is ServerStatus.READY
    return {"name": state.name, "status": state.status.value,
            "tools": len(state.tools) if ready else None,
            "tool_tokens": budget.tokens if budget is not None else None,
            "deferred": budget.deferred if budget is not None else None,
            "error": state.error, "source": state.config.source, "type": state.config.type,
            "startup_s": round(state.startup_s, 3) if ready and state.startup_s is not None else None,
            **({"withheld_tools": [{"name": w.name, "reason": w.reason} for w in withheld]} if withheld else {})}
