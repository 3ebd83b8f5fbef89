"""Where bash evaluates a value as code, in the parse tree: arithmetic over a variable (a value such as
`a[$(cmd)]` runs cmd), `${x@P}`, indirection, substring offsets and subscripts that are not numbers, `[[ … -eq … ]]`
and `-v`. bash_tree.py calls these on each node of those kinds; they mark the script blind (and so opaque) with
the reason.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from mini_claude.permissions.bash_script import SUBSTITUTION_KINDS, ParsedScript

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["check_arithmetic", "check_expansion", "check_test"]

# Arithmetic bash may evaluate without running code: numbers and operators only. A name (`x`, `$x`, `a[i]`) is
# evaluated as an arithmetic expression in turn, so a value such as `a[$(cmd)]` runs cmd.
_PURE_ARITH_RE = re.compile(r"^[\s0-9+\-*/%<>=!&|^~?:,()]*$")
_ARITH_TEST_OPS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_ARITH_TEST_RE = re.compile(r"(?<![^\s(!])-(?:eq|ne|lt|le|gt|ge|v|R)(?![^\s)])")
_NUMERIC_SPECIALS = frozenset({"#", "?", "$", "!"})
_PLAIN_VAR_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\[[0-9]+\])?$")


def check_arithmetic(s: ParsedScript, node: Node, what: str) -> None:
    """Arithmetic over anything but numbers evaluates a variable's value as code (`a[$(cmd)]` runs cmd)."""
    if node.type == "c_style_for_statement":
        body = node.child_by_field_name("body")
        end = body.start_byte if body is not None else node.end_byte
        text = s.source[node.start_byte:end].decode("utf-8", "replace")
        text = text.split("((", 1)[-1].rsplit("))", 1)[0]
    else:
        text = s.text_of(node)
        text = text[3:-2] if text.startswith("$((") else text[2:-1] if text.startswith("$[") else text[2:-2]
    if not _PURE_ARITH_RE.match(text):
        s.blind(f"{what} over a variable (bash evaluates its value as arithmetic, which can run code)")

def check_expansion(s: ParsedScript, node: Node) -> None:
    """`${...}` forms that evaluate a value as code: `${x@P}`, indirection `${!x}`, substring offsets and
    array subscripts that are not numbers (arithmetic), `$((...))` over variables."""
    if node.type == "arithmetic_expansion":
        check_arithmetic(s, node, "arithmetic")
        return
    if node.type == "subscript":
        index = [c for c in node.children if c.is_named][1:2]
        if not index or not (index[0].type == "number" or s.text_of(index[0]) in ("@", "*")):
            s.blind("an array subscript over a variable (bash evaluates it as arithmetic, which can run "
                         "code)")
        return
    kinds = [c.type for c in node.children]
    texts = [s.text_of(c) for c in node.children]
    if len(kinds) > 1 and kinds[1] == "!":
        s.blind("an indirect expansion (${!x}: a value used as a name, which can run code)")
    if "special_variable_name" in kinds and texts[kinds.index("special_variable_name")] == "_":
        s.opaque("the previous command's last argument ($_) re-read")
    for k, child in enumerate(node.children):
        if child.is_named or child.type != "@" or k == 1:
            continue
        if k + 1 < len(texts) and texts[k + 1] == "P":
            s.blind("prompt expansion (${x@P} runs the command substitutions in a value)")
        s.opaque("a ${x@...} transformation")
    if ":" in kinds:
        tail = s.source[node.children[kinds.index(":")].end_byte:node.end_byte - 1]
        if not _PURE_ARITH_RE.match(tail.decode("utf-8", "replace")):
            s.blind("a substring offset over a variable (bash evaluates it as arithmetic, which can run "
                         "code)")

def check_test(s: ParsedScript, node: Node) -> None:
    """`[[ a -eq b ]]` evaluates both sides as arithmetic; `-v a[i]` evaluates the subscript."""
    seen = 0
    stack = list(node.children)
    while stack:
        cur = stack.pop()
        stack.extend(c for c in cur.children if c.type not in SUBSTITUTION_KINDS)
        if cur.type != "test_operator":
            continue
        op = s.text_of(cur)
        parent = cur.parent
        operands = [c for c in parent.children if c.is_named and c.id != cur.id] if parent is not None else []
        if op in _ARITH_TEST_OPS:
            seen += 1
            if parent is None or parent.type != "binary_expression" or \
                    not all(_numeric(s, c) for c in operands):
                s.blind(f"a test with {op} over a variable (bash evaluates it as arithmetic, which can "
                             "run code)")
        elif op in ("-v", "-R"):
            seen += 1
            value = s.static(operands[0]) if len(operands) == 1 else None
            if value is None or not _PLAIN_VAR_RE.match(value):
                s.blind(f"a test with {op} over a computed name (a subscript is arithmetic, which can "
                             "run code)")
    if len(_ARITH_TEST_RE.findall(s.text_of(node))) != seen:
        s.blind("a test the parser may have misread (arithmetic operators it did not place)")

def _numeric(s: ParsedScript, node: Node) -> bool:
    if node.type == "simple_expansion":
        return all(c.type != "variable_name" and s.text_of(c) in _NUMERIC_SPECIALS
                   for c in node.children if c.is_named)
    value = s.static(node)
    return value is not None and re.fullmatch(r"\s*[-+]?[0-9]+\s*", value) is not None
