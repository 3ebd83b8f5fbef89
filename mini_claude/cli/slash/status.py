"""`/status`: what this session runs with, in a few lines — version, model and where it is served, where the key
comes from (its name, never its value), the working folders, trust, permission mode, settings and memory files,
MCP servers by state, the session id.

A key is named by the variable or helper that supplies it (`AnthropicCredentials.names`); a base URL is shown as
its origin only (`scheme://host:port`): no userinfo, path or query, where a secret could sit. Each item is one
line: a line break in what a repository names (its settings' `model`, a rules file) is shown as `\\n`.
"""

from __future__ import annotations

import platform
import sys
from collections import Counter
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from mini_claude import __version__
from mini_claude.mcp.manager import ServerStatus
from mini_claude.models.credentials import AnthropicCredentials, OpenAICredentials
from mini_claude.net.urls import origin
from mini_claude.paths import state_dir
from mini_claude.settings import Settings
from mini_claude.settings_trust import without_project_widening
from mini_claude.trust import check_trust

__all__ = ["ServedModel", "key_source", "status_lines"]

_STATE_ORDER = (ServerStatus.READY, ServerStatus.STARTING, ServerStatus.FAILED, ServerStatus.NEEDS_AUTH,
                ServerStatus.NEEDS_APPROVAL, ServerStatus.DISABLED)


@runtime_checkable
class ServedModel(Protocol):
    """A model backend that talks to an HTTP API: where, and with which credentials."""

    base_url: str
    credentials: object


def status_lines(parts: Any, on_disk: Settings) -> list[str]:
    """The lines of `/status` for a session (`SessionParts`). `on_disk`: the settings files as they are now,
    unfiltered (what an untrusted folder's files would widen is named from it)."""
    gate, agent, env = parts.gate, parts.agent, parts.env
    model = agent.model
    lines = [f"mini-claude {__version__} (Python {platform.python_version()}, {sys.executable})",
             f"session: {parts.session_id}",
             f"model: {model.name}"]
    if isinstance(model, ServedModel):
        lines.append(f"  served by {_backend(model.credentials)} at {origin(model.base_url)}; "
                     f"key: {key_source(model.credentials, env, parts.settings)}")
    lines.append(f"working folder: {gate.cwd}")
    if gate.additional_dirs:
        lines.append(f"  added folders: {', '.join(str(d) for d in gate.additional_dirs)}")
    trust = check_trust(gate.cwd, home=gate.home, state=state_dir(env))
    if parts.trusted:
        lines.append(f"  trusted: {trust.folder}" + (f" ({trust.source})" if trust.source else ""))
    else:
        _, dropped = without_project_widening(on_disk)
        ignored = f"; ignored from its files: {'; '.join(dropped)}" if dropped else ""
        lines.append(f"  not trusted: {trust.folder} (`mini-claude trust` trusts it){ignored}")
    lines.append(f"permission mode: {gate.mode.value}")
    loaded = parts.settings.loaded_files
    lines.append(f"settings files: {', '.join(loaded) if loaded else 'none'}"
                 + (f" ({len(parts.settings.errors)} problems, reported at start)" if parts.settings.errors else ""))
    memory = parts.memory.files if parts.memory is not None else []
    lines.append(f"memory files: {len(memory) if memory else 'none'}")
    lines += [f"  {file.path} ({file.kind})" for file in memory]
    lines.append(f"MCP servers: {_server_counts(parts.manager.states.values())}")
    return [line.replace("\n", "\\n") for line in lines]  # a repository's name cannot start a line of its own


def key_source(credentials: object, env: Mapping[str, str], settings: Settings) -> str:
    """Which variable or helper supplies the model's key, and from where: `ANTHROPIC_API_KEY (environment)`,
    `the apiKeyHelper in ~/.claude/settings.json`, `none (OPENAI_BASE_URL's server needs no key)`."""
    if isinstance(credentials, AnthropicCredentials):
        names = credentials.names()
        return f"{names} ({_origin_of(names, env, settings)})" if names.isidentifier() else names
    if isinstance(credentials, OpenAICredentials):
        if credentials.keyless:
            return "none (OPENAI_BASE_URL's server needs no key)"
        return f"OPENAI_API_KEY ({_origin_of('OPENAI_API_KEY', env, settings)})"
    return "unknown"


def _origin_of(name: str, env: Mapping[str, str], settings: Settings) -> str:
    if name in settings.env:
        return "the env section of the settings"
    if name in env:
        return "environment"
    return "the project's .env"  # the model client alone gets .env values


def _backend(credentials: object) -> str:
    if isinstance(credentials, AnthropicCredentials):
        return "the Anthropic Messages API"
    if isinstance(credentials, OpenAICredentials):
        return "an OpenAI-compatible API"
    return "an API"


def _server_counts(states: Any) -> str:
    counts = Counter(state.status for state in states)
    if not counts:
        return "none configured"
    shown = [f"{counts[status]} {status.label}" for status in _STATE_ORDER if counts[status]]
    return ", ".join(shown) + " (/mcp for each)"
