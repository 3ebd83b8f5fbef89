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

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from mini_claude.paths import resolve_tool_path, user_home
from mini_claude.tools.background import BackgroundTasks

__all__ = ["ChecksOwnInput", "DenyCheck", "FileReader", "FileState", "ServerTool", "Tool", "ToolContext", "ToolResult", "input_is_ours",
           "nothing_denied"]


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
    """What Read last saw of a file: Edit refuses to edit a file changed on disk since."""

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
    """Per-session state shared by tools: the working directory and home (`resolve` reads a path exactly as the
    permission gate did), where big outputs are spilled, which files have been read (path -> state at read time),
    which files the deny rules (and the secrets rule) withhold from searches, and the session's background shell
    commands (a sub-agent's copy shares them; the session closes them: `background.aclose()`)."""

    cwd: Path
    spill_dir: Path
    read_files: dict[Path, FileState] = field(default_factory=dict)
    is_denied: DenyCheck = nothing_denied
    # does a file inside a searched folder hold secrets grep must skip (`PermissionGate.is_secret`)?
    is_secret: Callable[[Path], bool] = lambda path: False
    # is a path outside the places the session may read unasked, or secret (`PermissionGate.is_private`)? glob
    # drops a match a symlink led out of the searched folder to such a place
    is_private: Callable[[Path], bool] = lambda path: False
    home: Path = field(default_factory=user_home)
    background: BackgroundTasks = field(default_factory=BackgroundTasks)

    def resolve(self, path: str) -> Path:
        """`path` as the tool will open it: the same reading the permission gate checked (`resolve_tool_path`)."""
        return Path(resolve_tool_path(path, self.cwd, self.home))


@runtime_checkable
class Tool(Protocol):
    """A callable tool. `read_only` tools of one turn may run concurrently; others keep their order."""

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult: ...


@runtime_checkable
class ServerTool(Protocol):
    """A tool whose calls reach MCP servers: an MCP tool, or the resource tools that read from a server the model
    names. `servers_reached(args)` names the servers this call talks to (the gate applies their `mcp__server` rules
    and shows them); `input_is_servers` is True when the input schema is the server's own (the server checks the
    input; mini-claude only passes it on), False for our own tools whose input we check."""

    input_is_servers: bool

    def servers_reached(self, args: Mapping[str, Any]) -> tuple[str, ...]: ...


def own_server(tool: object, args: Mapping[str, Any]) -> str | None:
    """The one MCP server an MCP tool's call goes to (its adapter's), None for any other tool. Rules and hooks take
    the server from here, never from the tool's name: a name can pass to another server between the model's
    answer and the check (one coming up, or re-listing, with a colliding name)."""
    if isinstance(tool, ServerTool) and tool.input_is_servers:
        reached = tool.servers_reached(args)
        return reached[0] if len(reached) == 1 else None
    return None


@runtime_checkable
class FileReader(Protocol):
    """A tool that reads files it does not take as a `path` (the Skill tool's supporting files): `files_read(args)`
    names them, resolved, and the gate checks each as a Read (deny rules, the workspace boundary, secrets)."""

    def files_read(self, args: Mapping[str, Any]) -> list[str]: ...


@runtime_checkable
class ChecksOwnInput(Protocol):
    """A tool that checks its input against a full JSON Schema itself (StructuredOutput: the user's schema may use
    keywords the gate's own check does not read)."""

    checks_own_input: bool


def input_is_ours(tool: Tool) -> bool:
    """Is `tool`'s input schema ours to check before the gate sees the call (every tool but an MCP server's, and
    those that check their own)?"""
    if isinstance(tool, ChecksOwnInput) and tool.checks_own_input:
        return False
    return not (isinstance(tool, ServerTool) and tool.input_is_servers)
