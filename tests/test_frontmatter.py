"""The SKILL.md front matter parser: PyYAML safe loading with the core schema, bounded, JSON-like values only,
and failing closed (one readable line) on everything else."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

from mini_claude.errors import FrontmatterError
from mini_claude.frontmatter import (
    MAX_FRONTMATTER_BYTES,
    MAX_FRONTMATTER_DEPTH,
    parse_frontmatter,
    same_value,
    split_frontmatter,
)


def fm(body: str) -> dict[str, object]:
    return parse_frontmatter(f"---\n{body}---\n\nBody text.\n")


def test_split_returns_yaml_and_body_and_accepts_bom_and_crlf() -> None:
    assert split_frontmatter("---\nname: a\n---\nbody\n") == ("name: a", "body\n")
    assert parse_frontmatter("\ufeff---\r\nname: a\r\ndescription: b\r\n---\r\nbody") == {"name": "a",
                                                                                         "description": "b"}


@pytest.mark.parametrize("text", ["no front matter", "---\nname: a\n", "\n---\nname: a\n---\n"])
def test_missing_front_matter_is_an_error(text: str) -> None:
    with pytest.raises(FrontmatterError, match="no YAML front matter"):
        parse_frontmatter(text)


def test_scalars_follow_the_core_schema() -> None:
    assert fm("a: 1\nb: -2.5\nc: true\nd: False\ne: ~\nf: null\ng: 0x1F\nh: 1e3\ni: .inf\nj: 2.1.0\nk: yes\n") == {
        "a": 1, "b": -2.5, "c": True, "d": False, "e": None, "f": None, "g": 31, "h": 1000.0, "i": math.inf,
        "j": "2.1.0", "k": "yes"}


def test_quoted_strings_keys_and_comments() -> None:
    assert fm("""name: "pdf: processing"  # a comment
'quoted key': 'it''s'
esc: "tab\\there \\u00e9"
url: http://example.com/a#frag
hash: a # comment
# a full-line comment
""") == {"name": "pdf: processing", "quoted key": "it's", "esc": "tab\there é",
         "url": "http://example.com/a#frag", "hash": "a"}


def test_nested_mappings_sequences_and_flow_sequences() -> None:
    assert fm("""metadata:
  version: "2.1.0"
  nested:
    deep: 1
tags:
  - a
  - 2
same-indent:
- x
- y
allowed: [Bash, 'Read', 3]
empty: []
""") == {"metadata": {"version": "2.1.0", "nested": {"deep": 1}}, "tags": ["a", 2], "same-indent": ["x", "y"],
         "allowed": ["Bash", "Read", 3], "empty": []}


def test_multi_line_plain_and_block_scalars() -> None:
    assert fm("""description: Extract text
  and tables from PDFs

  second paragraph
literal: |
  line 1
    indented
keep: |+
  kept

strip: >-
  folded
  text

  para
