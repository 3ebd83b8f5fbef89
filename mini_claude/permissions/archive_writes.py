"""The writes of the archivers and split, found from their words (writes.py's table hands them these argvs):

- `tar -x` / `unzip`: every member of the archive, under `-C DIR` / `-d DIR` (write_places.py lists the members
  at gate time); `tar -c` / `-r` / `-u`: the archive itself; `zip`: its archive (and ARCHIVE.zip as zip adds it);
- `split` / `csplit`: their pieces, PREFIX + a suffix from its alphabet + `--additional-suffix`: the first piece (for the
  folder), and every secret or protected name a piece could take there (`split -a1 f CLAUDE.m`: its 4th piece is
  CLAUDE.md), found by boundaries.names_made.
"""

from __future__ import annotations

import os
import string

from mini_claude.permissions.boundaries import names_made
from mini_claude.permissions.write_base import UnknownWrite, Write, getopt, has, index_of, table_getopt

__all__ = ["csplit_writes", "split_writes", "tar_writes", "unzip_writes", "zip_writes"]

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


def tar_writes(name: str, args: list[str]) -> list[Write]:
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
    opts, _ = getopt(rest, "fCTXbKNgVLHIF", _TAR_VALUES, _TAR_FLAGS)
    files = [*opts.get("f", []), *opts.get("file", [])]
    archive = files[-1] if files else ""
    index = index_of(args, archive, 1) if archive else 1
    if has(opts, "c", "r", "u", "A", "create", "append", "update", "catenate", "concatenate", "delete"):
        if not archive or archive == "-":
            return []
        return [Write(archive, index, f"{name} writes the archive")]
    if not has(opts, "x", "extract", "get"):
        return []
    if has(opts, "O", "to-stdout", "to-command"):
        return []
    if has(opts, "transform", "xform", "one-top-level") or not archive or archive == "-" or ":" in archive:
        raise UnknownWrite(f"{name} -x: the gate cannot list where the archive's members land (stdin, a remote "
                       "archive, or renamed members)")
    dirs = [*opts.get("C", []), *opts.get("directory", [])]
    where = os.path.join(".", *dirs) if dirs else "."
    strip = opts.get("strip-components", ["0"])[-1]
    if not strip.isdigit():
        raise UnknownWrite(f"{name} --strip-components={strip} is not a number")
    return [Write(where, index, f"{name} -x extracts into it", archive=archive, archive_kind="tar",
                  strip=int(strip))]


def unzip_writes(name: str, args: list[str]) -> list[Write]:
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
        raise UnknownWrite("unzip is given an archive name it matches itself")
    return [Write(where, index, "unzip extracts into it", archive=archive, archive_kind="zip", flat=flat)]


def zip_writes(name: str, args: list[str]) -> list[Write]:
    """zip's archive: its first operand, and ARCHIVE.zip when the name has no dot (zip adds `.zip` then)."""
    parsed = table_getopt(args)
    found = parsed[1] if parsed else []
    if not found:
        return []
    index, path = found[0]
    more = [Write(path + ".zip", index, "zip writes the archive")] if "." not in os.path.basename(path) else []
    return [Write(path, index, "zip writes the archive"), *more]


def split_writes(name: str, args: list[str]) -> list[Write]:
    """split's pieces: PREFIX (its second operand, `x` by default) + a suffix of at least `-a N` letters (2 by
    default; more when there are many pieces) from its alphabet (a-z; digits with `-d`; hex with `-x`) +
    `--additional-suffix`. The first piece stands for the folder; every dangerous name a piece can take there is
    a write of its own."""
    parsed = table_getopt(args)
    if parsed is None:
        return []
    opts, found = parsed
    index, prefix = found[1] if len(found) > 1 else (0, "x")
    length = [*opts.get("a", []), *opts.get("suffix-length", [])]
    if length and not length[-1].isdigit():
        raise UnknownWrite(f"split -a {length[-1]}: a suffix length that is not a number")
    shortest = int(length[-1]) if length else 2
    numeric, hexa = has(opts, "d", "numeric-suffixes"), has(opts, "x", "hex-suffixes")
    alphabet = "".join(dict.fromkeys((string.digits if numeric else "") + (string.hexdigits[:16] if hexa else "")))
    alphabet = alphabet or string.ascii_lowercase
    return _pieces(name, prefix, index, alphabet, shortest, opts.get("additional-suffix", [""])[-1])


def _pieces(name: str, prefix: str, index: int, alphabet: str, shortest: int, extra: str) -> list[Write]:
    """The first piece (standing for the folder) and every secret or protected name a piece can take there."""
    folder, base = os.path.split(prefix)
    out = [Write(prefix + alphabet[0] * shortest + extra, index, f"{name} writes its pieces here")]
    return out + [Write(os.path.join(folder, made), index, f"{name} may name one of its pieces {made}")
                  for made in names_made(base, alphabet, shortest, extra)]


def csplit_writes(name: str, args: list[str]) -> list[Write]:
    """csplit's pieces: `-f PREFIX` (`xx`) + a number of at least `-n N` digits (2), as split's; a `-b FORMAT`
    (a printf format: `%.0d.md` prints `.md`) names them in ways the gate does not work out."""
    opts, _ = getopt(args[1:], "bfn", ("suffix-format", "prefix", "digits"),
                     ("keep-files", "suppress-matched", "quiet", "silent", "elide-empty-files"))
    if has(opts, "b", "suffix-format"):
        raise UnknownWrite("csplit -b names its pieces with a printf format, which the gate does not work out")
    prefix = [*opts.get("f", []), *opts.get("prefix", [])][-1:] or ["xx"]
    digits = [*opts.get("n", []), *opts.get("digits", [])][-1:] or ["2"]
    if not digits[0].isdigit():
        raise UnknownWrite(f"csplit -n {digits[0]}: a number of digits that is not a number")
    return _pieces(name, prefix[0], index_of(args, prefix[0], 0), string.digits, int(digits[0]), "")
