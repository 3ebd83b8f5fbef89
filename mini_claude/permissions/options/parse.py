"""Read a command's options the way its own option parser does (Style.GETOPT, Style.EXACT), against its table.

`parse(spec, argv, i)` walks the words after the program at argv[i] and returns what each option word does
(`Found`; options that do nothing the gate cares about are left out). What it follows, as getopt_long and argp do:

- `--opt=v` and `--opt v` for an option that requires a value; an optional value only attached (`--opt=v`, `-ov`).
- Long options by any unambiguous prefix (GETOPT): an exact name wins; a prefix shared by several spellings of the
  same option is that option; a prefix of two different options is ambiguous, which asks (the program refuses it
  too, but the gate cannot promise how every version resolves it). EXACT programs take whole names only.
- Short options clustered (`-abc`) with a value attached (`-ofile`) or in the next word (`-o file`). A table may
  name a multi-letter short option (`zip -TT`): the longest spelling that starts the word wins.
- `--` ends the options; an operand does not, unless the spec says the program stops at its first operand
  (`options_after_operands=False`: env, xargs, the wrappers).
- A word the gate cannot know (None) where an option may stand is UNKNOWN: it may be any option.

Measured on this machine (Debian 12), each with a real run: GNU tar, sort, split, grep, sed, xargs, env, timeout,
head and wget accept unambiguous prefixes (`tar --to-com=CMD` ran CMD, `sort --compress-prog=cat`, `split --fil=CMD`,
`grep --fixed-str`, `xargs --max-a 1`, `env --unse=X`, `timeout --kill-a=1`, `wget --versi`); util-linux ionice
calls `--clas` ambiguous (`--class`, `--classdata`), as the resolver here does; zip 3.0 accepts prefixes too
(`zip --unzip-com=CMD` ran CMD) and takes `-TT=CMD` as well as `-TT CMD`; curl 7.88 accepts prefixes (`--versio`,
`--conf FILE` is `--config`) and calls `--outp` ambiguous, but has no `--opt=v` form (reading one as the option is
the careful side); ripgrep 13 (clap) and jq 1.6 take whole names only (`rg --pr=cat`, `jq --ta` are errors), and so
does `find`, whose primaries are single-dash words (`-name`, `-newer`). flock takes `-c CMD` only after its file,
outside getopt (code_runners reads that).
"""

from __future__ import annotations

from collections.abc import Sequence

from mini_claude.permissions.options.spec import Arg, Effect, Found, Opt, ProgramSpec, Style

__all__ = ["Seen", "parse", "resolve_long"]

_UNKNOWN_WORD = "an argument the gate cannot know (it may be any option)"


def resolve_long(spec: ProgramSpec, name: str) -> tuple[Opt | None, str]:
    """The option `name` (a long spelling, `--to-com`) stands for, and for None why not ("" when unknown)."""
    exact = _index(spec).get(name)
    if exact is not None:
        return exact, ""
    if spec.style is Style.EXACT:
        return None, ""
    matches = {id(o): o for o in spec.options for n in o.names if _is_long(spec, n) and n.startswith(name)}
    if len(matches) == 1:
        return next(iter(matches.values())), ""
    if len(matches) > 1:
        spellings = sorted(n for o in matches.values() for n in o.names if n.startswith(name))
        return None, f"{name} is ambiguous ({', '.join(spellings[:4])})"
    return None, ""


Seen = list[tuple[int, Opt, str]]  # every option resolved: its word's index, the option, the spelling used


def parse(spec: ProgramSpec, argv: Sequence[str | None], i: int, end: int | None = None,
          seen: Seen | None = None, operands: list[int] | None = None) -> list[Found]:
    """What the options of the program at argv[i] do (see the module docstring); words argv[i+1:end]. `seen`,
    when given, gets every option resolved, harmless ones included; `operands` the index of every operand."""
    found: list[Found] = []
    seen = [] if seen is None else seen
    stop = len(argv) if end is None else end
    k = i + 1
    operands_only = False
    while k < stop:
        word = argv[k]
        if word is None:
            if not operands_only:
                found.append(Found(k, Effect.UNKNOWN, f"{spec.name} gets {_UNKNOWN_WORD}"))
            if operands is not None:
                operands.append(k)
            k += 1
            continue
        if operands_only or word == "-" or not word.startswith("-"):
            if operands is not None:
                operands.append(k)
            operands_only = operands_only or not spec.options_after_operands
            k += 1
            continue
        if word == "--":
            operands_only = True
            k += 1
            continue
        if word.startswith("--") or spec.long_single_dash:
            k = _long(spec, argv, k, stop, found, seen)
        else:
            k = _short(spec, argv, k, stop, found, seen)
    return found


