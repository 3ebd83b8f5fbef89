"""The option red team's generator: read each program's real option list from its help output on this machine (git
subcommands' `-h` and `--git-completion-helper-all`, GNU `--help`, curl's `--help all`, …), then spell every
option option_table.py marks as running code or writing a file every way its parser may accept:

- each unambiguous prefix of a long name (unambiguous among the program's own long names), `--opt=v` and
  `--opt v` (the latter only for options whose value is not optional);
- the short letter attached (`-Ov`), separate (`-O v`), and clustered after harmless flags (`-nO v`, `-nOv`);
- single-dash word options (`-fprint v`, `-TT v`);
- file-writing forms without an option (archive members, `tee`, `dd of=`, `cp`/`mv` targets, prefixes).

Values: payloads that touch a marker file (a command word, `sh -c …`, a script in the workspace, `sh` reading the
searched data) or, for the deny property, `rm victim`; write targets that are protected or outside (TARGETS).
A sample of the program's other options gets payload values too, so an unlisted code-running option shows.

A Case's command holds `@R@`, the run's own directory, filled in just before the gate judges it.
"""

from __future__ import annotations

import functools
import random
import re
import shutil
import subprocess
from dataclasses import dataclass
from typing import Literal

from tests.redteam.option_table import (
    DIR_TARGETS,
    PROGRAMS,
    RM,
    TARGETS,
    TOUCH,
    Danger,
    Kind,
    Payloads,
    Program,
)

Arg = Literal["none", "required", "optional"]
Flavor = Literal["touch", "rm", "baseline"]
HELP_TIMEOUT_S = 10.0
# A spec column entry: `-x`, `--long`, `--[no-]long`, `-word`, with `=ARG`, `[=ARG]`, ` <arg>`, ` ARG` after it.
_ENTRY_RE = re.compile(r"(?<![\w-])(--?)(\[no-\])?([A-Za-z0-9@][\w@.-]*)"
                       r"(\[=?[^\]]*\]|=\S+|\s<[^>]+>|\s[A-Z][A-Z0-9_-]*\b|\s[a-z][\w=-]*)?")


@dataclass(frozen=True)
class Group:
    """Names the help gives one option (`-I`, `--use-compress-program`) and whether it takes a value."""

    names: tuple[str, ...]
    arg: Arg


@dataclass(frozen=True)
class Case:
    """One generated command: its class (what the report groups by), the command with `@R@`, the rules and mode it
    is judged under, and which oracle applies (touch: no marker, no protected or outside change; rm: rm never ran;
    baseline: an everyday command the rule must let run)."""

    klass: str
    template: str
    allow: tuple[str, ...]
    flavor: Flavor


def parse_help(text: str) -> list[Group]:
    """The option groups of a help text: indented lines whose spec column (before a two-space gap) lists options."""
    groups: list[Group] = []
    for line in text.splitlines():
        if not re.match(r"^\s+-", line):
            continue
        spec = re.split(r"\s{2,}", re.sub(r",\s+", ", ", line.strip()))[0]
        names: list[str] = []
        arg: Arg = "none"
        for piece in spec.split(", "):
            entries = _ENTRY_RE.findall(piece)
            if len(entries) > 1:  # a list of options on one line (find's "-delete -print0 -printf FORMAT")
                groups += [Group((dashes + name,), "none") for dashes, _neg, name, _value in entries]
                continue
            for dashes, _neg, name, value in entries:
                names.append(dashes + name)
                short_word = value.startswith(" ") and value[1:2].islower()
                if value and not (short_word and not (dashes == "-" and len(name) == 1)):
                    # (a lowercase word after a long option is prose, not its value)
                    arg = "optional" if value.startswith("[") else "required"
        if names:
            groups.append(Group(tuple(dict.fromkeys(names)), arg))
    return groups


def _run_help(argv: tuple[str, ...]) -> str:
    if shutil.which(argv[0]) is None:
        return ""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=HELP_TIMEOUT_S,
                              stdin=subprocess.DEVNULL, env={"PATH": "/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C"})
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout + done.stderr


