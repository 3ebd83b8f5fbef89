"""The permission gate: decides, for each tool call, allow / ask the user / deny.

Order (first that applies wins):

1. a deny rule matches                      -> deny (in every mode, bypassPermissions included)
2. plan mode                                -> read-only built-ins run (an ask rule still asks); an MCP tool
                                               claiming `readOnlyHint` goes on as in default mode (3 is skipped):
                                               the hint is the server's claim, not a grant; all else is denied
3. bypassPermissions                        -> allow
4. an ask rule matches                      -> ask (as in Claude Code, ask beats allow: an ask rule is an explicit
                                               "always check this", so a broader allow rule must not skip it)
5. an Edit/Write outside the working        -> allow only by an allow rule naming that location by an absolute or
   directory and the added directories         home path (`Edit(//tmp/**)`, `Edit(~/.bashrc)`); a bare `Edit`,
   (symlinks resolved)                         a project-relative rule or acceptEdits never covers it -> else ask
6. allow rules allow the whole call         -> allow
7. a read-only built-in (Read/Glob/Grep...) -> allow (MCP tools ask even when read-only, as in Claude Code)
8. acceptEdits and an Edit/Write tool       -> allow
9. otherwise                                -> ask; without an `ask` callback (non-interactive) -> deny, saying
                                               what would allow it

`is_denied(path, tool)` answers, for one file a search found, whether a deny rule covers it: grep and glob drop
such files from their results (`ToolContext.is_denied`).
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from mini_claude.paths import user_home
from mini_claude.permissions.paths import MatchEnv, expand_path, is_within
from mini_claude.permissions.rules import Rule, RuleSet, ToolCall
from mini_claude.permissions.shell import split_shell_command
from mini_claude.settings import PROJECT_SETTINGS_DISPLAY, USER_SETTINGS_DISPLAY
from mini_claude.tools.base import Tool

__all__ = ["AskAnswer", "AskFn", "Decision", "PermissionGate", "PermissionMode"]

AskAnswer = Literal["yes", "always", "no"]
AskFn = Callable[[Tool, dict[str, Any]], Awaitable[str]]

# Commands whose first argument names a subcommand: "always" remembers `git status`, not all of `git`.
_SUBCOMMAND_TOOLS = frozenset({
    "git", "npm", "pnpm", "yarn", "bun", "npx", "cargo", "go", "docker", "kubectl", "pip", "pip3", "uv",
    "poetry", "gh", "brew", "apt", "apt-get", "dotnet", "mvn", "gradle", "make", "just", "rustup", "conda",
})
_PLAIN_WORD_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:+-]*$")
_PYTHON_RE = re.compile(r"^python[0-9.]*$")
_EDIT_TOOLS = frozenset({"Edit", "Write"})
_GLOB_SPECIALS_RE = re.compile(r"([*?\[\\])")  # escaped with a backslash in an exact-path rule


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


@dataclass(frozen=True)
class Decision:
    """The gate's answer. `reason` is one line; on a denial it is what the model reads."""

    allowed: bool
    reason: str


PLAN_MODE_TEXT = ("plan mode is read-only: only read-only tools can run; describe the change in your plan "
                  "instead of making it")


