"""Hooks that are Python callables: registered by code (the Python API's options, the SDK's stdio control protocol),
never by a settings file — a settings entry is always a command (settings.py reads only `type: command`).

A callable hook is `async callback(input, tool_use_id, context) -> dict`. `input` is the very JSON a command hook of
the same event reads on stdin (engine.py: Claude Code's shape, each callable gets its own copy); `tool_use_id` is the
call's id for PreToolUse and PostToolUse, else None; `context` is `{"signal": asyncio.Event}` — set when the run
gives up on the callable (its timeout passed, or the event was cancelled). The returned dict means what a command
hook's JSON stdout means (replies.py); the SDK's Python spellings `continue_` and `async_` are read as `continue` and
`async`.

A callable that raises, returns something other than a dict, or outlives its timeout is a failure, reported like a
command hook's (one line) and otherwise ignored: it never blocks and never ends the run. A plain function returning
a dict is accepted too (it runs on the event loop: keep it quick).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypedDict

__all__ = ["CallableHook", "CallableRun", "HookCallback", "HookContext", "run_callable"]

log = logging.getLogger(__name__)

# the events the engine fires (settings.HOOK_EVENTS names the same; this layer keeps its own list to stay below it)
CALLABLE_EVENTS = ("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SubagentStop", "SessionStart",
                   "SessionEnd", "PreCompact", "Notification")
_PYTHON_NAMES = {"continue_": "continue", "async_": "async"}


class HookContext(TypedDict):
    """The third argument of a callable hook. `signal` is set once the engine stops waiting for the callable."""

    signal: asyncio.Event | None


HookCallback = Callable[[dict[str, Any], str | None, HookContext], Awaitable[Any]]


@dataclass(frozen=True)
class CallableHook:
    """One callable hook: the event, the matcher (as a settings group's: matching.py; "" every time), the callback,
    its timeout in seconds (None: the engine's default) and the name messages and `/hooks` show (by default
    `python: module.qualname`)."""

    event: str
    callback: HookCallback
    matcher: str = ""
    timeout_s: float | None = None
    name: str = ""

    def __post_init__(self) -> None:
        if self.event not in CALLABLE_EVENTS:
            raise ValueError(f"unknown hook event {self.event!r} (expected one of: {', '.join(CALLABLE_EVENTS)})")
        if not callable(self.callback):
            raise TypeError(f"a {self.event} hook must be callable, got {type(self.callback).__name__}")
        if not isinstance(self.matcher, str):
            raise TypeError(f"a hook's matcher must be a string, got {type(self.matcher).__name__}")
        if self.timeout_s is not None and not self.timeout_s > 0:
            raise ValueError(f"a hook's timeout must be above 0 seconds, got {self.timeout_s!r}")

    @property
    def label(self) -> str:
        """How messages name it: `python: module.qualname` unless given a name."""
        if self.name:
            return self.name
        callback: Any = self.callback
        module = getattr(callback, "__module__", None) or type(callback).__module__
        qualname = getattr(callback, "__qualname__", None) or type(callback).__qualname__
        return f"python: {module}.{qualname}"


@dataclass(frozen=True)
class CallableRun:
    """How one call of a callable hook ended: `output` is the dict it returned (Python spellings read), None when it
    failed (`error` says how, in the words of a command's failure line)."""

    output: dict[str, Any] | None
    seconds: float
    error: str = ""
    timed_out: bool = False


async def run_callable(hook: CallableHook, payload: dict[str, Any], tool_use_id: str | None, *,
                       timeout_s: float) -> CallableRun:
    """Call `hook` with `payload`; never raises for the callable's own failures (see the module docstring).
    Cancelling the caller cancels the callable (its `signal` is set first)."""
    signal = asyncio.Event()
    context: HookContext = {"signal": signal}
    began = time.monotonic()
    try:
        async with asyncio.timeout(timeout_s) as limit:
            result = hook.callback(payload, tool_use_id, context)
            if inspect.isawaitable(result):
                result = await result
    except TimeoutError:
        signal.set()
        seconds = time.monotonic() - began
        if limit.expired():
            return CallableRun(None, seconds, f"timed out after {seconds:.1f}s and was cancelled", timed_out=True)
        return CallableRun(None, seconds, "raised TimeoutError")
    except asyncio.CancelledError:
        signal.set()
        raise
    except (Exception, SystemExit) as exc:  # the user's code: whatever it raises is its failure, never the run's
        log.debug("hook %s raised", hook.label, exc_info=True)
        detail = " ".join(str(exc).split())[:300]
        return CallableRun(None, time.monotonic() - began,
                           f"raised {type(exc).__name__}{': ' + detail if detail else ''}")
    seconds = time.monotonic() - began
    if limit.expired():  # it swallowed the cancellation and answered late: too late all the same
        signal.set()
        return CallableRun(None, seconds, f"timed out after {seconds:.1f}s and was cancelled", timed_out=True)
    if not isinstance(result, dict):
        return CallableRun(None, seconds, f"returned {type(result).__name__}, not a dict (return {{}} to say nothing)")
    return CallableRun({_PYTHON_NAMES.get(str(k), str(k)): v for k, v in result.items()}, seconds)