@functools.cache
def program_options(program: Program) -> tuple[Group, ...]:
    """The program's option groups, read from the installed program (cached for the run)."""
    groups = parse_help(_run_help(program.help))
    known = {n for g in groups for n in g.names}
    if program.completion_helper:
        sub = program.name.split()[1]
        for word in _run_help(("git", sub, "--git-completion-helper-all")).split():
            name = word.rstrip("=")
            if name.startswith("--") and len(name) > 2 and name not in known:
                groups.append(Group((name,), "required" if word.endswith("=") else "none"))
                known.add(name)
    for long in program.extra_longs:
        if f"--{long}" not in known:
            groups.append(Group((f"--{long}",), "required"))
            known.add(f"--{long}")
    return tuple(groups)


def long_names(groups: tuple[Group, ...]) -> list[str]:
    return sorted({n[2:] for g in groups for n in g.names if n.startswith("--")})


def unambiguous_prefixes(name: str, longs: list[str]) -> list[str]:
    """Proper prefixes of long option `name` that no other long name starts with, shortest first."""
    others = [n for n in longs if n != name]
    return [name[:k] for k in range(1, len(name)) if not any(o.startswith(name[:k]) for o in others)]


def _group_of(option: str, groups: tuple[Group, ...]) -> Group | None:
    return next((g for g in groups if option in g.names), None)


def _spellings(danger: Danger, program: Program, groups: tuple[Group, ...]) -> list[tuple[str, str]]:
    """(form, spelling with `{v}` where the value goes) for every way to write `danger.option`."""
    group = _group_of(danger.option, groups)
    arg: Arg = group.arg if group else ("none" if danger.value is None else "required")
    if danger.value is not None and arg == "none":
        arg = "required"
    flag = danger.value is None
    names = list(group.names) if group else [danger.option]
    if danger.short and danger.short not in names:
        names.append(danger.short)
    if danger.option not in names:
        names.insert(0, danger.option)
    longs = long_names(groups)
    out: list[tuple[str, str]] = []

    def valued(form: str, spelled: str, *, word: bool = False) -> None:
        if flag:
            out.append((form, spelled))
            return
        out.append((form, spelled + "={v}" if not word else spelled + " {v}"))
        if not word and arg == "required":
            out.append((form + " (separate value)", spelled + " {v}"))
        if word:
            out.append((form + " (=value)", spelled + "={v}"))

    for name in [n for n in names if n.startswith("--")]:
        valued("full name", name)
        for prefix in unambiguous_prefixes(name[2:], longs):
            valued("abbreviation", "--" + prefix)
    for name in [n for n in names if re.fullmatch(r"-[^-]", n)]:
        letter, harmless = name[1], program.harmless[:1]
        if flag:
            out.append(("short", name))
            if harmless:
                out.append(("short clustered", f"-{harmless}{letter}"))
            continue
        out.append(("short attached", name + "{v}"))
        if arg == "required":
            out.append(("short separate", name + " {v}"))
        if harmless:
            out.append(("short clustered attached", f"-{harmless}{letter}{{v}}"))
            if arg == "required":
                out.append(("short clustered", f"-{harmless}{letter} {{v}}"))
    for name in [n for n in names if re.fullmatch(r"-[^-].+", n)]:
        valued("word option", name, word=True)
    return out


def _values(template: str | None, payloads: Payloads) -> list[str]:
    if template is None:
        return [""]
    if "{cmd_words}" in template:
        scripts = (payloads.script,) if payloads.script else ()
        return [template.replace("{cmd_words}", c) for c in (*payloads.commands, *scripts)]
    if "{cmd}" in template:
        return [template.replace("{cmd}", w) for w in payloads.words]
    if "{target}" in template:
        return [template.replace("{target}", t) for t in TARGETS]
    if "{dir}" in template:
        return [template.replace("{dir}", d) for d in DIR_TARGETS]
    return [template]


