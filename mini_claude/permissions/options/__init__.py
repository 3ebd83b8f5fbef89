"""Option tables of the programs the shell gate knows (spec.py: the format), and what a command's options do."""

from __future__ import annotations

from mini_claude.permissions.options.spec import Found

__all__ = ["option_writes"]


def option_writes(argv: list[str | None], i: int) -> list[Found]:
    """The paths the program at argv[i] writes through its options (`sort -o F`, `git log --output=F`)."""
    return []  # the tables land in this same change (issue 27); until then no option is known to write
