"""What the write finders share (writes.py, archive_writes.py, net_writes.py): the `Write` record of one write a
command makes, `UnknownWrite` for a write whose path cannot be known, and a getopt_long reading of a program's
argv (`getopt`, or `table_getopt` with the option lists of the program's table in options/).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mini_claude.permissions.options import canonical, table_for
from mini_claude.permissions.options.spec import Arg

__all__ = ["MAX_MEMBERS", "MAX_SECONDS", "Opts", "UnknownWrite", "Write", "getopt", "has", "index_of", "is_device", "shell_path",
           "table_getopt"]

# Archives, globs and copied trees are read up to these bounds; beyond them a write is unknown (asks).
MAX_MEMBERS = 5000
MAX_SECONDS = 2.0

_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})


@dataclass(frozen=True)
class Write:
    """One write of a command. `path` as bash will open it (relative to the gate's cwd unless absolute; `~` as bash
    expands it); `index` the argv word naming it (-1: a redirection); `why` what writes it (for the question).
    For `cp`/`mv`/`ln`/`install`, `sources` land under `path` when it is (or may become) a directory, whole trees
    when `tree`; for `tar -x`/`unzip`, the members of `archive` land under `path`; `rm -r` sets `tree` too."""

    path: str
    index: int
    why: str
    sources: tuple[str, ...] = ()
    tree: bool = False
    target_dir: bool = False  # `-t DIR`, or several sources: `path` is surely a directory
    archive: str = ""
    archive_kind: str = ""  # "tar" or "zip"
    strip: int = 0  # tar --strip-components
    flat: bool = False  # unzip -j
    glob: bool = False  # some word was an unquoted glob pattern: bash (and `resolve`) expands it to file names
    backups: tuple[str, ...] = ()  # cp/mv/ln/install -b: each file written also gets a backup named FILE+suffix
    linked: bool = False  # ln / cp -l / cp -s: `path` gets another name; with `tree`, every file under it does


class UnknownWrite(Exception):
    """A write whose path the gate cannot know, and why."""


def shell_path(value: str, raw: str) -> str | None:
    """The path bash opens for a word whose value is `value` and source text `raw`: an unquoted leading `~` is
    home (kept for the gate to expand), a quoted one a literal folder; `~+` / `~-` depend on the shell's state."""
    if not value.startswith("~"):
        return value
    if not raw.startswith("~"):
        return "./" + value
    return None if value[:2] in ("~+", "~-") else value


def is_device(path: str) -> bool:
    """Redirecting to these writes no file (`/dev/fd/N` duplicates a descriptor another redirection opened)."""
    return path in _DEVICES or (path.startswith("/dev/fd/") and path[8:].isdigit())


Opts = dict[str, list[str]]


def getopt(args: list[str], short_values: str, long_values: Sequence[str], long_flags: Sequence[str] = (),
           short_optional: str = "") -> tuple[Opts, list[tuple[int, str]]]:
    """getopt_long's reading of `args` (argv[1:]): options (long ones by full name, abbreviations resolved among the
    given names; a short option by its letter) with their values, and the operands with their argv index. A letter
    of `short_optional` takes only an attached value (`sed -i.bak`; `sed -i s/a/b/ f` gives no value)."""
    opts: Opts = {}
    operands: list[tuple[int, str]] = []
    k = 0
    while k < len(args):
        a = args[k]
        k += 1
        if a == "--":
            operands.extend((k + 1 + j, w) for j, w in enumerate(args[k:]))
            break
        if a.startswith("--"):
            name, eq, value = a[2:].partition("=")
            full = _resolve_long(name, long_values, long_flags)
            if full in long_values and not eq and k < len(args):
                value, k = args[k], k + 1
            opts.setdefault(full, []).append(value)
        elif a.startswith("-") and a != "-":
            for c, letter in enumerate(a[1:], start=1):
                if letter in short_values or letter in short_optional:
                    value = a[c + 1:]
                    if not value and k < len(args) and letter not in short_optional:
                        value, k = args[k], k + 1
                    opts.setdefault(letter, []).append(value)
                    break
                opts.setdefault(letter, []).append("")
        else:
            operands.append((k, a))
    return opts, operands


def table_getopt(args: list[str]) -> tuple[Opts, list[tuple[int, str]]] | None:
    """`getopt` of argv `args` with the option lists of its program's table (options/), abbreviations spelled
    out the way the program resolves them; None when the gate has no table for it."""
    spec = table_for(args[0])
    if spec is None:
        return None
    spelled = [w or "" for w in canonical(list(args), 0)]
    shorts: dict[Arg, str] = {arg: "" for arg in Arg}
    longs: dict[Arg, list[str]] = {arg: [] for arg in Arg}
    for option in spec.options:
        for name in option.names:
            if name.startswith("--"):
                longs[option.arg].append(name[2:])
            elif len(name) == 2:
                shorts[option.arg] += name[1]
    return getopt(spelled[1:], shorts[Arg.REQUIRED], longs[Arg.REQUIRED], longs[Arg.NO] + longs[Arg.OPTIONAL],
                  shorts[Arg.OPTIONAL])


def _resolve_long(name: str, values: Sequence[str], flags: Sequence[str]) -> str:
    """A long option's full name: exact, else the one option it abbreviates (an ambiguous one stays as written)."""
    every = [*values, *flags]
    if name in every:
        return name
    hits = [o for o in every if o.startswith(name)]
    return hits[0] if len(hits) == 1 else name


def has(opts: Opts, *names: str) -> bool:
    return any(n in opts for n in names)


def index_of(args: list[str], value: str, default: int) -> int:
    return next((k for k in range(len(args) - 1, 0, -1) if args[k] == value or args[k].endswith(value)), default)
