"""Keeping tool results within what the model should see at once: a result whose text is over the cap is saved
to a file under the session's spill directory and replaced by a preview, the file's path, and how to read it.
The file is private (0600 in a 0700 folder, never through a symlink: see mini_claude/spill.py)."""

from __future__ import annotations

import logging

from mini_claude.spill import preview, spill_text
from mini_claude.tools.base import ToolContext, ToolResult

__all__ = ["PREVIEW_MAX_CHARS", "cap_result"]

log = logging.getLogger(__name__)

# The preview of a spilled result is at most this long (and never longer than the cap itself).
PREVIEW_MAX_CHARS = 20_000
# Leeway for the preview's own "characters omitted" marker.
_MARKER_RESERVE_CHARS = 64


def cap_result(result: ToolResult, ctx: ToolContext, *, tool_name: str, max_chars: int) -> ToolResult:
    """Return `result` unchanged when its text fits in `max_chars`; else save the text with `spill_text` to
    `ctx.spill_dir` and return a preview plus the saved file's path. Non-text blocks (images) are kept as they are;
    `is_error` is preserved."""
    texts = [block.get("text", "") for block in result.content if block.get("type") == "text"]
    total = sum(len(t) for t in texts)
    if total <= max_chars:
        return result
    full = "\n".join(texts)
    line_count = full.count("\n") + (0 if full.endswith("\n") else 1)
    size = f"({len(full)} characters, {line_count} lines; the limit is {max_chars})"
    try:
        path = spill_text(full, ctx.spill_dir, tool_name)
    except OSError as exc:  # no writable private folder, or something planted in the way: the preview remains
        log.warning("could not save the output of %s: %s", tool_name, exc)
        note = (f"[The output of {tool_name} was too long to show in full {size}, and saving it to a file "
                f"failed ({exc.strerror or exc}). Preview:]")
    else:
        note = (
            f"[The output of {tool_name} was too long to show in full {size}. It was saved to {path}. Read it "
            f"with Read using offset and limit (e.g. offset=1, limit=500), or search it with Grep "
            f"(path={path}). Preview:]"
        )
    budget = max(0, min(PREVIEW_MAX_CHARS, max_chars - len(note) - _MARKER_RESERVE_CHARS))
    shown = preview(full, budget) if budget else ""
    others = [block for block in result.content if block.get("type") != "text"]
    text = f"{note}\n{shown}" if shown else note
    return ToolResult([{"type": "text", "text": text}, *others], is_error=result.is_error, aside=result.aside)
