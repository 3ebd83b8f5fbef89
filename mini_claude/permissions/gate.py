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

Why this module is long: the order above is one method (`check`) whose steps share one reading of the call, and
this docstring, its specification, stays beside it; issue 27 added two steps (a Bash command's writes, the OS
sandbox). The rules a question offers are worked out in suggestions.py, the answer's types live in answers.py.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from mini_claude.errors import ConfigError
from mini_claude.hooks.outcomes import HookPermission
from mini_claude.paths import user_home
from mini_claude.permissions.answers import (
    Answer,
    AskContext,
    AskFn,
    Decision,
    PermissionAnswer,
    takes_context,
)
from mini_claude.permissions.bash_guard import bypass_refusal
from mini_claude.permissions.boundaries import (
    Boundary,
    Place,
    boundary_of,
    classify,
    literal_root,
    may_be_secret,
)
from mini_claude.permissions.calls import WEB_FETCH, path_key
from mini_claude.permissions.command_writes import (
    Written,
    bash_writes,
    exact_bash_rule,
    file_commands_only,
    write_boundaries,
    write_rule,
)
from mini_claude.permissions.paths import MatchEnv, expand_path
from mini_claude.permissions.rules import Rule, RuleSet, ToolCall
from mini_claude.permissions.suggestions import always_rules, suggested_rules
from mini_claude.sandbox.runtime import Sandbox
from mini_claude.settings import PROJECT_SETTINGS_DISPLAY, USER_SETTINGS_DISPLAY
from mini_claude.tools.base import FileReader, ServerTool, Tool, input_is_ours, own_server
from mini_claude.tools.exit_plan_mode import EXIT_PLAN_MODE_TOOL_NAME, NOT_IN_PLAN_MODE_TEXT
from mini_claude.tools.input_check import input_problem
from mini_claude.tools.task_tools import TASK_STOP_TOOL_NAME
from mini_claude.tools.web_fetch import host_problem

__all__ = ["PLAN_ACCEPT_EDITS", "AskAnswer", "AskFn", "Decision", "PermissionGate", "PermissionMode"]

AskAnswer = Literal["yes", "always", "no"]
PLAN_ACCEPT_EDITS = "yes-accept-edits"  # ExitPlanMode's other yes: leave plan mode for acceptEdits

_EDIT_TOOLS = frozenset({"Edit", "Write", "NotebookEdit"})
_READ_TOOLS = frozenset({"Read", "Glob", "Grep", "Skill"})


class PermissionMode(StrEnum):
    """Claude Code's permission modes."""

    DEFAULT = "default"
    ACCEPT_EDITS = "acceptEdits"
    PLAN = "plan"
    BYPASS = "bypassPermissions"

    @classmethod
    def parse(cls, name: str) -> PermissionMode:
        """Parse Claude Code's mode name (case-insensitive). Raises ValueError listing the valid names."""
        for mode in cls:
            if mode.value.lower() == name.strip().lower():
                return mode
        names = ", ".join(m.value for m in cls)
        raise ValueError(f"unknown permission mode {name!r} (expected one of: {names})")


_NOT_APPROVED = "plan mode stays on: keep planning, and call ExitPlanMode again with the revised plan"
PLAN_MODE_TEXT = ("plan mode is read-only: only read-only tools can run; describe the change in your plan "
                  "instead of making it")


