"""The files a shell command writes, found from its words: what the gate judges as writes of those paths.

A write is anything that creates, truncates, appends to, replaces or deletes a file. This module owns where such
writes hide in one simple command's argv (bash_tree.py finds redirections; shell.py carries both per part):

- `tee FILES`, `dd of=F`, `touch`, `mkdir`, `truncate`, `rm` / `rmdir` / `unlink` / `shred` (deleting a file is a
  write of it), `sed -i FILES`;
- `cp` / `mv` / `install` / `ln`: the last operand, or `-t DIR`; a directory target means the names under it, and a
  copied or moved tree lands there whole (its members are listed at gate time); `mv`'s sources are deleted;
- `tar -x` / `unzip`: every member of the archive, under `-C DIR` / `-d DIR`, read at gate time with tarfile /
  zipfile, bounded in members, bytes and time; `tar -c` / `-r` / `-u`: the archive itself;
- what `options.option_writes` knows of a program's own options (`sort -o F`, `git log --output=F`);
- all of the above looked through wrappers (`sudo`, `timeout 5`, `env X=1`, `nice`, `xargs`, `find -exec`).

`program_writes` returns the writes of one argv, or why one cannot be known (a computed word, a file name xargs
appends, a wrapper that changes directory): such a command stays opaque and asks. write_places.py turns one `Write`
into absolute paths at gate time (the working directory, home, the archive's members), or says why it cannot.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

from mini_claude.permissions.code_runners import is_wrapper
from mini_claude.permissions.options import operands, option_writes
from mini_claude.permissions.options.spec import Effect

__all__ = ["Write", "is_device", "program_writes", "rebase", "shell_path"]

_PURE_GLOB_RE = re.compile(r"^[^\s$`'\"\\{}~]*[*?\[][^\s$`'\"\\{}~]*$")
_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_FINDERS_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_APPENDERS = frozenset({"xargs", "parallel"})


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


# ----------------------------------------------------------------------------------------------- one argv


def program_writes(argv: Sequence[str | None], raws: Sequence[str]) -> tuple[list[Write], str]:
    """The writes of one simple command (`argv`: its words, None where unknown; `raws`: their source text), and
    why some write cannot be known ("" when all are)."""
    writes: list[Write] = []
    why = ""
    # a plain glob pattern (`*.pyc`) is a word the gate can know: the file names it matches when the gate looks
    globbed = [raws[k] if w is None and k < len(raws) and _PURE_GLOB_RE.match(raws[k]) else w
               for k, w in enumerate(argv)]
    glob = globbed != list(argv)
    argv = globbed
    for start, appended, chdir in _starts(argv):
        words = list(argv[start:])
        if appended:
            words.append(None)  # xargs / parallel add file names the gate cannot see
        found, unknown = _one_program(words, list(raws[start:]), start)
        if chdir and any(not os.path.isabs(w.path) and not w.path.startswith("~") for w in found):
            unknown = unknown or "a wrapper runs it in another directory"
        writes.extend(replace(w, glob=True) if glob else w for w in found)
        why = why or unknown
    return writes, why


def _starts(argv: Sequence[str | None]) -> Iterator[tuple[int, bool, bool]]:
    """Where a command may start in `argv` (after assignments; every tail after a wrapper; after `find -exec`),
    whether xargs/parallel append words to it, whether a wrapper changes its directory first."""
    i = 0
    while i < len(argv) and argv[i] is not None and "=" in (argv[i] or "") \
            and (argv[i] or "").split("=", 1)[0].isidentifier():
        i += 1
    if i >= len(argv):
        return
    yield i, False, False
    head = os.path.basename(argv[i] or "")
    if is_wrapper(head) or head in ("command", "builtin", "exec"):
        appended = head in _APPENDERS
        chdir = False
        for j in range(i + 1, len(argv)):
            word = argv[j] or ""
            chdir = chdir or word in ("-C", "-D", "--chdir", "--working-directory") or word.startswith("--chdir=")
            yield j, appended, chdir
    elif head == "find":
        for j in range(i + 1, len(argv)):
            if argv[j] in _FINDERS_EXEC:
                end = next((k for k in range(j + 1, len(argv)) if argv[k] in (";", "+")), len(argv))
                tail = [None if w is None or "{}" in w else w for w in argv[j + 1:end]]
                if tail and None in tail[1:] and os.path.basename(tail[0] or "") in _PROGRAMS:
                    yield j + 1, True, argv[j] == "-execdir"
                elif tail:
                    yield j + 1, False, argv[j] == "-execdir"


def _one_program(argv: list[str | None], raws: list[str], base: int) -> tuple[list[Write], str]:
    if not argv or argv[0] is None:
        return [], ""
    name = os.path.basename(argv[0])
    writes: list[Write] = []
    unknown = ""
    for found in option_writes(argv, 0):
        if found.effect is Effect.WRITES:
            if found.path is None:
                unknown = unknown or f"{name} writes a file whose name the gate cannot know ({found.why})"
            else:
                writes.append(Write(found.path, base + found.index, found.why or f"{name} writes it"))
    handler = _PROGRAMS.get(name)
    if handler is None:
        return writes, unknown
    if None in argv[1:]:
        return writes, f"{name} writes files and gets a word the gate cannot know"
    words = [w or "" for w in argv]
    paths: list[str] = []
    for k, word in enumerate(words):
        path = shell_path(word, raws[k] if k < len(raws) else word) if k else word
        if path is None:
            return writes, f"{name} gets a path that depends on the shell's state (~+ / ~-)"
        paths.append(path)
    try:
        found_writes = handler(name, paths)
    except _Unknown as exc:
        return writes, str(exc)
    return writes + [replace(w, index=base + w.index) for w in found_writes], unknown


class _Unknown(Exception):
    """A write whose path the gate cannot know, and why."""


def _parse(args: list[str], short_values: str, long_values: Sequence[str], long_flags: Sequence[str] = (),
           short_optional: str = "") -> tuple[dict[str, list[str]], list[tuple[int, str]]]:
    """getopt_long's reading of `args` (argv[1:]): options (long ones by full name, abbreviations resolved among the
    given names; a short option by its letter) with their values, and the operands with their argv index. A letter
    of `short_optional` takes only an attached value (`sed -i.bak`; `sed -i s/a/b/ f` gives no value)."""
    opts: dict[str, list[str]] = {}
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


def _resolve_long(name: str, values: Sequence[str], flags: Sequence[str]) -> str:
    """A long option's full name: exact, else the one option it abbreviates (an ambiguous one stays as written)."""
    every = [*values, *flags]
    if name in every:
        return name
    hits = [o for o in every if o.startswith(name)]
    return hits[0] if len(hits) == 1 else name


