"""The hooks in force for one session, fired by event: which groups match, the event's JSON, running the commands of
one event in parallel, and folding their replies into what the agent, the gate or the CLI acts on (outcomes.py).

Payload (stdin), as Claude Code sends it: `session_id, transcript_path, cwd, permission_mode, hook_event_name`
always; PreToolUse adds `tool_name, tool_input, tool_use_id` (and `mcp_server` for an MCP tool), PostToolUse also
`tool_response`; UserPromptSubmit `prompt`; SessionStart `source`; Stop / SubagentStop `stop_hook_active` and
`last_assistant_message` (SubagentStop also `agent_id, agent_type`); SessionEnd `reason`; PreCompact `trigger, custom_instructions`; Notification `message,
notification_type`. Tool names and inputs are Claude Code's (claude_form.py).

Texts fed back follow Claude Code's wording, so a hook written for it reads the same to the model: a PreToolUse
exit 2 becomes the error tool result `PreToolUse:Bash hook error: [COMMAND]: STDERR`; a PostToolUse exit 2 or `block`
goes beside the result in a `<system-reminder>`; a Stop block becomes the user text `Stop hook feedback:\\nREASON`;
SessionStart and UserPromptSubmit stdout join the next prompt as `SessionStart:startup hook success: TEXT`.

Every run is logged at debug level (`--debug` shows it); a failure (exit code other than 0 and 2, a timeout, a
command that could not start) and every ignored field is reported in one line through `report` — the CLI passes a
function that sends it through the terminal's one neutralising door. Identical commands of one event run once.

Callable hooks (callables.py, registered by code) are matched, fed and read like commands: the same payload (each
its own copy), run in parallel with the event's commands, their dicts read as a command's JSON; one that fails is
reported and ignored. `/hooks` names them `python: module.qualname`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import reprlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mini_claude.hooks.callables import CallableHook, run_callable
from mini_claude.hooks.claude_form import claude_tool_input, claude_tool_response
from mini_claude.hooks.matching import MATCHED_EVENTS, matcher_matches
from mini_claude.hooks.outcomes import AfterTool, BeforeTool, HookPermission, PromptVerdict, StopVerdict
from mini_claude.hooks.replies import HookReply, read_output, read_reply
from mini_claude.hooks.runner import run_command
from mini_claude.secrets import without_credentials
from mini_claude.settings import SettingsHook

__all__ = ["DEFAULT_TIMEOUT_S", "HookSession", "Hooks"]

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 60.0  # Claude Code's default per hook
_SHOWN_COMMAND_CHARS = 80


@dataclass
class HookSession:
    """What every payload carries and where hooks run. Callables are read at each event: the session id changes
    on `/clear`, the mode on Shift+Tab, the transcript once the session is saved."""

    cwd: Path
    home: Path
    env: Mapping[str, str]
    session_id: Callable[[], str]
    transcript_path: Callable[[], str]
    permission_mode: Callable[[], str]
    tool_names: Mapping[str, str]  # our built-in name -> Claude Code's (permissions.rules.CLAUDE_TOOL_NAMES)
    server_of: Callable[[str], str | None] = lambda name: None  # an MCP tool's server


AnyHook = SettingsHook | CallableHook


class Hooks:
    """The session's hooks: `hooks` from settings (already filtered for workspace trust by the settings loader),
    `callables` registered by code. `report(line)` shows one line to the user."""

    def __init__(self, hooks: Sequence[SettingsHook], session: HookSession,
                 report: Callable[[str], None] = lambda line: None, *,
                 callables: Sequence[CallableHook] = ()) -> None:
        self.hooks = list(hooks)
        self.callables = list(callables)
        self.session = session
        self.report = report
        self._waiting_context: list[str] = []  # SessionStart output, for the next prompt

    def __bool__(self) -> bool:
        return bool(self.hooks or self.callables)

    # ---- events the agent loop fires (mini_claude.agent.hook_points.HookPoints) ----------------------------------

    async def pre_tool_use(self, name: str, args: dict[str, Any], tool_use_id: str, *,
                           server: str | None = None) -> BeforeTool:
        claude, fields = self._tool_fields(name, args, tool_use_id, server)
        replies = await self._fire("PreToolUse", claude, fields)
        if not replies:
            return BeforeTool()
        denials, asks, allows = [], [], []
        for reply in replies:
            shown = _shown(reply.hook)
            if reply.block_from_exit:
                denials.append(f"PreToolUse:{claude} hook error: [{_label(reply.hook)}]: {reply.block}")
            elif reply.block is not None or reply.permission == "deny":
                denials.append(reply.permission_reason or reply.block or f"denied by a PreToolUse hook ({shown})")
            elif reply.permission == "ask":
                asks.append(reply.permission_reason or f"a PreToolUse hook ({shown}) asks for confirmation")
            elif reply.permission == "allow":
                allows.append(reply.permission_reason or f"allowed by a PreToolUse hook ({shown})")
        updated = None if denials else self._updated_input(claude, replies)
        permission = (HookPermission("deny", "\n".join(denials)) if denials
                      else HookPermission("ask", "; ".join(asks), updated) if asks
                      else HookPermission("allow", "; ".join(allows), updated) if allows else None)
        context = _reminders(f"PreToolUse:{claude} hook additional context: {r.context}" for r in replies
                             if r.context)
        return BeforeTool(permission, context, _stop(replies), updated)

    async def post_tool_use(self, name: str, args: dict[str, Any], tool_use_id: str, content: list[dict[str, Any]],
                            text: str, *, server: str | None = None) -> AfterTool:
        claude, fields = self._tool_fields(name, args, tool_use_id, server)
        fields["tool_response"] = claude_tool_response(claude, fields["tool_input"], content, text)
        replies = await self._fire("PostToolUse", claude, fields)
        notes = []
        for reply in replies:
            if reply.block is not None:
                cause = f"[{_label(reply.hook)}]: {reply.block}" if reply.block_from_exit else reply.block
                notes.append(f"PostToolUse:{claude} hook blocking error from command: \"{_label(reply.hook)}\": "
                             f"{cause}")
            if reply.context:
                notes.append(f"PostToolUse:{claude} hook additional context: {reply.context}")
        return AfterTool(_reminders(notes), _stop(replies))

    async def user_prompt(self, prompt: str) -> PromptVerdict:
        """UserPromptSubmit; the verdict's context also carries what SessionStart hooks said since the last prompt."""
        replies = await self._fire("UserPromptSubmit", None, {"prompt": prompt})
        blocks = [f"[{_label(r.hook)}]: {r.block}" if r.block_from_exit else r.block for r in replies
                  if r.block is not None]
        stop = _stop(replies)
        if stop is not None:
            blocks.append(stop or "a UserPromptSubmit hook stopped the session")
        if blocks:
            return PromptVerdict(blocked="UserPromptSubmit operation blocked by hook:\n" + "\n".join(blocks)
                                 + f"\n\nOriginal prompt: {prompt}")
        context = self._waiting_context
        self._waiting_context = []
        for reply in replies:
            if reply.plain:
                context.append(f"UserPromptSubmit hook success: {reply.plain}")
            if reply.context:
                context.append(f"UserPromptSubmit hook additional context: {reply.context}")
        return PromptVerdict(context="\n\n".join(context))

    async def stop(self, last_text: str, active: bool) -> StopVerdict:
        return await self._stopping("Stop", last_text, active)

    async def subagent_stop(self, last_text: str, active: bool, agent_type: str = "",
                            agent_id: str = "") -> StopVerdict:
        """SubagentStop, matched (as in Claude Code) against the sub-agent's type, which the payload names with
        the run's id."""
        return await self._stopping("SubagentStop", last_text, active, value=agent_type or None,
                                    more={"agent_id": agent_id, "agent_type": agent_type} if agent_type else {})

    async def pre_compact(self, trigger: str, custom_instructions: str) -> None:
        await self._fire("PreCompact", trigger, {"trigger": trigger, "custom_instructions": custom_instructions})

    # ---- events the CLI fires ------------------------------------------------------------------------------------

    async def session_start(self, source: str) -> None:
        """SessionStart (`startup`, `resume`, `clear`, `compact`): what the hooks print waits for the next prompt."""
        for reply in await self._fire("SessionStart", source, {"source": source}):
            if reply.plain:
                self._waiting_context.append(f"SessionStart:{source} hook success: {reply.plain}")
            if reply.context:
                self._waiting_context.append(f"SessionStart hook additional context: {reply.context}")

    async def session_end(self, reason: str) -> None:
        """SessionEnd (`clear`, `prompt_input_exit`, `other`)."""
        await self._fire("SessionEnd", None, {"reason": reason})

    async def notification(self, message: str, notification_type: str) -> None:
        await self._fire("Notification", notification_type, {"message": message,
                                                             "notification_type": notification_type})

    def listing(self) -> list[str]:
        """`/hooks`: one line per hook in force — event, matcher, command (or callable), timeout, and the file and
        key it is from (a callable: registered by code)."""
        lines = []
        every: list[AnyHook] = [*self.hooks, *self.callables]
        for hook in every:
            matcher = f" {hook.matcher!r}" if hook.event in MATCHED_EVENTS else ""
            timeout = hook.timeout_s or DEFAULT_TIMEOUT_S
            lines.append(f"{hook.event}{matcher}: {_shown(hook)} (timeout {timeout:g}s) — {_source(hook)}")
        return lines

    # ---- machinery -----------------------------------------------------------------------------------------------

    def matching(self, event: str, value: str | None) -> list[AnyHook]:
        """The hooks `event` runs for `value` (a tool name, a source…): the commands (identical ones once), then
        the callables."""
        found: dict[str, SettingsHook] = {}
        for hook in self.hooks:
            if hook.event == event and hook.command not in found and _matches(hook, value):
                found[hook.command] = hook
        return [*found.values(), *(h for h in self.callables if h.event == event and _matches(h, value))]

    async def _fire(self, event: str, value: str | None, fields: dict[str, Any]) -> list[HookReply]:
        hooks = self.matching(event, value)
        if not hooks:
            return []
        session = self.session
        payload = {"session_id": session.session_id(), "transcript_path": session.transcript_path(),
                   "cwd": str(session.cwd), "permission_mode": session.permission_mode(), "hook_event_name": event,
                   **fields}
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8", errors="replace")
        # the user's environment, secret-looking variables included (hooks are the user's own code, as in Claude
        # Code), but never the agent's own credentials
        env = without_credentials(session.env, [("CLAUDE_PROJECT_DIR", str(session.cwd))])
        tool_use_id = fields.get("tool_use_id")
        replies = await asyncio.gather(*(self._run(hook, data, env, tool_use_id) for hook in hooks))
        for reply in replies:
            self._tell(event, reply)
        return replies

    async def _run(self, hook: AnyHook, data: bytes, env: Mapping[str, str], tool_use_id: Any) -> HookReply:
        timeout_s = hook.timeout_s or DEFAULT_TIMEOUT_S
        if isinstance(hook, CallableHook):  # its own copy of exactly what a command reads on stdin
            run = await run_callable(hook, json.loads(data), tool_use_id if isinstance(tool_use_id, str) else None,
                                     timeout_s=timeout_s)
            log.debug("hook %s %s: %s in %.2fs", hook.event, hook.label,
                      run.error or ("returned" + ("" if run.output is None else f" {_shown_output(run.output)}")),
                      run.seconds)
            return read_output(hook, run)
        return read_reply(hook, await run_command(hook.command, data, cwd=self.session.cwd, env=env,
                                                  timeout_s=timeout_s))

    def _tell(self, event: str, reply: HookReply) -> None:
        hook, run = reply.hook, reply.run
        if run is not None and isinstance(hook, SettingsHook):
            log.debug("hook %s %s (%s %s): exit %s in %.2fs%s%s", event, _command(hook), hook.file, hook.key,
                      "timeout" if run.timed_out else run.exit_code, run.seconds,
                      "" if reply.suppress_output or not run.stdout.strip()
                      else f"; stdout: {run.stdout.strip()[:2000]}",
                      f"; stderr: {run.stderr.strip()[:2000]}" if run.stderr.strip() else "")
        where = f"{event} hook {_shown(hook)} ({_source(hook, short=True)})"
        for problem in reply.problems:
            self.report(f"{where} {problem}")
        if reply.system_message:
            self.report(f"{where}: {reply.system_message}")
        if reply.stop is not None:
            self.report(f"{where} stopped the agent" + (f": {reply.stop}" if reply.stop else ""))

    def _tool_fields(self, name: str, args: dict[str, Any], tool_use_id: str,
                     server: str | None = None) -> tuple[str, dict[str, Any]]:
        session = self.session
        claude = session.tool_names.get(name, name)
        fields: dict[str, Any] = {"tool_name": claude,
                                  "tool_input": claude_tool_input(claude, args, cwd=session.cwd, home=session.home),
                                  "tool_use_id": tool_use_id}
        if server is None and name.startswith("mcp__"):  # the tool's own server when the caller knows it
            server = session.server_of(name)
        if server is not None:
            fields["mcp_server"] = server
        return claude, fields

    async def _stopping(self, event: str, last_text: str, active: bool, *, value: str | None = None,
                        more: dict[str, Any] | None = None) -> StopVerdict:
        replies = await self._fire(event, value, {"stop_hook_active": active, "last_assistant_message": last_text,
                                                  **(more or {})})
        if _stop(replies) is not None:  # `continue: false` wins over a block: the agent stops
            return StopVerdict()
        reasons = [f"[{_label(r.hook)}]: {r.block}" if r.block_from_exit else r.block for r in replies
                   if r.block is not None]
        return StopVerdict(f"{event} hook feedback:\n" + "\n".join(reasons) if reasons else None)

    def _updated_input(self, claude: str, replies: Sequence[HookReply]) -> dict[str, Any] | None:
        """The input a PreToolUse hook asks to run instead: the first hook's that gave one (reported when others
        gave another)."""
        given = [r for r in replies if r.updated_input is not None]
        if not given:
            return None
        first = given[0]
        if any(r.updated_input != first.updated_input for r in given[1:]):
            self.report(f"PreToolUse:{claude}: several hooks changed the input; the one from {_shown(first.hook)} "
                        "is used")
        return first.updated_input