class PermissionGate:
    """Checks every tool call against the mode and the rules; asks the user through `ask` when needed.

    `ask(tool, args)` returns "yes" (this call), "always" (this call and, for the rest of the session, calls
    matching `always_rules(tool, args)`), "no", or "no: what to do instead" (passed on to the model). Asks are serialized so two concurrent calls never prompt at
    once. `server_of(qualified_name)` names the MCP server of a tool for `mcp__server` rules. `additional_dirs`
    are directories the user added (settings / --add-dir): writes there are treated like writes in `cwd`."""

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
    ) -> None:
        self.mode = mode
        self.rules = rules
        self.ask = ask
        self.cwd = cwd
        self.additional_dirs = tuple(d if d.is_absolute() else cwd / d for d in additional_dirs)
        self.server_of = server_of
        self.home = home if home is not None else user_home()
        self._ask_lock = asyncio.Lock()

    def _env(self) -> MatchEnv:
        return MatchEnv(cwd=self.cwd, home=self.home, server_of=self.server_of)

    def allow_for_session(self, rules: list[str]) -> None:
        """Add allow rules for the rest of this session (raises ConfigError on a malformed rule)."""
        self.rules = self.rules.with_allow(rules, source="session")

    async def check(self, tool: Tool, args: dict[str, Any]) -> Decision:
        """Decide whether `tool` may run with `args`; may ask the user."""
        call = ToolCall(tool.name, args)
        env = self._env()
        read_only = bool(getattr(tool, "read_only", False))

        rule = self.rules.match_deny(call, env)
        if rule is not None:
            return self._deny(tool, f"denied by rule {rule.describe()}")

        if self.mode is PermissionMode.PLAN:
            if not read_only:
                return self._deny(tool, PLAN_MODE_TEXT)
            if not call.is_mcp:
                rule = self.rules.match_ask(call, env)
                if rule is not None:
                    return await self._ask_user(tool, args, call, ask_rule=rule)
                return Decision(True, "read-only tool in plan mode")
            # an MCP tool's readOnlyHint is only the server's word: from here on exactly as in default mode
        elif self.mode is PermissionMode.BYPASS:
            return Decision(True, "bypassPermissions mode")

        rule = self.rules.match_ask(call, env)
        if rule is not None:
            return await self._ask_user(tool, args, call, ask_rule=rule)

        if self._outside_writes(call, env):
            allowed = self._allowing_rules(call, env)
            if allowed:
                return Decision(True, _allowed_by(allowed))
            return await self._ask_user(tool, args, call, ask_rule=None)

        allowed = self.rules.match_allow(call, env)
        if allowed:
            return Decision(True, _allowed_by(allowed))

        if read_only and not call.is_mcp:
            return Decision(True, "read-only tool")

        if self.mode is PermissionMode.ACCEPT_EDITS and call.claude_name in _EDIT_TOOLS:
            return Decision(True, "acceptEdits mode")

        return await self._ask_user(tool, args, call, ask_rule=None)

    def is_denied(self, path: Path, tool: str) -> bool:
        """Does a deny rule cover the file `path` for `tool` (`Grep`, `Glob`, `Read`, ...)? For search results:
        `Read(.env.local)` keeps grep from returning that file's lines and glob from listing it."""
        call = ToolCall(tool, {"file_path": str(path)})
        env = self._env()
        return any(rule.path is not None and rule.covers_tool(call, env) and rule.path.matches(str(path), env)
                   for rule in self.rules.deny)

    def _outside_writes(self, call: ToolCall, env: MatchEnv) -> list[str]:
        """The paths an Edit/Write call would write outside cwd and the added directories (symlinks resolved)."""
        if call.claude_name not in _EDIT_TOOLS:
            return []
        roots = (self.cwd, *self.additional_dirs)
        targets = (expand_path(p, env) for p in call.paths(env.cwd))
        return [t for t in targets if not is_within(t, roots)]

    def _allowing_rules(self, call: ToolCall, env: MatchEnv) -> tuple[Rule, ...] | None:
        """The allow rule(s) that let this call run without asking. A write outside the project needs a rule
        naming that location (`//abs` or `~/` form), because a bare `Edit` or a project-relative rule was
        written with the project in mind."""
        if not self._outside_writes(call, env):
            return self.rules.match_allow(call, env)
        for rule in self.rules.allow:
            if (rule.path is not None and rule.path.root != "cwd" and rule.covers_tool(call, env)
                    and rule.matches_path_call(call, env, every=True)):
                return (rule,)
        return None

    def _outside_rules(self, call: ToolCall) -> list[str]:
        """`Edit(//abs/path)` for each outside path of a write (the resolved path, glob characters escaped)."""
        env = self._env()
        escaped = (_GLOB_SPECIALS_RE.sub(r"\\\1", os.path.realpath(path)) for path in self._outside_writes(call, env))
        return [f"Edit(/{path})" for path in escaped]

    def always_rules(self, tool: Tool, args: dict[str, Any]) -> list[str]:
        """The rule(s) an "always" answer would add (for showing in the prompt). Bash: `Bash(<prefix>:*)` for a
        simple command, the exact command for a compound or opaque one; a write outside the project: that exact
        file (`Edit(//abs/path)`); any other tool: its rule name."""
        call = ToolCall(tool.name, args)
        outside = self._outside_rules(call)
        if outside:
            return outside
        if call.claude_name != "Bash":
            return [call.claude_name]
        command = call.command or ""
        split = split_shell_command(command)
        if split.opaque or len(split.parts) != 1:
            return [f"Bash({' '.join(command.split())})"] if command.strip() else ["Bash"]
        return [_prefix_rule(split.parts[0])]

    def suggested_rules(self, tool: Tool, args: dict[str, Any]) -> list[str]:
        """Allow rules that would let this call through (for the non-interactive hint): for a compound command,
        one prefix rule per part not yet allowed."""
        call = ToolCall(tool.name, args)
        outside = self._outside_rules(call)
        if outside:
            return outside
        if call.claude_name != "Bash":
            return [call.claude_name]
        command = call.command or ""
        split = split_shell_command(command)
        if split.opaque or not split.parts:
            return [f"Bash({' '.join(command.split())})"] if command.strip() else ["Bash"]
        parts = self.rules.unallowed_command_parts(command, self._env()) or list(split.parts)
        return list(dict.fromkeys(_prefix_rule(p) for p in parts))

    async def _ask_user(self, tool: Tool, args: dict[str, Any], call: ToolCall, *, ask_rule: Rule | None) -> Decision:
        if self.ask is None:
            if ask_rule is not None:
                return self._deny(tool, f"rule {ask_rule.describe()} requires asking first, which is not possible "
                                        "in non-interactive mode; allow with --yolo")
            rules = ", ".join(f'"{r}"' for r in self.suggested_rules(tool, args))
            outside = self._outside_writes(call, self._env())
            if outside:
                return self._deny(tool, f"{', '.join(outside)} is outside the working directory and the added "
                                        "directories, so writing it needs the user's approval, which is not "
                                        "possible in non-interactive mode; allow with --yolo or add "
                                        f"{rules} to permissions.allow in {USER_SETTINGS_DISPLAY}")
            return self._deny(tool, f"not allowed in non-interactive mode; allow with --yolo or add {rules} to "
                                    f"permissions.allow in {PROJECT_SETTINGS_DISPLAY}")
        async with self._ask_lock:
            if ask_rule is None:
                # An "always" given while this call waited for the prompt may already cover it.
                allowed = self._allowing_rules(call, self._env())
                if allowed:
                    return Decision(True, _allowed_by(allowed))
            answer = await self.ask(tool, args)
            if answer == "always":
                remembered = self.always_rules(tool, args)
                self.allow_for_session(remembered)
                listed = ", ".join(f'"{r}"' for r in remembered)
                return Decision(True, f"allowed by the user; {listed} allowed for the rest of this session")
            if answer == "yes":
                return Decision(True, "allowed by the user")
        _, _, instead = answer.partition(":")
        if instead.strip():  # "no: use the test runner instead"
            return self._deny(tool, f"the user declined this tool call and said: {instead.strip()}")
        return self._deny(tool, "the user declined this tool call")

    @staticmethod
    def _deny(tool: Tool, why: str) -> Decision:
        return Decision(False, f"permission denied for {tool.name}: {why}")


def _allowed_by(rules: tuple[Rule, ...]) -> str:
    return "allowed by rule " + ", ".join(r.describe() for r in rules)


def _prefix_rule(part: str) -> str:
    """`git status -s` -> `Bash(git status:*)`, `ls -la` -> `Bash(ls:*)`, `python -m pytest x` ->
    `Bash(python -m pytest:*)`. Parts that start oddly (quotes, `VAR=x`) get an exact rule."""
    words = part.split(" ")
    head = words[0]
    if not _PLAIN_WORD_RE.match(head.rsplit("/", 1)[-1]) or "=" in head:
        return f"Bash({part})"
    prefix = [head]
    if _PYTHON_RE.match(head) and len(words) > 2 and words[1] == "-m" and _PLAIN_WORD_RE.match(words[2]):
        prefix = words[:3]
    elif head in _SUBCOMMAND_TOOLS and len(words) > 1 and _PLAIN_WORD_RE.match(words[1]) \
            and not words[1].startswith("-"):
        prefix = words[:2]
    return f"Bash({' '.join(prefix)}:*)"
