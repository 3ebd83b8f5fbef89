"""The SKILL.md front matter parser: the YAML subset skills use, and failing closed on everything else."""

from __future__ import annotations

import math

import pytest

from mini_claude.frontmatter import FrontmatterError, parse_frontmatter, same_value, split_frontmatter


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
    "name: &anchor a\n", "name: *alias\n", "name: !tag a\n", "name: {a: 1}\n", "? complex\n",
    "name: a\nname: b\n", "  indented: a\nname: b\n", "list:\n  - a: 1\n", "name: 'unterminated\n",
    "name: \"bad \\q escape\"\n", "just text\n", "- a\n", "name: [a, [b]]\n",
])
def test_unsupported_or_invalid_yaml_fails_closed(body: str) -> None:
    with pytest.raises(FrontmatterError):
        fm(body)


def test_same_value_tells_booleans_from_numbers() -> None:
    assert same_value({"a": [1, {"b": "c"}]}, {"a": [1, {"b": "c"}]})
    assert same_value(1, 1.0)
    assert not same_value(True, 1)
    assert not same_value(0, False)
    assert not same_value("1", 1)
    assert not same_value({"a": 1}, {"a": 1, "b": None})
    assert not same_value([1], [1, 2])
