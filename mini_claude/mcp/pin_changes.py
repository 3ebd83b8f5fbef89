"""What a pin covers and how a change to it reads: a tool's pinned definition (`tool_definition`), the digests
of definitions and instructions texts, the withheld changes (`ToolChange`, `InstructionsChange`) with their
unified diffs, and the pin records the store keeps (`pin_entry`, `instructions_pin`, `review_instructions`).
pinning.py decides when a change is withheld; this module only describes one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mini_claude.mcp.protocol import McpTool

__all__ = [
    "MAX_STORED_DEFINITION_CHARS",
    "UNHASHABLE",
    "InstructionsChange",
    "ToolChange",
    "definition_digest",
    "instructions_digest",
    "instructions_pin",
    "pin_entry",
    "review_instructions",
    "tool_definition",
]

# a definition longer than this (as compact JSON) is pinned by its digest only: the diff then cannot show it
MAX_STORED_DEFINITION_CHARS = 200_000
UNHASHABLE = "unhashable"  # the digest of a definition too deep to serialise: never equal to a real one


def tool_definition(tool: McpTool) -> dict[str, Any]:
    """The parts of a tool the pin covers, as the model and the permission gate will see them (wire names)."""
    return {
        "name": tool.name,
        "title": tool.title,
        "description": tool.description,
        "inputSchema": tool.input_schema,
        "outputSchema": tool.output_schema,
        "annotations": tool.annotations,
    }


def _canonical(definition: Mapping[str, Any]) -> str | None:
    """Compact, key-sorted JSON; None when the definition is too deep to serialise (a hostile schema)."""
    try:
        return json.dumps(definition, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except (RecursionError, ValueError, TypeError):
        return None


def definition_digest(definition: Mapping[str, Any]) -> str:
    """`sha256:<hex>` of the canonical JSON ("unhashable" when it cannot be serialised: never matches a pin)."""
    return digest_and_size(definition)[0]


def digest_and_size(definition: Mapping[str, Any]) -> tuple[str, int | None]:
    """`definition_digest` and the canonical JSON's length (None when unhashable), from one serialisation."""
    text = _canonical(definition)
    if text is None:
        return UNHASHABLE, None
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest(), len(text)


@dataclass(frozen=True)
class ToolChange:
    """A tool whose definition differs from its pin: withheld until accepted. `old` is None when the pinned
    definition was too large to store (only its digest was kept)."""

    tool: McpTool
    old: dict[str, Any] | None
    new: dict[str, Any]
    digest: str  # of `new`: what accepting pins

    @property
    def name(self) -> str:
        return self.tool.name

    @property
    def pinnable(self) -> bool:
        """False for a definition too deeply nested to serialise: it stays withheld even when accepted."""
        return self.digest != UNHASHABLE

    def diff(self, server: str) -> str:
        """A unified diff of the accepted definition against the current one (server text: clean it to print)."""
        before = _render(self.old) if self.old is not None else ["(the accepted definition was too large to keep)"]
        import difflib  # only to show a change

        return "\n".join(difflib.unified_diff(before, _render(self.new), fromfile=f"{server}/{self.name} (accepted)",
                                              tofile=f"{server}/{self.name} (now)", lineterm=""))


def _render(definition: Mapping[str, Any]) -> list[str]:
    """One definition as diffable lines: the description as its own lines (most changes are there), every other
    field as indented, key-sorted JSON."""
    lines: list[str] = []
    for key in ("name", "title", "description", "inputSchema", "outputSchema", "annotations"):
        value = definition.get(key)
        if key == "description" and isinstance(value, str):
            lines.append("description:")
            lines.extend("  " + line for line in (value.splitlines() or [""]))
            continue
        try:
            text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
        except (RecursionError, ValueError, TypeError):
            text = "(too deeply nested to show)"
        first, *rest = text.splitlines()
        lines.append(f"{key}: {first}")
        lines.extend("  " + line for line in rest)
    return lines


def instructions_digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class InstructionsChange:
    """A server's instructions differ from the accepted text: withheld from the system prompt until accepted.
    `old` is the accepted text (None: the server had none, or it was too large to keep — `had_text` says which)."""

    old: str | None
    had_text: bool
    new: str
    digest: str  # of `new`: what accepting pins

    name = "instructions"  # how accepting lists it ("accepted: echo, instructions")

    def diff(self, server: str) -> str:
        """A unified diff of the accepted text against the current one (server text: clean it to print)."""
        if self.old is not None:
            before = self.old.splitlines() or [""]
        else:
            before = ["(the accepted instructions were too large to keep)" if self.had_text else "(no instructions)"]
        import difflib

        return "\n".join(difflib.unified_diff(before, self.new.splitlines() or [""],
                                              fromfile=f"{server} instructions (accepted)",
                                              tofile=f"{server} instructions (now)", lineterm=""))


def review_instructions(stored: Any, text: str | None) -> tuple[InstructionsChange | None, Any]:
    """(the change to withhold or None, the instructions pin to keep). Nothing pinned yet: `text` (or "none") is
    pinned now. A text that matches, or no text at all, is fine; any other text is withheld."""
    if not isinstance(stored, dict) or not (stored.get("sha256") is None or isinstance(stored.get("sha256"), str)):
        return None, instructions_pin(text)
    if text is None:
        return None, stored
    digest = instructions_digest(text)
    if stored.get("sha256") == digest:
        return None, stored
    old = stored.get("text")
    had_text = stored.get("sha256") is not None
    return InstructionsChange(old if isinstance(old, str) else None, had_text, text, digest), stored


def instructions_pin(text: str | None) -> dict[str, Any]:
    if text is None:
        return {"sha256": None}
    if len(text) > MAX_STORED_DEFINITION_CHARS:
        return {"sha256": instructions_digest(text)}
    return {"sha256": instructions_digest(text), "text": text}


def pin_entry(definition: dict[str, Any], digest: str, size: int | None = -1) -> dict[str, Any]:
    """A pin: the digest, and the definition itself unless its canonical JSON (`size`, when the caller has it;
    None: unserialisable) is over `MAX_STORED_DEFINITION_CHARS`."""
    if size == -1:
        text = _canonical(definition)
        size = len(text) if text is not None else None
    if size is None or size > MAX_STORED_DEFINITION_CHARS:
        return {"sha256": digest}
    return {"sha256": digest, "definition": definition}
