"""`SdkControl`: the stream-json input of `-p` with the control protocol, for `cli/run.py`.

It starts reading stdin before the session exists (the SDK sends `initialize` at once and waits for its answer);
requests that need the session wait for `attach(parts)`. Turns come from `next_turn()`; each runs as a task of its
own (`run_turn`) so that `interrupt` cancels it alone: the agent answers every tool call of it, and the run loop
writes the turn's messages and a result line before it reads the next turn.

Handled subtypes: initialize, interrupt, set_permission_mode, set_model, mcp_status, get_context_usage,
mcp_reconnect, mcp_toggle; any other gets an error answer naming it. `set_permission_mode` to bypassPermissions is
refused unless the session began in that mode (as Claude Code refuses it): nothing on stdin widens what the command
line granted.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mini_claude import __version__
from mini_claude.cli.sdk_control.adapters import (
    SdkHookGroup,
    hook_callables,
    register_sdk_hooks,
    sdk_agent_types,
    sdk_ask,
)
from mini_claude.cli.sdk_control.channel import ControlChannel, LineWriter, ThreadedLines, Turn
from mini_claude.cli.sdk_control.mcp_peer import SdkMcpPeer
from mini_claude.cli.sdk_control.sdk_servers import split_sdk_servers
from mini_claude.errors import MiniClaudeError
from mini_claude.session import controls

__all__ = ["SdkControl", "TurnInterrupted"]

if TYPE_CHECKING:
    from mini_claude.agent.loop import RunOutcome
    from mini_claude.session.parts import SessionParts
    from mini_claude.tools.base import Tool


ATTACH_TIMEOUT_S = 120.0  # how long a request waits for the session to exist
# set_permission_mode may not widen the session to bypassPermissions: only the command line (or the settings the
# session began with) can; a line on stdin is not the user's consent to skip every question
BYPASS_NOT_LAUNCHED = ("the session was not launched with --dangerously-skip-permissions or --permission-mode "
                       "bypassPermissions")


class TurnInterrupted(MiniClaudeError):
    """The SDK interrupted the running turn (`interrupt`)."""


class SdkControl:
    def __init__(self, *, stdio_permissions: bool, read_line: Callable[[], Awaitable[str]] | None = None,
                 out: Any = None) -> None:
        """Reads `read_line` (default: stdin, in a daemon thread) and writes whole lines to `out` (stdout);
        `start()` begins reading."""
        self.channel = ControlChannel(read_line or ThreadedLines(sys.stdin), LineWriter(out or sys.stdout),
                                      self.handle)
        self.stdio_permissions = stdio_permissions
        self.parts: SessionParts | None = None
        self.hook_groups: list[SdkHookGroup] = []
        self.hooks_fire = False
        self.initialized = False  # a second `initialize` is refused: it would register every hook callback twice
        self._attached = asyncio.Event()
        self.account: dict[str, Any] = {}  # initialize's `account`: where the API key came from (never the key)
        self._turn: asyncio.Task[RunOutcome] | None = None
        self._interrupted = False
        self.sdk_servers: list[str] = []  # --mcp-config servers living in the SDK's process
        self.bypass_launched = False  # the session began in bypassPermissions (the command line or its settings)
        self.warn: Callable[[str], None] = lambda line: None  # one line to the user (stderr)

    def take_sdk_servers(self, mcp_config: list[str]) -> list[str]:
        """The `--mcp-config` values without the SDK's in-process servers (`sdk_peers` reaches them)."""
        kept, self.sdk_servers = split_sdk_servers(mcp_config)
        return kept

    def sdk_peers(self) -> dict[str, SdkMcpPeer]:
        """The SDK's servers as in-process servers of the session, reached through `mcp_message` requests."""
        return {name: SdkMcpPeer(self.channel, name) for name in self.sdk_servers}

    def start(self) -> SdkControl:
        self.channel.start()
        return self

    @property
    def out(self) -> LineWriter:
        return self.channel.writer

    def ask(self) -> Callable[[Tool, dict[str, Any]], Awaitable[str]] | None:
        """The gate's ask callback with `--permission-prompt-tool stdio`; None (no one to ask) without it."""
        if not self.stdio_permissions:
            return None
        return sdk_ask(self.channel, interrupt=self._interrupt_turn)

    def attach(self, parts: SessionParts, *, account: dict[str, Any] | None = None,
               warn: Callable[[str], None] | None = None) -> None:
        self.parts = parts
        self.bypass_launched = parts.gate.mode.value == "bypassPermissions"
        self.account = account or {}
        if warn is not None:
            self.warn = warn
        self._attached.set()

    async def next_turn(self) -> Turn | None:
        return await self.channel.next_turn()

    async def run_turn(self, work: Awaitable[RunOutcome]) -> RunOutcome:
        """Run one turn as its own task; TurnInterrupted when `interrupt` cancelled it."""
        self._interrupted = False
        self._turn = asyncio.ensure_future(work)
        try:
            return await self._turn
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not self._interrupted or (current is not None and current.cancelling()):
                raise
            raise TurnInterrupted("interrupted by the SDK (interrupt)") from None
        finally:
            self._turn = None

    def _interrupt_turn(self) -> None:
        self._interrupted = controls.interrupt(self._turn) or self._interrupted

    @staticmethod
    def interrupted(exc: BaseException) -> bool:
        """Whether a turn's error is the SDK's interrupt (the session goes on with the next turn)."""
        return isinstance(exc, TurnInterrupted)

    async def aclose(self) -> None:
        await self.channel.aclose()

    # ---- the SDK's requests --------------------------------------------------------------------------------------

    async def _session(self) -> SessionParts:
        try:
            await asyncio.wait_for(self._attached.wait(), ATTACH_TIMEOUT_S)
        except TimeoutError:
            raise MiniClaudeError("the session did not start in time") from None
        assert self.parts is not None
        return self.parts

    async def handle(self, body: dict[str, Any]) -> dict[str, Any] | None:
        subtype = body["subtype"]
        if subtype == "interrupt":
            self._interrupt_turn()
            return None
        parts = await self._session()
        if subtype == "initialize":
            return self._initialize(parts, body)
        if subtype == "set_permission_mode":  # bypass only for a session launched in it (as Claude Code)
            controls.set_permission_mode(parts, str(body.get("mode", "")), bypass_refused=None if self.bypass_launched
                                         else BYPASS_NOT_LAUNCHED)
            return None
        if subtype == "set_model":
            model = body.get("model")
            controls.set_model(parts, model if isinstance(model, str) else None)
            return None
        if subtype == "mcp_status":
            return controls.mcp_status(parts)
        if subtype == "get_context_usage":
            return controls.context_usage(parts)
        if subtype == "mcp_reconnect":
            await controls.reconnect_server(parts, _server_name(body))
            return None
        if subtype == "mcp_toggle":
            await controls.toggle_server(parts, _server_name(body), bool(body.get("enabled", True)))
            return None
        raise MiniClaudeError(f"unsupported control request subtype: {subtype}")

    def _initialize(self, parts: SessionParts, body: dict[str, Any]) -> dict[str, Any]:
        """Register the request's hook callbacks and agent types; answer with Claude Code's keys, filled from this
        session."""
        if self.initialized:
            raise MiniClaudeError("initialize: this session is already initialized (send it once, first)")
        self.initialized = True
        self.hook_groups = hook_callables(self.channel, body.get("hooks"))
        self.hooks_fire = register_sdk_hooks(parts, self.hook_groups)
        if self.hook_groups and not self.hooks_fire:
            events = ", ".join(sorted({g.event for g in self.hook_groups}))
            self.warn(f"the SDK's hook callbacks ({events}) are not run by this version (initialize answers "
                      "hooks_applied: false)")
        defined, notes = sdk_agent_types(body.get("agents"))
        if defined and parts.subagents is not None:  # the SDK's own types, beside (or over) the session's
            parts.subagents.kinds = {**parts.subagents.kinds, **defined}
        for note in notes:
            self.warn(note)
        commands = [{"name": c.name, "description": c.description, "argumentHint": c.argument_hint}
                    for c in parts.commands.values()]
        kinds = parts.subagents.kinds.values() if parts.subagents is not None else []
        agents = [{"name": k.name, "description": k.description, **({"model": k.model} if k.model else {})}
                  for k in kinds]
        model = parts.agent.model.name
        styles = parts.styles
        return {"commands": commands, "agents": agents,
                "output_style": styles.name if styles is not None else "default",
                "available_output_styles": ["default", *(styles.styles if styles is not None else ())],
                "models": [{"value": model, "resolvedModel": model, "displayName": model,
                            "description": "the session's model"}],
                "account": self.account, "pid": os.getpid(),
                "mini_claude_version": __version__, "current_permission_mode": parts.gate.mode.value,
                "hooks_applied": self.hooks_fire or not self.hook_groups, "session_state": "idle"}


def _server_name(body: dict[str, Any]) -> str:
    name = body.get("serverName")
    if not isinstance(name, str) or not name:
        raise MiniClaudeError(f"{body.get('subtype')}: serverName (a string) is missing")
    return name
