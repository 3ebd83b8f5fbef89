"""Permission rules in Claude Code syntax, and how a rule matches a tool call.

Rule forms (`Tool` or `Tool(specifier)`):

    Bash                    every shell command            Bash(*) is the same
    Bash(git status)        exactly that command
    Bash(git status:*)      that command, alone or followed by arguments (word boundary: not `git statusx`)
    Bash(npm run *)         `*` matches any text; a trailing ` *` also matches the bare `npm run`
    Read / Edit / Write / Glob / Grep            every call of that tool
    Read(src/**)  Edit(docs/**)                  gitignore-style globs relative to cwd; `//abs/path` is absolute,
                                                 `~/path` is under home, `/path` is relative to cwd (the project)
    mcp__server  mcp__server__*                  every tool of that MCP server
    mcp__server__tool                            one MCP tool

A `Read` rule also covers Glob and Grep, an `Edit` rule also covers Write (as in Claude Code). Unknown tool names
are kept and match nothing but a tool of that exact name. Built-in tool names map to Claude Code's
(`read_file` -> Read, `bash` -> Bash, ...); the built-in names are also accepted in rules.

Shell safety: a command is split into its simple commands (`&&`, `||`, `;`, `|`, `&`, newlines, subshells,
command substitutions). Allow rules must allow *every* part, and a command with command substitution or output
redirection to a file is never allowed by a wildcard rule (only by `Bash` or an exact rule for the whole text).
Deny and ask rules match if *any* part matches, also looking through `sudo`, `env`, `timeout`, quoting and
`sh -c '...'`.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mini_claude.errors import ConfigError

if TYPE_CHECKING:
    from mini_claude.settings import Settings, SettingsRule

__all__ = [
    "CLAUDE_TOOL_NAMES",
    "MCP_PREFIX",
    "MatchEnv",
    "Rule",
    "RuleSet",
    "ShellCommand",
    "ToolCall",
    "claude_tool_name",
    "parse_rule",
    "split_rule_list",
    "split_shell_command",
]

MCP_PREFIX = "mcp__"

# mini-claude built-in tool name -> Claude Code tool name (the names rules use).
CLAUDE_TOOL_NAMES: Mapping[str, str] = {
    "read_file": "Read",
    "glob": "Glob",
    "grep": "Grep",
    "write_file": "Write",
    "edit_file": "Edit",
    "bash": "Bash",
}

# A rule naming the key covers calls of these tools.
_RULE_COVERS: Mapping[str, frozenset[str]] = {
    "Read": frozenset({"Read", "Glob", "Grep"}),
    "Edit": frozenset({"Edit", "Write"}),
}
_PATH_TOOLS = frozenset({"Read", "Edit", "Write", "Glob", "Grep"})
_PATH_ARG_NAMES = ("file_path", "path", "notebook_path")
_TOOL_NAME_RE = re.compile(r"^[A-Za-z0-9_.\-*]+$")


def claude_tool_name(name: str) -> str:
    """The Claude Code name for a tool: `bash` -> `Bash`; MCP and unknown names are returned unchanged."""
    return CLAUDE_TOOL_NAMES.get(name, name)


# --------------------------------------------------------------------------------------------------- call facts


@dataclass(frozen=True)
class MatchEnv:
    """What matching needs besides the call: directories for path rules, and the MCP server lookup."""

    cwd: Path
    home: Path
    server_of: Callable[[str], str | None] | None = None


@dataclass(frozen=True)
class ToolCall:
    """One tool call as the rules see it."""

    name: str
    args: Mapping[str, Any] = field(default_factory=dict)

    @property
    def claude_name(self) -> str:
        return claude_tool_name(self.name)

    @property
    def is_mcp(self) -> bool:
        return self.name.startswith(MCP_PREFIX)

    @property
    def command(self) -> str | None:
        value = self.args.get("command")
        return value if isinstance(value, str) else None

    def paths(self, cwd: Path) -> list[str]:
        """The path(s) a file tool touches, as given. Glob/Grep search cwd when given no path; a Glob pattern's
        literal leading directories count too (best effort: `secrets/*.txt` touches `secrets`)."""
        found: list[str] = []
        for key in _PATH_ARG_NAMES:
            value = self.args.get(key)
            if isinstance(value, str) and value:
                found.append(value)
                break
        if self.claude_name in ("Glob", "Grep"):
            base = found[0] if found else str(cwd)
            if not found:
                found.append(base)
            pattern = self.args.get("pattern")
            if self.claude_name == "Glob" and isinstance(pattern, str):
                literal = _literal_dir_prefix(pattern)
                if literal:
                    found.append(os.path.join(base, literal))
        return found


def _literal_dir_prefix(pattern: str) -> str:
    parts = pattern.split("/")[:-1]
    literal: list[str] = []
    for part in parts:
        if any(ch in part for ch in "*?[{"):
            break
        literal.append(part)
    return "/".join(literal) if pattern.startswith("/") else "/".join(p for p in literal if p)


# ------------------------------------------------------------------------------------------------ shell splitting


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


def _strip_harmless_wrappers(part: str) -> str:
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


def _deny_candidates(command: str) -> list[str]:
    """Every text a deny/ask Bash rule is tried against."""
    split = split_shell_command(command)
    candidates = [_normalize_ws(command)]
    for part in split.parts:
        candidates.append(part)
        candidates.append(_strip_harmless_wrappers(part))
        for words in _looked_through(part.split(" ")):
            candidates.append(" ".join(words))
        dequoted = _words_of(part)
        if dequoted:
            for words in _looked_through(dequoted):
                candidates.append(" ".join(words))
    return list(dict.fromkeys(c for c in candidates if c))


def _normalize_ws(text: str) -> str:
    return " ".join(text.split())


# ----------------------------------------------------------------------------------------------------- patterns


@dataclass(frozen=True)
class _CommandPattern:
    """A Bash rule's specifier."""

    text: str
    regex: re.Pattern[str] | None  # None: exact match on `text`

    @classmethod
    def parse(cls, spec: str) -> _CommandPattern:
        spec = _normalize_ws(spec)
        if spec.endswith(":*"):
            prefix = spec[:-2].rstrip()
            if "*" in prefix:
                raise ValueError('":*" may only end the pattern; use "*" for other wildcards')
            return cls(spec, re.compile(re.escape(prefix) + r"(?:\s.*)?", re.S))
        if ":*" in spec:
            raise ValueError('":*" may only end the pattern')
        if "*" not in spec:
            return cls(spec, None)
        pieces = spec.split("*")
        out: list[str] = []
        for index, piece in enumerate(pieces):
            last = index == len(pieces) - 1
            if not last and index == len(pieces) - 2 and pieces[-1] == "" and piece.endswith(" "):
                # trailing " *": the bare command matches too (`npm run *` matches `npm run`)
                out.append(re.escape(piece[:-1]) + r"(?:\s.*)?")
                break
            out.append(re.escape(piece))
            if not last:
                out.append(".*")
        return cls(spec, re.compile("".join(out), re.S))

    @property
    def exact(self) -> bool:
        return self.regex is None

    def matches(self, text: str) -> bool:
        if self.regex is None:
            return text == self.text
        return self.regex.fullmatch(text) is not None


