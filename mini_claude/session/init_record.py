"""What `-p --output-format stream-json` says of its session in the first line, `{"type": "system", "subtype":
"init", ...}`: Claude Code's keys, filled from this session.

The keys, in Claude Code 2.1.328's order (checked against its binary run offline on the mock model):

    cwd, session_id          the working folder, this run's session id
    tools                    every tool name the model may call: the built-ins (Claude Code's names), then each
                             ready MCP server's tools (`mcp__server__tool`), those waiting behind ToolSearch too
    mcp_servers              [{name, status, source}]: status in Claude Code's words (connected, pending, failed,
                             needs-auth, disabled; a project server waiting for approval is "disabled" here: it
                             does not start in this run), source the config scope (user, project, local; a
                             --mcp-config server is "dynamic", as there)
    model, permissionMode    the model id requested, the permission mode in force
    slash_commands           what `-p` runs as a command: custom commands (`review`, `git:summary`), then each ready
                             server's prompts (`mcp__server__prompt`); named without the slash, as there
    apiKeySource             where the Anthropic API key came from: "ANTHROPIC_API_KEY", "apiKeyHelper", or "none"
                             (an ANTHROPIC_AUTH_TOKEN is not an API key: Claude Code says "none" for it too); an
                             OpenAI-compatible backend: "OPENAI_API_KEY" or "none". Never the key.
    mini_claude_version      our version (where Claude Code has `claude_code_version`: not ours to claim)
    output_style             the output style in force (`outputStyle`, `/output-style`): "default" or its name
    agents, skills, plugins  the sub-agent types, the skills (local, then `server:name`), [] (no plugins here)
    uuid, original_cwd, additional_directories

Left out, as features this product does not have: `terminal_slash_commands` (the REPL's built-ins do not run in
`-p`), `capabilities` (Claude Code's control protocol), `analytics_disabled` / `product_feedback_disabled`
(there are no analytics), `memory_paths` (Claude Code's auto-memory folder), `messaging_socket_path`,
`fast_mode_state` / `fast_mode_disabled_reason`, `per_turn_effort_active`, `ultrathink_*`, `view_mode`.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, Protocol, runtime_checkable

from mini_claude import __version__
from mini_claude.mcp.server_state import ServerStatus
from mini_claude.models.credentials import AnthropicCredentials, OpenAICredentials
from mini_claude.session.parts import SessionParts

__all__ = ["PROMPTS_WAIT_S", "api_key_source", "init_record", "server_status"]

PROMPTS_WAIT_S = 5.0  # how long the init line waits for the servers' prompt lists (a server slow to answer is left out)

_STATUS = {ServerStatus.READY: "connected", ServerStatus.STARTING: "pending", ServerStatus.FAILED: "failed",
           ServerStatus.NEEDS_AUTH: "needs-auth", ServerStatus.DISABLED: "disabled",
           ServerStatus.NEEDS_APPROVAL: "disabled"}
_SOURCE = {"cli": "dynamic"}  # Claude Code's word for a --mcp-config server; the file scopes are the same words


@runtime_checkable
class HasCredentials(Protocol):
    """A model client that knows where its credentials came from (models/credentials.py)."""

    credentials: AnthropicCredentials | OpenAICredentials


def server_status(status: ServerStatus) -> str:
    return _STATUS.get(status, status.value)


def api_key_source(model: object) -> str:
    """Where the model's API key came from, by name (Claude Code's words), never the key."""
    if not isinstance(model, HasCredentials):
        return "none"
    credentials = model.credentials
    if isinstance(credentials, OpenAICredentials):
        return "OPENAI_API_KEY" if credentials.api_key and not credentials.keyless else "none"
    if credentials.api_key:
        return "ANTHROPIC_API_KEY"
    return "apiKeyHelper" if credentials.helper is not None else "none"


async def init_record(parts: SessionParts, *, original_cwd: str) -> dict[str, Any]:
    """The init line of `parts`' session, as it stands now (its servers started, its skills settled)."""
    agent = parts.agent
    tools = [tool.name for tool in agent.tools()]
    tools += [entry.qualified_name for entry in parts.manager.tools()
              if entry.tool.model_visible and entry.qualified_name not in tools]
    servers = [{"name": state.name, "status": server_status(state.status),
                "source": _SOURCE.get(state.config.scope, state.config.scope)}
               for state in parts.manager.states.values()]
    commands = [name.removeprefix("/") for name in parts.commands]
    if parts.host is not None:
        try:
            prompts = await asyncio.wait_for(parts.host.prompts.commands(), PROMPTS_WAIT_S)
        except TimeoutError:
            prompts = parts.host.prompts.cached()
        commands += [prompt.command.removeprefix("/") for prompt in prompts]
    return {
        "type": "system", "subtype": "init", "cwd": str(agent.ctx.cwd), "session_id": parts.session_id,
        "tools": tools, "mcp_servers": servers, "model": agent.model.name, "permissionMode": parts.gate.mode.value,
        "slash_commands": commands, "apiKeySource": api_key_source(agent.model), "mini_claude_version": __version__,
        "output_style": parts.styles.name if parts.styles is not None else "default",
        "agents": list(parts.subagents.types()) if parts.subagents is not None else [],
        "skills": [skill.name for skill in parts.skills.available()] if parts.skills is not None else [],
        "plugins": [], "uuid": str(uuid.uuid4()), "original_cwd": original_cwd,
        "additional_directories": [str(path) for path in parts.gate.additional_dirs],
    }
