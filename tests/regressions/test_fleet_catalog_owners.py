"""A name the model was offered is explained for the server that last had it (issue 19's incremental catalogue).

Since servers' entries come from their own names (ToolCatalog claims), the catalogue recorded a name's server as each
server came up, even for a name another server held, and no longer put that right when a collision ended: after
a server that lost a name to another came and went, the name was explained for it ("MCP server 'a__b' is not
available") though the model was only ever offered it for the other; and a name given back to the server that lost
it was explained for the one that had taken it, which was ready, so the model heard "unknown tool" instead of
"server not available". The catalogue, the adapters and the general table (`ToolNameTable(all pairs)`) must agree
through any sequence of servers coming up, re-listing and going down.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from hypothesis import given, settings
from hypothesis import strategies as st

from mini_claude.mcp.catalog import ToolCatalog
from mini_claude.mcp.config_entry import ServerConfig
from mini_claude.mcp.naming import ToolNameTable, qualify_tool_name
from mini_claude.mcp.protocol import McpTool
from mini_claude.mcp.server_state import ServerState, ServerStatus
from mini_claude.tools.mcp_tool import McpToolAdapters
from tests.fleet.catalog_manager import CatalogManager

HASHED = qualify_tool_name("a__b", "c")  # "mcp__a__b__c_<hash>": server "a" can list a tool that is named so
CROSS = HASHED.removeprefix("mcp__a__")
IMPOSTOR = qualify_tool_name("s", "x.y").removeprefix("mcp__s__")
# servers and listings whose names meet: ("a", CROSS) and ("a__b", "c"); ("s", "x.y") and ("s", IMPOSTOR)
SERVERS = ["a", "a__b", "s", "my.server"]
LISTINGS = [[], ["c"], [CROSS], ["c", CROSS], ["add"], ["x.y", IMPOSTOR], [IMPOSTOR, "c"], ["y" * 70, "add"]]


def _tool(name: str) -> McpTool:
    return McpTool(name, None, None, {"type": "object"}, None, {}, {"name": name})


def _up(states: dict[str, ServerState], catalog: ToolCatalog, server: str, tools: list[str]) -> None:
    state = states.setdefault(server, ServerState(ServerConfig(name=server, type="stdio", command="x")))
    state.status, state.error, state.tools = ServerStatus.READY, None, [_tool(name) for name in tools]
    catalog.changed(state)


def _down(states: dict[str, ServerState], catalog: ToolCatalog, server: str) -> None:
    state = states[server]
    state.status, state.error, state.tools = ServerStatus.FAILED, "exited with code 1", []
    catalog.changed(state)


def test_a_name_lost_to_another_server_is_explained_for_the_server_that_had_it() -> None:
    states: dict[str, ServerState] = {}
    catalog = ToolCatalog(states)
    _up(states, catalog, "a", [CROSS])
    assert [e.qualified_name for e in catalog.entries()] == [HASHED]  # offered for ("a", CROSS)
    _up(states, catalog, "a__b", ["c"])  # names its tool HASHED too; "a" sorts first and keeps it
    _down(states, catalog, "a__b")  # gone again before anything asked for the list
    _down(states, catalog, "a")
    assert catalog.explain_unavailable(HASHED) == "MCP server 'a' is not available: exited with code 1"


def test_a_name_given_back_is_explained_for_the_server_that_has_it_again() -> None:
    states: dict[str, ServerState] = {}
    catalog = ToolCatalog(states)
    _up(states, catalog, "a", [CROSS])
    _up(states, catalog, "a__b", ["c"])
    assert catalog.server_of(HASHED) == "a" and catalog.server_of(catalog.name_table().qualified("a__b", "c")) == "a__b"
    _up(states, catalog, "a", ["plain"])  # re-lists without the tool: ("a__b", "c") gets its own name back
    assert [e.qualified_name for e in catalog.entries()] == ["mcp__a__plain", HASHED]
    assert catalog.server_of(HASHED) == "a__b"
    _down(states, catalog, "a__b")
    assert catalog.explain_unavailable(HASHED) == "MCP server 'a__b' is not available: exited with code 1"


# one step: a server comes up or re-lists (a tool list) or goes down (None), then maybe the session asks (True)
Step = tuple[str, "list[str] | None", bool]
STEPS = st.lists(st.tuples(st.sampled_from(SERVERS), st.none() | st.sampled_from(LISTINGS), st.booleans()), max_size=30)
# every sequence of four steps over the two servers whose names meet (10,000): the small cases where it went wrong
SMALL = [(server, listing, ask) for server, listings in (("a", [None, [CROSS], ["add"]]), ("a__b", [None, ["c"]]))
         for listing in listings for ask in (False, True)]


def test_every_short_sequence_of_two_servers_whose_names_meet() -> None:
    for steps in itertools.product(SMALL, repeat=4):
        _check(steps)


@settings(max_examples=200, deadline=None)
@given(STEPS)
def test_the_catalogue_agrees_with_the_general_table_through_any_sequence(steps: list[Step]) -> None:
    _check(steps)


def _check(steps: Iterable[Step]) -> None:
    """Run the steps on a catalogue and the session's adapters; at each ask, they agree with the general table,
    and every name once offered is explained for a server that had it (or is silent while one is ready)."""
    states: dict[str, ServerState] = {}
    manager = CatalogManager(states)
    catalog = manager.catalog
    adapters = McpToolAdapters(manager)  # type: ignore[arg-type]
    holders: dict[str, set[str]] = {}  # a name -> the servers that held it since the session last asked
    for server, tools, ask in steps:
        if tools is None:
            if server in states:
                _down(states, catalog, server)
        else:
            _up(states, catalog, server, tools)
        adapters.server_ready(server)
        general = ToolNameTable((s.name, t.name) for s in states.values() if s.status is ServerStatus.READY
                                for t in s.tools)
        owner = {name: general.lookup(name)[0] for name in general}  # type: ignore[index]
        for name, pair in ((name, general.lookup(name)) for name in general):
            # a salted name exists only once asked for; a server's own name from its listing on
            if name in holders or name == qualify_tool_name(*pair):  # type: ignore[misc]
                holders.setdefault(name, set()).add(owner[name])
        if not ask:
            continue
        assert [e.qualified_name for e in catalog.entries()] == list(general), steps
        assert all(general.lookup(e.qualified_name) == (e.server, e.tool.name) for e in catalog.entries())
        offered = adapters()
        assert [a.name for a in offered] == list(general), steps
        for adapter in offered:  # each routes to the pair its name stands for, with that pair's current definition
            assert general.lookup(adapter.name) == (adapter.server, adapter.mcp_tool.name), steps
            assert adapter.mcp_tool in states[adapter.server].tools, steps
        for name in general:
            assert catalog.server_of(name) == owner[name], steps
            holders[name] = {owner[name]}
        for name, servers in holders.items():
            why = catalog.explain_unavailable(name)
            if name in general:
                assert why is None, steps
            elif why is not None:  # it names a server that had the name, and that server is down
                assert any(why.startswith(f"MCP server {s!r} is not available") for s in servers), (steps, why)
            else:  # silence only while a server that had the name is ready (it re-listed without it)
                assert any(states[s].status is ServerStatus.READY for s in servers), (steps, name)