def _has(opts: dict[str, list[str]], *names: str) -> bool:
    return any(n in opts for n in names)


def _operand_writes(name: str, args: list[str], short: str, long: Sequence[str], why: str,
                    flags: Sequence[str] = ()) -> list[Write]:
    opts, operands = _parse(args[1:], short, long, flags)
    tree = name in ("rm",) and _has(opts, "r", "R", "recursive")
    return [Write(path, k, why, tree=tree) for k, path in operands]


def _simple(name: str, args: list[str]) -> list[Write]:
    if name == "tee":
        return _operand_writes(name, args, "", ("output-error",), "tee writes it")
    if name == "touch":
        return _operand_writes(name, args, "drt", ("date", "reference", "time"), "touch creates it")
    if name == "mkdir":
        return _operand_writes(name, args, "m", ("mode",), "mkdir creates it")
    if name == "truncate":
        return _operand_writes(name, args, "sr", ("size", "reference"), "truncate changes it")
    if name == "shred":
        return _operand_writes(name, args, "ns", ("iterations", "size", "random-source"), "shred overwrites it")
    return _operand_writes(name, args, "", ("interactive", "one-file-system", "preserve-root"),
                           f"{name} deletes it", ("recursive", "force", "dir", "verbose", "no-preserve-root"))


def _dd(name: str, args: list[str]) -> list[Write]:
    return [Write(a[3:], k, "dd of= writes it") for k, a in enumerate(args) if k and a.startswith("of=")]


