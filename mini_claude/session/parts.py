"""What a session is made of, shared by its two halves (session/start.py starts it, session/agent_half.py builds the
agent over it): the options read from the flags, the parts a front end gets back, and the warning about dropped
permission rules."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from collections.abc import Callable

    from mini_claude.agent.commands import CustomCommand
    from mini_claude.agent.loop import Agent
    from mini_claude.agent.memory import Memory
    from mini_claude.agent.opening import Opening
    from mini_claude.agent.output_styles import StyleChoice
    from mini_claude.agent.sessions import SessionLog
    from mini_claude.agent.subagents import Subagents, SubagentType
    from mini_claude.agent.system_prompt import PromptPart
    from mini_claude.hooks import Hooks
    from mini_claude.hooks.callables import CallableHook
    from mini_claude.mcp.apps.service import AppsService
    from mini_claude.mcp.config import LoadedConfig
    from mini_claude.mcp.host import McpHost
    from mini_claude.mcp.manager import McpManager
    from mini_claude.mcp.pinning import PinReview
    from mini_claude.mcp.tool_switches import ToolSwitches
    from mini_claude.mcp.transports.inprocess import MessagePeer
    from mini_claude.models.http_pool import HttpPool
    from mini_claude.permissions import PermissionGate
    from mini_claude.settings import Settings
    from mini_claude.skills.registry import SkillRegistry
    from mini_claude.tools.structured_output import StructuredOutputTool
    from mini_claude.tools.tool_search import DeferredTools

__all__ = ["FrontUI", "SessionOptions", "SessionParts", "SessionUI", "report_review", "report_rule_problems"]


@runtime_checkable
class SessionUI(Protocol):
    """Where a session's one-line notices go: the terminal (cli/render.TerminalUI, which neutralises what it shows),
    or the Python API's log callback. Lines may hold repository or server text: the front end neutralises them."""

    def info(self, text: str) -> None: ...

    def warn(self, text: str) -> None: ...


if TYPE_CHECKING:  # agent.ui is the agent half's (imported while the servers start), so named for the checker only
    from mini_claude.agent.ui import AgentUI

    class FrontUI(SessionUI, AgentUI, Protocol):
        """A front end's UI: the session's notices and the agent loop's output (cli/render.TerminalUI, the API's)."""


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
    settings: str | None = None  # --settings: a settings file or a JSON string, on top of the files
    effort: str | None = None  # --effort
    env: Mapping[str, str] | None = None  # the session's base environment; None: the process's (os.environ)
    # which settings files count ("user", "project", "local"); None: all. An empty tuple is an isolated session: no
    # user or project file is read (settings, CLAUDE.md, commands, agents, skills, MCP configs)
    setting_sources: tuple[str, ...] | None = None
    output_schema: dict[str, Any] | None = None  # the final answer's JSON Schema (tools/structured_output.py)
    agents: dict[str, SubagentType] = field(default_factory=dict)  # sub-agent types given in code (source "sdk")
    http_pool: HttpPool | None = None  # HTTP connections shared with the process's other sessions (the API's)
    in_process: dict[str, MessagePeer] = field(default_factory=dict)  # MCP servers living in this process, by name
    hook_callables: tuple[CallableHook, ...] = ()  # hooks given as Python callables (the API's, the SDK's)
    hooks_from_code: bool = False  # callables may be added once the session runs (`parts.hooks` always exists)
    tools: tuple[str, ...] | None = None  # --tools: the built-in tools offered, by name (None: all of them)
    apps: bool = False  # the front end can show MCP Apps views (the REPL, the API's Client; `mcpApps` may say no)


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
    structured: StructuredOutputTool | None = None  # where the answer in the required shape arrives (output_schema)
    styles: StyleChoice | None = None  # the output styles and the one in force (agent/output_styles.py)
    tool_switches: ToolSwitches | None = None  # MCP tools switched off (`disabledMcpTools`, `/mcp disable S/T`)
    apps: AppsService | None = None  # MCP Apps views of this session (the front end binds `apps.front`)



def report_rule_problems(ui: SessionUI, rules: Any) -> None:
    """Warn about each malformed permission rule (RuleSet.errors); the rule itself was dropped."""
    for err in getattr(rules, "errors", ()):
        ui.warn(f"permissions: {err} (rule ignored)")


def report_review(ui: SessionUI, review: PinReview) -> None:
    """Where nobody is asked: one warning line for the withheld tools and one for withheld instructions (each
    naming `mini-claude mcp accept NAME`), one info line per new tool."""
    if review.changed:
        ui.warn(review.warning())
    if review.instructions is not None:
        ui.warn(review.instructions_warning())
    for name in review.new:
        ui.info(f"MCP server {review.server!r}: new tool: {name}")


def _new_session_id() -> str:
    import uuid  # with platform, ~2 ms: imported once a session exists, not before its servers start

    return str(uuid.uuid4())