@dataclass(frozen=True)
class _PathPattern:
    """A file rule's specifier: a gitignore-style glob under a root (cwd, home or /)."""

    text: str
    root: str  # "cwd" | "home" | "abs"
    regex: re.Pattern[str]

    @classmethod
    def parse(cls, spec: str) -> _PathPattern:
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


# --------------------------------------------------------------------------------------------------------- rules


@dataclass(frozen=True)
class Rule:
    """One parsed rule. `source` says where it came from: a settings file (display form), a CLI flag such as
    `--allowedTools`, or `session` (answered "always")."""

    text: str
    tool: str
    specifier: str | None
    source: str
    key: str | None = None
    command: _CommandPattern | None = field(default=None, repr=False, compare=False)
    path: _PathPattern | None = field(default=None, repr=False, compare=False)

    def describe(self) -> str:
        """`"Bash(rm:*)" in .claude/settings.json` / `"Bash(rm:*)" from --disallowedTools`."""
        if self.source == "session":
            return f'"{self.text}" (allowed for this session)'
        preposition = "from" if self.source.startswith("-") else "in"
        return f'"{self.text}" {preposition} {self.source}'

    @property
    def is_mcp(self) -> bool:
        return self.tool.startswith(MCP_PREFIX)

    def covers_tool(self, call: ToolCall, env: MatchEnv) -> bool:
        """Does this rule name the called tool (ignoring any specifier)?"""
        if self.is_mcp:
            return call.is_mcp and _mcp_rule_matches(self.tool, call.name, env)
        return call.claude_name in _RULE_COVERS.get(self.tool, frozenset({self.tool}))

    def matches_path_call(self, call: ToolCall, env: MatchEnv, *, every: bool) -> bool:
        """For file rules: any (deny/ask) or every (allow) path the call touches matches."""
        if self.path is None:
            return self.specifier is None
        paths = call.paths(env.cwd)
        if not paths:
            return False
        if every:
            return all(self.path.matches(p, env) for p in paths)
        searches = call.claude_name in ("Glob", "Grep")
        return any(self.path.matches(p, env) or (searches and self.path.matches(p, env, inside=True))
                   for p in paths)


