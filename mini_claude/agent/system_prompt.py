"""The system prompt: who the agent is, where it works, what each MCP server says about itself, and which
skills it may load (names and descriptions only: skill content is fetched when the Skill tool loads it)."""

from __future__ import annotations

import datetime as _dt
import platform
from collections.abc import Mapping, Sequence
from pathlib import Path

from mini_claude.errors import ConfigError
from mini_claude.jsonfile import read_regular_head

__all__ = [
    "MAX_SERVER_INSTRUCTIONS_CHARS",
    "MAX_SKILLS_LISTED",
    "MAX_SKILL_DESCRIPTION_CHARS",
    "PLAN_MODE_PROMPT",
    "build_system_prompt",
    "git_branch",
]

MAX_SERVER_INSTRUCTIONS_CHARS = 2000
MAX_SKILL_DESCRIPTION_CHARS = 500
MAX_SKILLS_LISTED = 200
_HEAD_BYTES = 4096  # .git/HEAD is one line

_BASE = """You are mini-claude, a coding agent working in the user's terminal.
Use the tools to read, search and change files and to run commands; prefer reading before editing.
Be concise. When a tool fails, read its error and adapt instead of repeating the same call."""

# appended while the permission mode is plan (the session adds it: the mode can change between requests)
PLAN_MODE_PROMPT = ("Plan mode is on: only read-only tools run (reading, searching); anything that would change "
                    "files or run commands is refused. Investigate, then present your plan with the ExitPlanMode "
                    "tool: the user approves it (plan mode ends and you make the changes) or says what to change.")


def build_system_prompt(cwd: Path, server_instructions: Mapping[str, str] | None = None,
                        skills: Sequence[tuple[str, str]] | None = None, memory: str = "",
                        branch: str | None = None) -> str:
    """`skills`: (name, description) of each skill the Skill tool can load; `memory`: the CLAUDE.md section
    (memory.Memory.prompt_section); `branch`: the git branch, read once per session (`git_branch`)."""
    where = f"Working directory: {cwd}\nPlatform: {platform.system()}\nDate: {_dt.date.today().isoformat()}"
    if branch:
        where += f"\nGit branch: {branch}"
    parts = [_BASE, where]
    if memory:
        parts.append(memory)
    for name, text in sorted((server_instructions or {}).items()):
        text = text.strip()
        if not text:
            continue
        if len(text) > MAX_SERVER_INSTRUCTIONS_CHARS:
            text = text[:MAX_SERVER_INSTRUCTIONS_CHARS] + " […]"
        parts.append(f'Instructions from MCP server "{name}" (its tools are named mcp__{name}__*):\n{text}')
    if skills:
        parts.append(_skills_section(skills))
    return "\n\n".join(parts)


def git_branch(cwd: Path) -> str | None:
    """The checked-out branch, read from `.git/HEAD` (no git process at start-up); None outside a repository or
    on a detached HEAD."""
    resolved = cwd.resolve()
    for folder in (resolved, *resolved.parents):
        head = folder / ".git" / "HEAD"
        if head.is_file():
            try:  # bounded, regular files only: an unpacked archive could ship .git/HEAD as a FIFO
                read = read_regular_head(head, str(head), max_bytes=_HEAD_BYTES)
            except ConfigError:
                return None
            if read is None:
                return None
            text = read[0].decode("utf-8", "replace").strip()
            return text.removeprefix("ref: refs/heads/") if text.startswith("ref: refs/heads/") else None
        if (folder / ".git").exists():
            return None  # a worktree or submodule (.git is a file): not worth a process at start-up
    return None


def _skills_section(skills: Sequence[tuple[str, str]]) -> str:
    lines = ["Skills (load one with the Skill tool when the task matches its description, then follow it):"]
    for name, description in skills[:MAX_SKILLS_LISTED]:
        text = " ".join(description.split())
        if len(text) > MAX_SKILL_DESCRIPTION_CHARS:
            text = text[:MAX_SKILL_DESCRIPTION_CHARS] + " […]"
        lines.append(f"- {name}: {text}")
    if len(skills) > MAX_SKILLS_LISTED:
        lines.append(f"(and {len(skills) - MAX_SKILLS_LISTED} more not listed)")
    return "\n".join(lines)
