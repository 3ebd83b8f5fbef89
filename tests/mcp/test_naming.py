"""Qualified tool names: exact strings, the 64-character limit, and no collisions between distinct raw pairs."""

from __future__ import annotations

import hashlib
import random

import pytest

from mini_claude.mcp.naming import (
    MAX_TOOL_NAME_LEN,
    TOOL_NAME_RE,
    ToolNameTable,
    _hashed_name,
    qualify_tool_name,
    sanitize_server_name,
)


def _h(server: str, tool: str) -> str:
    return hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]


@pytest.mark.parametrize(
    ("server", "tool", "expected"),
    [
        ("demo", "add", "mcp__demo__add"),
        ("github", "create_issue", "mcp__github__create_issue"),
        ("my-server", "get-x", "mcp__my-server__get-x"),
        ("foo", "bar_baz", "mcp__foo__bar_baz"),
        ("a", "b__c", "mcp__a__b__c"),  # a "__" in the tool is fine: the server ends at the first "__"
        ("_lead", "x", "mcp___lead__x"),
        ("my.server", "get-x", "mcp__my_server__get-x_a32248fe"),
        ("foo", "bar.baz", "mcp__foo__bar_baz_3ca6b693"),
        ("my server", "list files", "mcp__my_server__list_files_ef3b3275"),
        ("demo", "é", "mcp__demo____fdb185c4"),
        ("a__b", "c", "mcp__a__b__c_a92700ce"),  # would read back as ("a", "b__c")
        ("a_", "b", "mcp__a___b_a00766a3"),  # would read back as ("a", "_b")
        ("", "x", "mcp____x_3c7e9bc9"),
    ],
)
def test_exact_names(server: str, tool: str, expected: str) -> None:
    assert qualify_tool_name(server, tool) == expected


def test_hash_suffix_is_sha256_of_the_raw_pair() -> None:
    assert qualify_tool_name("my.server", "get-x").endswith("_" + _h("my.server", "get-x"))


def test_long_names_are_cut_to_64_with_a_hash() -> None:
    name = qualify_tool_name("a" * 100, "b" * 100)
    assert name == "mcp__" + "a" * 50 + "_21829561"
    assert len(name) == MAX_TOOL_NAME_LEN
    name = qualify_tool_name("server", "x" * 100)
    assert name == "mcp__server__" + "x" * 42 + "_9fc39f5e"
    assert len(name) == 64
    # exactly 64 needs no hash; 65 does
    fits = "t" * (64 - len("mcp__srv__"))
    assert qualify_tool_name("srv", fits) == "mcp__srv__" + fits
    assert len(qualify_tool_name("srv", fits + "t")) == 64
    assert qualify_tool_name("srv", fits + "t") != qualify_tool_name("srv", fits + "u")


def test_deterministic() -> None:
    assert qualify_tool_name("x.y", "z" * 90) == qualify_tool_name("x.y", "z" * 90)


def test_sanitize_server_name() -> None:
    assert sanitize_server_name("my.server") == "my_server"
    assert sanitize_server_name("ok-name_1") == "ok-name_1"
    assert sanitize_server_name("") == "_"


_ALPHABET = "ab_-.:/ é__A1"


def _random_name(rng: random.Random) -> str:
    length = rng.choice([0, 1, 2, 3, 5, 8, 30, 70])
    return "".join(rng.choice(_ALPHABET) for _ in range(length))


def test_distinct_pairs_never_collide_property() -> None:
    rng = random.Random(1234)
    pairs = {(_random_name(rng) or "s", _random_name(rng)) for _ in range(20_000)}
    # adversarial neighbours: same text, different split or lossy characters
    pairs |= {("a", "b__c"), ("a__b", "c"), ("a_", "_b"), ("a", "__b"), ("a_", "b"), ("a", "_b"),
              ("foo.bar", "x"), ("foo_bar", "x"), ("foo", "bar.x"), ("foo", "bar_x")}
    names: dict[str, tuple[str, str]] = {}
    for pair in pairs:
        name = qualify_tool_name(*pair)
        assert TOOL_NAME_RE.match(name), (pair, name)
        assert name not in names, (pair, names.get(name))
        names[name] = pair


def test_table_routes_back_without_splitting() -> None:
    table = ToolNameTable([("demo", "add"), ("a__b", "c"), ("a", "b__c"), ("my.server", "get-x")])
    assert table.qualified("demo", "add") == "mcp__demo__add"
    assert table.lookup("mcp__a__b__c") == ("a", "b__c")
    assert table.lookup("mcp__a__b__c_a92700ce") == ("a__b", "c")
    assert table.lookup("mcp__my_server__get-x_a32248fe") == ("my.server", "get-x")
    assert table.lookup("mcp__nope__x") is None
    assert "mcp__demo__add" in table
    assert list(table) == ["mcp__demo__add", "mcp__a__b__c_a92700ce", "mcp__a__b__c",
                           "mcp__my_server__get-x_a32248fe"]
    assert len(table) == 4
    with pytest.raises(KeyError):
        table.qualified("demo", "missing")


def test_table_resolves_a_residual_collision_deterministically() -> None:
    # A tool literally named like another pair's hashed name: the only way two pairs share a qualified name.
    hashed = qualify_tool_name("s", "x.y")  # "mcp__s__x_y_<hash>"
    impostor = ("s", hashed.removeprefix("mcp__s__"))
    assert qualify_tool_name(*impostor) == hashed
    forward = ToolNameTable([("s", "x.y"), impostor])
    backward = ToolNameTable([impostor, ("s", "x.y")])
    for table in (forward, backward):
        # ("s", "x.y") sorts first, keeps the name; the impostor gets the salted hash
        assert table.qualified("s", "x.y") == hashed
        assert table.qualified(*impostor) == _hashed_name(*impostor, salt=1)
        assert table.lookup(table.qualified(*impostor)) == impostor
        assert TOOL_NAME_RE.match(table.qualified(*impostor))


def test_table_lists_duplicate_pairs_once() -> None:
    table = ToolNameTable([("demo", "add"), ("demo", "add")])
    assert len(table) == 1
