"""A Bash call's writes as the gate judges them (gate.py, steps 1, 4, 5 and 8): the absolute paths it writes and why
some cannot be known (`bash_writes`), the Edit deny or ask rule covering one of them (`write_rule`), the exact rule
that names a whole command line on purpose (`exact_bash_rule`), and acceptEdits' share of shell commands: the common
file commands writing inside the working folders (`file_commands_only`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from mini_claude.paths import resolve_tool_path
from mini_claude.permissions.boundaries import Boundary, Place, boundary_of, plain_name
from mini_claude.permissions.paths import MatchEnv
from mini_claude.permissions.rules import Rule, RuleSet, ToolCall, blanks_only
from mini_claude.permissions.shell import normalize_ws, split_shell_command
from mini_claude.permissions.write_places import resolve

__all__ = ["FILE_COMMANDS", "OUTPUT_COMMANDS", "Written", "bash_writes", "exact_bash_rule", "file_commands_only",
           "output_commands_only", "write_boundaries", "write_rule"]

# The file commands acceptEdits also lets run when all they write lies in the working folders (Claude Code's list,
# `sed` aside: its in-place editing is a code-running risk to the rules here).
FILE_COMMANDS = frozenset({"mkdir", "touch", "rm", "rmdir", "mv", "cp"})


@dataclass(frozen=True)
class Written:
    """The files one Bash call writes: (absolute path, what writes it), and why some cannot be known ("")."""

    paths: tuple[tuple[str, str], ...] = ()
    unknown: str = ""


def bash_writes(call: ToolCall, cwd: Path, home: Path) -> Written:
    """The files a Bash call writes, as absolute paths with what writes each, and why some cannot be known."""
    if call.claude_name != "Bash" or call.command is None:
        return Written()
    split = split_shell_command(call.command)
    paths: list[tuple[str, str]] = []
    unknown = split.writes_unknown
    for write in (w for part in split.writes for w in part):
        found, why = resolve(write, cwd, home)
        paths += [(p, write.why) for p in found]
        unknown = unknown or why
    return Written(tuple(dict.fromkeys(paths)), unknown)


def write_boundaries(written: Written, place: Place, kinds: Sequence[str]) -> list[Boundary]:
    """The written paths that need consent (boundaries.py), of the given kinds. A new file with a plain name needs
    it exactly where its folder does, so the many members of an archive are judged once per folder; a file that
    exists (it may be a link), a singled-out name, or a folder holding `HEAD` is judged on its own."""
    found: list[Boundary] = []
    folders: dict[str, Boundary | None] = {}
    git_like: dict[str, bool] = {}
    for path, _ in written.paths:
        folder, name = os.path.split(path)
        if folder not in git_like:
            git_like[folder] = os.path.lexists(os.path.join(folder, "HEAD"))
        if git_like[folder] or not plain_name(name) or os.path.lexists(path):
            boundary = boundary_of(path, place, write=True)
        else:
            if folder not in folders:
                folders[folder] = boundary_of(folder, place, write=True)
            inherited = folders[folder]
            boundary = Boundary(path, inherited.kind, inherited.outside) if inherited is not None else None
        if boundary is not None and boundary.kind in kinds:
            found.append(boundary)
    return found


def write_rule(match: Callable[[ToolCall, MatchEnv], Rule | None], written: Written, env: MatchEnv
               ) -> tuple[Rule | None, str]:
    """The first rule `match` (a deny or ask lookup) finds for a file the command writes, judged as a Write of it,
    and that file."""
    for path, _ in written.paths:
        rule = match(ToolCall("Write", {"file_path": path}), env)
        if rule is not None:
            return rule, path
    return None, ""


def exact_bash_rule(rules: RuleSet, command: str) -> Rule | None:
    """An allow rule naming exactly this whole command line, its redirections included: it names every write the
    command makes on purpose (what "always" saves for a command writing where consent is needed)."""
    if not command.strip() or not blanks_only(command):
        return None
    whole = normalize_ws(command)
    return next((r for r in rules.allow if r.tool == "Bash" and r.command is not None and r.command.exact
                 and r.command.matches(whole)), None)


def file_commands_only(call: ToolCall, written: Written, place: Place) -> bool:
    """acceptEdits' Bash share: every part one of FILE_COMMANDS, nothing opaque or code-running, every write known
    (the gate has asked already for one needing consent), and nothing copied from a place that needs consent to
    read (`cp ~/.ssh/id_rsa x` asks)."""
    if call.claude_name != "Bash" or call.command is None or written.unknown:
        return False
    split = split_shell_command(call.command)
    if split.opaque or not split.parts or any(split.risks):
        return False
    if any(part.split(" ", 1)[0] not in FILE_COMMANDS for part in split.parts):
        return False
    env = place.env
    sources = (resolve_tool_path(s, env.cwd, env.home) for part in split.writes for w in part for s in w.sources)
    return all(boundary_of(s, place, write=False) is None for s in sources)


# Commands that only print their arguments and exit, with arguments that are nothing but literal text: plain words of
# letters, digits and `_.,:/@%+=-`, or quoted text with no `$`, backquote, backslash or inner quote — no redirection,
# expansion, glob, brace, tilde, variable or option that could make bash do more (`printf -v` into an integer variable
# runs code; `5<f >/dev/fd/5` writes f; `echo ~/.ssh/*` lists a secret folder). Joined by `;`, `&&` or `||`.
OUTPUT_COMMANDS = frozenset({"echo", "pwd", "true", "false"})
_LITERAL_WORD = r"""(?:[A-Za-z0-9_.,:/@%+=][A-Za-z0-9_.,:/@%+=-]*|'[^'\\]*'|"[^"$`\\!]*")"""
_PRINTING_PART = rf"(?:{'|'.join(sorted(OUTPUT_COMMANDS))})(?: +{_LITERAL_WORD})*"
_PRINTING_RE = re.compile(rf"[ \t]*{_PRINTING_PART}(?:[ \t]*(?:;|&&|\|\|)[ \t]*{_PRINTING_PART})*[ \t]*;?[ \t]*")


def output_commands_only(call: ToolCall, written: Written) -> bool:
    """A Bash command made only of OUTPUT_COMMANDS with literal arguments (see above), writing nothing."""
    if call.claude_name != "Bash" or call.command is None or written.unknown or written.paths:
        return False
    if len(call.command) > MAX_PRINTING_CHARS or not _PRINTING_RE.fullmatch(call.command):
        return False
    split = split_shell_command(call.command)  # the real parse must agree: nothing opaque, only those commands
    if split.opaque or not split.parts or any(split.risks) or any(w for part in split.writes for w in part):
        return False
    return all(part.split(" ", 1)[0] in OUTPUT_COMMANDS for part in split.parts)


MAX_PRINTING_CHARS = 4000
