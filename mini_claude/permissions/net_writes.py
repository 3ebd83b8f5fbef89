"""The files the download tools write under names the gate cannot know (writes.py's table hands them these argvs).

Their option tables (options/tables_net.py) already make `-O FILE`, `-o FILE`, logs and cookie jars writes of
those paths; what is left is the download that names itself:

- wget saves every download under a name from the URL or the server (`wget http://h/CLAUDE.md`, `-r`, `-x`,
  `--default-page=`, `--content-disposition`), unless `-O FILE` names the one file (`-O -`: standard output) or
  `--spider` only checks (and does not recurse: `--spider -r` saves pages while it crawls, then deletes them).
  With `-b` and no log option it writes `wget-log` here.
- curl writes nothing of its own (`curl URL` prints), but `-O` / `--remote-name` / `--remote-name-all` / `-J` /
  `--remote-header-name` name the file from the URL or the server, and `-o` with `#1` from its URL glob; `-o F`
  under `--output-dir D` writes D/F.

Options are read with each program's table (abbreviations and clusters as the program reads them: `-sO`,
`--remote-name-a`); an option the table does not know makes the write unknown too.
"""

from __future__ import annotations

import os
import re

from mini_claude.permissions.options import table_for
from mini_claude.permissions.options.parse import Seen, parse
from mini_claude.permissions.options.spec import Effect
from mini_claude.permissions.write_base import UnknownWrite, Write

__all__ = ["curl_writes", "wget_writes"]

_WGET_NAMELESS = "wget saves the download under a name from the URL or the server, which the gate cannot know"
_WGET_RECURSES = frozenset({"-r", "-m", "-p"})
_WGET_EXITS = frozenset({"-h", "-V"})
_WGET_RENAMES = frozenset({"--backups", "-K"})  # keep a renamed copy of a file they overwrite
_CURL_REMOTE = frozenset({"-O", "--remote-name-all", "-J"})
_URL_GLOB_REF = re.compile(r"#\d")


def _read(name: str, args: list[str]) -> tuple[dict[str, list[str]], list[int]]:
    """The options of `args`, each by its first spelling in the table with the paths given to it, and the indices
    of its operands."""
    spec = table_for(name)
    if spec is None:
        return {}, []
    seen: Seen = []
    operands: list[int] = []
    found = parse(spec, list(args), 0, seen=seen, operands=operands)
    unknown = next((f for f in found if f.effect is Effect.UNKNOWN), None)
    if unknown is not None:
        raise UnknownWrite(f"{unknown.why}, so the gate cannot know what it writes")
    options: dict[str, list[str]] = {option.names[0]: [] for _, option, _ in seen}
    for f in found:  # a word holds at most one option with a value: the last of its cluster
        option = next(o for k, o, _ in reversed(seen) if k == f.index)
        if f.path is not None:
            options[option.names[0]].append(f.path)
    return options, operands


def wget_writes(name: str, args: list[str]) -> list[Write]:
    """wget: a download it names itself is an unknown write; `-O FILE` (the table's write) and `--spider` are not."""
    options, operands = _read("wget", args)
    if options.keys() & _WGET_EXITS or not (operands or "-i" in options):
        return []
    out = [Write("wget-log", 0, "wget -b writes its log here")] if "-b" in options and not \
        options.keys() & {"-o", "-a"} else []
    if "--spider" in options and not options.keys() & _WGET_RECURSES:
        return out
    if "-O" not in options:
        raise UnknownWrite(_WGET_NAMELESS)
    if options.keys() & _WGET_RENAMES:
        raise UnknownWrite("wget --backups / -K keeps renamed copies of the files it overwrites, which the gate "
                           "does not list")
    return out


def curl_writes(name: str, args: list[str]) -> list[Write]:
    """curl: the remote-name options are unknown writes; `-o F` with `--output-dir D` writes D/F too."""
    options, _ = _read("curl", args)
    if options.keys() & _CURL_REMOTE:
        raise UnknownWrite("curl -O / -J names the file it saves from the URL or the server, which the gate "
                           "cannot know")
    outputs = [path for path in options.get("-o", []) if path != "-"]
    if any(_URL_GLOB_REF.search(path) for path in outputs):
        raise UnknownWrite("curl -o names its file from the URL (#1), which the gate cannot know")
    return [Write(os.path.join(folder, path), 0, f"curl --output-dir {folder} -o writes it")
            for folder in options.get("--output-dir", [])[-1:] for path in outputs]
