"""The compact view of a conversation printed before the prompt when a saved one is resumed (`--continue`,
`--resume ID`, `/resume`): the last `RESUME_EXCHANGES` exchanges (a prompt and what answered it) and a line saying
how many earlier ones were left out; each prompt as `> text`, the assistant's text cut to a few lines, each tool
call on one line as the REPL showed it (`● Read(calc.py)`, tool_lines.call_line), a failed one marked. Everything in it went through `clean()`: it is the
model's and the repository's text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mini_claude.agent.turns import opens_with_summary, prompt_points
from mini_claude.cli.terminal.render import clean
from mini_claude.cli.terminal.tool_lines import call_line

__all__ = ["RESUME_EXCHANGES", "conversation_lines"]

RESUME_EXCHANGES = 5
TEXT_LINES = 3  # of each assistant text, and of each prompt


def conversation_lines(history: list[dict[str, Any]], cwd: Path, *, last: int = RESUME_EXCHANGES) -> list[str]:
    """The compact view of `history` (see the module docstring); no lines for an empty one."""
    points = prompt_points(history)
    if not points:
        return []
    shown = points[-last:] if last > 0 else []
    lines: list[str] = []
    left_out = len(points) - len(shown)
    if opens_with_summary(history):
        lines.append("  … the conversation before was summarised (compacted)")
    if left_out:
        lines.append(f"  … {left_out} earlier exchange{'s' if left_out != 1 else ''} not shown")
    for n, point in enumerate(shown):
        following = shown[n + 1] if n + 1 < len(shown) else None
        if n:
            lines.append("")
        lines.extend(_prompt_lines(point.text))
        stop = len(history) if following is None else following.index + (1 if following.block else 0)
        for index in range(point.index, stop):
            message = history[index]
            content = message.get("content") if isinstance(message.get("content"), list) else []
            if message.get("role") == "assistant":
                lines.extend(_assistant_lines(content, cwd))
                continue
            start = point.block if index == point.index else 0
            end = following.block if following is not None and index == following.index else len(content)
            failed = sum(1 for b in content[start:end] if isinstance(b, dict) and b.get("type") == "tool_result"
                         and b.get("is_error"))
            if failed:  # a failed call is marked under the calls
                lines.append(f"  ⎿ {failed} tool call{'s' if failed > 1 else ''} failed")
    return lines


def _prompt_lines(text: str) -> list[str]:
    rows = clean(text).splitlines() or [""]
    out = [f"> {rows[0]}", *(f"  {row}" for row in rows[1:TEXT_LINES])]
    if len(rows) > TEXT_LINES:
        out.append(f"  … (+{len(rows) - TEXT_LINES} lines)")
    return out


def _assistant_lines(content: list[Any], cwd: Path) -> list[str]:
    out: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        rows = [row for row in clean(str(block.get("text", ""))).splitlines() if row.strip()] \
            if block.get("type") == "text" else []
        if rows:  # a text that was only escapes or invisible characters shows nothing (it used to crash the view)
            out.append(f"● {rows[0]}")
            out.extend(f"  {row}" for row in rows[1:TEXT_LINES])
            if len(rows) > TEXT_LINES:
                out.append(f"  … (+{len(rows) - TEXT_LINES} lines)")
        elif block.get("type") == "tool_use":
            args = block.get("input") if isinstance(block.get("input"), dict) else {}
            out.append(f"● {call_line(str(block.get('name', '?')), args, cwd)}")
    return out

