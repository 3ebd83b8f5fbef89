"""Reading what one hook run said, as Claude Code reads it (measured against its binary):

* exit 0 — stdout is the answer: a JSON object (when it parses as one) or plain text (context for SessionStart and
  UserPromptSubmit, otherwise only shown under `--debug`);
* exit 2 — a block: stderr is the reason fed back (to the model, or to the user for UserPromptSubmit); stdout and
  any JSON are ignored;
* any other exit, a timeout, a command that could not start — a failure: reported in one line, never a block.

JSON fields: `continue: false` (+ `stopReason`) stops the agent; `decision: "block"` + `reason` blocks (the older
`decision: "approve"` / `"block"` of PreToolUse are its allow / deny); `systemMessage` is shown to the user;
`suppressOutput` keeps stdout out of the debug log; `hookSpecificOutput` counts only with `hookEventName` equal to
the event (`permissionDecision` allow/deny/ask, `permissionDecisionReason` and `updatedInput` — the input the call
runs with instead, unless denied — for PreToolUse, `additionalContext` for PreToolUse, PostToolUse, UserPromptSubmit
and SessionStart). A malformed field is reported and ignored, but for `updatedInput`: one that cannot be used (not an
object, not JSON, nested too deep) denies the call, since the hook's allow, or its silence, was about another input
and the model's must not run in its place.

A callable hook's returned dict (callables.py) is read exactly as a command's JSON (`read_output`); a callable that
failed is reported like a command that failed. One difference, as in the Agent SDK's CLI: a callable's
`hookSpecificOutput` naming another event refuses the prompt (UserPromptSubmit) or the call (PreToolUse) instead of
being ignored — a program's answer for the wrong event is a bug, and what it meant is not guessed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from mini_claude.hooks.callables import CallableHook, CallableRun
from mini_claude.hooks.runner import CommandRun
from mini_claude.jsonfile import nested_deeper_than
from mini_claude.settings import SettingsHook

__all__ = ["HookReply", "read_output", "read_reply"]

BLOCKING_EXIT = 2
_PERMISSIONS = ("allow", "deny", "ask")
_LEGACY_PERMISSIONS = {"approve": "allow", "block": "deny"}
_CONTEXT_EVENTS = frozenset({"PreToolUse", "PostToolUse", "UserPromptSubmit", "SessionStart"})
MAX_INPUT_DEPTH = 64  # levels of objects/arrays in a hook's updatedInput (a tool's input is a few levels deep)


@dataclass
class HookReply:
    """One hook run, read. `run` is the command's (None for a callable hook). `block` is the exit-2 stderr (or, from
    JSON, the `block` reason); `problems` are the one-line reports (failure, ignored fields)."""

    hook: SettingsHook | CallableHook
    run: CommandRun | None
    block: str | None = None
    block_from_exit: bool = False
    permission: str | None = None
    permission_reason: str = ""
    context: str = ""
    plain: str = ""
    stop: str | None = None
    system_message: str = ""
    suppress_output: bool = False
    updated_input: dict[str, Any] | None = None
    problems: list[str] = field(default_factory=list)


_FAIL_CLOSED = ("UserPromptSubmit", "PreToolUse")  # the events where a callable's mismatched answer refuses


def read_reply(hook: SettingsHook, run: CommandRun) -> HookReply:
    """What `run` of `hook` says (see the module docstring)."""
    reply = HookReply(hook, run)
    if run.exit_code == BLOCKING_EXIT:
        reply.block = run.stderr.strip() or f"(hook exited {BLOCKING_EXIT} with nothing on stderr)"
        reply.block_from_exit = True
        return reply
    if run.exit_code != 0:
        reply.problems.append(_failure(hook, run))
        return reply
    data = _json_object(run.stdout)
    if data is None:
        reply.plain = run.stdout.strip()
        return reply
    _read_json(reply, data)
    return reply


def read_output(hook: CallableHook, run: CallableRun) -> HookReply:
    """What `run` of the callable `hook` says: its dict read as a command's JSON, or its failure."""
    reply = HookReply(hook, None)
    if run.output is None:
        reply.problems.append(run.error)
        return reply
    specific = run.output.get("hookSpecificOutput")
    named = specific.get("hookEventName") if isinstance(specific, dict) else None
    if named != hook.event and hook.event in _FAIL_CLOSED and specific is not None:
        # a program's answer for another event is a bug in the program: what it meant to allow is not guessed at
        # (as the Agent SDK's CLI refuses such an answer and ends the turn)
        reply.block = (f"the hook {hook.name or 'callable'} answered for {named!r}, not {hook.event!r}: the "
                       f"{'prompt' if hook.event == 'UserPromptSubmit' else 'call'} is refused")
        return reply
    _read_json(reply, run.output)
    return reply