next: 1
""") == {"description": "Extract text and tables from PDFs\nsecond paragraph",
         "literal": "line 1\n  indented\n", "keep": "kept\n\n", "strip": "folded text\npara", "next": 1}


@pytest.mark.parametrize("body", [
    "name: *alias\n", "name: !tag a\n", "? [a, b]\n: x\n",
    "name: a\nname: b\n", "  indented: a\nname: b\n", "name: 'unterminated\n",
    "name: \"bad \\q escape\"\n", "just text\n", "- a\n", "m:\n  x:\n\t- 1\n", "x: \x01\n",
])
def test_unsupported_or_invalid_yaml_fails_closed(body: str) -> None:
    with pytest.raises(FrontmatterError) as info:
        fm(body)
    assert "\n" not in str(info.value)


def test_valid_yaml_the_old_subset_refused_is_accepted() -> None:
    # flow mappings, nested flow sequences, mappings in sequences, explicit `?` keys and lone anchors are YAML
    assert fm("name: &anchor a\nflow: {a: [1, [b]]}\nlist:\n  - a: 1\n? complex\n") == {
        "name": "a", "flow": {"a": [1, ["b"]]}, "list": [{"a": 1}], "complex": None}


def test_core_schema_not_yaml_1_1() -> None:
    assert fm("k: 012\nl: 0o17\nm: on\nn: no\nd: 2025-01-31\nt: 12:30:00\nu: 1_000\n") == {
        "k": 12, "l": 15, "m": "on", "n": "no", "d": "2025-01-31", "t": "12:30:00", "u": "1_000"}


def test_keys_are_the_text_written() -> None:
    assert fm("1: one\nnull: n\ntrue: t\n'2': two\n<<: {a: 1}\n") == {
        "1": "one", "null": "n", "true": "t", "2": "two", "<<": {"a": 1}}


@pytest.mark.parametrize(("body", "message"), [
    ("name: a\nname: b\n", "front matter line 2: duplicate key 'name'"),
    ("name: *alias\n", "front matter line 1: aliases (*alias) are not allowed"),
    ("name: !tag a\n", "front matter line 1: the tag !tag is not allowed here (only plain strings, numbers, "
                      "booleans, null, lists and mappings)"),
    ("? [a, b]\n: x\n", "front matter line 1: a key must be text, not a list or mapping"),
    ("just text\n", "front matter is not a mapping"),
    ("e: !!int abc\n", "front matter line 1: not an integer: 'abc'"),
])
def test_error_lines(body: str, message: str) -> None:
    with pytest.raises(FrontmatterError) as info:
        fm(body)
    assert str(info.value) == message


def test_billion_laughs_is_refused_before_expansion() -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]" for i in range(8)]
    with pytest.raises(FrontmatterError, match=r"^front matter line 2: aliases \(\*a\) are not allowed$"):
        fm("\n".join(lines) + "\n")


@pytest.mark.parametrize(("body", "message"), [
    ("d: !!timestamp 2025-01-31\n", "front matter line 1: the tag tag:yaml.org,2002:timestamp is not allowed"),
    ("b: !!binary aGk=\n", "front matter line 1: the tag tag:yaml.org,2002:binary is not allowed"),
    ("m:\n  s: !!set {a, b}\n", "front matter line 2: the tag tag:yaml.org,2002:set is not allowed"),
    ("o: !!omap [a: 1]\n", "front matter line 1: the tag tag:yaml.org,2002:omap is not allowed"),
    ("r: !!python/object:os.system x\n", "front matter line 1: the tag tag:yaml.org,2002:python/object:os.system "
                                        "is not allowed"),
])
def test_values_that_are_not_json_like_are_refused(body: str, message: str) -> None:
    with pytest.raises(FrontmatterError) as info:
        fm(body)
    assert str(info.value).startswith(message)


def test_size_and_depth_are_bounded() -> None:
    at_limit = "x" * (MAX_FRONTMATTER_BYTES - len("a: "))  # the YAML ends before the newline of its last line
    assert fm(f"a: {at_limit}\n") == {"a": at_limit}
    with pytest.raises(FrontmatterError, match=f"^front matter is {MAX_FRONTMATTER_BYTES + 1} bytes, over the "
                                               f"{MAX_FRONTMATTER_BYTES}-byte limit$"):
        fm(f"a: {at_limit}x\n")
    deep = MAX_FRONTMATTER_DEPTH - 1  # the top-level mapping is one level
    innermost = fm("a: " + "[" * deep + "]" * deep + "\n")["a"]
    for _ in range(deep - 1):
        (innermost,) = innermost
    assert innermost == []
    with pytest.raises(FrontmatterError, match=f"^front matter line 1: nested deeper than {MAX_FRONTMATTER_DEPTH} "
                                               f"levels$"):
        fm("a: " + "[" * (deep + 1) + "]" * (deep + 1) + "\n")


def test_pyyaml_is_imported_on_first_use_only() -> None:
    code = "import sys, mini_claude.frontmatter; print('yaml' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_same_value_tells_booleans_from_numbers() -> None:
    assert same_value({"a": [1, {"b": "c"}]}, {"a": [1, {"b": "c"}]})
    assert same_value(1, 1.0)
    assert not same_value(True, 1)
    assert not same_value(0, False)
    assert not same_value("1", 1)
    assert not same_value({"a": 1}, {"a": 1, "b": None})
    assert not same_value([1], [1, 2])


@pytest.mark.parametrize(("yaml_text", "expected"), [
    ("a: !!timestamp nope", "front matter line 1: the tag tag:yaml.org,2002:timestamp is not allowed here"),
    ("a: !!timestamp 2025-13-45", "front matter line 1: the tag tag:yaml.org,2002:timestamp is not allowed here"),
    ("a: !!map foo", "front matter line 1: the tag tag:yaml.org,2002:map is not allowed here"),
    ("a: !!set foo", "front matter line 1: the tag tag:yaml.org,2002:set is not allowed here"),
    ("a: !!python/object:os.system x", "front matter line 1: the tag tag:yaml.org,2002:python/object:os.system is "
                                       "not allowed here"),
    ("a: !custom x", "front matter line 1: the tag !custom is not allowed here"),
    ("a: !!bool maybe", "front matter: a value cannot be read (KeyError)"),
])
def test_malformed_or_foreign_tags_fail_closed(yaml_text: str, expected: str) -> None:
    """Every bad tag in untrusted front matter is a FrontmatterError (one bad SKILL.md must not end the agent)."""
    with pytest.raises(FrontmatterError) as info:
        parse_frontmatter(f"---\n{yaml_text}\n---\nbody\n")
    assert str(info.value).startswith(expected)


def test_core_tags_on_their_own_kind_of_node_are_accepted() -> None:
    text = "---\na: !!str 12\nb: !!int '7'\nc: !!seq [1]\nd: !!map {x: 1}\ne: !!null ''\n---\n"
    assert parse_frontmatter(text) == {"a": "12", "b": 7, "c": [1], "d": {"x": 1}, "e": None}
