"""The system prompt, in named parts: the brief (agent/brief.py: who the agent is and how it works), the
environment (where it runs, which model it is), what each MCP server says about itself, and which skills it may
load (names and descriptions only: skill content is fetched when the Skill tool loads it).

An output style other than `default` (agent/output_styles.py) changes the brief and adds its instructions at the
end, as Claude Code applies one: every style drops the brief's "How to talk" section (its own instructions say how
to answer); a style without `keep-coding-instructions` also drops the software-engineering sections (project
conventions, planning, checking, git, code references) and the intro that calls the agent a coding agent, keeping
tools, safety and when to ask.

The parts are kept apart (`PromptPart`) so that `/context` can show each one's size; `join_parts` makes the text
sent to the model. The memory files (CLAUDE.md) and the git status are not here: they open the conversation as
reminder blocks (agent/memory.py, git_snapshot.py), as Claude Code places them.
"""

from __future__ import annotations

import datetime as _dt
import platform
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mini_claude.agent.brief import BRIEF_SECTIONS, INTRO, brief_text
from mini_claude.agent.output_styles import OutputStyle
from mini_claude.git_snapshot import head_branch, in_git_repository

__all__ = [
    "MAX_SERVER_INSTRUCTIONS_CHARS",
    "MAX_SKILLS_LISTED",
    "MAX_SKILL_DESCRIPTION_CHARS",
    "PLAN_MODE_PROMPT",
    "PromptPart",
    "build_system_prompt",
    "environment_section",
    "git_branch",
    "join_parts",
    "model_family",
    "style_brief",
    "system_parts",
]

MAX_SERVER_INSTRUCTIONS_CHARS = 2000
MAX_SKILL_DESCRIPTION_CHARS = 500
MAX_SKILLS_LISTED = 200
_FAMILY = re.compile(r"(?:^|[/.])claude-(?:\d+(?:-\d+)?-)?(opus|sonnet|haiku|fable)\b")

# appended while the permission mode is plan (the session adds it: the mode can change between requests)
PLAN_MODE_PROMPT = ("Plan mode is on: only read-only tools run (reading, searching); anything that would change "
                    "files or run commands is refused. Investigate, then present your plan with the ExitPlanMode "
                    "tool: the user approves it (plan mode ends and you make the changes) or says what to change.")


@dataclass(frozen=True)
class PromptPart:
    """One part of the system prompt: what `/context` calls it, and its text."""

    label: str
    text: str


def join_parts(parts: Sequence[PromptPart]) -> str:
    return "\n\n".join(part.text for part in parts if part.text)


def system_parts(cwd: Path, *, model: str = "", server_instructions: Mapping[str, str] | None = None,
                 skills: Sequence[tuple[str, str]] | None = None, branch: str | None = None,
                 git_repo: bool | None = None, shell: str = "", style: OutputStyle | None = None) -> list[PromptPart]:
    """The built-in prompt's parts: brief, environment, MCP server instructions (when a server gave any), skills
    (when there are any), then the output style's instructions (`style`; None: default). `model`: the id the next
    request goes to; `branch`/`git_repo`: see `environment_section`."""
    parts = [PromptPart("brief", style_brief(style)),
             PromptPart("environment", environment_section(cwd, model=model, branch=branch, git_repo=git_repo,
                                                           shell=shell))]
    instructions = _instructions_section(server_instructions or {})
    if instructions:
        parts.append(PromptPart("MCP server instructions", instructions))
    if skills:
        parts.append(PromptPart("skills", _skills_section(skills)))
    if style is not None:
        parts.append(PromptPart(f"output style ({style.name})", f"# Output style: {style.name}\n{style.prompt}"))
    return parts


# the brief's sections a style without keep-coding-instructions keeps: how to act safely with the tools it has
_GENERAL_SECTIONS = ("Using tools", "Safety and untrusted content", "When to ask")
_STYLED_INTRO = ("You are mini-claude, an agent that runs in the user's terminal and acts through the tools you are "
                 "given; what you write in reply is shown in a terminal. The output style at the end of these "
                 "instructions says what role you take and how you answer: follow it.")


def style_brief(style: OutputStyle | None) -> str:
    """The brief as `style` shapes it (see the module docstring); the whole brief for None."""
    if style is None:
        return brief_text()
    if style.keep_coding_instructions:
        sections = [(h, t) for h, t in BRIEF_SECTIONS if h != "How to talk"]
        intro = INTRO
    else:
        sections = [(h, t) for h, t in BRIEF_SECTIONS if h in _GENERAL_SECTIONS]
        intro = _STYLED_INTRO
    return "\n\n".join([intro, *(f"# {heading}\n{text}" for heading, text in sections)])


def build_system_prompt(cwd: Path, server_instructions: Mapping[str, str] | None = None,
                        skills: Sequence[tuple[str, str]] | None = None, *, model: str = "",
                        branch: str | None = None) -> str:
    """The built-in system prompt as one text (`system_parts` joined)."""
    return join_parts(system_parts(cwd, model=model, server_instructions=server_instructions, skills=skills,
                                   branch=branch))


def environment_section(cwd: Path, *, model: str = "", branch: str | None = None, git_repo: bool | None = None,
                        shell: str = "", today: _dt.date | None = None) -> str:
    """Where the agent runs: working directory, whether it is a git repository (`git_repo`; None: looked up from
    the folders, no process) and its `branch`, platform and OS version, shell, today's date and the model."""
    if git_repo is None:
        git_repo = in_git_repository(cwd)
    repo = "no"
    if git_repo:
        repo = f"yes (branch {branch})" if branch else "yes"
    lines = ["# Environment", "You are running in this environment:",
             f"- Working directory: {cwd}",
             f"- Git repository: {repo}",
             f"- Platform: {platform.system().lower() or 'unknown'}",
             f"- OS version: {_os_version()}"]
    if shell:
        lines.append(f"- Shell: {shell} (the Bash tool runs commands with it)")
    lines.append(f"- Today's date: {(today or _dt.date.today()).isoformat()}")
    if model:
        family = model_family(model)
        lines.append(f"- Model: {model}" + (f" ({family})" if family else ""))
    return "\n".join(lines)


def model_family(model: str) -> str | None:
    """`claude-opus-5-5` → `Claude Opus` (also behind a provider prefix such as `anthropic/` or `us.anthropic.`);
    None for a model that is not a Claude model."""
    match = _FAMILY.search(model.lower())
    return f"Claude {match.group(1).capitalize()}" if match else None


def git_branch(cwd: Path) -> str | None:
    """The checked-out branch, read from `.git/HEAD` (no git process at start-up: git_snapshot.head_branch, which
    takes no name git would refuse, so a repository's HEAD spanning lines cannot write into this prompt); None
    outside a repository, on a detached HEAD, or in a worktree or submodule (`.git` is a file)."""
    return head_branch(cwd) or None


def _instructions_section(server_instructions: Mapping[str, str]) -> str:
    blocks = []
    for name, text in sorted(server_instructions.items()):
        text = text.strip()
        if not text:
            continue
        if len(text) > MAX_SERVER_INSTRUCTIONS_CHARS:
            text = text[:MAX_SERVER_INSTRUCTIONS_CHARS] + " […]"
        blocks.append(f'Instructions from MCP server "{name}" (its tools are named mcp__{name}__*):\n{text}')
    return "\n\n".join(blocks)


def _os_version() -> str:
    system, release = platform.system(), platform.release()
    if system == "Darwin":
        release = platform.mac_ver()[0] or release
        system = "macOS"
    return f"{system} {release}".strip() or "unknown"


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
