"""Which paths of a call need the user's consent, and which allow rules let it through without asking: the places
a file tool or a Bash command's writes reach (boundaries.py: outside the working folders, secrets, protected paths),
an allow rule that names such a place on purpose, a Bash command's writes worked out once per check, the rules an
"always" would add (suggestions.py), and the questions the search tools ask of one file (`is_secret`,
`is_private`). `ConsentChecks` is a base of `PermissionGate` (gate.py): its steps 5-6 and the question's reasons
read these; the gate's `__init__` sets every attribute declared below.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mini_claude.permissions.boundaries import (
    Boundary,
    Place,
    boundary_of,
    classify,
    literal_root,
    may_be_secret,
)
from mini_claude.permissions.command_writes import (
    Written,
    bash_writes,
    exact_bash_rule,
    write_boundaries,
    write_rule,
)
from mini_claude.permissions.modes import PermissionMode
from mini_claude.permissions.paths import MatchEnv, expand_path
from mini_claude.permissions.rules import Rule, RuleSet, ToolCall
from mini_claude.permissions.suggestions import always_rules, suggested_rules
from mini_claude.tools.base import FileReader, ServerTool, Tool, own_server

__all__ = ["ConsentChecks"]

_EDIT_TOOLS = frozenset({"Edit", "Write", "NotebookEdit"})
_READ_TOOLS = frozenset({"Read", "Glob", "Grep", "Skill"})


class ConsentChecks:
    """The places a call reaches that need consent, and the allow rules naming them (see the module docstring)."""

    mode: PermissionMode
    rules: RuleSet
    cwd: Path
    home: Path
    additional_dirs: tuple[Path, ...]
    own_dirs: tuple[Path, ...]
    state_dir: Path | None
    server_of: Callable[[str], str | None] | None
    _written: tuple[tuple[str, Path, Path], Written] | None

    def _env(self) -> MatchEnv:
        return MatchEnv(cwd=self.cwd, home=self.home, server_of=self.server_of)

    def _place(self) -> Place:
        return Place(self._env(), (self.cwd, *self.additional_dirs), self.own_dirs, self.state_dir)

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


def _call_of(tool: Tool, args: dict[str, Any]) -> ToolCall:
    """The call as the rules see it: a built-in that reaches MCP servers names them (`ServerTool`), one that reads
    files beyond a `path` names them (`FileReader`: the Skill tool, then matched by Read rules on those paths)."""
    servers = tool.servers_reached(args) if isinstance(tool, ServerTool) and not tool.input_is_servers else ()
    reads = tuple(tool.files_read(args)) if isinstance(tool, FileReader) else ()
    return ToolCall(tool.name, args, servers, reads, own_server(tool, args))


def _allowed_by(rules: tuple[Rule, ...]) -> str:
    return "allowed by rule " + ", ".join(r.describe() for r in rules)
