"""The little languages some programs take as an argument, read just far enough to tell whether a script can start
a command: awk programs (`system()`, pipes to or from commands, extensions) and sed scripts (GNU sed's `e` command
and `s///e` flag; `w`/`W` writes). A script the reader cannot follow counts as one that can (fail closed).
code_runners.py uses these.
"""

from __future__ import annotations

import re

__all__ = ["awk_runs_code", "sed_effects"]

# `system(`, `cmd | getline`, `print | "cmd"`, `|&` (gawk coprocess), `@load`/`@include` (gawk extensions, files).
_AWK_CODE_RE = re.compile(r"system|\||@load|@include")


_AWK_WRITES_RE = re.compile(r"\bprintf?\b[^;{}\n]*>")


def awk_writes(program: str) -> bool:
    """Can this awk program write a file (`print > "F"`, `printf ... >> F`)? A `>` anywhere in a print statement
    counts (telling a redirection from a parenthesised comparison needs a full parser)."""
    return _AWK_WRITES_RE.search(program) is not None


def awk_runs_code(program: str) -> bool:
    """Can this awk program start a command? (`||` counts too: telling it from a pipe needs a full parser.)"""
    return _AWK_CODE_RE.search(program) is not None


_SED_NO_ARG = frozenset("=dDgGhHxnNpPzFlLqQ")
_SED_TO_EOL = frozenset("aicrRwWe#")  # text, file name or command up to the end of the line
_SED_LABEL = frozenset("btTv")


class _Unreadable(Exception):
    pass


def sed_effects(script: str) -> set[str] | None:
    """What a sed script can do beyond editing its output: {"code"} (the `e` command, `s///e`), {"write"} (`w`,
    `W`, `s///w`), both or neither; None when the script cannot be read (treat it as able to do anything)."""
    try:
        return _SedReader(script).read()
    except (_Unreadable, IndexError):
        return None


class _SedReader:
    def __init__(self, script: str) -> None:
        self.s = script
        self.i = 0
        self.effects: set[str] = set()

    def peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def read(self) -> set[str]:
        while True:
            self._blanks(";\n}{")
            if self.i >= len(self.s):
                return self.effects
            self._address()
            if self.peek() == ",":
                self.i += 1
                self._blanks(" \t")
                if self.peek() in ("+", "~"):
                    self.i += 1
                self._address(required=True)
            self._blanks(" \t!")
            self._command()

    def _blanks(self, extra: str) -> None:
        while self.i < len(self.s) and (self.s[self.i] in " \t" or self.s[self.i] in extra):
            self.i += 1

    def _address(self, *, required: bool = False) -> None:
        c = self.peek()
        if c.isdigit():
            while self.peek().isdigit():
                self.i += 1
            if self.peek() == "~":
                self.i += 1
                while self.peek().isdigit():
                    self.i += 1
        elif c == "$":
            self.i += 1
        elif c in ("/", "\\"):
            if c == "\\":
                self.i += 1
            delim = self.peek()
            if not delim or delim in "\n\\":
                raise _Unreadable
            self.i += 1
            self._delimited(delim)
            while self.peek() in ("I", "M"):
                self.i += 1
        elif required:
            raise _Unreadable

    def _delimited(self, delim: str) -> None:
        """Skip to just after the next unescaped `delim` (a `[...]` bracket may hold it unescaped)."""
        while True:
            c = self.s[self.i]
            if c == "\\":
                self.i += 2
                continue
            if c == "\n" and delim != "\n":
                raise _Unreadable
            self.i += 1
            if c == delim:
                return

    def _to_eol(self) -> str:
        start = self.i
        while self.i < len(self.s) and self.s[self.i] != "\n":
            if self.s[self.i] == "\\":
                self.i += 1
            self.i += 1
        return self.s[start:self.i]

    def _command(self) -> None:
        c = self.peek()
        self.i += 1
        if c in ("{", "}"):
            return
        if c in _SED_NO_ARG:
            self._blanks("")
            while self.peek().isdigit():
                self.i += 1
        elif c in _SED_TO_EOL:
            if c == "e":
                self.effects.add("code")
            elif c in "wW":
                self.effects.add("write")
            self._to_eol()
            return
        elif c == ":":  # GNU sed ends a label at a blank, `;` or `}` too (`:a;e cmd` runs cmd): read the shortest
            self._blanks("")
            while self.i < len(self.s) and self.s[self.i] not in " \t;\n}":
                self.i += 1
        elif c in _SED_LABEL:
            while self.i < len(self.s) and self.s[self.i] not in ";\n}":
                self.i += 1
        elif c == "s":
            self._substitute()
        elif c == "y":
            delim = self.s[self.i]
            if delim in "\n\\":
                raise _Unreadable
            self.i += 1
            self._delimited(delim)
            self._delimited(delim)
        else:
            raise _Unreadable
        self._blanks("")
        if self.peek() not in ("", ";", "\n", "}", "#"):
            raise _Unreadable

    def _substitute(self) -> None:
        delim = self.s[self.i]
        if delim in "\n\\":
            raise _Unreadable
        self.i += 1
        self._delimited(delim)
        # the replacement may span lines with a backslash-newline
        while True:
            c = self.s[self.i]
            if c == "\\":
                self.i += 2
                continue
            self.i += 1
            if c == delim:
                break
        while self.peek() and self.peek() in "gpiImMe0123456789w":
            flag = self.peek()
            self.i += 1
            if flag == "e":
                self.effects.add("code")
            elif flag == "w":
                self.effects.add("write")
                self._to_eol()
                return
