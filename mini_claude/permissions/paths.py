"""File-path rule specifiers (`Read(src/**)`, `Edit(//abs/**)`, `Read(~/secrets/**)`): one gitignore pattern under a
root (the working directory, home, or /), compiled by `pathspec.GitIgnoreSpec` and proved against `git check-ignore`
(tests/permissions/test_paths_property.py); `MatchEnv`, what matching needs besides the call itself; `is_within`,
"is this path inside one of these directories", on resolved paths.

Symlinks: an allow rule must match the symlink-resolved target (a link in `src/` pointing outside the project is not
allowed by `Edit(src/**)`); a deny or ask rule matches when the path as written, the path with its folders resolved,
or the fully resolved path matches (neither a link into a denied folder nor a denied name pointing elsewhere slips
through).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from mini_claude.paths import resolve_tool_path

__all__ = ["MatchEnv", "PathPattern", "expand_path", "is_within"]

# A stand-in child of a searched directory that no literal pattern names: only wildcards match it.
_ANY_CHILD = "\0"
_ROOTS = ("cwd", "home", "abs")
# A negated class (`[!a]`, compiled `[^a]`) not preceded by an escaping backslash.
_NEGATED_CLASS_RE = re.compile(r"((?:^|[^\\])(?:\\\\)*)\[\^")


@dataclass(frozen=True)
class MatchEnv:
    """What matching needs besides the call: directories for path rules, and the MCP server lookup."""

    cwd: Path
    home: Path
    server_of: Callable[[str], str | None] | None = None


def expand_path(path: str, env: MatchEnv) -> str:
    """`path` as a tool got it, made absolute exactly as the tool reads it (`mini_claude.paths.resolve_tool_path`:
    `~`, `~user`, relative to `env.cwd`; symlinks not resolved)."""
    return resolve_tool_path(path, env.cwd, env.home)


def is_within(path: str, directories: Iterable[Path]) -> bool:
    """Is the symlink-resolved `path` (absolute) one of `directories` (resolved too) or inside one of them?"""
    real = os.path.realpath(path)
    for directory in directories:
        root = os.path.realpath(directory)
        if real == root or real.startswith(root.rstrip("/") + "/"):
            return True
    return False


@dataclass(frozen=True)
class PathPattern:
    """A file rule's specifier: one gitignore pattern under a root (cwd, home or /).

    `//x` is absolute, `~/x` is under home, `/x` and `./x` are anchored at cwd (the project, as in Claude Code),
    and a pattern with no slash but a trailing one (`*.env`, `secrets/`) matches at any depth below cwd, exactly as
    in a `.gitignore` at the project root. A trailing `/` matches directories only (and so their contents)."""

    text: str
    root: str  # one of _ROOTS
    line: str  # the gitignore line matched under the root
    regex: re.Pattern[str] = field(repr=False, compare=False)

    @classmethod
    def parse(cls, spec: str) -> PathPattern:
        from pathspec import GitIgnoreSpec  # lazy: startup time matters and most runs have no path rules

        if spec.startswith("//"):
            root, pattern, anchored = "abs", spec[2:], True
        elif spec == "~" or spec.startswith("~/"):
            root, pattern, anchored = "home", spec[2:], True
        elif spec.startswith("/"):
            root, pattern, anchored = "cwd", spec[1:], True
        elif spec.startswith("./"):
            root, pattern, anchored = "cwd", spec[2:], True
        else:
            root, pattern, anchored = "cwd", spec, False  # gitignore itself decides (a middle slash anchors)
        if not pattern.strip("/"):
            pattern, anchored = "**", True  # `~`, `//`: everything under the root
        _check_double_stars(pattern)
        if pattern.endswith("/**/"):
            # the same folders as `x/*/` (every deeper folder lies in one of those), which pathspec compiles right;
            # it reads `x/**/` as "anything in x"
            pattern = pattern[:-4] + "/*/"
        if pattern[0] in "!#":
            pattern = "\\" + pattern  # a rule names one path: `!` / `#` are literal here, not negation / comment
        line = "/" + pattern if anchored else pattern
        (compiled,) = GitIgnoreSpec.from_lines([line]).patterns
        if compiled.regex is None:
            raise ValueError("the pattern matches nothing")
        # pathspec lets a negated class match `/`; git never does (tests/permissions/test_paths_property.py)
        regex = re.compile(_NEGATED_CLASS_RE.sub(r"\1[^/", compiled.regex.pattern))
        return cls(spec, root, line, regex)

    def matches(self, path: str, env: MatchEnv, *, inside: bool = False, resolved_only: bool = False) -> bool:
        """True if `path` (as a tool got it) matches, judged on its symlink-resolved form and, unless
        `resolved_only` (for allow rules), on the path as written and with only its folders resolved too (any
        matching counts). A path inside a
        matching directory matches. With `inside`, `path` is a directory being searched and a pattern matching
        anything directly in it (`secrets/**`) counts too."""
        root = {"cwd": env.cwd, "home": env.home, "abs": Path("/")}[self.root]
        target = expand_path(path, env)
        real = os.path.realpath(target)
        is_dir = os.path.isdir(real)
        real_root = os.path.realpath(root)
        forms = {(real, real_root)}
        if not resolved_only:
            forms.add((target, os.path.normpath(root)))
            # the folders resolved but not the file itself: `alias/key` with alias -> secrets is `secrets/key`
            forms.add((os.path.join(os.path.realpath(os.path.dirname(target)), os.path.basename(target)), real_root))
        return any(self._matches_under(p, r, is_dir=is_dir, inside=inside) for p, r in forms)

    def _matches_under(self, path: str, root: str, *, is_dir: bool, inside: bool) -> bool:
        rel = os.path.relpath(path, root)
        if rel == ".":
            rel = ""
        if rel == ".." or rel.startswith("../"):
            return False
        if inside:
            rel = f"{rel}/{_ANY_CHILD}" if rel else _ANY_CHILD
        elif not rel:
            return self.line == "/**"  # the root itself: only the match-everything pattern names it
        elif is_dir and self.line.endswith("/"):
            rel += "/"  # a directory-only pattern (`secrets/`) needs to see that this is a directory
        return self.regex.search(rel) is not None  # as pathspec does: anchored patterns carry their own `^`


def _check_double_stars(pattern: str) -> None:
    """Raise ValueError for `**` that is not a whole path segment (`a**/b`, `***`): git lets such a `**` cross
    folders while the gitignore documentation (and pathspec) read it as `*`, so a rule using it is ambiguous."""
    i, n = 0, len(pattern)
    while i < n:
        if pattern[i] == "\\":
            i += 2  # an escaped character is literal
            continue
        if pattern[i] != "*":
            i += 1
            continue
        j = i
        while j < n and pattern[j] == "*":
            j += 1
        whole_segment = (i == 0 or pattern[i - 1] == "/") and (j == n or pattern[j] == "/")
        if j - i > 2 or (j - i == 2 and not whole_segment):
            raise ValueError(f"{pattern[i:j]!r} must be a whole path segment (`a/**/b`); use `*` within a name")
        i = j
