"""The YAML front matter of a `SKILL.md`: find it, and parse the small YAML subset skills use.

Skill front matter (Agent Skills specification) is a flat-ish mapping: `name`, `description`, `license`,
`compatibility`, `allowed-tools`, and a `metadata` mapping. We parse that subset ourselves rather than add a
YAML dependency: block mappings nested by indentation, block sequences (`- item`), flow sequences of scalars
(`[a, b]`), plain / single-quoted / double-quoted scalars (plain ones may continue on more-indented lines),
block scalars (`|`, `>`, with `-` / `+` chomping), comments, and the YAML 1.2 core schema for plain scalars
(null, booleans, integers, floats). Anything else (anchors, aliases, tags, flow mappings, complex keys) raises
`FrontmatterError`: callers that verify front matter must fail closed, never guess.

This module is a leaf (stdlib only); both local skills and MCP-served skills (mini_claude.mcp.skills) use it.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from mini_claude.errors import FrontmatterError

__all__ = ["FrontmatterError", "parse_frontmatter", "same_value", "split_frontmatter"]

# the same delimiting the conformance harness and the Agent Skills tools use: a leading `---` line, the YAML,
# then a closing `---` line (trailing spaces allowed); an optional UTF-8 BOM first
_BLOCK = re.compile(r"^---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", re.S)
_KEY = re.compile(r"""^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s#'"\[\]{},&*!|>%@`-][^#]*?|-[^\s#][^#]*?):(?:[ \t]+(.*))?[ \t]*$""")
_INT = re.compile(r"^[-+]?[0-9]+$")
_OCT = re.compile(r"^0o[0-7]+$")
_HEX = re.compile(r"^0x[0-9a-fA-F]+$")
_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
_UNSUPPORTED_START = ("&", "*", "!", "{", "%", "@", "`", "? ")



def split_frontmatter(text: str) -> tuple[str, str]:
    """(the YAML between the `---` lines, the body after them). Raises FrontmatterError when there is none."""
    if text.startswith("\ufeff"):
        text = text[1:]
    match = _BLOCK.match(text)
    if match is None:
        raise FrontmatterError("no YAML front matter (the file must start with a '---' line and close it)")
    return match.group(1), text[match.end():]


def parse_frontmatter(text: str) -> dict[str, Any]:
    """The front matter of a SKILL.md text as a JSON-like dict. Raises FrontmatterError."""
    yaml_text, _body = split_frontmatter(text)
    lines = [line.rstrip("\r") for line in yaml_text.split("\n")]
    for number, line in enumerate(lines, 1):
        if "\t" in line[: len(line) - len(line.lstrip())]:
            raise FrontmatterError(f"front matter line {number}: tab in indentation")
    parser = _Parser(lines)
    value = parser.block(0)
    parser.skip_blank()
    if parser.pos < len(lines):
        raise FrontmatterError(f"front matter line {parser.pos + 1}: unexpected indentation")
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise FrontmatterError("front matter is not a mapping")
    return value