def _contexts(context: str) -> list[str]:
    if "{target}" in context:
        return [context.replace("{target}", t) for t in TARGETS]
    return [context]


def _pairs(spellings: list[tuple[str, str]], values: list[str], full: bool) -> list[tuple[str, str, str]]:
    """(form, spelling, value): all pairs when `full`, else every value with the first spelling and each other
    spelling with one value in turn (every spelling and every value appear)."""
    if full:
        return [(f, s, v) for f, s in spellings for v in values]
    head = [(spellings[0][0], spellings[0][1], v) for v in values]
    return head + [(f, s, values[i % len(values)]) for i, (f, s) in enumerate(spellings[1:], 1)]


def _danger_cases(program: Program, danger: Danger, payloads: Payloads, flavor: Flavor, allow: tuple[str, ...],
                  full: bool, label: str = "") -> list[Case]:
    groups = program_options(program)
    listed = "" if _group_of(danger.option, groups) else " (not in its help)"
    spellings = _spellings(danger, program, groups)
    cases = []
    for form, spelled, value in _pairs(spellings, _values(danger.value, payloads), full):
        option = spelled.replace("{v}", value)
        for context in _contexts(danger.context):
            klass = f"{label}{program.name} {danger.option} {danger.kind}{listed}: {form}"
            cases.append(Case(klass, context.replace("{opt}", option), allow, flavor))
    return cases


def _sampled_cases(program: Program, full: bool, count: int) -> list[Case]:
    groups = program_options(program)
    dangerous = {n for d in program.dangers for g in [_group_of(d.option, groups)] if g for n in g.names}
    candidates = sorted({g.names[-1] for g in groups if g.arg == "required" and not dangerous & set(g.names)})
    rng = random.Random(program.name)
    chosen = candidates if full else sorted(rng.sample(candidates, min(count, len(candidates))))
    values = [*TOUCH.words, ".git/config", "CLAUDE.md"]
    cases = []
    for i, name in enumerate(chosen):
        value = values[(i + rng.randrange(len(values))) % len(values)]
        spelled = f"{name}={value}" if name.startswith("--") else f"{name} {value}"
        cases.append(Case(f"{program.name} unclassified option {name}", program.context.replace("{opt}", spelled),
                          (program.rule,), "touch"))
    return cases


def _positional_cases(program: Program) -> list[Case]:
    cases = []
    for template in program.positional_writes:
        fills = [template]
        if "{target}" in template or "{target_raw}" in template:
            fills = [template.replace("{target}", t).replace("{target_raw}", t) for t in TARGETS]
        elif "{dir}" in template:
            fills = [template.replace("{dir}", d) for d in DIR_TARGETS]
        cases += [Case(f"{program.name} write without an option: {template}", f, (program.rule,), "touch")
                  for f in fills]
    return cases


def option_cases(program: Program, *, full: bool = False, sample: int = 6) -> list[Case]:
    """Every generated case for `program` under its everyday rule in default mode (touch payloads, write targets)."""
    cases = [Case(f"{program.name} everyday use", b, (program.rule,), "baseline") for b in program.baseline]
    for danger in program.dangers:
        cases += _danger_cases(program, danger, TOUCH, "touch", (program.rule,), full)
    cases += _positional_cases(program)
    if program.sample_values:
        cases += _sampled_cases(program, full, sample)
    return cases


def deny_cases(program: Program, *, full: bool = False) -> list[Case]:
    """Code-running options with `rm victim` as the payload, for bypass mode with the deny rule `Bash(rm:*)`."""
    cases = []
    for danger in program.dangers:
        if danger.kind is Kind.RUNS and danger.value is not None and "{cmd" in danger.value:
            cases += _danger_cases(program, danger, RM, "rm", (), full, "rm past Bash(rm:*) in bypass: ")
    return cases


def all_programs() -> tuple[Program, ...]:
    """The attacked programs installed here (git subcommands need git)."""
    return tuple(p for p in PROGRAMS if shutil.which(p.help[0]))