def _failure(hook: SettingsHook, run: CommandRun) -> str:
    if run.error:
        what = run.error
    elif run.timed_out:
        what = f"timed out after {run.seconds:.1f}s and was stopped"
    elif run.exit_code is not None and run.exit_code < 0:
        what = f"was killed by signal {-run.exit_code}"
    else:
        what = f"failed with exit code {run.exit_code}"
    detail = " ".join(run.stderr.split())[:300]
    return f"{what}{': ' + detail if detail else ''}"


def _json_object(stdout: str) -> dict[str, Any] | None:
    text = stdout.strip()
    if not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # a hook's output nested past the decoder's depth is not an answer
        return None
    return data if isinstance(data, dict) else None


def _read_json(reply: HookReply, data: dict[str, Any]) -> None:
    event = reply.hook.event
    if data.get("continue") is False:
        reason = data.get("stopReason")
        reply.stop = reason if isinstance(reason, str) else ""
    message = data.get("systemMessage")
    if isinstance(message, str):
        reply.system_message = message
    reply.suppress_output = data.get("suppressOutput") is True
    decision, reason = data.get("decision"), data.get("reason")
    reason_text = reason if isinstance(reason, str) else ""
    if event == "PreToolUse" and decision in _LEGACY_PERMISSIONS:
        reply.permission = _LEGACY_PERMISSIONS[decision]
        reply.permission_reason = reason_text
    elif decision == "block":
        reply.block = reason_text or "(blocked by a hook that gave no reason)"
    elif decision is not None and decision != "approve":
        reply.problems.append(f"ignored its decision {str(decision)[:40]!r} (expected \"block\")")
    specific = data.get("hookSpecificOutput")
    if specific is None:
        return
    if not isinstance(specific, dict) or specific.get("hookEventName") != event:
        reply.problems.append(f"ignored its hookSpecificOutput: it needs \"hookEventName\": \"{event}\"")
        return
    permission = specific.get("permissionDecision")
    if event == "PreToolUse" and permission is not None:
        if permission in _PERMISSIONS:
            reply.permission = permission
            why = specific.get("permissionDecisionReason")
            reply.permission_reason = why if isinstance(why, str) else ""
        else:
            reply.problems.append(f"ignored its permissionDecision {str(permission)[:40]!r} (expected allow, deny "
                                  "or ask)")
    if event == "PreToolUse" and specific.get("updatedInput") is not None:  # null: no change
        reply.updated_input = _tool_input(reply, specific["updatedInput"])
        if reply.updated_input is None:  # it meant another input: its decision never stands for the model's
            reply.permission = "deny"
            reply.permission_reason = (f"a PreToolUse hook changed this call's input to something that cannot be "
                                       f"run ({reply.problems[-1].removeprefix('ignored its updatedInput: ')}); "
                                       "nothing was run")
    context = specific.get("additionalContext")
    if isinstance(context, str) and event in _CONTEXT_EVENTS:
        reply.context = context


def _tool_input(reply: HookReply, value: Any) -> dict[str, Any] | None:
    """An `updatedInput` as a plain JSON object (a callable may return anything), or None, reported. One nested
    deeper than MAX_INPUT_DEPTH is refused before anything recurses into it (json, repr, the schema check)."""
    if not isinstance(value, dict):
        reply.problems.append(f"ignored its updatedInput: expected an object, got {type(value).__name__}")
        return None
    if nested_deeper_than(value, MAX_INPUT_DEPTH):
        reply.problems.append(f"ignored its updatedInput: nested deeper than {MAX_INPUT_DEPTH} levels")
        return None
    try:
        plain = json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError, RecursionError) as exc:
        reply.problems.append(f"ignored its updatedInput: not JSON ({' '.join(str(exc).split())[:200]})")
        return None
    return plain if isinstance(plain, dict) else None