def _long(spec: ProgramSpec, argv: Sequence[str | None], k: int, stop: int, found: list[Found], seen: Seen) -> int:
    word = argv[k] or ""
    if spec.long_single_dash and not word.startswith("--"):
        name, eq, value = word, "", ""  # `find -newer F`: whole words, no `=` form
        option, why = _index(spec).get(word), ""
    else:
        name, eq, value = word.partition("=")
        option, why = resolve_long(spec, name)
    if option is None:
        found.append(Found(k, Effect.UNKNOWN, f"{spec.name} {name}: {why or 'an option the gate does not know'}"))
        return k + 1
    seen.append((k, option, name))
    if option.arg is Arg.REQUIRED and not eq:
        if k + 1 < stop:
            _record(spec, option, name, k, argv[k + 1], found)
            return k + 2
        _record(spec, option, name, k, None, found)
        return k + 1
    _record(spec, option, name, k, value if eq else "", found)
    return k + 1


def _short(spec: ProgramSpec, argv: Sequence[str | None], k: int, stop: int, found: list[Found], seen: Seen) -> int:
    word = argv[k] or ""
    shorts = _shorts(spec)
    j = 1
    while j < len(word):
        spelling = next((s for s in shorts if word.startswith(s[1:], j)), None)
        if spelling is None:
            found.append(Found(k, Effect.UNKNOWN, f"{spec.name} -{word[j]} (in {word}): an option the gate does "
                                                  "not know"))
            return k + 1
        option = _index(spec)[spelling]
        seen.append((k, option, spelling))
        j += len(spelling) - 1
        if option.arg is Arg.NO:
            continue
        rest = word[j:]
        if rest:
            _record(spec, option, spelling, k, rest, found)
            if rest.startswith("=") and len(rest) > 1:  # zip reads `-lf=F` as `-lf F`: judge both readings
                _record(spec, option, spelling, k, rest[1:], found)
            return k + 1
        if option.arg is Arg.REQUIRED:
            if k + 1 < stop:
                _record(spec, option, spelling, k, argv[k + 1], found)
                return k + 2
            _record(spec, option, spelling, k, None, found)
        else:
            _record(spec, option, spelling, k, "", found)
        return k + 1
    return k + 1


def _record(spec: ProgramSpec, option: Opt, spelled: str, k: int, value: str | None, found: list[Found]) -> None:
    if option.effect is Effect.NONE:
        return
    full = max(option.names, key=len)
    what = spelled if spelled == full else f"{spelled} is {full}, which"
    why = f"{spec.name} {what} {option.why}" if option.why else f"{spec.name} {spelled}"
    if option.effect in (Effect.READS, Effect.WRITES):
        found.append(Found(k, option.effect, why, value if value != "" else None))
    else:
        found.append(Found(k, option.effect, why))


def _is_long(spec: ProgramSpec, name: str) -> bool:
    return name.startswith("--") or (spec.long_single_dash and len(name) > 2)


_CACHE: dict[int, tuple[ProgramSpec, dict[str, Opt], list[str]]] = {}


def _cached(spec: ProgramSpec) -> tuple[ProgramSpec, dict[str, Opt], list[str]]:
    entry = _CACHE.get(id(spec))
    if entry is None or entry[0] is not spec:
        index = {n: o for o in spec.options for n in o.names}
        shorts = sorted((n for n in index if n.startswith("-") and not _is_long(spec, n)), key=len, reverse=True)
        entry = _CACHE[id(spec)] = (spec, index, shorts)
    return entry


def _index(spec: ProgramSpec) -> dict[str, Opt]:
    return _cached(spec)[1]


def _shorts(spec: ProgramSpec) -> list[str]:
    """The short spellings (`-o`, and multi-letter ones such as zip's `-TT`), longest first."""
    return _cached(spec)[2]
