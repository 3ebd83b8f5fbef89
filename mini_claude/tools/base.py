"""The `Tool` protocol every tool implements (built-in or MCP), and the value a tool returns.

A tool is a name, a description, a JSON schema for its input and an async `run`. The agent never needs to know
where a tool comes from: an MCP tool adapter looks exactly like a built-in.

Example:

    class Echo:
        name = "echo"
        description = "Echo the text back."
        input_schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
        read_only = True

        async def run(self, args: dict, ctx: ToolContext) -> ToolResult:
            return ToolResult.text(args["text"])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

__all__ = ["DenyCheck", "FileState", "Tool", "ToolContext", "ToolResult", "nothing_denied"]


@dataclass
class ToolResult:
    """What a tool returns. `content` is a list of Anthropic content blocks (`text`, `image`, `tool_reference`).
    `aside`: text for the model that goes beside the result rather than in it (a result that loads tools by
    `tool_reference` carries nothing else, as Claude Code sends it)."""

    content: list[dict[str, Any]]
    is_error: bool = False
    aside: str = ""

    @classmethod
    def text(cls, text: str, *, is_error: bool = False) -> ToolResult:
        return cls([{"type": "text", "text": text}], is_error=is_error)

    @classmethod
    def error(cls, message: str) -> ToolResult:
        return cls.text(message, is_error=True)

    def as_text(self) -> str:
        """The text blocks joined (images as a placeholder): for terminal display and tests."""
        parts = []
        for block in self.content:
            if block.get("type") == "text":
                parts.append(block.get("text", ""))
            elif block.get("type") == "tool_reference":
                parts.append(f"[loads {block.get('tool_name')}]")
            else:
                parts.append(f"[{block.get('type')}]")
        return "\n".join([*parts, self.aside] if self.aside else parts)


@dataclass
class FileState:
    """What read_file last saw of a file: edit_file refuses to edit a file changed on disk since."""

    mtime_ns: int
    size: int


class DenyCheck(Protocol):
    """Does a permission deny rule cover this file for this tool (Claude Code name: `Grep`, `Glob`, `Read`)?
    The session passes `PermissionGate.is_denied`; search tools drop such files from their results."""

    def __call__(self, path: Path, tool: str) -> bool: ...


def nothing_denied(path: Path, tool: str) -> bool:
    """The default `DenyCheck`, for a context without permission rules (tests, programmatic use)."""
    return False


@dataclass
class ToolContext:
    """Per-session state shared by tools: the working directory, where big outputs are spilled, which files
    have been read (path -> state at read time), and which files the deny rules withhold from searches."""

    cwd: Path
    spill_dir: Path
    read_files: dict[Path, FileState] = field(default_factory=dict)
    is_denied: DenyCheck = nothing_denied

    def resolve(self, path: str) -> Path:
        p = Path(path).expanduser()
        return p if p.is_absolute() else (self.cwd / p)


@runtime_checkable
class Tool(Protocol):
    """A callable tool. `read_only` tools of one turn may run concurrently; others keep their order."""

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult: ...
