"""File-path rule specifiers (`Read(src/**)`, `Edit(//abs/**)`, `Read(~/secrets/**)`): gitignore-style globs under
a root (the working directory, home, or /), and `MatchEnv`, what matching needs besides the call itself.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MatchEnv", "PathPattern"]


@dataclass(frozen=True)
class MatchEnv:
    """What matching needs besides the call: directories for path rules, and the MCP server lookup."""

    cwd: Path
    home: Path
    server_of: Callable[[str], str | None] | None = None


@dataclass(frozen=True)
class PathPattern:
    """A file rule's specifier: a gitignore-style glob under a root (cwd, home or /)."""

    text: str
    root: str  # "cwd" | "home" | "abs"
    regex: re.Pattern[str]

    @classmethod
    def parse(cls, spec: str) -> PathPattern:
        if spec.startswith("//"):
            root, pattern, anchored = "abs", spec[2:], True
        elif spec == "~" or spec.startswith("~/"):
            root, pattern, anchored = "home", spec[2:], True
        elif spec.startswith("/"):
            root, pattern, anchored = "cwd", spec[1:], True
        elif spec.startswith("./"):
            root, pattern, anchored = "cwd", spec[2:], True
        else:
            root, pattern = "cwd", spec
            # gitignore: a pattern with no slash except a trailing one matches at any depth
            anchored = "/" in pattern.rstrip("/")
        pattern = pattern.rstrip("/") or "**"
        return cls(spec, root, _glob_regex(pattern, anchored=anchored))

    def matches(self, path: str, env: MatchEnv, *, inside: bool = False) -> bool:
        """True if `path` (as a tool got it) or one of its parent directories matches, judged on the path as
        written and on its symlink-resolved form (either matching counts). With `inside`, `path` is a directory
        being searched and a pattern matching anything directly in it (`secrets/**`) counts too."""
        root = {"cwd": env.cwd, "home": env.home, "abs": Path("/")}[self.root]
        target = env.home / path[2:] if path == "~" or path.startswith("~/") else Path(path)
        if not target.is_absolute():
            target = env.cwd / target
        lexical = (os.path.normpath(target), os.path.normpath(root))
        real = (os.path.realpath(target), os.path.realpath(root))
        return any(self._matches_under(p, r, inside=inside) for p, r in {lexical, real})

    def _matches_under(self, path: str, root: str, *, inside: bool) -> bool:
        rel = os.path.relpath(path, root)
        if rel == ".":
            rel = ""
        if rel == ".." or rel.startswith("../"):
            return False
        pieces = rel.split("/") if rel else []
        if inside:
            pieces.append("\0")  # a stand-in child no literal pattern names: only wildcards match it
        if not pieces:
            return self.regex.fullmatch("") is not None
        return any(self.regex.fullmatch("/".join(pieces[:n])) for n in range(1, len(pieces) + 1))


def _glob_regex(pattern: str, *, anchored: bool) -> re.Pattern[str]:
    out = [] if anchored else [r"(?:.*/)?"]
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            whole_segment = (i == 0 or pattern[i - 1] == "/") and (j == n or pattern[j] == "/")
            if j - i == 2 and whole_segment:
                if j == n:
                    out.append(".*")
                else:
                    out.append(r"(?:.*/)?")
                    j += 1  # "**/" swallows its slash
            else:
                out.append("[^/]*")
            i = j
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = pattern.find("]", i + 2)
            if end == -1:
                out.append(re.escape(c))
                i += 1
                continue
            body = pattern[i + 1 : end]
            negate = body[:1] in ("!", "^")
            if negate:
                body = body[1:]
            out.append("[" + ("^" if negate else "") + body.replace("\\", "\\\\") + "]")
            i = end + 1
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("".join(out), re.S)
