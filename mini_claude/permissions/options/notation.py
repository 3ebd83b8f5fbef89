"""The short notation the option tables are written in (tables_*.py), and its reader.

An option list is one string: each option is its spellings joined by `|` (`-o|--output`); a trailing `=` says it
takes a value (`--opt=v`, `--opt v`, `-ov`, `-o v`), a trailing `?` an optional one (attached only). The lists come
from each program's own `--help` on Debian 12 (scripts/gen_option_tables.py prints them); what an option does beyond
reading and printing is given beside the list, by any of its spellings, and checked when the table is built.
"""

from __future__ import annotations

from mini_claude.permissions.options.spec import Arg, Effect, Opt, ProgramSpec, Style

__all__ = ["CODE", "NET", "READS", "WRITES", "program"]

CODE, NET, READS, WRITES = Effect.CODE, Effect.NET, Effect.READS, Effect.WRITES


def program(name: str, text: str, effects: dict[str, tuple[Effect, str]] | None = None, *,
            style: Style = Style.GETOPT, long_single_dash: bool = False,
            options_after_operands: bool = True) -> ProgramSpec:
    """The table of `name`: the options in `text` (the notation above), each given its effect from `effects`
    (keyed by any spelling: (effect, why, said after the option: "runs a command")). A key that names no option
    of the list is an error, so a typo cannot leave an option unclassified; so is a spelling listed twice (two
    options sharing a prefix would make it ambiguous)."""
    effects = dict(effects or {})
    options: list[Opt] = []
    for token in text.split():
        arg = Arg.REQUIRED if token.endswith("=") else Arg.OPTIONAL if token.endswith("?") else Arg.NO
        names = tuple(token.rstrip("=?").split("|"))
        hits = [effects.pop(n) for n in names if n in effects]
        effect, why = hits[0] if hits else (Effect.NONE, "")
        options.append(Opt(names, arg, effect, why))
    if effects:
        raise ValueError(f"{name}: effects for options not in its list: {sorted(effects)}")
    spellings = [n for o in options for n in o.names]
    if len(spellings) != len(set(spellings)):
        raise ValueError(f"{name}: a spelling listed twice: {sorted({n for n in spellings if spellings.count(n) > 1})}")
    return ProgramSpec(name, style, tuple(options), long_single_dash, options_after_operands)
