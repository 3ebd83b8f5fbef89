"""The built-in tools' former names and input keys, and how a saved conversation that used them is brought up to
date.

Until the built-ins took Claude Code's names and keys (`Read(file_path)`, `Bash(timeout)`, …) they were called
`read_file(path)`, `bash(timeout_ms)` and so on. A conversation saved then still resumes: `upgrade_history` renames
its tool calls (the model must see one name per tool, and the tools offered now are the only ones it may call),
and a permission rule written with a former name still names the tool (`permissions.calls.claude_tool_name`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["FORMER_KEYS", "FORMER_NAMES", "upgrade_history", "upgrade_tool_use"]

# former name -> the tool's name now
FORMER_NAMES: Mapping[str, str] = {
    "read_file": "Read",
    "write_file": "Write",
    "edit_file": "Edit",
    "glob": "Glob",
    "grep": "Grep",
    "bash": "Bash",
    "list_mcp_resources": "ListMcpResourcesTool",
    "read_mcp_resource": "ReadMcpResourceTool",
    "tool_search": "ToolSearch",
    "BashOutput": "TaskOutput",
    "KillShell": "TaskStop",
    "KillBash": "TaskStop",
}
# the tool's name now -> {former input key: key now}
FORMER_KEYS: Mapping[str, Mapping[str, str]] = {
    "Read": {"path": "file_path"},
    "Write": {"path": "file_path"},
    "Edit": {"path": "file_path"},
    "Bash": {"timeout_ms": "timeout"},
    "Grep": {"case_insensitive": "-i", "context": "-C", "max_results": "head_limit"},
    "ToolSearch": {"limit": "max_results"},
    "TaskOutput": {"bash_id": "task_id", "shell_id": "task_id"},
    "TaskStop": {"shell_id": "task_id"},
}


def upgrade_tool_use(block: Mapping[str, Any]) -> dict[str, Any]:
    """A `tool_use` block with its tool's current name and keys (unchanged when it already has them)."""
    name = block.get("name")
    if not isinstance(name, str) or name not in FORMER_NAMES:
        return dict(block)
    new_name = FORMER_NAMES[name]
    renames = FORMER_KEYS.get(new_name, {})
    args = block.get("input")
    if isinstance(args, Mapping):
        args = {renames.get(key, key): value for key, value in args.items()}
    return {**block, "name": new_name, "input": args}


def upgrade_history(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`history` (API messages) with every built-in tool call under its current name; the same list when no call
    used a former name."""
    if not any(_has_former(message) for message in history):
        return history
    upgraded = []
    for message in history:
        content = message.get("content")
        if _has_former(message) and isinstance(content, list):
            message = {**message, "content": [upgrade_tool_use(block) if _is_former(block) else block
                                              for block in content]}
        upgraded.append(message)
    return upgraded


def _is_former(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") in FORMER_NAMES


def _has_former(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(_is_former(block) for block in content)