def _sed(name: str, args: list[str]) -> list[Write]:
    opts, operands = _parse(args[1:], "efl", ("expression", "file", "line-length"),
                            ("in-place", "null-data", "separate", "sandbox", "posix", "debug", "regexp-extended",
                             "follow-symlinks", "unbuffered", "quiet", "silent"), short_optional="i")
    suffixes = [*opts.get("i", []), *opts.get("in-place", [])]
    if not suffixes:
        return []
    files = operands if _has(opts, "e", "f", "expression", "file") else operands[1:]
    out = [Write(path, k, f"{name} -i edits it") for k, path in files]
    for suffix in (s for s in suffixes if s):
        if "/" in suffix or "*" in suffix:
            raise _Unknown(f"{name} -i{suffix} writes a backup whose place the gate does not work out")
        out += [Write(path + suffix, k, f"{name} -i{suffix} writes its backup") for k, path in files]
    return out


_COPY_VALUES = {"cp": ("target-directory", "suffix"), "mv": ("target-directory", "suffix"),
                "ln": ("target-directory", "suffix"),
                "install": ("target-directory", "suffix", "mode", "owner", "group", "strip-program")}
_COPY_FLAGS = ("no-target-directory", "recursive", "archive", "directory", "backup", "force", "interactive",
               "no-clobber", "verbose", "symbolic", "relative", "update", "preserve", "parents", "dereference")


def _copy(name: str, args: list[str]) -> list[Write]:
    """cp / mv / ln / install: the target (a directory target: the sources' names under it), mv's sources."""
    opts, operands = _parse(args[1:], "tSmog" if name == "install" else "tS", _COPY_VALUES[name], _COPY_FLAGS)
    if name == "install" and _has(opts, "d", "directory"):
        return [Write(path, k, "install -d creates it") for k, path in operands]
    targets = [*opts.get("t", []), *opts.get("target-directory", [])]
    if len(targets) > 1:
        raise _Unknown(f"{name} is given more than one target directory")
    if targets:
        target, sources, surely_dir = targets[0], operands, True
        index = _index_of(args, targets[0], 1)
    else:
        if not operands or (len(operands) == 1 and name != "ln"):
            return []
        if len(operands) == 1:  # `ln -s TARGET`: the link is made here, under the target's name
            return [Write(os.path.basename(operands[0][1].rstrip("/")) or ".", operands[0][0], "ln makes it")]
        index, target = operands[-1]
        sources, surely_dir = operands[:-1], len(operands) > 2
    if _has(opts, "T", "no-target-directory"):
        surely_dir = False
        sources = sources[:1]
    tree = name == "mv" or (name == "cp" and _has(opts, "r", "R", "a", "recursive", "archive"))
    verb = {"cp": "cp copies", "mv": "mv moves", "ln": "ln links", "install": "install copies"}[name]
    out = [Write(target, index, f"{verb} into it", tuple(p for _, p in sources), tree, surely_dir)]
    if name == "mv":
        out += [Write(path, k, "mv moves it away") for k, path in sources]
    return out


def _index_of(args: list[str], value: str, default: int) -> int:
    return next((k for k in range(len(args) - 1, 0, -1) if args[k] == value or args[k].endswith(value)), default)


_TAR_VALUES = ("file", "directory", "files-from", "exclude-from", "exclude", "transform", "xform",
               "strip-components", "to-command", "use-compress-program", "format", "owner", "group", "mode",
               "mtime", "newer", "after-date", "label", "blocking-factor", "record-size", "listed-incremental",
               "tape-length", "info-script", "new-volume-script", "checkpoint-action", "rmt-command",
               "rsh-command", "suffix", "index-file", "level", "warning", "quoting-style", "newer-mtime",
               "starting-file", "volno-file", "pax-option", "sort", "owner-map", "group-map")
_TAR_FLAGS = ("extract", "get", "create", "append", "update", "catenate", "concatenate", "list", "diff",
              "compare", "delete", "to-stdout", "one-top-level", "absolute-names", "keep-old-files", "verbose",
              "gzip", "bzip2", "xz", "zstd", "auto-compress", "overwrite", "skip-old-files", "checkpoint",
              "test-label", "gunzip", "ungzip", "no-same-owner", "same-permissions", "preserve-permissions")


