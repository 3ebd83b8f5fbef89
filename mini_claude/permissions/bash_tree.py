"""The bash parse tree behind shell rules: which commands a command line makes bash run.

`parse_script` parses with tree-sitter-bash (imported lazily, one parser per process) and walks the tree. Every
simple command bash would run becomes a `CommandRecord`: in lists, pipelines, `{ }`, `( )`, if/while/until/case,
`!`, function bodies, command and process substitutions (nested ones first). Standalone assignments,
`declare`/`export`, `unset`, `[[ ]]` and `(( ))` are records too: they change what later commands do, so an allow
rule must cover them. Anything the walk cannot vouch for makes the script *opaque* (`why_opaque`): a parse error,
a node type outside the explicit lists below, a substitution, a redirection to a file it cannot name, a for loop (it assigns
variables, PATH included), an expansion or arithmetic that assigns, a command word that is not a plain word, text
the parser skipped, a heredoc body bash expands. Where bash would evaluate a value as code (`${x@P}`, arithmetic
over a variable, indirection: bash_eval.py), a heredoc body runs expansions, or an assignment changes what runs
(`PATH=`, `PS4=`), the script is also *blind* (`why_blind`): deny rules cannot see what it runs. The deny side
(shell.py) then looks at every static word that could be a command name, which the records expose on demand.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from typing import TYPE_CHECKING

from mini_claude.permissions.bash_eval import check_arithmetic, check_expansion, check_test
from mini_claude.permissions.bash_script import (
    REDIRECT_KINDS,
    SUBSTITUTION_KINDS,
    CommandRecord,
    ParsedScript,
)
from mini_claude.permissions.code_runners import env_risk
from mini_claude.permissions.writes import is_device, shell_path

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

__all__ = ["parse_script"]


_STRUCTURE = frozenset({
    "program", "list", "pipeline", "compound_statement", "subshell", "if_statement", "elif_clause", "else_clause",
    "while_statement", "do_group", "case_statement", "case_item", "negated_command", "redirected_statement",
    "function_definition",
})
_VALUES = frozenset({
    "command_name", "word", "number", "string", "string_content", "raw_string", "ansi_c_string", "concatenation",
    "simple_expansion", "expansion", "variable_name", "special_variable_name", "array", "brace_expression",
    "heredoc_start", "heredoc_body", "heredoc_content", "heredoc_end", "file_descriptor", "regex", "extglob_pattern",
    "test_operator", "binary_expression", "unary_expression", "ternary_expression", "postfix_expression",
    "parenthesized_expression", "subscript", "arithmetic_expansion",
})
_RECORDED = frozenset({"command", "declaration_command", "unset_command", "test_command"})
_WRITE_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_DUP_OPS = frozenset({">&", "<&", ">&-", "<&-"})
_ARITH_ASSIGN = frozenset({"=", ":=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|=", "++", "--"})
# A command word bash takes literally: no quoting, escapes, expansions, globs or braces (a leading `~` is $HOME).
_PLAIN_NAME_RE = re.compile(r"^(?:~?[A-Za-z0-9_./+@%:,-]+|\[)$")
_RESERVED = frozenset({"if", "then", "elif", "else", "fi", "case", "esac", "for", "select", "while", "until", "do",
                       "done", "in", "function", "{", "}", "!", "[[", "]]"})
# What may sit in a heredoc_redirect: tree-sitter nests the rest of the `<<EOF` line (`> out`, `| grep x`,
# `&& echo`) in it. A bare word there is a body line it misread (or an argument it misplaced).
_HEREDOC_PARTS = frozenset({"<<", "<<-", "heredoc_start", "heredoc_body", "heredoc_end", "file_redirect",
                            "herestring_redirect", "heredoc_redirect", "pipeline", "list", "command",
                            "redirected_statement", "subshell", "compound_statement", "negated_command", "&&", "||",
                            "|", "|&", ";", "&"})
# In a heredoc body with an unquoted delimiter bash runs these: `$(...)`, backticks, `${...}`, `$((...))`, `$[...]`.
_BODY_CODE_RE = re.compile(r"`|\$[({\[]")
_BODY_ESCAPE_RE = re.compile(r"\\[\\$`\n]")
_BARE_BLANK_RE = re.compile(r"(?<!\\)\s")
_GLUED_RE = re.compile(r"^(?:\\\n)+$")
_GAP_RE = re.compile(r"^(?:[ \t\n]|\\\n)*$")  # bash's blanks only: a CR, VT or FF is part of a word to bash


@cache
def _parser() -> Parser:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


_WORD_CONTROLS = frozenset("\r\v\f")


@lru_cache(maxsize=256)
def parse_script(command: str) -> ParsedScript:
    """Parse and walk `command`. Never raises; the result is cached (callers must not mutate it)."""
    source = command.encode("utf-8", "surrogatepass")
    tree = _parser().parse(source)
    script = ParsedScript(source, tree)
    if _WORD_CONTROLS.intersection(command):
        # tree-sitter-bash reads CR, VT and FF as blanks, bash as word characters: `echo hi \r# ; touch x` is a
        # comment to the parser and a command to bash. What the gate would list cannot be trusted: blind.
        script.misparsed = True
        script.blind("a carriage return, vertical tab or form feed (bash reads it as part of a word)")
    _Walk(script).run(tree.root_node)
    return script


class _Walk:
    """One pass over the tree, iterative (a hostile command must not exhaust the Python stack)."""

    def __init__(self, script: ParsedScript) -> None:
        self.s = script
        self.extra_args: dict[int, list[Node]] = {}
        self.dropped_words: dict[int, list[tuple[int, str]]] = {}
        self.stdin_code: dict[int, list[str]] = {}
        self.stdin_dynamic: set[int] = set()
        self.pipe_readers: set[int] = set()
        self.leaves: list[tuple[int, int]] = []
        self.redirect_writes: list[tuple[int, int, str, str]] = []  # (scope start, scope end, path, operator)

    def run(self, root: Node) -> None:
        if root.has_error:
            self.s.misparsed = True
            self.s.opaque("a parse error")
            # Words the parser could not place may still be commands to bash: deny rules see them all.
            self.s.commands.append(CommandRecord("", False, root, self.s))
        stack: list[tuple[Node, bool]] = [(root, False)]
        while stack:
            node, finished = stack.pop()
            if finished:
                self._record(node)
                continue
            if node.child_count == 0:
                self.leaves.append((node.start_byte, node.end_byte))
            if node.type == "comment":
                if _inside_backticks(node):
                    # bash cuts the backtick text out first, so such a comment ends at the closing backtick
                    self.s.misparsed = True
                    self.s.opaque("a comment inside backticks")
                continue
            self._visit(node)
            if node.type in _RECORDED or _is_arith_command(node) or self._statement_assignment(node):
                stack.append((node, True))
            stack.extend((child, False) for child in reversed(node.children))
        self._check_coverage()
        self._attach_redirects()

    def _attach_redirects(self) -> None:
        """Give each redirection's file to the commands it applies to (a group's to every command in it)."""
        for start, end, path, op in self.redirect_writes:
            owners = [r for r in self.s.commands
                      if r.text and r.node.start_byte >= start and r.node.end_byte <= end]
            if not owners:
                self.s.opaque("a redirection without a command")
            for record in owners:
                record.redirects.append((path, op))

    def _visit(self, node: Node) -> None:
        kind = node.type
        if node.is_error or node.is_missing:
            self.s.opaque("a parse error")
        elif kind in SUBSTITUTION_KINDS:
            self.s.opaque("command substitution")
        elif kind in ("for_statement", "c_style_for_statement"):
            self.s.opaque("a for loop (it assigns a variable)")
            var = node.child_by_field_name("variable")
            why = env_risk(self.s.text_of(var)) if var is not None else None
            if why:
                self.s.blind(why)
            if kind == "c_style_for_statement":
                check_arithmetic(self.s, node, "a C-style for loop")
        elif _is_arith_command(node):
            check_arithmetic(self.s, node, "an arithmetic command")
        elif kind == "redirected_statement":
            self._redirected(node)
        elif kind == "pipeline":
            piped = False  # inside a heredoc line, tree-sitter starts a pipeline with its `|`
            for child in node.children:
                if piped and child.is_named:
                    self.pipe_readers.update(c.id for c in _commands_in(child))
                piped = piped or child.type in ("|", "|&")
        elif kind == "file_redirect":
            self._file_redirect(node)
        elif kind == "word" and _BARE_BLANK_RE.search(self.s.text_of(node)):
            # bash ends a word at an unquoted blank: the parser has glued two words (or lines) together
            self.s.misparsed = True
            self.s.opaque("a word the parser misread")
        elif kind in ("arithmetic_expansion", "expansion", "subscript"):
            if _has_token(node, _ARITH_ASSIGN):
                self.s.opaque("an expansion that assigns a variable")
            check_expansion(self.s, node)
        elif kind == "simple_expansion":
            if any(c.type == "special_variable_name" and self.s.text_of(c) == "_" for c in node.children):
                self.s.opaque("the previous command's last argument ($_) re-read")
        elif kind == "test_command":
            check_test(self.s, node)
        elif kind == "variable_assignment" and self._statement_assignment(node):
            name = node.child_by_field_name("name")
            why = env_risk(self.s.text_of(name)) if name is not None else None
            if why:
                self.s.blind(why)
        elif kind not in _STRUCTURE and kind not in _VALUES and kind not in _RECORDED and kind not in REDIRECT_KINDS \
                and kind not in ("variable_assignment", "variable_assignments") and node.is_named:
            self.s.opaque(f"unsupported syntax ({kind})")

    def _redirected(self, node: Node) -> None:
        body = node.child_by_field_name("body")
        target = body.id if body is not None else -1
        heredoc = next((c for c in node.children if c.type == "heredoc_redirect"), None)
        if body is not None and body.type == "command" and heredoc is not None:
            # tree-sitter drops a lone `-` right before `<<` (`python - <<'EOF'`): put it back as an argument
            gap = self.s.source[body.end_byte:heredoc.start_byte]
            if gap.strip() == b"-":
                offset = body.end_byte + gap.index(b"-")
                self.dropped_words.setdefault(body.id, []).append((offset, "-"))
                self.leaves.append((offset, offset + 1))
        for child in node.children:
            if child.type == "file_redirect":
                extra = child.children_by_field_name("destination")[1:]
                if extra:
                    if body is None or body.type != "command":
                        self.s.opaque("a word after a redirection")
                    self.extra_args.setdefault(target, []).extend(extra)
            elif child.type in ("heredoc_redirect", "herestring_redirect") and body is not None:
                text, dynamic = self._stdin_text(child)
                for command in _commands_in(body):  # any command of a redirected group may read it
                    self.stdin_code.setdefault(command.id, []).append(text)
                    if dynamic:
                        self.stdin_dynamic.add(command.id)

    def _stdin_text(self, redirect: Node) -> tuple[str, bool]:
        """The text fed to stdin, and whether bash expands it first (then the text is not what runs)."""
        dynamic = False
        if redirect.type == "heredoc_redirect":
            kinds = [c.type for c in redirect.children]
            end_node = next((c for c in redirect.children if c.type == "heredoc_end"), None)
            # bash ends a heredoc only at a line holding the delimiter alone
            alone = end_node is not None and self.s.source[end_node.end_byte:end_node.end_byte + 1] in (b"", b"\n") \
                and self.s.source[:end_node.start_byte].rstrip(b"\t").endswith(b"\n")
            if any(k not in _HEREDOC_PARTS for k in kinds) or not alone:
                self.s.misparsed = True
                self.s.opaque("a heredoc the parser misread")
            # The raw text between the start and end markers: what bash feeds the command.
            start_node = next((c for c in redirect.children if c.type == "heredoc_start"), None)
            start = start_node.end_byte if start_node is not None else redirect.end_byte
            end = next((c.start_byte for c in redirect.children if c.type == "heredoc_end"), redirect.end_byte)
            text = self.s.source[start:end].decode("utf-8", "replace")
            quoted = start_node is not None and any(q in self.s.text_of(start_node) for q in "'\"\\")
            body = text.split("\n", 1)[1] if "\n" in text else ""
            if not quoted and any(ch in body for ch in "$`\\"):
                self.s.opaque("a heredoc body bash expands (its delimiter is not quoted)")
                dynamic = True
                if _BODY_CODE_RE.search(_BODY_ESCAPE_RE.sub("", body)):
                    self.s.blind("a heredoc body that runs expansions (its delimiter is not quoted)")
                    self.s.expanded_bodies.append(body)
            return text, dynamic
        value = next((c for c in redirect.children if c.is_named), None)
        if value is None:
            return "", False
        static = self.s.static(value)
        return (static, False) if static is not None else (self.s.values(value)[0], True)

    def _file_redirect(self, node: Node) -> None:
        ops = [self.s.text_of(c) for c in node.children if not c.is_named]
        dests = node.children_by_field_name("destination")
        target = self.s.static(dests[0]) if dests else None
        if target is not None and target.startswith(("/dev/tcp/", "/dev/udp/")):
            self.s.opaque("a network redirection")
        if target is None and dests and any(o in ("<", "<>") for o in ops):
            # `4<$T` (or `4</dev/tcp/${h}/80`) may open a socket or any file the gate cannot name
            self.s.opaque("an input redirection from a path the gate cannot know")
        if any(o in ("<", "<>") for o in ops) and not (target is not None and is_device(target)):
            self.s.fd_opened = True
            self._descriptor_file()
        op = next((o for o in ops if o in _WRITE_OPS or o in _DUP_OPS), "")
        if op in _DUP_OPS and target is not None and re.fullmatch(r"\d+-?|-", target):
            return  # a descriptor duplicated or closed: no file
        if op in _WRITE_OPS or op == ">&":  # `>& word` is `&> word` for a word that is not a descriptor
            word = self.s.word(dests[0]) if dests else None  # bash globs a redirection's word too
            path = shell_path(word, self.s.text_of(dests[0])) if word is not None else None
            if path is None:
                self.s.unknown_write = self.s.unknown_write or "output redirection to a path the gate cannot know"
                self.s.opaque(self.s.unknown_write)
            elif not is_device(path):
                self.redirect_writes.append((*_redirect_scope(node), path, op))
            elif path not in ("/dev/null", "/dev/tty"):  # a descriptor's name: whatever file that descriptor holds
                self.s.fd_written = True
                self._descriptor_file()
        elif op:
            self.s.opaque("output redirection to a file")

    def _descriptor_file(self) -> None:
        """A file opened on a descriptor (`5<f`) and a write through a descriptor's name (`>/dev/fd/5`) in one
        command line, in either order: Linux reopens that file for writing, a write the gate cannot name."""
        if self.s.fd_written and self.s.fd_opened:
            self.s.unknown_write = self.s.unknown_write or "a write through a descriptor that may hold a file"
            self.s.opaque(self.s.unknown_write)

    def _statement_assignment(self, node: Node) -> bool:
        parent = node.parent
        return node.type in ("variable_assignment", "variable_assignments") and parent is not None \
            and parent.type not in ("command", "declaration_command", "variable_assignments")

    def _record(self, node: Node) -> None:
        if node.type != "command":
            argv: list[str | None] = []
            if node.type in ("declaration_command", "unset_command"):
                # an assignment's value does not matter here (its name does: `export PATH=...`, `a[i]=...`)
                argv = [self.s.text_of(c.child_by_field_name("name") or c) + "=" if c.type == "variable_assignment"
                        else self.s.static(c) if c.is_named else self.s.text_of(c) for c in node.children
                        if c.type not in REDIRECT_KINDS]
            self.s.commands.append(CommandRecord(" ".join(self.s.render(node).split()), True, node, self.s,
                                                 argv=argv))
            return
        extra = self.extra_args.get(node.id, [])
        dropped = self.dropped_words.get(node.id, [])
        shown: list[tuple[int, str, str | None]] = [
            (c.start_byte, self.s.render(c), self.s.word(c)) for c in node.children + extra
            if c.type not in REDIRECT_KINDS]
        pieces = sorted(shown + [(offset, word, word) for offset, word in dropped])
        text = " ".join(piece for _, piece, _ in pieces)
        argv = [value for _, _, value in pieces]
        offsets = [sum(len(p) + 1 for _, p, _ in pieces[:k]) for k in range(len(pieces))]
        name = node.child_by_field_name("name")
        name_text = self.s.text_of(name) if name is not None else ""
        plain = name is not None and _PLAIN_NAME_RE.match(name_text) is not None
        if name_text in _RESERVED:
            # tree-sitter took a reserved word for a command (`! until x; do ...`): bash parses it differently
            plain = False
            self.s.misparsed = True
            self.s.opaque("a reserved word the parser took for a command")
        elif name is not None and not plain:
            self.s.opaque("the command name is not a plain word")
        stdin = self.stdin_code.get(node.id, [])
        dynamic = node.id in self.stdin_dynamic
        for child in node.children:
            if child.type in ("heredoc_redirect", "herestring_redirect"):
                fed, expanded = self._stdin_text(child)
                stdin.append(fed)
                dynamic = dynamic or expanded
        self.s.commands.append(CommandRecord(text, name is None or plain, node, self.s, extra, dropped, stdin,
                                             node.id in self.pipe_readers, dynamic, argv, offsets))

    def _check_coverage(self) -> None:
        """Bytes no leaf covers must be blanks: anything else is text the parser dropped but bash would read. A
        line continuation right after a word glues it to the next text in bash, not in the parser (`r\\⏎m`)."""
        pos = 0
        for start, end in [*sorted(self.leaves), (len(self.s.source), len(self.s.source))]:
            if start > pos:
                gap = self.s.source[pos:start].decode("utf-8", "replace")
                if not _GAP_RE.match(gap):
                    self.s.misparsed = True
                    self.s.opaque("text the parser could not place")
                elif pos > 0 and _GLUED_RE.match(gap) and start < len(self.s.source):
                    self.s.misparsed = True
                    self.s.opaque("a line continuation inside a word")
            pos = max(pos, end)


def _redirect_scope(redirect: Node) -> tuple[int, int]:
    """The bytes of the statement a redirection applies to: its command, or the body it redirects."""
    node = redirect.parent
    while node is not None and node.type not in ("redirected_statement", "command"):
        node = node.parent
    if node is None:
        return 0, redirect.end_byte
    body = node.child_by_field_name("body") if node.type == "redirected_statement" else None
    scope = body if body is not None else node
    return scope.start_byte, scope.end_byte


def _inside_backticks(node: Node) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type == "command_substitution" and parent.children and parent.children[0].type == "`":
            return True
        parent = parent.parent
    return False


def _commands_in(node: Node) -> list[Node]:
    """The command nodes in `node` outside substitutions (those read their own stdin)."""
    found: list[Node] = []
    stack = [node]
    while stack:
        cur = stack.pop()
        if cur.type == "command":
            found.append(cur)
        elif cur.type not in SUBSTITUTION_KINDS:
            stack.extend(cur.children)
    return found


def _is_arith_command(node: Node) -> bool:
    return node.type == "compound_statement" and bool(node.children) and node.children[0].type == "(("


def _has_token(node: Node, tokens: frozenset[str]) -> bool:
    stack = list(node.children)
    while stack:
        cur = stack.pop()
        if not cur.is_named and cur.type in tokens:
            return True
        if cur.type not in SUBSTITUTION_KINDS and cur.type != "string":
            stack.extend(cur.children)
    return False
