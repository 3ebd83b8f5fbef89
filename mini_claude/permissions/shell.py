"""Shell commands as permission rules see them: the simple commands a Bash rule must match, on a real bash parse.

`split_shell_command` lists the commands bash would run (bash_tree.py walks the tree-sitter-bash parse tree).
Allow rules must allow *every* part; a command the walk cannot fully classify is *opaque* and is never allowed by a
wildcard rule (only by `Bash` or an exact rule for the whole text). Deny and ask rules match if *any* candidate
from `deny_candidates` matches: every part, looked through `sudo`, `env`, `timeout`, `xargs`, `find -exec`, quoting,
`/bin/rm`, `eval`, `sh -c '...'`, aliases, traps and shells fed a heredoc; for an opaque command, every static word
that could end up as the command name.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

from mini_claude.permissions.bash_script import CommandRecord, ParsedScript
from mini_claude.permissions.bash_tree import parse_script
from mini_claude.permissions.code_runners import code_risks, is_wrapper
from mini_claude.permissions.writes import Write, program_writes, rebase

__all__ = [
    "DenyView",
    "ShellCommand",
    "deny_candidates",
    "deny_view",
    "normalize_ws",
    "split_shell_command",
    "strip_harmless_wrappers",
]

# eval / sh -c / heredoc-to-shell strings are opened up to this depth (each level is a new parse).
MAX_CODE_NESTING = 4


@dataclass(frozen=True)
class ShellCommand:
    """A shell command split into the simple commands bash would run (each shown as its source text).

    `opaque` is set when the command hides work a prefix rule cannot vouch for (`why_opaque` says what): command
    or process substitution, a write to a path it cannot know (`> "$f"`, `tee $x`), a parse error, a computed or quoted command name. `parts`
    then still lists every command found (including those inside substitutions), which deny rules check."""

    parts: tuple[str, ...]
    opaque: bool
    why_opaque: str = ""
    # Per part: where in its text a word starts that makes it run code (code_runners.py), and why. A wildcard
    # allow rule covers such a part only when its literal text reaches past every one of these offsets.
    risks: tuple[tuple[tuple[int, str], ...], ...] = ()
    # Per part: the files it writes (writes.py: redirections, `tee`, `cp`'s target, `tar -x`'s archive, `sort -o`),
    # paths as written, relative to where the command line starts (a static `cd DIR` before them is folded in).
    writes: tuple[tuple[Write, ...], ...] = ()
    # Why some write's path cannot be known ("" when all can): such a command is opaque too.
    writes_unknown: str = ""


def split_shell_command(command: str) -> ShellCommand:
    """Split `command` into its simple commands. Never raises."""
    script = parse_script(command)
    records = [r for r in script.commands if r.text]
    risks = tuple(tuple((r.offsets[k.index] if k.index < len(r.offsets) else len(r.text), k.why)
                        for k in code_risks(r.argv)) if r.argv else () for r in records)
    writes, unknown = _writes_of(records)
    unknown = script.unknown_write or unknown
    why = script.why_opaque or unknown
    return ShellCommand(script.parts, bool(why), why, risks, writes, unknown)


def _writes_of(records: list[CommandRecord]) -> tuple[tuple[tuple[Write, ...], ...], str]:
    """Per record, the files it writes (writes.py), each seen from every directory a `cd` may have left the shell
    in; and why some cannot be known."""
    bases, lost = _cd_bases(records)
    unknown = ""
    per_part: list[tuple[Write, ...]] = []
    for r in records:
        found = [Write(path, -1, f"a redirection ({op}) writes it") for path, op in r.redirects]
        if r.argv:
            ends = [*(o - 1 for o in r.offsets[1:]), len(r.text)]
            raws = [r.text[o:end] for o, end in zip(r.offsets, ends, strict=True)] \
                if len(r.offsets) == len(r.argv) else [w or "" for w in r.argv]
            more, why = program_writes(r.argv, raws)
            found += more
            unknown = unknown or why
        if len(bases) > 1:
            found = [rebase(w, base) for w in found for base in bases]
        per_part.append(tuple(found))
    relative = any(not (p.startswith(("/", "~"))) for part in per_part for w in part
                   for p in (w.path, w.archive, *w.sources) if p)
    return tuple(per_part), unknown or (lost if relative else "")


_MAX_CDS = 3


def _is_cd(argv: list[str | None]) -> bool:
    words = [w for w in argv if not (w and "=" in w and w.split("=", 1)[0].isidentifier())]
    if words[:1] in (["builtin"], ["command"]):
        words = words[1:]
    return bool(words) and words[0] in ("cd", "pushd", "popd")


def _cd_bases(records: list[CommandRecord]) -> tuple[list[str], str]:
    """The directories relative paths may be read from: `.`, and after each static `cd DIR` of the command line
    (wherever it stands: a loop or a function may run it before a write that comes earlier in the text)."""
    dirs: list[str] = []
    for r in records:
        if not r.argv or not _is_cd(r.argv):
            continue
        words = [w for w in r.argv if not (w and "=" in w and w.split("=", 1)[0].isidentifier())]
        words = words[1:] if words[0] in ("builtin", "command") else words
        operands = [w for w in words[1:] if w is None or not w.startswith("-") or w == "-"]
        target = operands[0] if len(operands) == 1 else "~" if not operands else None
        if words[0] != "cd" or target is None or target == "-" or len(dirs) >= _MAX_CDS:
            return ["."], "a cd the gate cannot follow changes where relative paths are written"
        dirs.append(target)
    bases = ["."]
    for d in dirs:
        bases += [d if d.startswith(("/", "~")) else os.path.join(b, d) for b in bases]
    return list(dict.fromkeys(bases)), ""


@dataclass(frozen=True)
class DenyView:
    """What deny and ask rules see of a command: every text they are tried against, and why (if at all) the
    command may run a program none of those texts shows (then no deny rule can promise anything about it)."""

    candidates: tuple[str, ...]
    why_hidden: str = ""


def deny_view(command: str) -> DenyView:
    """The candidates of `command` and why it may hide what it runs. Never raises."""
    found: dict[str, None] = {normalize_ws(command): None}
    hidden: list[str] = []
    _collect(command, found, (), {}, hidden)
    return DenyView(tuple(c for c in found if c), hidden[0] if hidden else "")


# Wrappers that only change how a command runs, not what it is: stripped before allow matching.
_HARMLESS_WRAPPERS = frozenset({"nohup", "time", "nice", "timeout"})
# Wrappers that run (a tail of) their arguments as a command: looked through for deny/ask matching only.
_EXEC_WRAPPERS = frozenset({
    "sudo", "doas", "pkexec", "run0", "su", "runuser", "env", "command", "exec", "builtin", "nohup", "time", "nice",
    "ionice", "chrt", "taskset", "timeout", "xargs", "stdbuf", "setsid", "coproc", "flock", "chroot", "unshare",
    "nsenter", "watch", "script", "strace", "ltrace", "unbuffer", "parallel", "firejail", "busybox", "caffeinate",
})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "rbash"})
_SOURCE = frozenset({"source", "."})
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_ENV_ASSIGN_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_TOKEN_SPLIT_RE = re.compile(r"[\s;&|()<>`$={}]+")
_CODE_LIKE_RE = re.compile(r"[\s;&|$`'\"\\(){}<>]")
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


def _looked_through(words: list[str]) -> list[list[str]]:
    """The commands a word list may really run, for deny/ask matching: leading `VAR=value` assignments peeled
    off, every tail after a wrapper such as `sudo -u root` (its options may take values, so each tail is a
    candidate), every tail after `find ... -exec`, `/bin/rm` as `rm`. Over-matching here only ever denies more."""
    found = [words]
    frontier = [words]
    while frontier:
        current = frontier.pop()
        start = 0
        while start < len(current) and _ENV_ASSIGN_RE.match(current[start]):
            start += 1
        tails: list[list[str]] = [current[start:]] if start else []
        head = os.path.basename(current[start]) if start < len(current) else ""
        if head in _EXEC_WRAPPERS or is_wrapper(head):
            tails.extend(current[j:] for j in range(start + 1, len(current)))
        elif head == "find":
            tails.extend(current[j + 1:] for j in range(start, len(current)) if current[j] in _FIND_EXEC)
        for tail in tails:
            if tail and tail not in found:
                found.append(tail)
                frontier.append(tail)
    found.extend([os.path.basename(w[0]), *w[1:]] for w in list(found) if w and "/" in w[0])
    return [w for w in found if w]


def _code_in(words: list[str], record: CommandRecord) -> Iterator[str]:
    """Shell code a (looked-through) command runs from its arguments or its stdin."""
    head = os.path.basename(words[0])
    if head in _SHELLS:
        for k in range(1, len(words) - 1):
            arg = words[k]
            if arg == "-c" or (arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]):
                yield words[k + 1]
                return
        if all(w.startswith("-") for w in words[1:]) or "-s" in words[1:]:
            yield from record.stdin_code  # `bash <<EOF`, `bash <<< 'cmd'`, `bash -s`
    elif head == "eval":
        yield " ".join(words[1:])
    elif head in _SOURCE and (len(words) == 1 or words[1] in ("/dev/stdin", "-", "/proc/self/fd/0")):
        yield from record.stdin_code
    elif head == "trap":
        args = [w for w in words[1:] if not w.startswith("-")]
        if args:
            yield args[0]
    elif head == "alias":
        yield from (w.split("=", 1)[1] for w in words[1:] if "=" in w)


def _reads_code(record: CommandRecord) -> bool:
    """Does the command take code whose text the walk cannot see (a computed name, a computed `eval` string,
    a shell reading a pipe, a tree that is not what bash will run)? Then any static word around it could be the
    command bash runs."""
    if not record.name_static or record.script.misparsed:
        return True
    name = record.node.child_by_field_name("name") if record.node.type == "command" else None
    head = os.path.basename(record.script.text_of(name)) if name is not None else ""
    runs_code = head in _SHELLS or head in _SOURCE or head in _EXEC_WRAPPERS or head in ("eval", "trap", "alias")
    return runs_code and (record.dynamic or record.reads_pipe)


def deny_candidates(command: str) -> list[str]:
    """Every text a deny/ask Bash rule is tried against."""
    return list(deny_view(command).candidates)


def _why_hidden(record: CommandRecord) -> str:
    """Why this command may run a program its words do not show ("" when they show everything it runs)."""
    script = record.script
    if script.why_blind:
        return script.why_blind
    if script.misparsed:
        return "bash may read it differently from the gate's parser (" + (script.why_opaque or "a parse error") + ")"
    if record.node.type == "command" and record.argv:
        name = record.node.child_by_field_name("name")
        if name is not None and script.word(name) is None:
            return "its command name is computed when it runs (an expansion or a glob pattern)"
    for risk in code_risks(record.argv):
        if risk.stdin:
            if record.reads_pipe:
                return risk.why.replace("from stdin", "from a pipe")
            if record.stdin_dynamic or not record.stdin_code:
                return risk.why
        elif risk.hidden:
            return risk.why
    return ""


def _collect(command: str, found: dict[str, None], outer: tuple[ParsedScript, ...], opened: dict[str, int],
             hidden: list[str]) -> None:
    """Add the candidates of `command`, and to `hidden` why it may run what they do not show; `outer` are the
    scripts whose `eval` / `sh -c` strings led here (their words may reach this code through variables).
    `opened` maps each code string already looked into to the depth it was opened at: it is opened again only
    from a shallower depth, which keeps the work small."""
    opened[command] = len(outer)
    script = parse_script(command)
    nested: list[str] = []
    nested.extend(code for body in script.expanded_bodies for code in _body_substitutions(body))
    for record in script.commands:
        why = _why_hidden(record)
        if why:
            hidden.append(why)
        found[record.text] = None
        found[strip_harmless_wrappers(record.text)] = None
        for words in _looked_through(record.text.split(" ")):  # the source words, quotes kept
            found[" ".join(words)] = None
        lists = record.word_lists()  # the argv bash builds: what wrappers, shells and eval really receive
        if _reads_code(record):
            rest = lists[-1][1:] if lists else []
            fragments = [*record.fragments(), *(w for s in outer for w in s.fragments())]
            lists.extend([fragment, *rest] for fragment in fragments)
            lists.extend(w[j:] for w in list(lists) for j in range(1, len(w)))
            # `echo 'r"m" x' | sh`, `eval "$(cat <<EOF ...)"`: any static text of the script may be the code
            nested.extend(record.stdin_code)
            nested.extend(w for w in fragments if _CODE_LIKE_RE.search(w))
        for words in lists:
            for seen in _looked_through(words):
                found[" ".join(seen)] = None
                nested.extend(_code_in(seen, record))
    depth = len(outer) + 1
    for code in dict.fromkeys(nested):
        if opened.get(code, depth + 1) <= depth:
            continue
        if depth <= MAX_CODE_NESTING:
            _collect(code, found, (*outer, script), opened, hidden)
        else:
            hidden.append("it nests shell code deeper than the gate opens")
            # Nested deeper than we open: every token of the code, unquoted, may start a command.
            tokens = [t for t in _TOKEN_SPLIT_RE.split(re.sub(r"[\"'\\]", "", code)) if t]
            found.update((" ".join(tokens[j:]), None) for j in range(len(tokens)))


def normalize_ws(text: str) -> str:
    """`text` with every whitespace run collapsed to one space and the ends trimmed."""
    return " ".join(text.split())


# At most this many `$(` / backticks of an expanded heredoc body are opened for deny rules; the rest are tokens.
MAX_BODY_SUBSTITUTIONS = 16


def _body_substitutions(body: str) -> list[str]:
    """The code of each `$(...)` and backtick substitution in an expanded heredoc body (bash runs them), found by
    scanning the text: tree-sitter misses some (a line starting with a blank). A substitution the parser cannot
    close yields the rest of the body, which only makes deny rules see more."""
    codes: list[str] = []
    i = 0
    while i < len(body) and len(codes) < MAX_BODY_SUBSTITUTIONS:
        ch = body[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "`" or (body.startswith("$(", i) and not body.startswith("$((", i)):
            start = i + (1 if ch == "`" else 2)
            script = parse_script(": " + body[i:])
            sub = _first_substitution(script)
            codes.append(sub if sub is not None else body[start:])
        i += 1
    if len(codes) >= MAX_BODY_SUBSTITUTIONS:
        codes.append(body)
    return codes


def _first_substitution(script: ParsedScript) -> str | None:
    if script.tree is None or script.misparsed:
        return None
    stack = [script.tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "command_substitution" and node.start_byte == 2:
            inner = [c for c in node.children if c.is_named]
            if not inner:
                return ""
            return script.source[inner[0].start_byte:inner[-1].end_byte].decode("utf-8", "replace")
        stack.extend(node.children)
    return None
