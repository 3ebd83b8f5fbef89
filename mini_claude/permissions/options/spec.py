"""What the gate knows of a program's options: each spelling, whether it takes a value, and what it does.

A program's table (`ProgramSpec`) lists every option the gate has classified. An argument-blind allow rule
(`Bash(sort:*)`) covers an invocation only when every option in it resolves, the way that program's own option
parser resolves it, to an option of the table whose effect the rule may let through; anything else asks.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, StrEnum

__all__ = ["Arg", "Effect", "Found", "Opt", "ProgramSpec", "Style"]


class Effect(StrEnum):
    """What an option does, beyond changing how the program reads and prints."""

    NONE = "none"        # changes only how it reads or prints (`-n`, `--count`, `--format=%H`)
    READS = "reads"      # its value is a path the program reads (`--file=PATTERNS`, `-f FILE`)
    WRITES = "writes"    # its value is a path the program writes (`-o FILE`, `--output=FILE`)
    CODE = "code"        # it runs code: its value names a program or holds a script (`--pre=CMD`)
    NET = "net"          # it talks to the network (`--upload-pack` aside: that is CODE)
    UNKNOWN = "unknown"  # not in the table, or an abbreviation the gate cannot resolve: asks


class Arg(Enum):
    """Whether an option takes a value, as the program's parser sees it."""

    NO = "no"              # a flag
    REQUIRED = "required"  # `--opt=v`, `--opt v`, `-ov`, `-o v`
    OPTIONAL = "optional"  # only attached: `--opt=v`, `-ov` (getopt's `::`, git's PARSE_OPT_OPTARG)


class Style(StrEnum):
    """How a program's option parser reads its argv."""

    GETOPT = "getopt"    # getopt_long / argp: any unambiguous prefix of a long option (an exact name wins),
                         # `--opt=v` and `--opt v`, short options clustered (`-abc`) and with attached values
    GIT = "git"          # git's parse-options: as GETOPT, and `--no-opt` negations (also abbreviable)
    EXACT = "exact"      # whole long names only (clap, Go's flag package, hand-written parsers)


@dataclass(frozen=True)
class Opt:
    """One option: its spellings (`-o`, `--output`), its value, what it does, and why (for the user)."""

    names: tuple[str, ...]
    arg: Arg = Arg.NO
    effect: Effect = Effect.NONE
    why: str = ""


@dataclass(frozen=True)
class ProgramSpec:
    """Every option of one program (or one git subcommand) the gate has classified."""

    name: str
    style: Style
    options: tuple[Opt, ...]
    long_single_dash: bool = False  # long options start with one dash (`find -newer`, Go's `-flag`)
    options_after_operands: bool = True  # GNU permutes: options may follow operands (until `--`)


@dataclass(frozen=True)
class Found:
    """What the gate found in one argv word of a command: the word's index in the argv, what it does, why (for the
    user: `tar --to-com is --to-command, which runs a command`), and for READS / WRITES the path named (None:
    a value the gate cannot know)."""

    index: int
    effect: Effect
    why: str
    path: str | None = None