def _tar(name: str, args: list[str]) -> list[Write]:
    rest = args[1:]
    if rest and not rest[0].startswith("-"):  # old style: `tar xzf a.tar`: each letter, values in order
        letters, values = rest[0], rest[1:]
        expanded: list[str] = []
        for letter in letters:
            if letter in "fCTXbKNgVLHIF" and values:
                expanded += [f"-{letter}", values.pop(0)]
            else:
                expanded.append(f"-{letter}")
        rest = expanded + values
    opts, _ = _parse(rest, "fCTXbKNgVLHIF", _TAR_VALUES, _TAR_FLAGS)
    files = [*opts.get("f", []), *opts.get("file", [])]
    archive = files[-1] if files else ""
    index = _index_of(args, archive, 1) if archive else 1
    if _has(opts, "c", "r", "u", "A", "create", "append", "update", "catenate", "concatenate", "delete"):
        if not archive or archive == "-":
            return []
        return [Write(archive, index, f"{name} writes the archive")]
    if not _has(opts, "x", "extract", "get"):
        return []
    if _has(opts, "O", "to-stdout", "to-command"):
        return []
    if _has(opts, "transform", "xform", "one-top-level") or not archive or archive == "-" or ":" in archive:
        raise _Unknown(f"{name} -x: the gate cannot list where the archive's members land (stdin, a remote "
                       "archive, or renamed members)")
    dirs = [*opts.get("C", []), *opts.get("directory", [])]
    where = os.path.join(".", *dirs) if dirs else "."
    strip = opts.get("strip-components", ["0"])[-1]
    if not strip.isdigit():
        raise _Unknown(f"{name} --strip-components={strip} is not a number")
    return [Write(where, index, f"{name} -x extracts into it", archive=archive, archive_kind="tar",
                  strip=int(strip))]


def _unzip(name: str, args: list[str]) -> list[Write]:
    archive, where, flat, index, k = "", ".", False, 1, 1
    excluding = False
    while k < len(args):
        a = args[k]
        if a.startswith("-") and len(a) > 1:
            excluding = False
            letters = a[1:]
            for c, letter in enumerate(letters):
                if letter in "pcltvzZT" and not archive:
                    return []  # to stdout, a listing, a test: nothing extracted
                if letter == "j":
                    flat = True
                elif letter == "x":
                    excluding = True
                elif letter in "dP":
                    value = letters[c + 1:] or (args[k + 1] if k + 1 < len(args) else "")
                    k += 0 if letters[c + 1:] else 1
                    if letter == "d":
                        where = value
                    break
        elif not archive:
            archive, index = a, k
        elif excluding:
            pass
        k += 1
    if not archive:
        return []
    if any(c in archive for c in "*?["):
        raise _Unknown("unzip is given an archive name it matches itself")
    return [Write(where, index, "unzip extracts into it", archive=archive, archive_kind="zip", flat=flat)]


_Handler = Callable[[str, list[str]], list[Write]]


def _by_table(name: str, args: list[str]) -> list[Write]:
    """zip's archive (its first operand, `.zip` added as zip adds it) and split's output prefix (its second), the
    operands found with the program's option table (options.operands)."""
    found = operands(list(args), 0) or []
    if name == "zip" and found:
        path = args[found[0]]
        more = [Write(path + ".zip", found[0], "zip writes the archive")] if "." not in os.path.basename(path) else []
        return [Write(path, found[0], "zip writes the archive"), *more]
    if name == "split":
        prefix = args[found[1]] if len(found) > 1 else "x"
        return [Write(prefix + "aa", found[1] if len(found) > 1 else 0, "split writes its pieces here")]
    return []


def _programs() -> dict[str, _Handler]:
    table: dict[str, _Handler] = {n: _simple for n in ("tee", "touch", "mkdir", "truncate", "shred", "rm", "rmdir",
                                                     "unlink")}
    table.update({"dd": _dd, "sed": _sed, "gsed": _sed, "cp": _copy, "mv": _copy, "ln": _copy, "install": _copy,
                  "tar": _tar, "gtar": _tar, "bsdtar": _tar, "unzip": _unzip, "zip": _by_table, "split": _by_table})
    return table


_PROGRAMS = _programs()


def rebase(write: Write, base: str) -> Write:
    """`write` as seen after `cd base`: its relative paths joined to `base`."""
    def join(p: str) -> str:
        return p if os.path.isabs(p) or p.startswith("~") else os.path.join(base, p)
    return replace(write, path=join(write.path), sources=tuple(join(s) for s in write.sources),
                   archive=join(write.archive) if write.archive else "")
