"""The permission gate: decides, for each tool call, allow / ask the user / deny.

Order (first that applies wins):

0. the input does not fit the tool's schema -> deny (the loop rejects it before; this is the gate's own guard)
   a WebFetch URL whose host the rules would read otherwise than the fetch connects to (`127。0。0。1`) -> deny
1. a deny rule matches                      -> deny (in every mode, bypassPermissions included); a resource
                                               tool's call is its server's (`mcp__evil` denies reading evil's)
2. plan mode                                -> read-only built-ins go on (3 is skipped); an MCP tool claiming
                                               `readOnlyHint` and the resource tools go on as in default mode (the
                                               hint is the server's claim, not a grant); all else is denied
3. bypassPermissions                        -> allow
4. an ask rule matches                      -> ask (as in Claude Code, ask beats allow: an ask rule is an explicit
                                               "always check this", so a broader allow rule must not skip it)
4b. the OS sandbox is on, a Bash call      -> with autoAllowBashIfSandboxed, a command that will run confined is
                                               allowed; one asking to leave it (dangerouslyDisableSandbox) always
                                               asks (refused after step 1 when allowUnsandboxedCommands is false);
                                               an excludedCommands one goes on below as usual
5. a path that needs consent (boundaries.py) -> allow only by allow rules naming that place on purpose, else ask:
   a read or write outside the working        (`Edit(//tmp/**)`, `Read(~/.aws/**)`, `Edit(.claude/commands/**)`);
   directory and the added directories, a     a bare `Read`/`Edit`, a project-relative rule for an outside path,
   secret (read or write), a protected path   acceptEdits and plan mode never cover it
   (write) — symlinks resolved
   A Bash command's writes (writes.py: redirections, `tee`, `cp`/`mv` targets, archive members, `sort -o`) are
   judged here as writes of those paths: such a place needs, besides the Bash rule for the command, an Edit rule
   naming it on purpose, or an exact `Bash(...)` rule for the whole command; a write the gate cannot list (an
   unreadable archive, a link member, `> "$f"`) is opaque: only such an exact rule or a bare `Bash` allows it. An Edit / Write
   deny rule covering a written path denies the command at step 1, an ask rule asks at step 4; in bypass mode a
   command writing where the gate cannot see is refused while such a deny rule is in force.
6. allow rules allow the whole call         -> allow
7. a read-only built-in (Read/Glob/Grep...) -> allow (MCP and resource tools ask even when read-only); TaskStop
                                               counts as one (in plan mode too): it ends only this session's own
                                               background tasks, by id
7b. a Bash command only of echo, printf,   -> allow (as Claude Code runs `echo` unasked): no redirection or other
   pwd, true, false                           write, nothing opaque (no substitution), no code-running word
8. acceptEdits and an Edit/Write/NotebookEdit -> allow; also a Bash command made only of the file commands
   (`mkdir`, `touch`, `rm`, `rmdir`, `mv`, `cp`) whose every write lies in the working folders and whose sources
   need no consent to read (as Claude Code's acceptEdits does)
9. otherwise                                -> ask; without an `ask` callback (non-interactive) -> deny, saying
                                               what would allow it

ExitPlanMode (tools/exit_plan_mode.py) is the one exception, after step 1: outside plan mode it is refused; in plan
mode the user is always asked (the plan, then yes / yes and auto-accept edits / no, keep planning), whatever allow
rules, a hook's `allow` or the mode say, and plan mode ends only on that yes (to default or acceptEdits), never on
anything the model, a hook or a server sends; without an `ask` callback (non-interactive) it is refused and plan
mode stays on. There is no "always" for it: no rule is saved.

A PreToolUse hook's decision on the call (`check(..., hook=)`, mini_claude.hooks) is weighed here too: `deny`
refuses before step 1 (a hook may refuse what a rule allows); `ask` asks after steps 1-4 even where a rule or the
mode would allow (refused where nobody can be asked); `allow` counts as an allow rule for this one call (step 6):
deny and ask rules, plan mode and the places that need consent (step 5) still win. A hook's allow that came with an
`updatedInput` holds only when the call checked carries exactly that input.

The question's answer (answers.py) is a word or a `PermissionAnswer`; an allow's `updated_input` runs instead of the
model's only once it fits the tool's schema and no deny rule (step 0 and 1) refuses it; its `remember` rules join the
session's allow rules as an "always" does.

`is_denied(path, tool)` answers, for one file a search found, whether a deny rule covers it: grep and glob drop
such files from their results (`ToolContext.is_denied`); `is_secret(path)` whether grep must skip it inside a
searched folder (a `.env` holds secrets even when no rule names it).

This module owns the order above: one method (`check`) whose steps share one reading of the call, with this
docstring, its specification, beside it. What the steps read lives in `PermissionGate`'s bases: which paths need
consent and which allow rules name them on purpose (step 5), a Bash command's writes worked out once per check, in
consent.py; the question, what its answers decide and ExitPlanMode's way out of plan mode, in asking.py. The rules a
question offers are worked out in suggestions.py, the answer's types live in answers.py, the modes in modes.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from mini_claude.hooks.outcomes import HookPermission
from mini_claude.paths import user_home
from mini_claude.permissions.answers import AskFn, Decision
from mini_claude.permissions.asking import PLAN_ACCEPT_EDITS, Asking
from mini_claude.permissions.bash_guard import bypass_refusal
from mini_claude.permissions.calls import WEB_FETCH, path_key
from mini_claude.permissions.command_writes import Written, file_commands_only, output_commands_only
from mini_claude.permissions.consent import _EDIT_TOOLS, _allowed_by, _call_of
from mini_claude.permissions.modes import PermissionMode
from mini_claude.permissions.rules import RuleSet, ToolCall
from mini_claude.sandbox.runtime import Sandbox
from mini_claude.tools.base import Tool, input_is_ours
from mini_claude.tools.exit_plan_mode import EXIT_PLAN_MODE_TOOL_NAME
from mini_claude.tools.input_check import input_problem
from mini_claude.tools.task_tools import TASK_STOP_TOOL_NAME
from mini_claude.tools.web_fetch import host_problem

__all__ = ["PLAN_ACCEPT_EDITS", "AskAnswer", "AskFn", "Decision", "PermissionGate", "PermissionMode"]

AskAnswer = Literal["yes", "always", "no"]

PLAN_MODE_TEXT = ("plan mode is read-only: only read-only tools can run; describe the change in your plan "
                  "instead of making it")


class PermissionGate(Asking):
    """Checks every tool call against the mode and the rules; asks the user through `ask` when needed.

    `ask(tool, args)` returns "yes" (this call), "always" (this call and, for the rest of the session, calls
    matching `always_rules(tool, args)`), "no", or "no: what to do instead" (passed on to the model), or a
    `PermissionAnswer`; a callback taking a third argument gets an `AskContext` (answers.py). Asks are
    serialized so two concurrent calls never prompt at once. `server_of(qualified_name)` names the MCP server of a
    tool for `mcp__server` rules. `additional_dirs` are directories the user added (settings / --add-dir): reads
    and writes there are treated like those in `cwd`. `own_dirs` are this session's own folders (its spill
    folder), readable without asking; `state_dir` is the agent's state (secret)."""

    def __init__(
        self,
        mode: PermissionMode,
        rules: RuleSet,
        *,
        ask: AskFn | None,
        cwd: Path,
        server_of: Callable[[str], str | None] | None = None,
        home: Path | None = None,
        additional_dirs: Sequence[Path] = (),
        own_dirs: Sequence[Path] = (),
        state_dir: Path | None = None,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.mode = mode
        self.rules = rules
        self.ask = ask
        self.cwd = cwd
        self.additional_dirs = tuple(d if d.is_absolute() else cwd / d for d in additional_dirs)
        self.server_of = server_of
        self.home = home if home is not None else user_home()
        self.own_dirs = tuple(own_dirs)
        self.state_dir = state_dir
        self.sandbox = sandbox  # the OS sandbox (mini_claude/sandbox): see step 4b
        self._ask_lock = asyncio.Lock()
        self._written: tuple[tuple[str, Path, Path], Written] | None = None

    async def check(self, tool: Tool, args: dict[str, Any], *, hook: HookPermission | None = None,
                    tool_use_id: str | None = None, view: str | None = None) -> Decision:
        """Decide whether `tool` may run with `args`; may ask the user. `hook`: a PreToolUse hook's decision on
        this call (see the module docstring); `tool_use_id`: the call's id, and `view`: the MCP server whose Apps
        view makes the call (None: the model), both for the question's `AskContext`."""
        self._written = None  # the files may have changed since the last check
        problem = input_problem(tool.input_schema, args) if input_is_ours(tool) else None
        if problem:
            return self._deny(tool, f"invalid input: {problem}")
        if hook is not None and hook.decision == "deny":
            return Decision(False, hook.reason)
        hook_asks = hook is not None and hook.decision == "ask"
        hook_allows = hook is not None and hook.decision == "allow" and hook.updated_input in (None, args)
        call = _call_of(tool, args)
        env = self._env()
        read_only = tool.read_only and not call.sends_to_server  # a server's claim or a uri sent is no grant
        read_only = read_only or (call.claude_name == TASK_STOP_TOOL_NAME and not call.is_mcp)  # our own tasks only
        refused = self._refusal(tool, args, call)
        if refused is not None:
            return refused
        written = self._bash_writes(call)
        if call.claude_name == EXIT_PLAN_MODE_TOOL_NAME and not call.is_mcp:
            return await self._leave_plan_mode(tool, args, tool_use_id)
        sandboxed = self.sandbox if call.claude_name == "Bash" and not call.is_mcp else None
        if sandboxed is not None and (refusal := sandboxed.refusal(args)):
            return self._deny(tool, refusal)

        if self.mode is PermissionMode.PLAN:
            if not read_only and not (tool.read_only and call.sends_to_server):
                return self._deny(tool, PLAN_MODE_TEXT)
            # read-only built-ins go on below the bypass branch; servers' tools exactly as in default mode
        elif self.mode is PermissionMode.BYPASS:
            refusal = bypass_refusal(self.rules, call, env)  # a Bash command a deny/ask rule cannot see through
            if refusal:
                return self._deny(tool, refusal)
            edit_deny = next((r for r in self.rules.deny if r.tool in _EDIT_TOOLS), None)
            if written.unknown and edit_deny is not None:
                return self._deny(tool, f"{written.unknown}, so deny rule {edit_deny.describe()} cannot see what it "
                                        "writes; bypassPermissions mode refuses such a command while an Edit deny "
                                        "rule is in force")
            if not hook_asks:
                return Decision(True, "bypassPermissions mode")

        rule = self.rules.match_ask(call, env)
        if rule is None:
            rule, _ = self._write_rule(self.rules.match_ask, written)
        if rule is not None:
            return await self._ask_user(tool, args, call, ask_rule=rule, tool_use_id=tool_use_id, view=view)
        if hook is not None and hook_asks:
            return await self._ask_user(tool, args, call, ask_rule=None, hook_asks=hook.reason,
                                        tool_use_id=tool_use_id, view=view)
        if sandboxed is not None:  # 4b. the OS sandbox: auto-allowed inside it; leaving it always asks
            if await sandboxed.auto_allows(args):
                return Decision(True, "runs in the OS sandbox (sandbox.autoAllowBashIfSandboxed)")
            if sandboxed.wants_out(args):
                return await self._ask_user(tool, args, call, ask_rule=None, leaving_sandbox=True,
                                            tool_use_id=tool_use_id, view=view)

        if self._boundaries(call) or written.unknown:
            allowed = self._allowing_rules(call, env)
            if allowed:
                return Decision(True, _allowed_by(allowed))
            return await self._ask_user(tool, args, call, ask_rule=None, tool_use_id=tool_use_id, view=view)

        allowed = self.rules.match_allow(call, env)
        if allowed:
            return Decision(True, _allowed_by(allowed))
        if hook is not None and hook_allows:
            return Decision(True, f"allowed by a PreToolUse hook: {hook.reason}")

        if read_only:
            return Decision(True, "read-only tool in plan mode" if self.mode is PermissionMode.PLAN
                            else "read-only tool")
        if output_commands_only(call, written):  # 7b. echo / printf / pwd: prints, nothing more
            return Decision(True, "only prints (echo, printf, pwd)")

        if self.mode is PermissionMode.ACCEPT_EDITS and call.claude_name in _EDIT_TOOLS:
            return Decision(True, "acceptEdits mode")
        if self.mode is PermissionMode.ACCEPT_EDITS and file_commands_only(call, written, self._place()):
            return Decision(True, "acceptEdits mode (file commands inside the working directory)")

        return await self._ask_user(tool, args, call, ask_rule=None, tool_use_id=tool_use_id, view=view)

    def _refusal(self, tool: Tool, args: dict[str, Any], call: ToolCall) -> Decision | None:
        """Step 0 (a fetch whose host the rules would misread) and step 1 (deny rules, a command's writes too)."""
        if call.claude_name == WEB_FETCH and not call.is_mcp:
            other_host = host_problem(str(args.get("url", "")), call.host)
            if other_host is not None:  # no rule may judge a host the fetch would not reach
                return self._deny(tool, other_host)
        rule = self.rules.match_deny(call, self._env())
        if rule is not None:
            return self._deny(tool, f"denied by rule {rule.describe()}")
        rule, path = self._write_rule(self.rules.match_deny, self._bash_writes(call))
        if rule is not None:
            return self._deny(tool, f"denied by rule {rule.describe()}: the command writes {path}")
        return None

    def is_denied(self, path: Path, tool: str) -> bool:
        """Does a deny rule cover the file `path` for `tool` (`Grep`, `Glob`, `Read`, ...)? For search results:
        `Read(.env.local)` keeps grep from returning that file's lines and glob from listing it."""
        call = ToolCall(tool, {path_key(tool): str(path)})
        env = self._env()
        return any(rule.path is not None and rule.covers_tool(call, env) and rule.path.matches(str(path), env)
                   for rule in self.rules.deny)

    def server_refused(self, server: str) -> str | None:
        """Why the user's own `@server:uri` mention may not be read: a deny rule for that server's resources
        (`mcp__server`, `ReadMcpResourceTool(server)`), whatever the mode. The user typed it, so nothing asks."""
        rule = self.rules.match_deny(ToolCall("ReadMcpResourceTool", {"server": server}, (server,)), self._env())
        return f"denied by rule {rule.describe()}" if rule is not None else None

    def unasked_resource_read(self, server: str) -> str | None:
        """Why reading `server`'s resources may not happen without a question (None: the rules allow it). For what
        no one typed and no one can be asked about: a custom command's `@server:uri`."""
        call, env = ToolCall("ReadMcpResourceTool", {"server": server}, (server,)), self._env()
        rule = self.rules.match_deny(call, env)
        if rule is not None:
            return f"denied by rule {rule.describe()}"
        if self.mode is PermissionMode.BYPASS:
            return None
        rule = self.rules.match_ask(call, env)
        if rule is not None:
            return f"rule {rule.describe()} requires asking first"
        if self.rules.match_allow(call, env):
            return None
        return (f'reading its resources needs the user\'s approval; add "ReadMcpResourceTool({server})" to '
                "permissions.allow or to the command's allowed-tools")