def _shown_output(output: dict[str, Any]) -> str:
    """A callable's answer for the debug log: bounded in depth and length (a plain repr of an answer nested a
    hundred thousand levels deep raised RecursionError and ended the run)."""
    shown = reprlib.Repr()
    shown.maxlevel, shown.maxdict, shown.maxlist, shown.maxstring, shown.maxother = 8, 30, 30, 300, 100
    return shown.repr(output)[:2000]


def _matches(hook: AnyHook, value: str | None) -> bool:
    return hook.event not in MATCHED_EVENTS or value is None or matcher_matches(hook.matcher, value)


def _label(hook: AnyHook) -> str:
    """The hook as Claude Code's texts fed to the model name it: the command, or the callable's name."""
    return hook.command if isinstance(hook, SettingsHook) else hook.label


def _shown(hook: AnyHook) -> str:
    return _command(hook) if isinstance(hook, SettingsHook) else hook.label


def _source(hook: AnyHook, *, short: bool = False) -> str:
    if isinstance(hook, CallableHook):
        return "registered in code"
    return hook.file if short else f"{hook.file} {hook.key}"


def _command(hook: SettingsHook) -> str:
    text = " ".join(hook.command.split())
    return f"`{text[:_SHOWN_COMMAND_CHARS]}{'…' if len(text) > _SHOWN_COMMAND_CHARS else ''}`"


def _stop(replies: Sequence[HookReply]) -> str | None:
    reasons = [r.stop for r in replies if r.stop is not None]
    return None if not reasons else "; ".join(r for r in reasons if r)


def _reminders(notes: Any) -> str:
    return "\n".join(f"<system-reminder>\n{note}\n</system-reminder>" for note in notes)
