"""A started session's beginning and end, the same for every front end that runs turns without a terminal (`-p`,
the Python API, the SDK's control protocol).

`begin_session`: the conversation saved as it goes (and, when asked, an old one resumed or forked), the SessionStart
hooks fired, the MCP servers waited for (each within its own startup timeout) and their skills settled, a failed
server named in one warning line. `end_session`: the SessionEnd hooks, the MCP Apps views, then every background
command, the sandbox's proxy and private /tmp, the MCP servers and the model client closed — nothing of the session
outlives it.
`turn_from_record` reads one streaming-input user message (`{"type": "user", "message": {...}}`, Claude Code's
shape) into a turn.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from mini_claude.errors import ConfigError
from mini_claude.mcp.server_state import ServerStatus
from mini_claude.session.parts import SessionParts, SessionUI

__all__ = ["begin_session", "end_session", "turn_from_record"]

log = logging.getLogger(__name__)


async def begin_session(parts: SessionParts, ui: SessionUI, *, continue_: bool = False, resume: str | None = None,
                        fork: bool = False) -> None:
    from mini_claude.session.resume import record_session, resume_session

    record_session(parts)
    resumed = await resume_session(parts, continue_=continue_, resume=resume, ui=ui, pick=None, fork=fork)
    if parts.hooks is not None:  # what SessionStart hooks print joins the first prompt
        await parts.hooks.session_start("resume" if resumed else "startup")
    await parts.manager.wait_started()
    if parts.skills is not None:
        await parts.skills.settle()  # MCP skills are listed as servers come up; the first prompt lists them
    for state in parts.manager.states.values():
        if state.status is ServerStatus.FAILED:
            ui.warn(f"MCP server {state.name} failed: {state.error}")


async def end_session(parts: SessionParts, reason: str, *, hooks: bool = True) -> None:
    """Close everything the session holds; `reason` is SessionEnd's (Claude Code's: "clear", "logout",
    "prompt_input_exit", "other"). A failing step is logged and the rest still closes."""
    steps: list[Any] = []
    if hooks and parts.hooks is not None:
        steps.append(parts.hooks.session_end(reason))
    for step in steps:
        try:
            await step
        except Exception:
            log.exception("SessionEnd hooks failed")
    if parts.apps is not None:  # each live view told first (ui/resource-teardown, ≤ 2 s), then the web side closed
        try:
            await parts.apps.aclose()
        except Exception:
            log.exception("closing the MCP Apps views")
    closers = [parts.agent.ctx.background.aclose()]  # no background command outlives the session
    if parts.gate.sandbox is not None:
        closers.append(parts.gate.sandbox.aclose())
    closers.append(parts.manager.aclose())
    for result in await asyncio.gather(*closers, return_exceptions=True):
        if isinstance(result, BaseException) and not isinstance(result, asyncio.CancelledError):
            log.error("closing the session: %s", result)
    if parts.session_log is not None:
        parts.session_log.close()
    from mini_claude.models.base import Closable

    if isinstance(parts.agent.model, Closable):
        try:
            await parts.agent.model.aclose()
        except Exception as exc:
            log.error("closing the model client: %s", exc)


def turn_from_record(record: Any) -> str | list[dict[str, Any]]:
    """One streaming-input message as a turn (ConfigError when it is not a user message)."""
    message = record.get("message") if isinstance(record, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(record, dict) or record.get("type") != "user" or not content:
        raise ConfigError('streaming input: each message must be {"type": "user", "message": {"role": "user", '
                          '"content": ...}}')
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(b, dict) for b in content):
        return [dict(b) for b in content]
    raise ConfigError("streaming input: content must be a string or a list of blocks")
