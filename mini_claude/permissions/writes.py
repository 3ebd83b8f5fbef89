"""The files a shell command writes, found from its words: what the gate judges as writes of those paths.

A write is anything that creates, truncates, appends to, replaces or deletes a file. This module owns where such
writes hide in one simple command's argv (bash_tree.py finds redirections; shell.py carries both per part):

- `tee FILES`, `dd of=F`, `touch`, `mkdir`, `truncate`, `rm` / `rmdir` / `unlink` / `shred` (deleting a file is a
  write of it), `sed -i FILES`;
- `cp` / `mv` / `install` / `ln` / `link`: the last operand, or `-t DIR`; a directory target means the names under
  it, and a copied or moved tree lands there whole (its members are listed at gate time); `mv`'s sources are
  deleted; a link's source gets another name (`ln`, `cp -l` / `-s`: a write of it too); `-b` adds each written
  file's backup, FILE + suffix (`-S`, else $SIMPLE_BACKUP_SUFFIX, else `~`);
- the archivers and split (archive_writes.py: `tar -x` / `unzip` members, archives, split's piece names) and the
  download tools (net_writes.py: a file wget or curl names from the URL is an unknown write);
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
from dataclasses import replace

from mini_claude.permissions.archive_writes import (
    csplit_writes,
    split_writes,
    tar_writes,
    unzip_writes,
    zip_writes,
)
from mini_claude.permissions.code_runners import is_wrapper
from mini_claude.permissions.net_writes import curl_writes, wget_writes
from mini_claude.permissions.options import option_writes
from mini_claude.permissions.options.spec import Effect
from mini_claude.permissions.write_base import (
    Opts,
    UnknownWrite,
    Write,
    getopt,
    has,
    index_of,
    is_device,
    shell_path,
    table_getopt,
)

__all__ = ["Write", "is_device", "program_writes", "rebase", "shell_path"]

_PURE_GLOB_RE = re.compile(r"^[^\s$`'\"\\{}~]*[*?\[][^\s$`'\"\\{}~]*$")
_FINDERS_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_APPENDERS = frozenset({"xargs", "parallel"})


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
        found, unknown = _one_program(words, list(raws[start:]), start, _backup_suffix(argv[:start]))
        if chdir and any(not os.path.isabs(w.path) and not w.path.startswith("~") for w in found):
            unknown = unknown or "a wrapper runs it in another directory"
        writes.extend(replace(w, glob=True) if glob else w for w in found)
        why = why or unknown
    return writes, why


def _backup_suffix(before: Sequence[str | None]) -> tuple[str, ...]:
    """The suffix of a simple backup without `-S`: $SIMPLE_BACKUP_SUFFIX as assigned before the program (`X=1 cp`,
    `env X=1 cp`), else as the gate's environment holds it, else `~`."""
    assigned = [w.split("=", 1)[1] for w in before if w and w.startswith("SIMPLE_BACKUP_SUFFIX=")]
    if assigned:
        return (assigned[-1] or "~",)
    return tuple(dict.fromkeys(("~", os.environ.get("SIMPLE_BACKUP_SUFFIX") or "~")))


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


def _one_program(argv: list[str | None], raws: list[str], base: int, default_backup: tuple[str, ...]
                 ) -> tuple[list[Write], str]:
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
        found_writes = _copy(name, paths, default_backup) if name in _COPIERS else handler(name, paths)
    except UnknownWrite as exc:
        return writes, str(exc)
    return writes + [replace(w, index=base + w.index) for w in found_writes], unknown


def _operand_writes(name: str, args: list[str], short: str, long: Sequence[str], why: str,
                    flags: Sequence[str] = ()) -> list[Write]:
    opts, operands = getopt(args[1:], short, long, flags)
    tree = name in ("rm",) and has(opts, "r", "R", "recursive")
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
    opts, operands = getopt(args[1:], "efl", ("expression", "file", "line-length"),
                            ("in-place", "null-data", "separate", "sandbox", "posix", "debug", "regexp-extended",
                             "follow-symlinks", "unbuffered", "quiet", "silent"), short_optional="i")
    suffixes = [*opts.get("i", []), *opts.get("in-place", [])]
    if not suffixes:
        return []
    files = operands if has(opts, "e", "f", "expression", "file") else operands[1:]
    out = [Write(path, k, f"{name} -i edits it") for k, path in files]
    for suffix in (s for s in suffixes if s):
        if "/" in suffix or "*" in suffix:
            raise UnknownWrite(f"{name} -i{suffix} writes a backup whose place the gate does not work out")
        out += [Write(path + suffix, k, f"{name} -i{suffix} writes its backup") for k, path in files]
    return out


_Handler = Callable[[str, list[str]], list[Write]]
_COPIERS = ("cp", "mv", "ln", "install", "link")
_INSTALL = ("tSmog", ("target-directory", "suffix", "mode", "owner", "group", "strip-program"),
            ("no-target-directory", "directory", "backup", "verbose", "preserve-timestamps", "compare", "strip"))
