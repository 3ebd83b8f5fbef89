"""A tool call as a Claude Code hook script expects to read it: Claude Code's tool names and input keys.

A user's hooks were written for Claude Code: `jq -r .tool_input.file_path` in a formatter, `tool_name == "Bash"` and
`.tool_input.command` in a guard. So the payload speaks Claude Code's language, not ours (measured against its
binary: tests/hooks/test_hooks_claude_code_parity.py):

    ours                                   a hook reads
    read_file {path, offset, limit}        Read  {file_path (absolute), offset, limit}
    write_file {path, content}             Write {file_path (absolute), content}
    edit_file {path, old_string, ...}      Edit  {file_path (absolute), old_string, new_string, replace_all}
    bash {command, timeout_ms, ...}        Bash  {command, timeout, description}
    grep {case_insensitive, context, ...}  Grep  {pattern, path, glob, output_mode, -i, -C, head_limit}
    glob {pattern, path}                   Glob  {pattern, path}
    mcp__server__tool {…}                  the same name and input (and `mcp_server`: the server's name)

`file_path` is absolute, as Claude Code sends it (the model may have written `a.txt`), read by the one path
resolver the tools and the gate use. `tool_response` (PostToolUse) follows Claude Code's shapes where a hook may
read them: Bash `{stdout, stderr, interrupted, isImage}`, Write/Edit `{filePath, …}`, Read `{type: "text", file:
{filePath, content}}`, an MCP tool its content blocks. The built-in names map through the table the permission
rules use (`CLAUDE_TOOL_NAMES`, passed in: this layer does not import permissions/).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mini_claude.paths import resolve_tool_path

__all__ = ["claude_tool_input", "claude_tool_response"]

_FILE_TOOLS = frozenset({"Read", "Write", "Edit"})
# our input key -> Claude Code's, per Claude Code tool name (keys not listed keep their name)
_RENAMED: Mapping[str, Mapping[str, str]] = {
    "Read": {"path": "file_path"},
    "Write": {"path": "file_path"},
    "Edit": {"path": "file_path"},
    "Bash": {"timeout_ms": "timeout"},
    "Grep": {"case_insensitive": "-i", "context": "-C", "max_results": "head_limit"},
}


def claude_tool_input(claude_name: str, args: Mapping[str, Any], *, cwd: Path, home: Path) -> dict[str, Any]:
    """`args` of a call to `claude_name` with Claude Code's keys; a file tool's `file_path` made absolute."""
    renames = _RENAMED.get(claude_name, {})
    out = {renames.get(key, key): value for key, value in args.items()}
    path = out.get("file_path")
    if claude_name in _FILE_TOOLS and isinstance(path, str) and path:
        out["file_path"] = resolve_tool_path(path, cwd, home)
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
