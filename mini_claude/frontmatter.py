"""The YAML front matter of a `SKILL.md` (and, next, commands and agents): find it and parse it, failing closed.

Front matter is untrusted (repository files, MCP servers), so it goes through one door: PyYAML's `safe_load`
machinery (the libyaml C loader when available), bounded and narrowed to what JSON can say:

- at most `MAX_FRONTMATTER_BYTES` of YAML and `MAX_FRONTMATTER_DEPTH` levels of nesting;
- no aliases (`*name`): alias expansion is unbounded in the output (the "billion laughs" blow-up), so any alias
  is refused before anything is built. Anchors alone (`&name`) are harmless and accepted;
- plain scalars follow the YAML 1.2 core schema, as the Agent Skills tools and the MCP servers that list skills
  read them: `yes`/`on` stay strings, `0o17` and `0x1F` are integers, `012` is twelve, and a date such as
  `2025-01-31` stays the string written (the core schema has no timestamps);
- keys are the text written (`1: a` is `{"1": "a"}`, as JSON has it); a duplicate key is an error (parsers
  disagree on which one wins, and the MCP skill check must not be fooled);
- values must be JSON-like (strings, numbers, booleans, null, lists, string-keyed mappings): an explicit tag other
  than the core schema's, each on its own kind of node (`!!timestamp`, `!!binary`, `!!set`, `!!omap`, `!!map foo`,
  unknown `!tags`), is refused from the event stream before anything is built, and any other error a constructor
  raises on an odd value (`!!bool maybe`) is a FrontmatterError too.

Every failure is one `FrontmatterError` with one readable line (`front matter line 3: duplicate key 'name'`).
PyYAML is imported on first use, so importing this module (and `mini-claude --version`) stays fast. This module
is a leaf: both local skills and MCP-served skills (mini_claude.mcp.skills) use it.
"""

from __future__ import annotations

import functools
import math
import re
from typing import TYPE_CHECKING, Any

from mini_claude.errors import FrontmatterError

if TYPE_CHECKING:
    import yaml

__all__ = [
    "MAX_FRONTMATTER_BYTES",
    "MAX_FRONTMATTER_DEPTH",
    "parse_frontmatter",
    "same_value",
    "split_frontmatter",
]

MAX_FRONTMATTER_BYTES = 64 * 1024  # of YAML between the `---` lines, UTF-8 encoded
MAX_FRONTMATTER_DEPTH = 64  # nested lists / mappings

# the same delimiting the conformance harness and the Agent Skills tools use: a leading `---` line, the YAML,
# then a closing `---` line (trailing spaces allowed); an optional UTF-8 BOM first
_BLOCK = re.compile(r"^---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", re.S)