# --backup=CONTROL: the kinds whose backups are only ever numbered (FILE.~N~, a harmless name) or none at all
_NO_SIMPLE_BACKUP = frozenset({"none", "off", "numbered", "t"})
_CONTROLS = ("none", "off", "simple", "never", "existing", "nil", "numbered", "t")


def _copy(name: str, args: list[str], default_backup: tuple[str, ...] = ("~",)) -> list[Write]:
    """cp / mv / ln / install / link: the target (a directory target: the sources' names under it), mv's sources;
    a link's sources (ln, link, cp -l / -s: each gets another name, which may write it later); with a backup
    option, every file written also gets a backup named FILE + suffix (-S, else `default_backup`)."""
    if name == "link":
        return [Write(args[-1], len(args) - 1, "link makes it"),
                Write(args[1], 1, "link gives it another name (a hard link)", linked=True)] if len(args) == 3 else []
    parsed = table_getopt(args) if name != "install" else getopt(args[1:], *_INSTALL)
    opts, operands = parsed if parsed is not None else ({}, [])
    if name == "install" and has(opts, "d", "directory"):
        return [Write(path, k, "install -d creates it") for k, path in operands]
    targets = [*opts.get("t", []), *opts.get("target-directory", [])]
    if len(targets) > 1:
        raise UnknownWrite(f"{name} is given more than one target directory")
    if targets:
        target, sources, surely_dir = targets[0], operands, True
        index = index_of(args, targets[0], 1)
    elif not operands or (len(operands) == 1 and name != "ln"):
        return []
    elif len(operands) == 1:  # `ln -s TARGET`: the link is made here, under the target's name
        target, sources, surely_dir = ".", operands, True
        index = operands[0][0]
    else:
        index, target = operands[-1]
        sources, surely_dir = operands[:-1], len(operands) > 2
    if has(opts, "T", "no-target-directory"):
        surely_dir = False
        sources = sources[:1]
    tree = name == "mv" or (name == "cp" and has(opts, "r", "R", "a", "recursive", "archive"))
    verb = {"cp": "cp copies", "mv": "mv moves", "ln": "ln links", "install": "install copies"}[name]
    out = [Write(target, index, f"{verb} into it", tuple(p for _, p in sources), tree, surely_dir,
                 backups=_backups(name, opts, default_backup))]
    if name == "mv":
        out += [Write(path, k, "mv moves it away") for k, path in sources]
    if name == "ln" or (name == "cp" and has(opts, "l", "link", "s", "symbolic-link")):
        symbolic = has(opts, "s", "symbolic", "symbolic-link")
        out += [Write(path, k, f"{name} gives it another name ({'a symbolic' if symbolic else 'a hard'} link)",
                      tree=tree, linked=True) for k, path in sources]
        if symbolic:  # a relative link is read from the link's own folder
            out += [Write(os.path.join(folder, path), k, f"{name} makes a symbolic link to it", linked=True)
                    for k, path in sources if not os.path.isabs(path) and not path.startswith("~")
                    for folder in dict.fromkeys((target, os.path.dirname(target))) if folder]
    return out


def _backups(name: str, opts: Opts, default: tuple[str, ...]) -> tuple[str, ...]:
    """The suffixes of the simple backups `-b` / `--backup[=CONTROL]` make (FILE + suffix), none without them."""
    controls = [c for c in opts.get("backup", []) if c]
    if not has(opts, "b", "backup"):
        return ()
    if controls:
        kinds = {c for c in _CONTROLS if c.startswith(controls[-1])}
        if controls[-1] in _CONTROLS:
            kinds = {controls[-1]}
        if kinds and kinds <= _NO_SIMPLE_BACKUP:
            return ()
    given = [*opts.get("S", []), *opts.get("suffix", [])]
    return (given[-1],) if given else default


def _programs() -> dict[str, _Handler]:
    table: dict[str, _Handler] = {n: _simple for n in ("tee", "touch", "mkdir", "truncate", "shred", "rm", "rmdir",
                                                     "unlink")}
    table.update({"dd": _dd, "sed": _sed, "gsed": _sed, "tar": tar_writes, "gtar": tar_writes,
                  "bsdtar": tar_writes, "unzip": unzip_writes, "zip": zip_writes, "split": split_writes, "csplit": csplit_writes,
                  "wget": wget_writes, "curl": curl_writes})
    table.update({n: _copy for n in _COPIERS})
    return table


_PROGRAMS = _programs()


def rebase(write: Write, base: str) -> Write:
    """`write` as seen after `cd base`: its relative paths joined to `base`."""
    def join(p: str) -> str:
        return p if os.path.isabs(p) or p.startswith("~") else os.path.join(base, p)
    return replace(write, path=join(write.path), sources=tuple(join(s) for s in write.sources),
                   archive=join(write.archive) if write.archive else "")