def _mcp_rule_matches(rule_tool: str, qualified: str, env: MatchEnv) -> bool:
    if rule_tool == qualified:
        return True
    body = rule_tool[:-3] if rule_tool.endswith("__*") else rule_tool
    server = env.server_of(qualified) if env.server_of is not None else None
    if server is not None:
        # The lookup knows the real server name, which may itself contain "__": never split the name.
        if body == MCP_PREFIX + server:
            return True
    elif qualified.startswith(body + "__"):
        return True
    if "*" in body and not rule_tool.endswith("__*"):
        return fnmatch.fnmatchcase(qualified, rule_tool)
    return False


def parse_rule(text: str, *, source: str, key: str | None = None) -> Rule:
    """Parse one rule string. Raises ConfigError (file=`source` unless it is a CLI flag, key=`key`) naming the
    rule when it is malformed."""

    def fail(why: str) -> ConfigError:
        if source.startswith("-"):
            return ConfigError(f'invalid permission rule "{text}": {why}', key=key or source)
        return ConfigError(f'invalid permission rule "{text}": {why}', file=source, key=key)

    raw = text.strip()
    if not raw:
        raise fail("empty rule")
    paren = raw.find("(")
    if paren == -1:
        tool, spec = raw, None
        if ")" in raw:
            raise fail('unexpected ")"')
    else:
        if not raw.endswith(")"):
            raise fail('missing closing ")"')
        tool, spec = raw[:paren].strip(), raw[paren + 1 : -1]
        if not tool:
            raise fail("missing tool name before \"(\"")
        if not spec.strip():
            raise fail(f'empty specifier (write "{tool}" to match every call)')
        spec = spec.strip()
    if not _TOOL_NAME_RE.match(tool):
        raise fail("a tool name may contain only letters, digits, '_', '-', '.' and '*'")
    tool = claude_tool_name(tool)
    if spec == "*":
        spec = None
    command = path = None
    if spec is not None:
        if tool.startswith(MCP_PREFIX):
            raise fail('MCP rules take no "(...)": write "mcp__server" or "mcp__server__tool"')
        try:
            if tool == "Bash":
                command = _CommandPattern.parse(spec)
            elif tool in _PATH_TOOLS:
                path = _PathPattern.parse(spec)
        except ValueError as exc:
            raise fail(str(exc)) from None
    return Rule(raw, tool, spec, source, key, command, path)


def split_rule_list(values: Iterable[str]) -> list[str]:
    """CLI rule lists: each value may hold several rules separated by commas or spaces outside parentheses
    (`--allowedTools "Bash(git log:*) Read,Edit"`)."""
    rules: list[str] = []
    for value in values:
        depth, cur = 0, []
        for ch in value:
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth = max(0, depth - 1)
            if depth == 0 and (ch == "," or ch.isspace()):
                if cur:
                    rules.append("".join(cur))
                cur = []
                continue
            cur.append(ch)
        if cur:
            rules.append("".join(cur))
    return rules


# ------------------------------------------------------------------------------------------------------ rule set


