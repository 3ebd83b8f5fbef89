"""A tool call as a Claude Code hook script expects to read it.

A user's hooks were written for Claude Code: `jq -r .tool_input.file_path` in a formatter, `tool_name == "Bash"` and
`.tool_input.command` in a guard. The built-in tools carry Claude Code's names and input keys, so the input passes
as the model wrote it, but for one thing (measured against its binary: tests/hooks/test_hooks_claude_code_parity.py):
a file tool's `file_path` (NotebookEdit's `notebook_path`) is made absolute, as Claude Code sends it (the model may
have written `a.txt`), read by the one path resolver the tools and the gate use. An MCP tool's call keeps its name and input (and gets
`mcp_server`: the server's name).

`tool_response` (PostToolUse) follows Claude Code's shapes where a hook may read them: Bash `{stdout, stderr,
interrupted, isImage}`, Write/Edit `{filePath, …}`, Read `{type: "text", file: {filePath, content}}`, an MCP tool
its content blocks.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mini_claude.paths import resolve_tool_path

__all__ = ["claude_tool_input", "claude_tool_response"]

# the file tools and the one key each reads its path from
_FILE_TOOLS: Mapping[str, str] = {"Read": "file_path", "Write": "file_path", "Edit": "file_path",
                                  "NotebookEdit": "notebook_path"}


def claude_tool_input(claude_name: str, args: Mapping[str, Any], *, cwd: Path, home: Path) -> dict[str, Any]:
    """`args` of a call to `claude_name` as a hook reads it: a file tool's path made absolute."""
    out = dict(args)
    key = _FILE_TOOLS.get(claude_name)
    path = out.get(key) if key is not None else None
    if key is not None and isinstance(path, str) and path:
        out[key] = resolve_tool_path(path, cwd, home)
    return out


def claude_tool_response(claude_name: str, claude_input: Mapping[str, Any], content: list[dict[str, Any]],
                         text: str) -> Any:
    """What Claude Code's PostToolUse hook reads as `tool_response` for a call that succeeded: `content` is the
    result's blocks, `text` their text."""
    path = claude_input.get("file_path")
    if claude_name == "Bash":
        return {"stdout": text, "stderr": "", "interrupted": False, "isImage": False}
    if claude_name == "Read":
        return {"type": "text", "file": {"filePath": path, "content": text}}
    if claude_name == "Write":
        return {"filePath": path, "content": claude_input.get("content"), "success": True}
    if claude_name == "Edit":
        return {"filePath": path, "oldString": claude_input.get("old_string"),
                "newString": claude_input.get("new_string"), "replaceAll": bool(claude_input.get("replace_all")),
                "success": True}
    if claude_name.startswith("mcp__"):
        return content
    return {"output": text}
