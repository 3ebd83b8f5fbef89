"""Option tables of the programs the shell gate knows (spec.py: the format; tables_*.py: the tables; parse.py: the
parser), and what a command's options do.

- `findings(argv, i)`: what every option of the program at argv[i] does, read the way that program reads it;
  None when the gate has no table for the program (then a rule naming it keeps Claude Code's meaning). An option
  the table does not hold, or an abbreviation it cannot resolve, is Effect.UNKNOWN: code_runners.py makes each
  UNKNOWN and CODE finding a risk, so an argument-blind allow rule (`Bash(tar:*)`) no longer covers it. A word
  the gate cannot know (`"$f"`, `*.py`) where an option may stand is UNKNOWN only for a program with an option
  that runs code or writes (`sort "$f"` may be `sort --compress-program=sh`; `cat "$f"` and `ls *.py` can at
  worst be a harmless option, so they pass).
- `option_writes(argv, i)`: the paths the program writes through its options (`sort -o F`, `curl -o F`,
  `tar -cf F`, `git log --output=F`), for the gate's judging of writes.
- `operands(argv, i)`: where the program's operands are, for the writes they name (`zip ARCHIVE`, `split F PREFIX`).
- `canonical(argv, i)`: the argv with each abbreviated long option spelled out (`--expr=X` -> `--expression=X`),
  for the code that reads a program's arguments itself (sed and awk scripts, where a wrapper's command starts).

git's tables live apart (git.py, git_tables.py): `findings` returns None for git (program_args.git_risks reads
git_findings itself); `option_writes` answers for git too.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence

from mini_claude.permissions.options.git import git_findings
from mini_claude.permissions.options.parse import Seen, parse
from mini_claude.permissions.options.spec import Arg, Effect, Found, ProgramSpec

__all__ = ["canonical", "findings", "operands", "option_writes", "table_for", "tables"]
_NO_UNKNOWNS = frozenset({"echo"})  # prints every word it does not take as an option
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_TAR_WRITES_ARCHIVE = frozenset({"-c", "-r", "-u", "-A", "--delete"})


@functools.cache
def tables() -> dict[str, ProgramSpec]:
    """Every program's table, by name. Built at the first command the gate reads (not at start-up: `-p` reaches the
    model before any shell command is judged)."""
    from mini_claude.permissions.options import (
        tables_archive,
        tables_files,
        tables_net,
        tables_search,
        tables_text,
        tables_wrappers,
    )
    return {**tables_archive.TABLES, **tables_net.TABLES, **tables_search.TABLES, **tables_text.TABLES,
            **tables_files.TABLES, **tables_wrappers.TABLES}


@functools.cache
def _can_harm() -> frozenset[str]:
    """The programs with an option that runs code or writes a file: a word the gate cannot know may be that
    option."""
    return frozenset(spec.name for spec in tables().values()
                     if any(o.effect in (Effect.CODE, Effect.WRITES) for o in spec.options))


def table_for(word: str | None) -> ProgramSpec | None:
    return tables().get(os.path.basename(word)) if word else None


def findings(argv: Sequence[str | None], i: int) -> list[Found] | None:
    """What the options of the program at argv[i] do (effect NONE left out); None: no table for it."""
    if argv[i] is not None and os.path.basename(argv[i] or "") in _NO_UNKNOWNS:
        return []
    spec = table_for(argv[i])
    if spec is None:
        return None
    found = _parse(spec, argv, i, [])
    if spec.name not in _can_harm():  # a word it cannot know may be any of its options: none runs code or writes
        found = [f for f in found if not (f.effect is Effect.UNKNOWN and argv[f.index] is None)]
    return found


def option_writes(argv: Sequence[str | None], i: int) -> list[Found]:
    """The paths the program at argv[i] writes through its options (`sort -o F`, `wget -O F`, `tar -cf F`)."""
    if argv[i] is not None and os.path.basename(argv[i] or "") == "git":
        return [f for f in git_findings(argv, i) if f.effect is Effect.WRITES]
    spec = table_for(argv[i])
    if spec is None:
        return []
    seen: Seen = []
    found = _parse(spec, argv, i, seen)
    if spec.name == "tar" and any(n in _TAR_WRITES_ARCHIVE for _, o, _ in seen for n in o.names):
        found = [Found(f.index, Effect.WRITES, f.why.replace("names the archive", "writes the archive"), f.path)
                 if f.effect is Effect.READS and "names the archive" in f.why else f for f in found]
    return [f for f in found if f.effect is Effect.WRITES and f.path != "-"]  # `-o -`: standard output


def operands(argv: Sequence[str | None], i: int) -> list[int] | None:
    """The indices of the operands of the program at argv[i] (the words its options do not take), read with its
    table; None when the gate has no table for it."""
    spec = table_for(argv[i])
    if spec is None:
        return None
    found: list[int] = []
    parse(spec, argv, i, operands=found)
    return found


def canonical(argv: Sequence[str | None], i: int) -> list[str | None]:
    """`argv` with every abbreviated long option of the program at argv[i] spelled out in full."""
    out = list(argv)
    spec = table_for(argv[i])
    if spec is None:
        return out
    seen: Seen = []
    _parse(spec, argv, i, seen)
    for k, option, spelled in seen:
        word = out[k]
        if word is not None and spelled.startswith("--") and word.startswith(spelled):
            full = next((n for n in option.names if n.startswith(spelled)), spelled)
            out[k] = full + word[len(spelled):]
    return out


def _parse(spec: ProgramSpec, argv: Sequence[str | None], i: int, seen: Seen) -> list[Found]:
    if spec.name == "find":
        return parse(spec, _without_exec_commands(argv, i), i, seen=seen)
    if spec.name == "tar" and i + 1 < len(argv) and argv[i + 1] and not (argv[i + 1] or "").startswith("-"):
        found, last = _tar_old_style(spec, argv, i, seen)
        return found + parse(spec, argv, last, seen=seen)
    return parse(spec, argv, i, seen=seen)


def _without_exec_commands(argv: Sequence[str | None], i: int) -> list[str | None]:
    """find's argv with the commands of `-exec ... ;` blanked (program_args.find_risks reads those)."""
    out = list(argv)
    k = i + 1
    while k < len(out):
        if out[k] in _FIND_EXEC:
            k += 1
            while k < len(out) and out[k] not in (";", "+"):
                out[k] = "{}"
                k += 1
            if k < len(out):
                out[k] = "{}"
        k += 1
    return out


def _tar_old_style(spec: ProgramSpec, argv: Sequence[str | None], i: int, seen: Seen) -> tuple[list[Found], int]:
    """tar's first word without a dash (`tar czf a.tgz dir`): each letter an option, the values of those that take
    one in the next words, in order. Returns the findings and the index of the last word used."""
    letters = argv[i + 1] or ""
    found: list[Found] = []
    last = i + 1
    for letter in letters:
        probe = ["tar", f"-{letter}"]
        sub: Seen = []
        hits = parse(spec, probe, 0, seen=sub)
        if not sub:
            found.append(Found(i + 1, Effect.UNKNOWN, f"tar {letter} (in {letters}): an option the gate does not "
                                                      "know"))
            continue
        option = sub[0][1]
        seen.append((i + 1, option, f"-{letter}"))
        value: str | None = None
        if option.arg is Arg.REQUIRED:
            last += 1
            value = argv[last] if last < len(argv) else None
        hits = parse(spec, ["tar", f"-{letter}", value], 0) if option.arg is Arg.REQUIRED else hits
        found += [Found(i + 1, h.effect, h.why, h.path) for h in hits]
    return found, last