_CORE = "tag:yaml.org,2002:"
# YAML 1.2 core schema (yaml.org/spec/1.2.2 §10.3.2): (tag, pattern, the first characters it can start with)
_CORE_RESOLVERS = (
    (_CORE + "null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    (_CORE + "bool", r"^(?:true|True|TRUE|false|False|FALSE)$", list("tTfF")),
    (_CORE + "int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", list("-+0123456789")),
    (_CORE + "float", r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
                      r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$", list("-+.0123456789")),
)


def split_frontmatter(text: str) -> tuple[str, str]:
    """(the YAML between the `---` lines, the body after them). Raises FrontmatterError when there is none."""
    if text.startswith("\ufeff"):
        text = text[1:]
    match = _BLOCK.match(text)
    if match is None:
        raise FrontmatterError("no YAML front matter (the file must start with a '---' line and close it)")
    return match.group(1), text[match.end():]


def parse_frontmatter(text: str) -> dict[str, Any]:
    """The front matter of a SKILL.md text as a JSON-like dict ({} when empty). Raises FrontmatterError."""
    yaml_text, _body = split_frontmatter(text)
    size = len(yaml_text.encode("utf-8", "surrogatepass"))
    if size > MAX_FRONTMATTER_BYTES:
        raise FrontmatterError(f"front matter is {size} bytes, over the {MAX_FRONTMATTER_BYTES}-byte limit")
    import yaml

    loader = _loader_class()
    try:
        _check_events(yaml.parse(yaml_text, Loader=loader))
        value = yaml.load(yaml_text, Loader=loader)  # a safe loader: SafeConstructor, see _loader_class
    except yaml.MarkedYAMLError as exc:
        where = _where(exc.problem_mark or exc.context_mark)
        raise FrontmatterError(f"{where}: {exc.problem or exc.context or 'malformed YAML'}") from None
    except (yaml.YAMLError, RecursionError) as exc:  # unmarked reader errors (control characters), deep nesting
        raise FrontmatterError(f"front matter: {exc}".splitlines()[0]) from None
    except FrontmatterError:
        raise
    except Exception as exc:  # untrusted input fails closed: PyYAML's constructors raise plain errors on odd values
        raise FrontmatterError(f"front matter: a value cannot be read ({type(exc).__name__})") from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise FrontmatterError("front matter is not a mapping")
    _check_json_like(value, "")
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


def _check_events(events: Any) -> None:
    """Refuse aliases and over-deep nesting from the event stream, before any node is built."""
    import yaml

    depth = 0
    for event in events:
        if isinstance(event, yaml.AliasEvent):
            raise FrontmatterError(f"{_where(event.start_mark)}: aliases (*{event.anchor}) are not allowed")
        tag = getattr(event, "tag", None)  # only node events carry one (a PyYAML event class attribute)
        if tag is not None and tag != "!" and tag not in _ALLOWED_TAGS.get(type(event).__name__, ()):
            raise FrontmatterError(f"{_where(event.start_mark)}: the tag {tag} is not allowed here (only plain "
                                   f"strings, numbers, booleans, null, lists and mappings)")
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_FRONTMATTER_DEPTH:
                raise FrontmatterError(f"{_where(event.start_mark)}: nested deeper than {MAX_FRONTMATTER_DEPTH} "
                                       f"levels")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _where(mark: Any) -> str:
    """`front matter line N` for a YAML mark (lines counted from the first line after `---`)."""
    return "front matter" if mark is None else f"front matter line {mark.line + 1}"


def _check_json_like(value: Any, path: str) -> None:
    if value is None or isinstance(value, str | bool | int | float):
        return
    if isinstance(value, list):
        for index, item in enumerate(value):
            _check_json_like(item, f"{path}[{index}]")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            _check_json_like(item, f"{path}.{key}" if path else str(key))
        return
    raise FrontmatterError(f"front matter {path or 'value'}: a {type(value).__name__} value is not allowed (only "
                           f"strings, numbers, booleans, null, lists and mappings)")


# The explicit tags a node may carry (by PyYAML event class): the core schema's, each on its own kind of node, so
# `!!timestamp`, `!!binary`, `!!set`, `!!python/...` and `!!map foo` are refused before anything is built.
_ALLOWED_TAGS: dict[str, frozenset[str]] = {
    "ScalarEvent": frozenset(_CORE + name for name in ("str", "int", "float", "bool", "null")),
    "SequenceStartEvent": frozenset({_CORE + "seq"}),
    "MappingStartEvent": frozenset({_CORE + "map"}),
}


@functools.cache
def _loader_class() -> type[yaml.SafeLoader]:
    """PyYAML's safe loader (libyaml's when built in) with the core schema, text keys and no duplicate keys."""
    import yaml

    base: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C one is optional

    class CoreSchemaLoader(base):  # type: ignore[valid-type,misc]  # a base chosen at run time
        yaml_implicit_resolvers: dict[Any, list[tuple[str, re.Pattern[str]]]] = {}  # noqa: RUF012 - PyYAML's API

        def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[str, Any]:
            mapping: dict[str, Any] = {}
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode):
                    raise yaml.constructor.ConstructorError(None, None, "a key must be text, not a list or mapping",
                                                            key_node.start_mark)
                key = str(key_node.value)
                if key in mapping:
                    raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}",
                                                            key_node.start_mark)
                mapping[key] = self.construct_object(value_node, deep=deep)
            return mapping

    for tag, pattern, first in _CORE_RESOLVERS:
        CoreSchemaLoader.add_implicit_resolver(tag, re.compile(pattern), first)
    CoreSchemaLoader.add_constructor(_CORE + "int", _construct_int)
    CoreSchemaLoader.add_constructor(_CORE + "float", _construct_float)
    return CoreSchemaLoader


def _construct_int(loader: yaml.SafeLoader, node: yaml.Node) -> int:
    import yaml

    text = str(loader.construct_scalar(node))  # type: ignore[arg-type]  # an int tag is always on a scalar
    try:
        if text.startswith("0o"):
            return int(text[2:], 8)
        if text.startswith("0x"):
            return int(text[2:], 16)
        return int(text, 10)
    except ValueError:
        raise yaml.constructor.ConstructorError(None, None, f"not an integer: {text!r}", node.start_mark) from None


def _construct_float(loader: yaml.SafeLoader, node: yaml.Node) -> float:
    import yaml

    text = str(loader.construct_scalar(node))  # type: ignore[arg-type]  # a float tag is always on a scalar
    lowered = text.lower()
    if lowered in (".inf", "+.inf"):
        return math.inf
    if lowered == "-.inf":
        return -math.inf
    if lowered == ".nan":
        return math.nan
    try:
        return float(text)
    except ValueError:
        raise yaml.constructor.ConstructorError(None, None, f"not a number: {text!r}", node.start_mark) from None
