"""Shell-command splitting for permission rules: a command becomes the simple commands a Bash rule must match.

A command is split into its simple commands (`&&`, `||`, `;`, `|`, `&`, newlines, subshells, command
substitutions). Allow rules must allow *every* part, and a command with command substitution or output
redirection to a file is never allowed by a wildcard rule (only by `Bash` or an exact rule for the whole text).
Deny and ask rules match if *any* part matches, also looking through `sudo`, `env`, `timeout`, quoting and
`sh -c '...'` (`deny_candidates`).
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass

__all__ = [
    "ShellCommand",
    "deny_candidates",
    "normalize_ws",
    "split_shell_command",
    "strip_harmless_wrappers",
]


@dataclass(frozen=True)
class ShellCommand:
    """A shell command split into its simple commands (whitespace outside quotes collapsed to one space).

    `opaque` is set when the command hides work a prefix rule cannot vouch for: command or process
    substitution, output redirection to a file, an unterminated quote. `parts` then still lists every simple
    command found (including those inside substitutions), which deny rules check."""

    parts: tuple[str, ...]
    opaque: bool
    why_opaque: str = ""


def split_shell_command(command: str) -> ShellCommand:
    """Split `command` into its simple commands. Never raises."""
    scanner = _Scanner(command)
    scanner.scan(stop_at_paren=False)
    return ShellCommand(tuple(scanner.parts), bool(scanner.why), scanner.why)


_OPERATOR_CHARS = ";&|()<>\n"


class _Scanner:
    """A small quote-aware shell tokenizer: enough to find command boundaries, not a shell parser."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.parts: list[str] = []
        self.why = ""

    def _opaque(self, why: str) -> None:
        if not self.why:
            self.why = why

    def _flush(self, cur: list[str]) -> None:
        text = "".join(cur).strip()
        if text:
            self.parts.append(text)
        cur.clear()

    def scan(self, *, stop_at_paren: bool) -> None:
        s, cur = self.s, []
        quote: str | None = None
        while self.i < len(s):
            c = s[self.i]
            if quote == "'":
                cur.append(c)
                self.i += 1
                if c == "'":
                    quote = None
                continue
            if c == "\\":
                nxt = s[self.i + 1 : self.i + 2]
                # backslash-newline is a line continuation, not a command separator
                cur.append(" " if nxt == "\n" else c + nxt)
                self.i += 2
                continue
            if c == "`" or s.startswith("$(", self.i):
                self._substitution(cur)
                continue
            if quote == '"':
                cur.append(c)
                self.i += 1
                if c == '"':
                    quote = None
                continue
            if c in "'\"":
                quote = c
                cur.append(c)
                self.i += 1
            elif s.startswith(("<(", ">("), self.i):
                self._substitution(cur)
            elif c == ")":
                self.i += 1
                if stop_at_paren:
                    self._flush(cur)
                    return
                self._flush(cur)
            elif c in "(;\n":
                self._flush(cur)
                self.i += 1
            elif c == "&":
                if s.startswith("&>", self.i):
                    cur.append("&")
                    self.i += 1
                    self._redirect(cur)
                else:
                    self._flush(cur)
                    self.i += 2 if s.startswith("&&", self.i) else 1
            elif c == "|":
                self._flush(cur)
                self.i += 2 if s[self.i + 1 : self.i + 2] in ("|", "&") else 1
            elif c == ">":
                self._redirect(cur)
            elif c.isspace():
                if cur and cur[-1] != " ":
                    cur.append(" ")
                self.i += 1
            else:
                cur.append(c)
                self.i += 1
        if quote is not None:
            self._opaque("an unterminated quote")
        self._flush(cur)

    def _substitution(self, cur: list[str]) -> None:
        """`$(...)`, `<(...)`, `>(...)` or a backtick pair: the inner commands become parts of their own."""
        self._opaque("command substitution")
        if self.s[self.i] == "`":
            end = self.i + 1
            while end < len(self.s) and self.s[end] != "`":
                end += 2 if self.s[end] == "\\" else 1
            inner = _Scanner(self.s[self.i + 1 : end])
            inner.scan(stop_at_paren=False)
            self.parts.extend(inner.parts)
            self.i = end + 1
            cur.append("`…`")
            return
        opener = self.s[self.i : self.i + 2]
        self.i += 2
        saved = self.parts
        self.parts = []
        self.scan(stop_at_paren=True)
        inner_parts = self.parts
        self.parts = saved
        self.parts.extend(inner_parts)
        cur.append(f"{opener}…)")

    def _redirect(self, cur: list[str]) -> None:
        """At a `>`: duplicating a descriptor (`2>&1`) or writing /dev/null is harmless; any other target is a
        file write that a prefix rule for the command must not allow."""
        s = self.s
        start = self.i
        self.i += 1
        if s[self.i : self.i + 1] in (">", "|"):
            self.i += 1
        if s[self.i : self.i + 1] == "&":
            self.i += 1
            m = re.match(r"\d+-?|-", s[self.i :])
            if m:
                self.i += m.end()
                cur.append(s[start : self.i])
                return
        while self.i < len(s) and s[self.i] in " \t":
            self.i += 1
        target_start = self.i
        while self.i < len(s) and not s[self.i].isspace() and s[self.i] not in _OPERATOR_CHARS:
            self.i += 1
        target = s[target_start : self.i]
        if target != "/dev/null":
            self._opaque("output redirection to a file")
        cur.append(f"{s[start:target_start].strip()} {target}" if target else s[start:target_start].strip())


