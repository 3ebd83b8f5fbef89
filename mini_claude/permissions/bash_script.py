"""A parsed command line as shell rules see it: the commands found in it (`CommandRecord`) and the values its
words may take (`ParsedScript`). Static values are exact (quotes removed, `$'...'` decoded); `values` adds a few
guesses for deny rules (variables assigned in the script, `${x:-word}` defaults, what `$(echo rm)` prints) and
`fragments` every static word that could end up as a command name. bash_tree.py builds these from the tree.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Tree

__all__ = ["REDIRECT_KINDS", "SUBSTITUTION_KINDS", "CommandRecord", "ParsedScript"]

REDIRECT_KINDS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
SUBSTITUTION_KINDS = frozenset({"command_substitution", "process_substitution"})
# A few evaluated spellings per word are enough to see through `$x`, `${x:-rm}`, `"r"m`; more only costs time.
MAX_ALTERNATIVES = 8
# Nested values deeper than this are treated as unknown (a hostile command must not exhaust the stack).
MAX_VALUE_DEPTH = 40
# Fallback when the tree is wrong: `name=value` anywhere in the text, for deny matching only.
_RAW_ASSIGN_RE = re.compile(r"(?<![\w$])([A-Za-z_][A-Za-z0-9_]*)=([^\s;&|()<>]*)")
_ANSI_C_RE = re.compile(r"\\(?:x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)", re.S)
_ANSI_C_SIMPLE = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
                  "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_LEAF_WORDS = frozenset({"word", "raw_string", "ansi_c_string", "string_content", "number", "string",
                         "concatenation", "command_name"})
_PUNCTUATION_RE = re.compile(r"[\s{},;|&()<>'\"`$=]+")
_DEFAULT_OPS = frozenset({"-", ":-", "=", ":=", "+", ":+"})
_GLOB_RE = re.compile(r"(?<!\\)[*?]|(?<!\\)\[.*\]")


@dataclass
class CommandRecord:
    """One command bash may run. `text` is its source (assignments, name, arguments; redirections left out;
    substitutions shown as `$(…)`), what allow rules match. `name_static`: the command word is a plain word, so bash
    runs exactly that name. The rest serves deny rules."""

    text: str
    name_static: bool
    node: Node = field(repr=False)
    script: ParsedScript = field(repr=False)
    extra_args: list[Node] = field(default_factory=list, repr=False)
    dropped_words: list[tuple[int, str]] = field(default_factory=list, repr=False)  # (offset, text)
    stdin_code: list[str] = field(default_factory=list)   # heredoc / here-string bodies fed to it
    reads_pipe: bool = False  # a later stage of a pipeline: its stdin is another command's output
    stdin_dynamic: bool = False  # some text fed to its stdin is expanded by bash first (not what stdin_code shows)
    # The words of `text` as bash sees them (assignments included; None: a value the walk cannot know), and where
    # each starts in `text`. Empty for records that are not simple commands.
    argv: list[str | None] = field(default_factory=list, repr=False)
    offsets: list[int] = field(default_factory=list, repr=False)
    # Files its redirections write (`> f`, `>> f`, `&> f`, `<> f`, a group's `{ ...; } > f`): (path as bash opens
    # it, the operator). A redirection whose target the walk cannot know makes the script opaque instead.
    redirects: list[tuple[str, str]] = field(default_factory=list)

    def _arg_nodes(self) -> list[Node]:
        if self.node.type != "command":
            return []
        nodes = [c for c in self.node.children if c.type not in REDIRECT_KINDS and c.type != "variable_assignment"]
        return sorted(nodes + self.extra_args, key=lambda n: n.start_byte)

    def _arg_values(self) -> list[list[str]]:
        """Per argv word, in order: the values it may take."""
        words = [(n.start_byte, self.script.values(n)) for n in self._arg_nodes()]
        words.extend((offset, [text]) for offset, text in self.dropped_words)
        return [values for _, values in sorted(words, key=lambda w: w[0])]

    def word_lists(self) -> list[list[str]]:
        """The argv (assignments left out) as bash may build it: a few evaluated alternatives. A word whose
        value is unknown is dropped (as bash drops an empty unquoted expansion)."""
        per_word = self._arg_values()
        if not per_word:
            return [self.text.split(" ")]
        combos = max(len(v) for v in per_word)
        lists = []
        for i in range(min(combos, MAX_ALTERNATIVES)):
            words = [w for w in (v[min(i, len(v) - 1)] for v in per_word) if w]
            if words:
                lists.append(words)
        return lists

    @property
    def dynamic(self) -> bool:
        """Some word of the command has a value the walk cannot know statically."""
        return any(self.script.static(n) is None for n in self._arg_nodes())

    def fragments(self) -> list[str]:
        """Words that could become this command's name when the name is computed (or read from a pipe): every
        static word of the script, split at shell punctuation, and of the text fed to its stdin."""
        return list(dict.fromkeys([*self.script.fragments(), *(t for code in self.stdin_code for t in code.split())]))


@dataclass
class ParsedScript:
    """A command line as bash would run it: its command records, and why (if at all) it is opaque."""

    source: bytes
    tree: Tree | None = field(repr=False)
    commands: list[CommandRecord] = field(default_factory=list)
    why_opaque: str = ""
    # Why the walk cannot see every program bash may run (code made from data, an expanded heredoc body); a blind
    # script is opaque too. Deny rules cannot promise anything about it.
    why_blind: str = ""
    misparsed: bool = False  # the tree does not match what bash will do (parse error, reserved word as a name)
    unknown_write: str = ""  # why a redirection writes a file the walk cannot name (`> "$f"`), if one does
    # descriptors a redirection opened on a file (`5<f`: `>/dev/fd/5` would reopen f for writing), and writes through
    # a descriptor's name (/dev/stdout, /dev/stderr, /dev/fd/N): the two together write a file unseen
    fd_opened: bool = False
    fd_written: bool = False
    expanded_bodies: list[str] = field(default_factory=list, repr=False)  # unquoted heredoc bodies with code
    _assigned: dict[str, list[Node | str]] | None = field(default=None, repr=False)
    _fragments: list[str] | None = field(default=None, repr=False)

    @property
    def parts(self) -> tuple[str, ...]:
        return tuple(r.text for r in self.commands if r.text)

    def opaque(self, why: str) -> None:
        if not self.why_opaque:
            self.why_opaque = why

    def blind(self, why: str) -> None:
        self.opaque(why)
        if not self.why_blind:
            self.why_blind = why

    def text_of(self, node: Node) -> str:
        return self.source[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def render(self, node: Node) -> str:
        """Source text of `node` with substitutions shown as `$(…)`, `` `…` ``, `<(…)`."""
        pieces: list[str] = []
        pos = node.start_byte
        stack = [node]
        subs: list[Node] = []
        while stack:
            cur = stack.pop()
            if cur.type in SUBSTITUTION_KINDS:
                subs.append(cur)
            else:
                stack.extend(cur.children)
        for sub in sorted(subs, key=lambda n: n.start_byte):
            pieces.append(self.source[pos:sub.start_byte].decode("utf-8", "replace"))
            opener = self.text_of(sub.children[0]) if sub.children else "$("
            pieces.append("`…`" if opener == "`" else f"{opener}…)")
            pos = sub.end_byte
        pieces.append(self.source[pos:node.end_byte].decode("utf-8", "replace"))
        return "".join(pieces).replace("\\\n", "")

    # ------------------------------------------------------------------------------------------ static values

    def word(self, node: Node) -> str | None:
        """The exact word bash makes of `node`, or None when it needs an expansion or is an unquoted glob pattern
        (bash replaces `/bin/r?` with the file names it matches)."""
        value = self.static(node)
        if value is None:
            return None
        # the unquoted text, quoted parts blanked out: `/bin/r[m]` is a pattern even when the parser splits it
        unquoted: list[str] = []
        stack = [node]
        while stack:
            cur = stack.pop()
            if cur.type == "extglob_pattern":
                return None
            if cur.type in ("concatenation", "command_name"):
                stack.extend(reversed(cur.children))
            else:
                unquoted.append(self.text_of(cur) if cur.type in ("word", "number") else "_")
        return None if _GLOB_RE.search("".join(unquoted)) else value

    def static(self, node: Node) -> str | None:
        """The exact value bash gives `node` as a word (quotes removed), or None when it needs an expansion."""
        kind = node.type
        if kind == "command_name":
            return self.static(node.children[0]) if node.child_count == 1 else None
        if kind == "variable_assignment":
            target, rhs_node = node.child_by_field_name("name"), node.child_by_field_name("value")
            op = next((self.text_of(c) for c in node.children if c.type in ("=", "+=")), "=")
            rhs = self.static(rhs_node) if rhs_node is not None else ""
            return None if target is None or rhs is None else self.text_of(target) + op + rhs
        if kind == "variable_name":
            return self.text_of(node)
        text = self.text_of(node)
        if kind in ("word", "number"):
            return re.sub(r"\\(.)", r"\1", text.replace("\\\n", ""), flags=re.S)
        if kind == "raw_string":
            return text[1:-1]
        if kind == "ansi_c_string":
            return _ansi_c(text[2:-1])
        if kind == "string_content":
            return re.sub(r'\\([$`"\\])', r"\1", text.replace("\\\n", ""))
        if kind in ("string", "concatenation"):
            out: list[str] = []
            for child in node.children:
                if kind == "string" and child.type == '"':
                    continue
                value = self.static(child)
                if value is None:
                    return None
                out.append(value)
            return "".join(out)
        return None

    def values(self, node: Node, depth: int = 0) -> list[str]:
        """A few values `node` may take, for deny matching: variables assigned anywhere in the script, the
        words of `${x:-word}`, and "" for anything unknown."""
        value = self.static(node)
        if value is not None:
            return [value]
        if depth > MAX_VALUE_DEPTH:
            return [""]
        kind = node.type
        if kind == "command_name" and node.child_count == 1:
            return self.values(node.children[0], depth + 1)
        if kind in ("simple_expansion", "expansion"):
            names = [self.text_of(c) for c in node.children if c.type in ("variable_name", "special_variable_name")]
            found: list[str] = []
            for assigned in self.assigned().get(names[0] if names else "", []):
                found.extend([assigned] if isinstance(assigned, str) else self.values(assigned, depth + 1))
            seen_op = False
            for child in node.children:
                if seen_op and child.is_named:
                    found.extend(self.values(child, depth + 1))
                seen_op = seen_op or child.type in _DEFAULT_OPS
            return list(dict.fromkeys([*found, ""]))[:MAX_ALTERNATIVES]
        if kind == "command_substitution":
            return [*self._printed(node, depth), ""]
        if kind in ("string", "concatenation"):
            pieces = [self.values(c, depth + 1) for c in node.children if c.type != '"']
            combos = itertools.islice(itertools.product(*pieces), MAX_ALTERNATIVES)
            return list(dict.fromkeys("".join(c) for c in combos)) or [""]
        return [""]

    def _printed(self, node: Node, depth: int) -> list[str]:
        """What `$(echo rm)` / `$(printf %s rm)` prints (the common way to compute a name), else nothing."""
        inner = [c for c in node.children if c.is_named]
        if len(inner) != 1 or inner[0].type != "command":
            return []
        words = [self.static(c) for c in inner[0].children if c.type not in REDIRECT_KINDS]
        if None in words or not words or words[0] not in ("echo", "printf"):
            return []
        args = [w for w in words[1:] if w is not None]
        if words[0] == "echo":
            while args and re.fullmatch(r"-[neE]+", args[0]):
                args.pop(0)
            return [" ".join(args)]
        return ["".join(args[1:]) if args and "%" in args[0] else "".join(args)]

    def fragments(self) -> list[str]:
        """Every static word in the script (substitutions included), whole and split at shell punctuation."""
        if self._fragments is None:
            found: list[str] = []
            stack = [self.tree.root_node] if self.tree is not None else []
            while stack:
                node = stack.pop()
                if node.type in ("heredoc_content", "heredoc_body") and node.child_count == 0:
                    value: str | None = self.text_of(node)
                else:
                    value = self.static(node) if node.type in _LEAF_WORDS else None
                if value is not None:
                    found.append(value)
                    found.extend(t for t in _PUNCTUATION_RE.split(value) if t)
                stack.extend(node.children)
            if self.misparsed:
                # The tree is not what bash runs (a comment or heredoc swallowed text): every token of the raw
                # text, quotes and backslashes dropped, may be a command name.
                raw = re.sub(r"[\"'\\]", "", self.source.decode("utf-8", "replace").replace("\\\n", ""))
                found.extend(t for t in _PUNCTUATION_RE.split(raw) if t)
            self._fragments = list(dict.fromkeys(found))
        return self._fragments

    def assigned(self) -> dict[str, list[Node | str]]:
        """Variable name -> every value the script assigns to it (plain assignments and for-loop words; when the
        tree is wrong, also every `name=value` in the text)."""
        if self._assigned is None:
            found: dict[str, list[Node | str]] = {}
            stack = [self.tree.root_node] if self.tree is not None else []
            while stack:
                node = stack.pop()
                stack.extend(node.children)
                if node.type == "variable_assignment":
                    name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
                    if name is not None and value is not None:
                        found.setdefault(self.text_of(name), []).append(value)
                elif node.type == "for_statement":
                    var = node.child_by_field_name("variable")
                    if var is not None:
                        found.setdefault(self.text_of(var), []).extend(node.children_by_field_name("value"))
            if self.misparsed:
                for match in _RAW_ASSIGN_RE.finditer(self.source.decode("utf-8", "replace")):
                    found.setdefault(match.group(1), []).append(re.sub(r"[\"'\\]", "", match.group(2)))
            self._assigned = found
        return self._assigned


def _ansi_c(body: str) -> str:
    def one(m: re.Match[str]) -> str:
        esc = m.group(0)[1:]
        if esc[0] in "xuU":
            return chr(min(int(esc[1:], 16), 0x10FFFF))
        if esc[0] in "01234567":
            return chr(int(esc, 8) & 0xFF)
        if esc[0] == "c":
            return chr(ord(esc[1]) & 0x1F)
        return _ANSI_C_SIMPLE.get(esc, "\\" + esc)

    return _ANSI_C_RE.sub(one, body)
