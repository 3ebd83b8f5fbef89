"""The tool-search benchmark's corpus (bench/tool_corpus/) as tests: it is as large as the issue asks and every entry
says where it came from; configured as real stdio servers (bench/corpus_server.py) under `mini-claude -p`, the first
request's tool definitions are at most 10% of eager loading; the index ranks the tool a user's task needs better
than plain BM25 and never worse than the figure last measured (bench/tool_search.py reports the rest)."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

import pytest

from tests.helpers import ROOT, system_text

pytestmark = pytest.mark.timeout(240)


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_tool_search", ROOT / "bench" / "tool_search.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bench = _bench()


def test_the_corpus_is_large_real_and_traceable() -> None:
    tools, servers = bench.load_corpus()
    queries = bench.load_queries(tools)  # raises on a query naming a tool the corpus lacks
    assert len(servers) >= 40 and len(tools) >= 800 and len(queries) >= 200
    for record in servers:
        source = record["source"]
        assert source.get("peer") or (source.get("repo") and len(source.get("commit", "")) == 40), record["server"]
        assert all(isinstance(t.get("inputSchema"), dict) and t.get("name") for t in record["tools"])
    assert len({t.qualified_name for t in tools}) == len(tools)


def test_ranking_beats_plain_bm25_on_user_phrased_queries() -> None:
    tools, _ = bench.load_corpus()
    queries = bench.load_queries(tools)
    held_out = [q for q in queries if q.held_out]  # never looked at while tuning
    ours = bench.quality(bench.ToolIndex(tools), held_out)
    baseline = bench.quality(bench.PlainBM25(tools), held_out)
    assert ours["recall@5"] > baseline["recall@5"] and ours["mrr"] > baseline["mrr"], (ours, baseline)
    assert ours["recall@5"] >= 0.67, ours  # measured 0.680 (2026-12-04; baseline 0.552); the target is 0.95


def test_the_first_request_carries_at_most_a_tenth_of_the_definitions() -> None:
    _, servers = bench.load_corpus()
    measured = bench.end_to_end(servers)
    eager, auto = measured["false"], measured["auto"]
    assert eager["mcp_tools_sent"] == sum(len(s["tools"]) for s in servers)
    assert auto["mcp_tools_sent"] == 0
    assert auto["tool_definitions_chars"] <= 0.10 * eager["tool_definitions_chars"], measured
    assert auto["tool_definitions_chars"] + auto["system_chars"] <= 0.10 * (
        eager["tool_definitions_chars"] + eager["system_chars"]), measured


def test_the_model_query_bench_runs_the_agents_first_step(mock_model) -> None:  # type: ignore[no-untyped-def]
    """bench/tool_search_model.py against the mock (its real use needs a model with a key): each query is the
    prompt of one agent step whose only tool is ToolSearch, under the system prompt a deferred session sends;
    the model's first search is scored with the real index."""
    import json
    import os
    import subprocess

    mock = mock_model([{"content": [{"type": "tool_use", "name": "ToolSearch",
                                     "input": {"query": "kubernetes pod logs"}}]},
                       {"content": [{"type": "text", "text": "I would need more details."}]}])
    env = {**os.environ, "ANTHROPIC_API_KEY": "sk-ant-bench", "ANTHROPIC_BASE_URL": mock.url}
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "tool_search_model.py"), "--limit", "2",
                           "--jobs", "1", "--json"], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["queries"], report["failed"], report["recall@5"], report["no_search_rate"]) == (2, 0, 0.5, 0.5)
    first = report["rows"][0]
    assert first["searched"] == "kubernetes pod logs" and first["hit"] and len(first["loaded"]) == 5
    request = mock.requests[0]["body"]
    assert [t["name"] for t in request["tools"]] == ["ToolSearch"]
    assert "mcp__kubernetes__pods_log" in system_text(request) and "Find them with ToolSearch" in system_text(request)