class PermissionGate:
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

    def _env(self) -> MatchEnv:
        return MatchEnv(cwd=self.cwd, home=self.home, server_of=self.server_of)

    def _place(self) -> Place:
        return Place(self._env(), (self.cwd, *self.additional_dirs), self.own_dirs, self.state_dir)

    def allow_for_session(self, rules: list[str]) -> None:
        """Add allow rules for the rest of this session (raises ConfigError on a malformed rule)."""
        self.rules = self.rules.with_allow(rules, source="session")

    async def check(self, tool: Tool, args: dict[str, Any], *, hook: HookPermission | None = None,
                    tool_use_id: str | None = None) -> Decision:
        """Decide whether `tool` may run with `args`; may ask the user. `hook`: a PreToolUse hook's decision on
        this call (see the module docstring); `tool_use_id`: the call's id, for the question's `AskContext`."""
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
            return await self._ask_user(tool, args, call, ask_rule=rule, tool_use_id=tool_use_id)
        if hook is not None and hook_asks:
            return await self._ask_user(tool, args, call, ask_rule=None, hook_asks=hook.reason,
                                        tool_use_id=tool_use_id)
        if sandboxed is not None:  # 4b. the OS sandbox: auto-allowed inside it; leaving it always asks
            if await sandboxed.auto_allows(args):
                return Decision(True, "runs in the OS sandbox (sandbox.autoAllowBashIfSandboxed)")
            if sandboxed.wants_out(args):
                return await self._ask_user(tool, args, call, ask_rule=None, leaving_sandbox=True,
                                            tool_use_id=tool_use_id)

        if self._boundaries(call) or written.unknown:
            allowed = self._allowing_rules(call, env)
            if allowed:
                return Decision(True, _allowed_by(allowed))
            return await self._ask_user(tool, args, call, ask_rule=None, tool_use_id=tool_use_id)

        allowed = self.rules.match_allow(call, env)
        if allowed:
            return Decision(True, _allowed_by(allowed))
        if hook is not None and hook_allows:
            return Decision(True, f"allowed by a PreToolUse hook: {hook.reason}")

        if read_only:
            return Decision(True, "read-only tool in plan mode" if self.mode is PermissionMode.PLAN
                            else "read-only tool")

        if self.mode is PermissionMode.ACCEPT_EDITS and call.claude_name in _EDIT_TOOLS:
            return Decision(True, "acceptEdits mode")
        if self.mode is PermissionMode.ACCEPT_EDITS and file_commands_only(call, written, self._place()):
            return Decision(True, "acceptEdits mode (file commands inside the working directory)")

        return await self._ask_user(tool, args, call, ask_rule=None, tool_use_id=tool_use_id)

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

    def is_secret(self, path: Path) -> bool:
        """Must a search skip `path` inside a searched folder because it holds secrets (`.env`, a private key)?
        Not in bypassPermissions mode, nor when an allow rule names it on purpose (`Read(.env)`)."""
        if self.mode is PermissionMode.BYPASS or not may_be_secret(expand_path(str(path), self._env()), self._place()):
            return False  # the cheap look first: a search asks this of every file it meets
        call = ToolCall("Grep", {"path": str(path)})
        return bool(self._boundaries(call, kinds=("secret",))) and self._allowing_rules(call, self._env()) is None

    def why_asking(self, tool: Tool, args: dict[str, Any]) -> list[str]:
        """For the question: each path of the call that needs consent, as the tool will really reach it (a symlink
        followed to its target), and why (`… is outside the working directory …`)."""
        notes = []
        call = _call_of(tool, args)
        written = dict(self._bash_writes(call).paths)
        for boundary in self._boundaries(call):
            real = os.path.realpath(boundary.path)
            via = f" (through a symlink: {boundary.path})" if real != boundary.path else ""
            if boundary.path in written:
                notes.append(f"writes {real}{via} ({written[boundary.path]}), which {boundary.why()}")
            else:
                notes.append(f"{real}{via} {boundary.why()}")
        unknown = self._bash_writes(call).unknown
        if unknown:
            notes.append(f"writes files the gate cannot list: {unknown}")
        return notes

    def is_private(self, path: Path) -> bool:
        """Would reading `path` need consent (outside the working folders, or secret)? Not in bypassPermissions
        mode. Glob drops a match that a symlink led out of the searched folder to such a place."""
        if self.mode is PermissionMode.BYPASS:
            return False
        call = ToolCall("Glob", {"path": str(path)})
        return bool(self._boundaries(call)) and self._allowing_rules(call, self._env()) is None

    def _boundaries(self, call: ToolCall, kinds: Sequence[str] = ("outside", "secret", "protected")) -> list[Boundary]:
        """The paths of a file tool's call that need the user's consent (boundaries.py), with why."""
        write = call.claude_name in _EDIT_TOOLS
        place, env = self._place(), self._env()
        if call.claude_name == "Bash":
            return write_boundaries(self._bash_writes(call), place, kinds)
        if not write and call.claude_name not in _READ_TOOLS:
            return []
        found = []
        for path in call.paths(env.cwd):
            target = expand_path(path, env)
            boundary = boundary_of(target, place, write=write)
            if boundary is not None and boundary.kind in kinds:
                found.append(boundary)
        return found

    def _allowing_rules(self, call: ToolCall, env: MatchEnv) -> tuple[Rule, ...] | None:
        """The allow rule(s) that let this call run without asking. A path that needs consent (outside the
        project, a secret, a protected file) is allowed only by one rule naming that place on purpose."""
        boundaries = self._boundaries(call)
        if call.claude_name == "Bash":
            return self._allowing_bash_rules(call, env, boundaries)
        if not boundaries:
            return self.rules.match_allow(call, env)
        for rule in self.rules.allow:
            if rule.path is not None and rule.covers_tool(call, env) \
                    and rule.matches_path_call(call, env, every=True) \
                    and all(self._names_on_purpose(rule, b, call) for b in boundaries):
                return (rule,)
        return None

    def _allowing_bash_rules(self, call: ToolCall, env: MatchEnv, boundaries: list[Boundary]
                             ) -> tuple[Rule, ...] | None:
        """A Bash command writing where consent is needed runs unasked only under an exact rule for the whole
        command, or under its Bash rule(s) plus, for each such place, an Edit rule naming it on purpose."""
        exact = exact_bash_rule(self.rules, call.command or "")
        if exact is not None:
            return (exact,)
        if self._bash_writes(call).unknown:  # as an opaque command: only a bare `Bash` rule (or the exact one)
            return next(((r,) for r in self.rules.allow if r.tool == "Bash" and r.specifier is None
                         and boundaries == []), None)
        allowed = self.rules.match_allow(call, env)
        if allowed is None or not boundaries:
            return allowed
        used: list[Rule] = list(allowed)
        for boundary in boundaries:
            write = ToolCall("Write", {"file_path": boundary.path})
            rule = next((r for r in self.rules.allow if r.path is not None and r.covers_tool(write, env)
                         and r.matches_path_call(write, env, every=True)
                         and self._names_on_purpose(r, boundary, write)), None)
            if rule is None:
                return None
            used.append(rule)
        return tuple(dict.fromkeys(used))

    def _bash_writes(self, call: ToolCall) -> Written:
        """The call's writes, worked out once per check (an archive is listed once, not at every step)."""
        key = (call.command or "", self.cwd, self.home)
        if self._written is None or self._written[0] != key:
            self._written = (key, bash_writes(call, self.cwd, self.home))
        return self._written[1]

    def _write_rule(self, match: Callable[[ToolCall, MatchEnv], Rule | None], written: Written
                    ) -> tuple[Rule | None, str]:
        return write_rule(match, written, self._env())

    def _names_on_purpose(self, rule: Rule, boundary: Boundary, call: ToolCall) -> bool:
        """Does allow `rule` (which matches the path) name this place on purpose? Outside: a rule rooted at `//`
        or `~/`. Secret / protected: a rule whose fixed part already lies in a place of that kind."""
        assert rule.path is not None
        if boundary.kind == "outside":
            return rule.path.root != "cwd"
        root = literal_root(rule.path.text, self._env())
        if root is None:
            return False
        kind = classify(root, self._place(), write=call.claude_name in _EDIT_TOOLS)
        return kind == "secret" or kind == boundary.kind

    def always_rules(self, tool: Tool, args: dict[str, Any]) -> list[str]:
        """The rule(s) an "always" answer would add (for showing in the prompt; suggestions.py says which)."""
        call = _call_of(tool, args)
        return always_rules(call, [b.path for b in self._boundaries(call)], bool(self._bash_writes(call).unknown),
                            self._env())

    def suggested_rules(self, tool: Tool, args: dict[str, Any]) -> list[str]:
        """Allow rules that would let this call through (for the non-interactive hint): for a compound command,
        one prefix rule per part not yet allowed."""
        call = _call_of(tool, args)
        return suggested_rules(call, [b.path for b in self._boundaries(call)], bool(self._bash_writes(call).unknown),
                               self.rules, self._env())

    async def _ask_user(self, tool: Tool, args: dict[str, Any], call: ToolCall, *, ask_rule: Rule | None,
                        hook_asks: str | None = None, leaving_sandbox: bool = False,
                        tool_use_id: str | None = None) -> Decision:
        if self.ask is None and leaving_sandbox:
            return self._deny(tool, "running a command outside the OS sandbox (dangerouslyDisableSandbox) needs the "
                                    "user's approval, which is not possible in non-interactive mode")
        if self.ask is None:
            if hook_asks is not None:
                return self._deny(tool, f"{hook_asks} (a PreToolUse hook asks the user first, which is not possible "
                                        "in non-interactive mode)")
            if ask_rule is not None:
                return self._deny(tool, f"rule {ask_rule.describe()} requires asking first, which is not possible "
                                        "in non-interactive mode; allow with --yolo")
            rules = ", ".join(f'"{r}"' for r in self.suggested_rules(tool, args))
            boundaries = self._boundaries(call)
            if boundaries:
                verb = "writing" if call.claude_name in _EDIT_TOOLS or call.claude_name == "Bash" else "reading"
                why = "; ".join(f"{b.path} {b.why()}" for b in boundaries)
                return self._deny(tool, f"{why}, so {verb} it needs the user's approval, which is not possible in "
                                        f"non-interactive mode; allow with --yolo or add {rules} to "
                                        f"permissions.allow in {USER_SETTINGS_DISPLAY}")
            return self._deny(tool, f"not allowed in non-interactive mode; allow with --yolo or add {rules} to "
                                    f"permissions.allow in {PROJECT_SETTINGS_DISPLAY}")
        async with self._ask_lock:
            if ask_rule is None and hook_asks is None and not leaving_sandbox:
                # An "always" given while this call waited for the prompt may already cover it.
                allowed = self._allowing_rules(call, self._env())
                if allowed:
                    return Decision(True, _allowed_by(allowed))
            def context() -> AskContext:
                why = (f"rule {ask_rule.describe()} requires asking first" if ask_rule is not None else hook_asks
                       or ("the command asks to run outside the OS sandbox" if leaving_sandbox else "")
                       or "; ".join(self.why_asking(tool, args)))
                boundaries = self._boundaries(call)
                return AskContext(() if leaving_sandbox else tuple(self.always_rules(tool, args)), why,
                                  boundaries[0].path if boundaries else None, tool_use_id)

            answer = await self._question(tool, args, context)
            if not isinstance(answer, str):
                return self._answered(tool, answer, remembering=not leaving_sandbox)
            if answer == "always" and leaving_sandbox:
                answer = "yes"  # leaving the sandbox is asked every time: nothing is remembered
            if answer == "always":
                remembered = self.always_rules(tool, args)
                if not remembered:  # a host or a multi-line command no rule can name: a yes for this call
                    what = "host" if call.host is not None else "command"
                    return Decision(True, f"allowed by the user (no rule can name this {what}: nothing is remembered)")
                self.allow_for_session(remembered)
                listed = ", ".join(f'"{r}"' for r in remembered)
                return Decision(True, f"allowed by the user; {listed} allowed for the rest of this session")
            if answer == "yes":
                return Decision(True, "allowed by the user")
        _, _, instead = answer.partition(":")
        if instead.strip():  # "no: use the test runner instead"
            return self._deny(tool, f"the user declined this tool call and said: {instead.strip()}")
        return self._deny(tool, "the user declined this tool call")

    async def _question(self, tool: Tool, args: dict[str, Any], context: Callable[[], AskContext]
                        ) -> Answer | object:
        """The `ask` callback's answer (`context()` passed only to a callback that takes it)."""
        ask: Any = self.ask
        answer: object = await (ask(tool, args, context()) if takes_context(ask) else ask(tool, args))
        return answer

    def _answered(self, tool: Tool, answer: object, *, remembering: bool) -> Decision:
        """What a `PermissionAnswer` decides (see the module docstring); anything else is a refusal."""
        if not isinstance(answer, PermissionAnswer):
            return self._deny(tool, f"the permission callback gave no answer (got {type(answer).__name__}, expected "
                                    "a string or a PermissionAnswer)")
        if not answer.allow:
            message = answer.message.strip() if isinstance(answer.message, str) else ""
            no = Decision(False, message) if message else self._deny(tool, "the user declined this tool call")
            return replace(no, interrupt=answer.interrupt is True)
        updated = answer.updated_input
        if updated is not None:
            if not isinstance(updated, dict):  # typed as a dict, but a user's callback may send anything
                return self._deny(tool, f"the answer's updated input is a {type(updated).__name__}, not an object")  # type: ignore[unreachable]
            problem = input_problem(tool.input_schema, updated) if input_is_ours(tool) else None
            call = _call_of(tool, updated)
            sandboxed = self.sandbox if call.claude_name == "Bash" and not call.is_mcp else None
            why = sandboxed.refusal(updated) if sandboxed is not None else None
            refused = (self._deny(tool, f"invalid updated input: {problem}") if problem
                       else self._deny(tool, why) if why else self._refusal(tool, updated, call))
            if refused is not None:
                return refused
        rules = [answer.remember] if isinstance(answer.remember, str) else list(answer.remember)
        note = ""
        if rules and not remembering:
            note = " (leaving the OS sandbox is asked every time: nothing is remembered)"
        elif rules:
            try:
                self.allow_for_session(rules)
            except ConfigError as exc:
                note = f"; nothing is remembered: {exc}"
            else:
                note = "; " + ", ".join(f'"{r}"' for r in rules) + " allowed for the rest of this session"
        return Decision(True, "allowed by the user" + note, updated_input=updated)

    async def _leave_plan_mode(self, tool: Tool, args: dict[str, Any], tool_use_id: str | None) -> Decision:
        """ExitPlanMode: the user's answer to the plan is the only way out of plan mode (see the module docstring)."""
        if not self._planning():
            return self._deny(tool, NOT_IN_PLAN_MODE_TEXT)
        if self.ask is None:
            return self._deny(tool, "leaving plan mode needs the user's approval of the plan, which is not possible in "
                                    "non-interactive mode; plan mode stays on: give the plan as your answer instead")
        async with self._ask_lock:
            if not self._planning():  # a plan approved (or the mode changed) while this call waited
                return self._deny(tool, NOT_IN_PLAN_MODE_TEXT)
            answer = await self._question(tool, args, lambda: AskContext(
                reason="leaving plan mode needs the user's approval of the plan", tool_use_id=tool_use_id))
            if not self._planning():  # the user changed the mode meanwhile: that mode stands
                return self._deny(tool, NOT_IN_PLAN_MODE_TEXT)
            if isinstance(answer, PermissionAnswer) and answer.allow:
                answer = "yes"  # a typed yes to the plan: to default mode (its input and rules mean nothing here)
            if answer in ("yes", "always", PLAN_ACCEPT_EDITS):
                # "always" from a question that does not know this tool: a yes for this plan, no rule saved
                self.mode = PermissionMode.ACCEPT_EDITS if answer == PLAN_ACCEPT_EDITS else PermissionMode.DEFAULT
                return Decision(True, f"plan approved by the user; permission mode: {self.mode.value}")
        if not isinstance(answer, str | PermissionAnswer):
            return self._answered(tool, answer, remembering=False)
        instead = answer.message if isinstance(answer, PermissionAnswer) else answer.partition(":")[2]
        no = isinstance(answer, PermissionAnswer) or answer.startswith("no")
        said = f" and said: {instead.strip()}" if no and isinstance(instead, str) and instead.strip() else ""
        return Decision(False, f"permission denied for {tool.name}: the user did not approve the plan{said}; "
                        f"{_NOT_APPROVED}", interrupt=isinstance(answer, PermissionAnswer) and answer.interrupt is True)

    def _planning(self) -> bool:
        return self.mode is PermissionMode.PLAN  # read anew after each await: the mode may change meanwhile

    @staticmethod
    def _deny(tool: Tool, why: str) -> Decision:
        return Decision(False, f"permission denied for {tool.name}: {why}")


def _call_of(tool: Tool, args: dict[str, Any]) -> ToolCall:
    """The call as the rules see it: a built-in that reaches MCP servers names them (`ServerTool`), one that reads
    files beyond a `path` names them (`FileReader`: the Skill tool, then matched by Read rules on those paths)."""
    servers = tool.servers_reached(args) if isinstance(tool, ServerTool) and not tool.input_is_servers else ()
    reads = tuple(tool.files_read(args)) if isinstance(tool, FileReader) else ()
    return ToolCall(tool.name, args, servers, reads, own_server(tool, args))


def _allowed_by(rules: tuple[Rule, ...]) -> str:
    return "allowed by rule " + ", ".join(r.describe() for r in rules)