def same_value(a: Any, b: Any) -> bool:
    """Deep equality that tells booleans from numbers (Python's `True == 1` would hide a changed field)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


class _Parser:
    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.pos = 0

    def fail(self, message: str) -> FrontmatterError:
        return FrontmatterError(f"front matter line {self.pos + 1}: {message}")

    def skip_blank(self) -> None:
        while self.pos < len(self.lines) and _is_blank(self.lines[self.pos]):
            self.pos += 1

    def block(self, min_indent: int) -> Any:
        """A block node whose lines are indented at least `min_indent`; None when there is none."""
        self.skip_blank()
        if self.pos >= len(self.lines):
            return None
        line = self.lines[self.pos]
        indent = _indent(line)
        if indent < min_indent:
            return None
        content = line[indent:]
        if content == "-" or content.startswith("- "):
            return self.sequence(indent)
        return self.mapping(indent)

    def mapping(self, indent: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        while True:
            self.skip_blank()
            if self.pos >= len(self.lines):
                return result
            line = self.lines[self.pos]
            here = _indent(line)
            if here < indent:
                return result
            if here > indent:
                raise self.fail("unexpected indentation")
            content = line[indent:]
            if content.startswith(_UNSUPPORTED_START):
                raise self.fail(f"unsupported YAML syntax {content[:2].strip()!r}")
            match = _KEY.match(content)
            if match is None:
                raise self.fail("expected 'key: value'")
            key = _key(match.group(1).strip())
            if key in result:
                raise self.fail(f"duplicate key {key!r}")
            rest = (match.group(2) or "").strip()
            self.pos += 1
            result[key] = self.value_after_key(rest, indent)

    def sequence(self, indent: int) -> list[Any]:
        result: list[Any] = []
        while True:
            self.skip_blank()
            if self.pos >= len(self.lines):
                return result
            line = self.lines[self.pos]
            here = _indent(line)
            if here < indent:
                return result
            content = line[indent:]
            if here > indent or not (content == "-" or content.startswith("- ")):
                if here == indent:
                    return result
                raise self.fail("unexpected indentation")
            rest = content[1:].strip()
            if _KEY.match(rest) is not None and not rest.startswith(("'", '"')):
                raise self.fail("mappings inside sequences are not supported")
            self.pos += 1
            result.append(self.value_after_key(rest, indent))

    def value_after_key(self, rest: str, indent: int) -> Any:
        """The value that follows `key:` (or `-`) whose text on the same line is `rest`."""
        if rest == "" or rest.startswith("#"):
            child = self.block(indent + 1)
            if child is None:  # `key:` followed by a sequence at the same indentation is valid YAML
                self.skip_blank()
                if self.pos < len(self.lines) and _indent(self.lines[self.pos]) == indent and (
                        self.lines[self.pos][indent:] == "-" or self.lines[self.pos][indent:].startswith("- ")):
                    return self.sequence(indent)
            return child
        if rest[0] in "|>":
            return self.block_scalar(rest, indent)
        if rest.startswith(_UNSUPPORTED_START):
            raise self.fail(f"unsupported YAML syntax {rest[:2].strip()!r}")
        if rest[0] == "[":
            return _flow_sequence(rest, self.fail)
        if rest[0] in "'\"":
            return self.quoted(rest, indent)
        return self.plain(rest, indent)

    def continuation(self, indent: int) -> list[str]:
        """More-indented lines that continue a scalar (blank lines inside kept as '')."""
        parts: list[str] = []
        while self.pos < len(self.lines):
            line = self.lines[self.pos]
            if _is_blank(line):
                parts.append("")
                self.pos += 1
                continue
            if _indent(line) <= indent:
                break
            parts.append(line.strip())
            self.pos += 1
        while parts and parts[-1] == "":  # trailing blank lines belong to no scalar
            parts.pop()
            self.pos -= 1
        return parts

    def plain(self, rest: str, indent: int) -> Any:
        first = _strip_comment(rest)
        parts = self.continuation(indent)
        if not parts:
            return _resolve(first)
        if any(" #" in part or part.startswith("#") for part in parts) or any(
                _KEY.match(part) for part in parts if part):
            raise self.fail("ambiguous multi-line plain scalar (quote it)")
        return _fold([first, *parts])

    def quoted(self, rest: str, indent: int) -> str:
        quote = rest[0]
        text = rest
        extra = self.continuation(indent)
        if extra:
            text = _fold([rest, *extra])
        end = _closing_quote(text, quote)
        if end is None:
            raise self.fail("unterminated quoted string")
        tail = text[end + 1:].strip()
        if tail and not tail.startswith("#"):
            raise self.fail("text after a quoted string")
        inner = text[1:end]
        if quote == "'":
            return inner.replace("''", "'")
        try:
            return str(json.loads('"' + inner.replace("\\/", "/") + '"'))
        except ValueError:
            raise self.fail("unsupported escape in a double-quoted string") from None

    def block_scalar(self, header: str, indent: int) -> str:
        header = _strip_comment(header)
        style, chomp = header[0], ""
        for flag in header[1:]:
            if flag in "+-" and not chomp:
                chomp = flag
            else:
                raise self.fail(f"unsupported block scalar header {header!r}")
        lines: list[str] = []
        block_indent: int | None = None
        while self.pos < len(self.lines):
            line = self.lines[self.pos]
            if _is_blank(line):
                lines.append("")
                self.pos += 1
                continue
            here = _indent(line)
            if here <= indent or (block_indent is not None and here < block_indent):
                break
            if block_indent is None:
                block_indent = here
            lines.append(line[block_indent:])
            self.pos += 1
        trailing = 0
        while lines and lines[-1] == "":
            lines.pop()
            trailing += 1
        self.pos -= trailing  # trailing blank lines are re-read as blank by the caller (harmless)
        text = "\n".join(lines) if style == "|" else _fold_block(lines)
        if not lines:
            return ""
        if chomp == "-":
            return text
        if chomp == "+":
            return text + "\n" * (trailing + 1)
        return text + "\n"


def _is_blank(line: str) -> bool:
    stripped = line.strip()
    return stripped == "" or stripped.startswith("#")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _key(raw: str) -> str:
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        return raw[1:-1]
    return raw


def _strip_comment(text: str) -> str:
    index = text.find(" #")
    return (text[:index] if index >= 0 else text).strip()


def _closing_quote(text: str, quote: str) -> int | None:
    i = 1
    while i < len(text):
        ch = text[i]
        if quote == '"' and ch == "\\":
            i += 2
            continue
        if ch == quote:
            if quote == "'" and i + 1 < len(text) and text[i + 1] == "'":
                i += 2
                continue
            return i
        i += 1
    return None


def _fold(parts: list[str]) -> str:
    """Fold the lines of a multi-line flow scalar: a line break is a space, an empty line a newline."""
    out = parts[0]
    pending_newlines = 0
    for part in parts[1:]:
        if part == "":
            pending_newlines += 1
            continue
        out += ("\n" * pending_newlines) if pending_newlines else " "
        out += part
        pending_newlines = 0
    return out


def _fold_block(lines: list[str]) -> str:
    """Fold a `>` block scalar: lines join with a space, each empty line is a newline, and more-indented
    lines keep their breaks."""
    out = ""
    previous: str | None = None
    for line in lines:
        if previous is None:
            out = line
        elif line == "":
            out += "\n"
        elif previous == "":
            out += line
        elif line.startswith(" ") or previous.startswith(" "):
            out += "\n" + line
        else:
            out += " " + line
        previous = line
    return out


def _flow_sequence(text: str, fail: Any) -> list[Any]:
    text = _strip_comment(text)
    if not text.endswith("]") or "[" in text[1:] or "{" in text:
        raise fail("only flat flow sequences like [a, b] are supported")
    inner = text[1:-1].strip()
    if not inner:
        return []
    items: list[Any] = []
    for raw in inner.split(","):
        item = raw.strip()
        if len(item) >= 2 and item[0] == item[-1] and item[0] in "'\"":
            items.append(item[1:-1])
        elif not item or item[0] in "'\"":
            raise fail("unsupported item in a flow sequence (commas inside quotes are not supported)")
        else:
            items.append(_resolve(item))
    return items


def _resolve(text: str) -> Any:
    """A plain scalar by the YAML 1.2 core schema."""
    if text in ("", "~", "null", "Null", "NULL"):
        return None
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if _INT.match(text):
        return int(text)
    if _OCT.match(text):
        return int(text[2:], 8)
    if _HEX.match(text):
        return int(text[2:], 16)
    if _FLOAT.match(text):
        return float(text)
    lowered = text.lower()
    if lowered in (".inf", "+.inf"):
        return math.inf
    if lowered == "-.inf":
        return -math.inf
    if lowered == ".nan":
        return math.nan
    return text
