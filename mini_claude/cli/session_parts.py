"""What a session is made of, shared by its two halves (cli/session.py starts it, cli/session_agent.py builds the
agent over it): the options read from the flags, the parts a front end gets back, and the warning about dropped
permission rules."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mini_claude.cli.render import TerminalUI

if TYPE_CHECKING:
    from collections.abc import Callable

    from mini_claude.agent.commands import CustomCommand
    from mini_claude.agent.loop import Agent
    from mini_claude.agent.memory import Memory
    from mini_claude.agent.opening import Opening
    from mini_claude.agent.sessions import SessionLog
    from mini_claude.agent.subagents import Subagents
    from mini_claude.agent.system_prompt import PromptPart
    from mini_claude.hooks import Hooks
    from mini_claude.mcp.config import LoadedConfig
    from mini_claude.mcp.host import McpHost
    from mini_claude.mcp.manager import McpManager
    from mini_claude.permissions import PermissionGate
    from mini_claude.settings import Settings
    from mini_claude.skills.registry import SkillRegistry
    from mini_claude.tools.tool_search import DeferredTools

__all__ = ["SessionOptions", "SessionParts", "report_rule_problems"]


@dataclass
class SessionOptions:
    cwd: Path
    model: str | None = None
    mode: str | None = None
    max_turns: int = 50
    mcp_config: list[str] = field(default_factory=list)
    strict_mcp_config: bool = False
    trust_project_mcp: bool = False
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    trust: bool = False  # --trust: trust the folder for this run and remember it
    add_dirs: list[Path] = field(default_factory=list)  # --add-dir: more folders to work in (roots, the gate)
    system_prompt: str | None = None  # --system-prompt: replaces the built-in one
    append_system_prompt: str | None = None  # --append-system-prompt
    setting_sources: tuple[str, ...] | None = None  # --setting-sources: the scopes whose files load (None: all)
    tools: tuple[str, ...] | None = None  # --tools: the built-in tools offered, by name (None: all of them)


@dataclass
class SessionParts:
    agent: Agent
    manager: McpManager
    settings: Settings
    config: LoadedConfig
    gate: PermissionGate
    env: dict[str, str]
    skills: SkillRegistry | None = None  # local and MCP-served skills (`await skills.settle()` before a -p run)
    host: McpHost | None = None  # what servers may ask of us: roots, sampling, elicitation, logs
    memory: Memory | None = None  # the CLAUDE.md files that open the conversation (Memory.reminder)
    session_id: str = field(default_factory=lambda: _new_session_id())
    session_log: SessionLog | None = None  # where the conversation is saved as it goes (cli/resume.py)
    commands: dict[str, CustomCommand] = field(default_factory=dict)  # "/name" -> .claude/commands/name.md
    trusted: bool = False  # the folder is trusted (its project settings apply)
    deferred: DeferredTools | None = None  # which MCP tools wait behind ToolSearch (`/mcp` shows it per server)
    hooks: Hooks | None = None  # the user's hooks in force (a repository's only once trusted); `/hooks` lists them
    subagents: Subagents | None = None  # the types the Agent tool starts (agent/subagents.py)
    prompt_parts: Callable[[], list[PromptPart]] | None = None  # the next request's system prompt, by part
    opening: Opening | None = None  # what opens the conversation: CLAUDE.md, the git snapshot (agent/opening.py)



def report_rule_problems(ui: TerminalUI, rules: Any) -> None:
    """Warn about each malformed permission rule (RuleSet.errors); the rule itself was dropped."""
    for err in getattr(rules, "errors", ()):
        ui.warn(f"permissions: {err} (rule ignored)")


def _new_session_id() -> str:
    import uuid  # with platform, ~2 ms: imported once a session exists, not before its servers start

    return str(uuid.uuid4())

