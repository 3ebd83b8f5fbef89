"""The catalogue grows with a fleet server by server (issue 19: "index, catalogue and name table update
incrementally"): each server's tools are named once per listing as it comes up, the whole table is put together
linearly, and it is the same table the general algorithm builds — collisions included (hypothesis)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mini_claude.mcp.naming as naming
from mini_claude.mcp.catalog import ToolCatalog
from mini_claude.mcp.config_entry import ServerConfig
from mini_claude.mcp.naming import ServerNames, ToolNameTable, qualify_tool_name
from mini_claude.mcp.protocol import McpTool
from mini_claude.mcp.server_state import ServerState, ServerStatus
from tests.fleet.catalog_manager import CatalogManager

# names that exercise every rule: plain, illegal characters, "__", a trailing "_", too long, and one tool named like
# another pair's hashed name (the only way two pairs meet)
IMPOSTOR = qualify_tool_name("s", "x.y").removeprefix("mcp__s__")
SERVER_NAMES = st.sampled_from(["s", "a", "a_", "a__b", "my.server", "x" * 60, "t"])
CROSS = qualify_tool_name("a__b", "c").removeprefix("mcp__a__")  # server "a"'s tool that names like ("a__b", "c")
TOOL_NAMES = st.sampled_from(["x.y", IMPOSTOR, CROSS, "add", "b__c", "_b", "get-x", "y" * 70, "c"])


def _tool(name: str) -> McpTool:
    return McpTool(name, None, None, {"type": "object"}, None, {}, {"name": name})


def _state(server: str, tools: list[str]) -> ServerState:
    return ServerState(ServerConfig(name=server, type="stdio", command="x"), status=ServerStatus.READY,
                       tools=[_tool(name) for name in tools])


def _same(left: ToolNameTable, right: ToolNameTable, pairs: list[tuple[str, str]]) -> None:
    assert list(left) == list(right)
    for pair in pairs:
        assert left.qualified(*pair) == right.qualified(*pair)
        assert left.lookup(left.qualified(*pair)) == pair


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(SERVER_NAMES, st.lists(TOOL_NAMES, max_size=5), max_size=5))
def test_combining_servers_names_is_the_general_table(fleet: dict[str, list[str]]) -> None:
    pairs = [(server, tool) for server, tools in fleet.items() for tool in tools]
    combined = ToolNameTable.combine(ServerNames(server, tools) for server, tools in fleet.items())
    _same(combined, ToolNameTable(pairs), pairs)


def test_a_collision_across_two_servers_is_resolved_as_the_general_table_does() -> None:
    hashed = qualify_tool_name("a__b", "c")  # "mcp__a__b__c_<hash>": server "a" can name a tool to match it
    pairs = [("a", CROSS), ("a__b", "c")]
    assert qualify_tool_name(*pairs[0]) == hashed
    combined = ToolNameTable.combine([ServerNames("a", [CROSS]), ServerNames("a__b", ["c"])])
    _same(combined, ToolNameTable(pairs), pairs)
    assert combined.qualified("a", CROSS) == hashed and combined.qualified("a__b", "c") != hashed


def test_a_fleet_is_named_once_per_tool_and_only_a_changed_server_again(monkeypatch: pytest.MonkeyPatch) -> None:
    named: list[tuple[str, str]] = []
    qualify = naming.qualify_tool_name

    def counting(server: str, tool: str) -> str:
        named.append((server, tool))
        return qualify(server, tool)

    monkeypatch.setattr(naming, "qualify_tool_name", counting)
    states: dict[str, ServerState] = {}
    catalog = ToolCatalog(states)
    for k in range(30):  # a fleet comes up: after each server the session asks for the whole list
        state = states[f"srv{k}"] = _state(f"srv{k}", [f"tool{j}" for j in range(20)])
        catalog.changed(state)
        assert len(catalog.entries()) == 20 * (k + 1)
    assert len(named) == 30 * 20  # each tool named once, not once per server that came up after it
    before = {id(entry) for entry in catalog.server_entries("srv0")}
    states["srv7"].tools = [_tool("renamed")]  # one server's list changes
    catalog.changed(states["srv7"])
    entries = catalog.entries()
    assert len(named) == 30 * 20 + 1 and len(entries) == 29 * 20 + 1
    assert {id(entry) for entry in catalog.server_entries("srv0")} == before  # the others' entries are kept
    general = ToolNameTable((s.name, t.name) for s in states.values() for t in s.tools)
    assert [entry.qualified_name for entry in entries] == list(general)


def test_a_server_going_down_leaves_the_catalogue() -> None:
    states: dict[str, Any] = {"a": _state("a", ["x"]), "b": _state("b", ["y"])}
    catalog = ToolCatalog(states)
    for state in states.values():
        catalog.changed(state)
    assert [e.qualified_name for e in catalog.entries()] == ["mcp__a__x", "mcp__b__y"]
    states["a"].status = ServerStatus.FAILED
    catalog.changed(states["a"])
    assert [e.qualified_name for e in catalog.entries()] == ["mcp__b__y"]
    assert catalog.server_entries("a") == [] and catalog.server_of("mcp__b__y") == "b"


def test_each_tool_is_wrapped_once_as_its_server_comes_up(monkeypatch: pytest.MonkeyPatch) -> None:
    from mini_claude.tools import mcp_tool

    states: dict[str, ServerState] = {}
    manager = CatalogManager(states)
    catalog = manager.catalog

    made: list[str] = []
    init = mcp_tool.McpToolAdapter.__init__

    def counting(self: Any, manager: Any, entry: Any, *args: Any) -> None:
        made.append(entry.qualified_name)
        init(self, manager, entry, *args)

    monkeypatch.setattr(mcp_tool.McpToolAdapter, "__init__", counting)
    adapters = mcp_tool.McpToolAdapters(manager)  # type: ignore[arg-type]
    for k in range(10):
        state = states[f"srv{k}"] = _state(f"srv{k}", [f"tool{j}" for j in range(5)])
        catalog.changed(state)
        adapters.server_ready(state.name)  # the session's listener, as each server comes up
    assert len(made) == 50
    first = adapters()
    assert len(first) == 50 and len(made) == 50  # the first request wraps nothing anew
    states["srv3"].tools = [_tool("other")]
    catalog.changed(states["srv3"])
    second = adapters()
    assert len(made) == 51 and len(second) == 46
    assert [a for a in second if a.server == "srv0"] == [a for a in first if a.server == "srv0"]


def test_a_server_whose_name_another_claims_is_named_by_the_general_table() -> None:
    hashed = qualify_tool_name("a__b", "c")
    states: dict[str, ServerState] = {"a": _state("a", [CROSS, "plain"])}
    catalog = ToolCatalog(states)
    catalog.changed(states["a"])
    assert [e.qualified_name for e in catalog.entries()] == [hashed, "mcp__a__plain"]
    states["a__b"] = _state("a__b", ["c"])  # names its tool as "a" already named one: the pair sorting first keeps it
    catalog.changed(states["a__b"])
    general = ToolNameTable([("a", CROSS), ("a", "plain"), ("a__b", "c")])
    assert [e.qualified_name for e in catalog.entries()] == list(general)
    assert catalog.server_of(general.qualified("a__b", "c")) == "a__b" and catalog.server_of(hashed) == "a"
    states["a__b"].status = ServerStatus.FAILED
    catalog.changed(states["a__b"])
    assert [e.qualified_name for e in catalog.entries()] == [hashed, "mcp__a__plain"]