@dataclass(frozen=True)
class RuleSet:
    """Allow, deny and ask rules, in the order they were given. `errors` lists rules that failed to parse
    (those rules are dropped)."""

    allow: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()
    ask: tuple[Rule, ...] = ()
    errors: tuple[ConfigError, ...] = ()

    @classmethod
    def from_settings(cls, settings: Settings) -> RuleSet:
        """The rules of merged settings; a malformed rule becomes an entry in `errors` naming file and key."""
        lists: dict[str, list[Rule]] = {"allow": [], "deny": [], "ask": []}
        errors: list[ConfigError] = []
        sources: dict[str, Sequence[SettingsRule]] = {
            "allow": settings.permissions_allow, "deny": settings.permissions_deny, "ask": settings.permissions_ask,
        }
        for kind, items in sources.items():
            for item in items:
                try:
                    lists[kind].append(parse_rule(item.text, source=item.file, key=item.key))
                except ConfigError as exc:
                    errors.append(exc)
        return cls(tuple(lists["allow"]), tuple(lists["deny"]), tuple(lists["ask"]), tuple(errors))

    @classmethod
    def from_strings(cls, *, allow: Iterable[str] = (), deny: Iterable[str] = (), ask: Iterable[str] = (),
                     source: str = "rules") -> RuleSet:
        """Rules from plain strings (tests, programmatic use). Raises ConfigError on a malformed rule."""
        return cls(
            tuple(parse_rule(t, source=source) for t in allow),
            tuple(parse_rule(t, source=source) for t in deny),
            tuple(parse_rule(t, source=source) for t in ask),
        )

    def with_cli(self, *, allow: Iterable[str] = (), deny: Iterable[str] = ()) -> RuleSet:
        """Add `--allowedTools` / `--disallowedTools` rules. Raises ConfigError naming the flag and the rule on a
        malformed one: a typo in a deny rule given on the command line must not be silently dropped."""
        added_allow = tuple(parse_rule(t, source="--allowedTools") for t in split_rule_list(allow))
        added_deny = tuple(parse_rule(t, source="--disallowedTools") for t in split_rule_list(deny))
        return RuleSet(self.allow + added_allow, self.deny + added_deny, self.ask, self.errors)

    def with_allow(self, rules: Iterable[str], *, source: str = "session") -> RuleSet:
        """A copy with more allow rules (raises ConfigError on a malformed one)."""
        return RuleSet(self.allow + tuple(parse_rule(t, source=source) for t in rules), self.deny, self.ask,
                       self.errors)

    def match_deny(self, call: ToolCall, env: MatchEnv) -> Rule | None:
        """The first deny rule matching any part of the call."""
        return _match_any(self.deny, call, env)

    def match_ask(self, call: ToolCall, env: MatchEnv) -> Rule | None:
        """The first ask rule matching any part of the call."""
        return _match_any(self.ask, call, env)

    def match_allow(self, call: ToolCall, env: MatchEnv) -> tuple[Rule, ...] | None:
        """The allow rule(s) that together allow the whole call, or None. For a compound shell command every
        part must be allowed (possibly by different rules)."""
        rules = [r for r in self.allow if r.covers_tool(call, env)]
        if not rules:
            return None
        for rule in rules:
            if rule.command is None and rule.path is None and rule.specifier is None:
                return (rule,)
        if call.claude_name == "Bash":
            return _bash_allow(rules, call.command)
        for rule in rules:
            if rule.path is not None and rule.matches_path_call(call, env, every=True):
                return (rule,)
        return None

    def unallowed_command_parts(self, command: str, env: MatchEnv) -> list[str]:
        """The simple commands of `command` no allow rule covers (harmless wrappers stripped)."""
        call = ToolCall("bash", {"command": command})
        rules = [r for r in self.allow if r.command is not None and r.covers_tool(call, env)]
        return [part for part in split_shell_command(command).parts if _rule_for_part(rules, part) is None]


def _match_any(rules: Iterable[Rule], call: ToolCall, env: MatchEnv) -> Rule | None:
    candidates: list[str] | None = None
    for rule in rules:
        if not rule.covers_tool(call, env):
            continue
        if rule.command is None and rule.path is None:
            if rule.specifier is None:
                return rule
            continue  # a specifier this tool does not understand (e.g. WebFetch(domain:...)) matches nothing
        if rule.command is not None:
            if call.claude_name != "Bash" or call.command is None:
                continue
            if candidates is None:
                candidates = _deny_candidates(call.command)
            if any(rule.command.matches(c) for c in candidates):
                return rule
        elif rule.matches_path_call(call, env, every=False):
            return rule
    return None


def _bash_allow(rules: list[Rule], command: str | None) -> tuple[Rule, ...] | None:
    if command is None:
        return None
    whole = _normalize_ws(command)
    for rule in rules:
        if rule.command is not None and rule.command.exact and rule.command.matches(whole):
            return (rule,)
    split = split_shell_command(command)
    if split.opaque or not split.parts:
        return None
    used: list[Rule] = []
    for part in split.parts:
        rule = _rule_for_part(rules, part)
        if rule is None:
            return None
        if rule not in used:
            used.append(rule)
    return tuple(used)


def _rule_for_part(rules: Iterable[Rule], part: str) -> Rule | None:
    texts = (part, _strip_harmless_wrappers(part))
    for rule in rules:
        if rule.command is not None and any(rule.command.matches(t) for t in texts):
            return rule
    return None
