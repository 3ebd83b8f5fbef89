"""The fleet benchmark's corpus (issue 19's "66 real servers' tool lists, 1,441 tools"): the tool-search corpus
(bench/tool_corpus/servers/) plus nine fleet-only servers (bench/tool_corpus/fleet_extra/). Every fleet-only file is
a real server's list that says where it came from; `bench/fleet.py` starts the 66 distinct servers by default; the
tool-search benchmark never reads them; and each one is served as it is written by bench/corpus_server.py (a real
stdio process: initialize, tools/list, stdin closed, exit reaped)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.helpers import ROOT, assert_pid_gone
from tests.integration.test_tool_search_corpus import bench as tool_search

pytestmark = pytest.mark.timeout(120)

CORPUS = ROOT / "bench" / "tool_corpus"
FLEET_EXTRA = sorted((CORPUS / "fleet_extra").glob("*.json"))
CORPUS_SERVER = ROOT / "bench" / "corpus_server.py"
TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")  # the MCP spec's tool-name rule (2025-11-25)
COMMIT = re.compile(r"^[0-9a-f]{40}$")
REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
EXCHANGE_TIMEOUT_S = 20.0


def _fleet() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_fleet", ROOT / "bench" / "fleet.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


fleet = _fleet()


def _load(path: Path) -> dict[str, Any]:
    record = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(record, dict), path
    return record


def test_there_are_nine_fleet_only_servers_none_of_them_in_the_search_corpus() -> None:
    names = {path.stem for path in FLEET_EXTRA}
    assert len(names) == 9, names
    assert not names & {path.stem for path in (CORPUS / "servers").glob("*.json")}


@pytest.mark.parametrize("path", FLEET_EXTRA, ids=lambda p: p.stem)
def test_a_fleet_only_file_is_a_real_traceable_tool_list(path: Path) -> None:
    record = _load(path)
    assert set(record) == {"server", "source", "tools"} and record["server"] == path.stem
    source = record["source"]
    assert REPO.match(source.get("repo", "")), source
    assert source.get("paths") and all(isinstance(p, str) and p for p in source["paths"]), source
    assert COMMIT.match(source.get("commit", "")), source
    assert isinstance(source.get("license"), str) and source["license"].strip(), source
    assert isinstance(source.get("how"), str) and len(source["how"]) > 40, source
    tools = record["tools"]
    assert isinstance(tools, list) and tools
    names = [tool.get("name") for tool in tools]
    assert len(set(names)) == len(names), [n for n in names if names.count(n) > 1]
    for tool in tools:
        assert set(tool) == {"name", "description", "inputSchema"}, tool.get("name")
        assert isinstance(tool["name"], str) and TOOL_NAME.match(tool["name"]), tool["name"]
        assert isinstance(tool["description"], str) and tool["description"].strip(), tool["name"]
        schema = tool["inputSchema"]
        assert isinstance(schema, dict) and schema.get("type") == "object", tool["name"]
        assert isinstance(schema.get("properties", {}), dict), tool["name"]
        required = schema.get("required", [])
        assert isinstance(required, list) and set(required) <= set(schema.get("properties", {})), tool["name"]


def test_the_default_fleet_is_66_distinct_servers_and_about_1441_tools() -> None:
    files = fleet.fleet_files()
    names = [name for name, _ in files]
    assert len(names) == 66 and len(set(names)) == 66
    # the search corpus first, then the fleet-only servers, each sorted
    assert [path for _, path in files] == sorted((CORPUS / "servers").glob("*.json")) + FLEET_EXTRA
    servers, tools = fleet.corpus_size()
    assert servers == 66 and 1401 <= tools <= 1481, tools
    # above 66 the list cycles, with a suffix that keeps the names distinct
    more = fleet.fleet_files(68)
    assert [name for name, _ in more[:66]] == names
    assert [name for name, _ in more[66:]] == [f"{names[0]}-2", f"{names[1]}-2"]
    assert len({name for name, _ in more}) == 68


def test_the_tool_search_benchmark_reads_the_search_corpus_only() -> None:
    _, servers = tool_search.load_corpus()
    searched = {record["server"] for record in servers}
    assert searched == {_load(path)["server"] for path in (CORPUS / "servers").glob("*.json")}
    assert not searched & {path.stem for path in FLEET_EXTRA}


async def _answer(proc: asyncio.subprocess.Process, request_id: int) -> dict[str, Any]:
    """The response to `request_id` (notifications and other ids skipped), within EXCHANGE_TIMEOUT_S."""
    stdout = proc.stdout
    assert stdout is not None

    async def read() -> dict[str, Any]:
        while True:
            line = await stdout.readline()
            assert line, "the server closed its stdout before answering"
            message = json.loads(line)
            if message.get("id") == request_id:
                return dict(message)

    return await asyncio.wait_for(read(), EXCHANGE_TIMEOUT_S)


def _send(proc: asyncio.subprocess.Process, message: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")


@pytest.mark.parametrize("path", FLEET_EXTRA, ids=lambda p: p.stem)
async def test_corpus_server_serves_a_fleet_only_list_as_written(path: Path) -> None:
    proc = await asyncio.create_subprocess_exec(sys.executable, str(CORPUS_SERVER), str(path),
                                                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE, limit=1 << 24)
    try:
        _send(proc, {"id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}})
        initialized = await _answer(proc, 1)
        assert initialized["result"]["serverInfo"]["name"] == path.stem
        assert initialized["result"]["capabilities"]["tools"] == {"listChanged": True}
        _send(proc, {"method": "notifications/initialized"})
        _send(proc, {"id": 2, "method": "tools/list", "params": {}})
        listed = (await _answer(proc, 2))["result"]["tools"]
        written = _load(path)["tools"]
        assert [tool["name"] for tool in listed] == [tool["name"] for tool in written]
        assert listed == written
        assert proc.stdin is not None
        proc.stdin.close()  # the server exits on stdin EOF
        assert await asyncio.wait_for(proc.wait(), EXCHANGE_TIMEOUT_S) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await asyncio.wait_for(proc.wait(), EXCHANGE_TIMEOUT_S)
    assert proc.stderr is not None
    assert await proc.stderr.read() == b""
    assert_pid_gone(proc.pid)
