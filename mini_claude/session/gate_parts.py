"""One folder's permission gate and what the built-in tools run with — built by the same calls for an agent session
(session/agent_half.py) and for `mini-claude mcp serve` (cli/mcp/serve.py), so what one allows the other allows.

`build_gate` makes the OS sandbox (probed at the first Bash command, not here), the gate over this folder and its
additional directories, the tools' context (the spill folder for long outputs is the gate's own, readable), and the
environment policy of shell commands; `shell_tool` is the Bash tool wired to that policy and sandbox.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mini_claude.paths import state_dir, user_home
from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.permissions.answers import AskFn
from mini_claude.sandbox.runtime import Sandbox
from mini_claude.secrets import EnvPolicy
from mini_claude.settings import Settings
from mini_claude.tools.base import ToolContext

if TYPE_CHECKING:
    from mini_claude.tools.shell import BashTool

__all__ = ["GateParts", "build_gate", "shell_tool"]


@dataclass(frozen=True)
class GateParts:
    """The gate, the sandbox it knows of, the tools' context and the shell's environment policy."""

    gate: PermissionGate
    sandbox: Sandbox
    ctx: ToolContext
    policy: EnvPolicy
    home: Path


def build_gate(cwd: Path, env: dict[str, str], settings: Settings, *, mode: PermissionMode, rules: RuleSet,
               ask: AskFn | None, dirs: list[Path], warn: Callable[[str], None],
               server_of: Callable[[str], str | None] | None = None, readable: Sequence[Path] = ()) -> GateParts:
    """The gate over `cwd` and `dirs` with `rules` in `mode`; `readable`: more folders of ours the tools may read."""
    home, state = user_home(env), state_dir(env)  # the gate and the tools read `~` alike
    spill_dir = state / "tool-output" / uuid.uuid4().hex[:12]
    sandbox = Sandbox(settings.sandbox, work_dirs=[cwd, *dirs], home=home, state_dir=state, env=env, warn=warn)
    gate = PermissionGate(mode, rules, ask=ask, cwd=cwd, server_of=server_of, additional_dirs=dirs, home=home,
                          state_dir=state, own_dirs=[spill_dir, *readable], sandbox=sandbox)
    ctx = ToolContext(cwd=cwd, spill_dir=spill_dir, is_denied=gate.is_denied, is_secret=gate.is_secret,
                      is_private=gate.is_private, home=home)
    # commands get the user's passThrough and what a settings file's env set (never the agent's credentials)
    policy = EnvPolicy(tuple(settings.shell_pass_through), frozenset(settings.env))
    return GateParts(gate=gate, sandbox=sandbox, ctx=ctx, policy=policy, home=home)


def shell_tool(parts: GateParts, env: dict[str, str]) -> BashTool:
    """The Bash tool with this gate's environment policy and sandbox."""
    from mini_claude.tools.shell import BashTool

    tool = BashTool(env=env, policy=parts.policy)
    tool.sandbox = parts.sandbox
    return tool