# Wrappers that only change how a command runs, not what it is: stripped before allow matching.
_HARMLESS_WRAPPERS = frozenset({"nohup", "time", "nice", "timeout"})
# Wrappers that run their argument as a command: looked through for deny/ask matching only.
_EXEC_WRAPPERS = frozenset({"sudo", "doas", "env", "command", "exec", "builtin", "nohup", "time", "nice", "timeout",
                            "xargs", "stdbuf", "setsid", "eval"})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
_ENV_ASSIGN_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_DURATION_RE = re.compile(r"^\d+(\.\d+)?[smhd]?$")


def strip_harmless_wrappers(part: str) -> str:
    """`part` without leading `nohup` / `time` / `nice [-n N]` / `timeout [opts] DURATION`, for allow matching."""
    words = part.split(" ")
    while words and words[0] in _HARMLESS_WRAPPERS:
        head = words[0]
        rest = words[1:]
        if head == "nice":
            if rest[:1] == ["-n"] and len(rest) > 1:
                rest = rest[2:]
            elif rest and re.match(r"^-n?-?\d+$", rest[0]):
                rest = rest[1:]
        elif head == "timeout":
            while rest and rest[0].startswith("-"):
                opt = rest.pop(0)
                if opt in ("-s", "-k", "--signal", "--kill-after") and rest:
                    rest.pop(0)
            if not rest or not _DURATION_RE.match(rest[0]):
                break
            rest = rest[1:]
        words = rest
    return " ".join(words)


def _looked_through(words: list[str], depth: int = 0) -> list[list[str]]:
    """The commands a word list may really run, for deny/ask matching: leading `VAR=value` assignments peeled
    off, every tail after a wrapper such as `sudo -u root` (its options may take values, so each tail is a
    candidate), `/bin/rm` as `rm`, and `sh -c '...'` opened up. Over-matching here only ever denies more."""
    found = [words]
    start = 0
    while start < len(words) and _ENV_ASSIGN_RE.match(words[start]):
        start += 1
    rest = words[start:]
    if start:
        found.append(rest)
    if rest and os.path.basename(rest[0]) in _EXEC_WRAPPERS:
        found.extend(rest[j:] for j in range(1, len(rest)))
    found.extend([os.path.basename(w[0]), *w[1:]] for w in list(found) if w and "/" in w[0])
    nested: list[list[str]] = []
    if depth < 3:
        for w in found:
            if not w or os.path.basename(w[0]) not in _SHELLS:
                continue
            for k in range(1, len(w) - 1):
                arg = w[k]
                if arg == "-c" or (arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]):
                    for part in split_shell_command(w[k + 1]).parts:
                        nested.extend(_looked_through(_words_of(part) or part.split(" "), depth + 1))
                    break
    return [w for w in found + nested if w]


def _words_of(part: str) -> list[str]:
    try:
        return shlex.split(part)
    except ValueError:
        return []


def deny_candidates(command: str) -> list[str]:
    """Every text a deny/ask Bash rule is tried against."""
    split = split_shell_command(command)
    candidates = [normalize_ws(command)]
    for part in split.parts:
        candidates.append(part)
        candidates.append(strip_harmless_wrappers(part))
        for words in _looked_through(part.split(" ")):
            candidates.append(" ".join(words))
        dequoted = _words_of(part)
        if dequoted:
            for words in _looked_through(dequoted):
                candidates.append(" ".join(words))
    return list(dict.fromkeys(c for c in candidates if c))


def normalize_ws(text: str) -> str:
    """`text` with every whitespace run collapsed to one space and the ends trimmed."""
    return " ".join(text.split())
