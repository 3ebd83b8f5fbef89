"""How well and how fast `tool_search` finds the tool a task needs, and what deferral saves per request.

    .venv/bin/python bench/tool_search.py [--json] [--misses] [--e2e]

The corpus (bench/tool_corpus/): `servers/*.json`, real servers' tool lists — the third-party peers' `tools/list`
(dump_peers.py) and definitions collected from public repositories, each file recording where it came from — and
`queries/*.jsonl`, tasks phrased as a user would ask, each naming the tool it needs (`accept`: other tools that do it
equally well). Queries are split by a hash of their text into a *tuning* half (the only one whose misses are looked
at when the ranking changes: `--misses`) and a *held-out* half, so the figures are not the ranking fitted to them.

Reported, for mini-claude's index (tools/tool_index.py) and beside it a plain BM25 baseline (name + description,
no field weights, stems or synonyms) and, when installed, the `rank_bm25` and `bm25s` packages on the same text:
recall@1, recall@5, MRR, recall@15 (what one search shows: five loaded, ten more named), index build time (the
corpus, and 2,000 tools), query time, and the import cost of each.
Tokens: the definitions a first request carries with every tool sent versus deferred (`tool_search` and the
names). `--e2e` measures that on the real path: every corpus server started as a stdio process
(bench/corpus_server.py) under `mini-claude -p` against the mock model, with MINI_CLAUDE_TOOL_SEARCH=false and auto.
Results go to bench/results/tool-search-latest.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mini_claude.agent.compaction import DEFAULT_CONTEXT_TOKENS  # noqa: E402
from mini_claude.mcp.naming import qualify_tool_name  # noqa: E402
from mini_claude.tools.mcp_tool import cut_description  # noqa: E402
from mini_claude.tools.tool_index import IndexedTool, ToolIndex  # noqa: E402
from mini_claude.tools.tool_search import MORE_NAMES, ToolSearchTool, names_fit  # noqa: E402

CORPUS = Path(__file__).resolve().parent / "tool_corpus"
RESULTS = Path(__file__).resolve().parent / "results" / "tool-search-latest.json"
LIMIT = 5


@dataclass(frozen=True)
class Query:
    text: str
    wanted: frozenset[str]  # qualified names that answer it
    held_out: bool


def load_corpus(corpus: Path = CORPUS) -> tuple[list[IndexedTool], list[dict[str, Any]]]:
    """The tools (qualified the way the agent names them) and each server's file."""
    tools: list[IndexedTool] = []
    servers = []
    for path in sorted((corpus / "servers").glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        servers.append(record)
        for tool in record["tools"]:
            description = cut_description(tool.get("description") or "")
            tools.append(IndexedTool(qualify_tool_name(record["server"], tool["name"]), record["server"],
                                     tool["name"], description, tool.get("inputSchema") or {}))
    return tools, servers


def load_queries(tools: Sequence[IndexedTool], corpus: Path = CORPUS) -> list[Query]:
    """Every query, checked: a query naming a tool the corpus lacks is an error, not a silent miss."""
    known = {(t.server, t.name): t.qualified_name for t in tools}
    queries = []
    for path in sorted((corpus / "queries").glob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            item = json.loads(line)
            names = [(item["server"], item["tool"])] + [tuple(a.split("/", 1)) for a in item.get("accept", [])]
            missing = [f"{s}/{t}" for s, t in names if (s, t) not in known]
            if missing:
                raise SystemExit(f"{path.name}:{number}: no such tool in the corpus: {', '.join(missing)}")
            digest = hashlib.sha256(item["query"].encode()).digest()[0]
            queries.append(Query(item["query"], frozenset(known[n] for n in names), held_out=digest % 2 == 1))
    return queries


# ---- the baselines -------------------------------------------------------------------------------------------

_TOKEN = re.compile(r"[a-z0-9]+")


def _plain_tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def _plain_text(tool: IndexedTool) -> str:
    return f"{tool.qualified_name.replace('_', ' ')} {tool.description}"


class PlainBM25:
    """Textbook BM25 (k1 1.2, b 0.75) over one field: the tool's name (underscores split) and description."""

    def __init__(self, tools: Sequence[IndexedTool]) -> None:
        self.tools = list(tools)
        docs = [Counter(_plain_tokens(_plain_text(t))) for t in self.tools]
        self.lengths = [sum(d.values()) for d in docs]
        self.avg = max(1.0, sum(self.lengths) / max(1, len(docs)))
        self.postings: dict[str, list[tuple[int, int]]] = {}
        for i, doc in enumerate(docs):
            for term, count in doc.items():
                self.postings.setdefault(term, []).append((i, count))
        n = len(docs)
        self.idf = {t: math.log(1 + (n - len(p) + 0.5) / (len(p) + 0.5)) for t, p in self.postings.items()}

    def search(self, query: str, limit: int) -> list[IndexedTool]:
        scores: dict[int, float] = {}
        for term in set(_plain_tokens(query)):
            for i, tf in self.postings.get(term, ()):
                norm = tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * self.lengths[i] / self.avg))
                scores[i] = scores.get(i, 0.0) + self.idf[term] * norm
        best = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:limit]
        return [self.tools[i] for i, _ in best]


class RankBM25:
    """`rank_bm25.BM25Okapi` on the baseline's text."""

    def __init__(self, tools: Sequence[IndexedTool]) -> None:
        from rank_bm25 import BM25Okapi

        self.tools = list(tools)
        self.model = BM25Okapi([_plain_tokens(_plain_text(t)) for t in self.tools])

    def search(self, query: str, limit: int) -> list[IndexedTool]:
        scores = self.model.get_scores(_plain_tokens(query))
        best = sorted(range(len(self.tools)), key=lambda i: -scores[i])[:limit]
        return [self.tools[i] for i in best if scores[i] > 0]


class Bm25s:
    """`bm25s` (sparse matrices, its own English stop words) on the baseline's text."""

    def __init__(self, tools: Sequence[IndexedTool]) -> None:
        import bm25s

        self.tools = list(tools)
        self._bm25s = bm25s
        self.model = bm25s.BM25()
        self.model.index(bm25s.tokenize([_plain_text(t) for t in self.tools], stopwords="en", show_progress=False),
                         show_progress=False)

    def search(self, query: str, limit: int) -> list[IndexedTool]:
        tokens = self._bm25s.tokenize([query], stopwords="en", show_progress=False)
        if not tokens.vocab:
            return []
        found, scores = self.model.retrieve(tokens, k=min(limit, len(self.tools)), show_progress=False)
        return [self.tools[int(i)] for i, s in zip(found[0], scores[0], strict=True) if s > 0]


# name, class, module whose import cost is measured
METHODS: list[tuple[str, Callable[[Sequence[IndexedTool]], Any], str]] = [
    ("mini-claude BM25F", ToolIndex, "mini_claude.tools.tool_index"),
    ("plain BM25 (baseline)", PlainBM25, ""),
    ("rank_bm25 BM25Okapi", RankBM25, "rank_bm25"),
    ("bm25s", Bm25s, "bm25s"),
]


# ---- measuring ---------------------------------------------------------------------------------------------------

def quality(index: Any, queries: Sequence[Query]) -> dict[str, float]:
    """recall@1, recall@5 (what one search loads), MRR over those five, and recall@15: what one search shows (the
    five loaded and the next ten named: tools/tool_search.py, MORE_NAMES)."""
    hits1 = hits5 = shown = 0
    reciprocal = 0.0
    for query in queries:
        ranked = [t.qualified_name for t in index.search(query.text, LIMIT + MORE_NAMES)]
        rank = next((i for i, name in enumerate(ranked, 1) if name in query.wanted), None)
        if rank is not None:
            hits1 += rank == 1
            hits5 += rank <= LIMIT
            shown += 1
            reciprocal += 1 / rank if rank <= LIMIT else 0.0
    n = max(1, len(queries))
    return {"recall@1": round(hits1 / n, 3), "recall@5": round(hits5 / n, 3), "mrr": round(reciprocal / n, 3),
            f"recall@{LIMIT + MORE_NAMES}": round(shown / n, 3), "queries": len(queries)}


def timings(make: Callable[[Sequence[IndexedTool]], Any], tools: Sequence[IndexedTool],
            queries: Sequence[Query]) -> dict[str, float]:
    builds = []
    for _ in range(5):
        start = time.perf_counter()
        index = make(tools)
        builds.append(time.perf_counter() - start)
    spent = []
    for query in queries:
        start = time.perf_counter()
        index.search(query.text, LIMIT)
        spent.append(time.perf_counter() - start)
    spent.sort()
    return {"build_ms": round(statistics.median(builds) * 1000, 1),
            "query_p50_ms": round(spent[len(spent) // 2] * 1000, 3),
            "query_p95_ms": round(spent[int(len(spent) * 0.95)] * 1000, 3)}


def import_ms(module: str) -> float | None:
    """Median wall time of `python -c "import MODULE"` minus that of `python -c "pass"` (5 runs each)."""
    if not module:
        return 0.0

    def run(code: str) -> float:
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, check=False)
        if done.returncode:
            raise ImportError(done.stderr.decode(errors="replace")[-200:])
        return time.perf_counter() - start

    try:
        base = statistics.median(run("pass") for _ in range(5))
        return round(max(0.0, statistics.median(run(f"import {module}") for _ in range(5)) - base) * 1000, 1)
    except ImportError:
        return None


def two_thousand(tools: Sequence[IndexedTool]) -> list[IndexedTool]:
    """The corpus repeated under other server names up to 2,000 tools (the issue's speed target)."""
    out: list[IndexedTool] = []
    copy = 0
    while len(out) < 2000:
        for t in tools:
            server = f"{t.server}{copy or ''}"
            out.append(IndexedTool(qualify_tool_name(server, t.name), server, t.name, t.description, t.input_schema))
        copy += 1
    return out[:2000]


def definition_chars(tools: Sequence[IndexedTool]) -> int:
    """Characters of the tools' definitions as a request carries them (the agent's estimate: / 4 = tokens)."""
    return sum(len(json.dumps({"name": t.qualified_name, "description": t.description,
                               "input_schema": t.input_schema}, ensure_ascii=False)) for t in tools)


def deferred_chars(tools: Sequence[IndexedTool]) -> dict[str, int]:
    """What deferral sends instead: the tool_search definition and the system prompt's list of servers (names
    while they fit, as tools/tool_search.DeferredTools.prompt_section decides)."""
    search = ToolSearchTool(None)  # type: ignore[arg-type]  # only its definition is read
    definition = len(json.dumps({"name": search.name, "description": search.description,
                                 "input_schema": search.input_schema}))
    by_server: dict[str, list[str]] = {}
    for t in tools:
        by_server.setdefault(t.server, []).append(t.qualified_name)
    names = sum(len(n) + 2 for ns in by_server.values() for n in ns)
    listing = names if names_fit(names, DEFAULT_CONTEXT_TOKENS) else sum(len(s) + 14 for s in by_server)
    return {"tool_search_definition": definition, "server_listing": listing + 260}


# ---- end to end ------------------------------------------------------------------------------------------------

def end_to_end(servers: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Every corpus server as a stdio process under `mini-claude -p hi`; the first request's size, eager vs auto."""
    from mini_claude.models.mock_server import MockModelServer
    from mini_claude.models.scenario import parse_scenario

    config = {"mcpServers": {s["server"]: {"command": sys.executable,
                                           "args": [str(ROOT / "bench" / "corpus_server.py"),
                                                    str(CORPUS / "servers" / f"{s['server']}.json")]}
                             for s in servers}}
    out: dict[str, Any] = {"servers": len(servers)}
    with tempfile.TemporaryDirectory() as home:
        path = Path(home) / "mcp.json"
        path.write_text(json.dumps(config))
        for setting in ("false", "auto"):
            mock = MockModelServer(parse_scenario({"turns": [{"content": [{"type": "text", "text": "hi"}]}]}))
            mock.start()
            try:
                env = {**os.environ, "HOME": home, "ANTHROPIC_API_KEY": "sk-ant-bench", "PYTHONPATH": str(ROOT),
                       "ANTHROPIC_BASE_URL": mock.url, "MINI_CLAUDE_TOOL_SEARCH": setting, "MCP_TIMEOUT": "60000"}
                done = subprocess.run([sys.executable, "-m", "mini_claude", "-p", "hi", "--mcp-config", str(path),
                                       "--strict-mcp-config"], cwd=home, env=env, capture_output=True, text=True,
                                      timeout=180, check=False)
                if done.returncode != 0 or not mock.requests:
                    raise SystemExit(f"mini-claude -p failed ({setting}): {done.stderr[-1000:]}")
                body = mock.requests[0]["body"]
            finally:
                mock.stop()
            mcp = [t for t in body["tools"] if t["name"].startswith("mcp__")]
            out[setting] = {"mcp_tools_sent": len(mcp),
                            "tool_definitions_chars": len(json.dumps(body["tools"], ensure_ascii=False)),
                            "mcp_definitions_chars": len(json.dumps(mcp, ensure_ascii=False)),
                            "system_chars": len(body["system"] if isinstance(body["system"], str)
                                                else json.dumps(body["system"]))}
    eager, auto = out["false"], out["auto"]
    out["auto_vs_eager_tool_definitions"] = round(auto["tool_definitions_chars"] / eager["tool_definitions_chars"],
                                                  3)
    out["auto_vs_eager_tools_and_system"] = round(
        (auto["tool_definitions_chars"] + auto["system_chars"])
        / (eager["tool_definitions_chars"] + eager["system_chars"]), 3)
    return out


# ---- report ------------------------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--misses", action="store_true", help="list the tuning half's misses (mini-claude index)")
    parser.add_argument("--e2e", action="store_true", help="also run the corpus as real stdio servers")
    args = parser.parse_args(argv)

    tools, servers = load_corpus()
    queries = load_queries(tools)
    tuning = [q for q in queries if not q.held_out]
    held_out = [q for q in queries if q.held_out]
    big = two_thousand(tools)
    report: dict[str, Any] = {"corpus": {"servers": len(servers), "tools": len(tools), "queries": len(queries),
                                         "tuning": len(tuning), "held_out": len(held_out)}, "methods": {}}
    for name, make, module in METHODS:
        try:
            index = make(tools)
        except ImportError:
            report["methods"][name] = {"skipped": f"not installed (pip install {module.replace('_', '-')})"}
            continue
        report["methods"][name] = {
            "all": quality(index, queries), "tuning": quality(index, tuning), "held_out": quality(index, held_out),
            "corpus": timings(make, tools, queries), "2000_tools": timings(make, big, queries),
            "import_ms": import_ms(module)}
    eager = definition_chars(tools)
    deferred = deferred_chars(tools)
    report["tokens"] = {"eager_definitions": eager // 4, "deferred": sum(deferred.values()) // 4,
                        "deferred_parts_chars": deferred,
                        "ratio": round(sum(deferred.values()) / eager, 4)}
    if args.e2e:
        report["end_to_end"] = end_to_end(servers)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        _print(report)
    if args.misses:
        index = ToolIndex(tools)
        for query in tuning:
            ranked = [t.qualified_name for t in index.search(query.text, LIMIT)]
            if not query.wanted & set(ranked):
                print(f"MISS {query.text!r} wants {sorted(query.wanted)} got {ranked[:3]}")
    return 0


def _print(report: dict[str, Any]) -> None:
    c = report["corpus"]
    print(f"corpus: {c['servers']} servers, {c['tools']} tools, {c['queries']} queries "
          f"({c['tuning']} tuning, {c['held_out']} held out)")
    print(f"{'method':<24}{'R@1':>7}{'R@5':>7}{'MRR':>7}{'R@5 held':>10}{'R@15':>7}{'build':>9}{'2k build':>10}"
          f"{'query p50':>11}{'import':>9}")
    for name, m in report["methods"].items():
        if "skipped" in m:
            print(f"{name:<24}  {m['skipped']}")
            continue
        a = m["all"]
        imp = "n/a" if m["import_ms"] is None else f"{m['import_ms']:.0f} ms"
        print(f"{name:<24}{a['recall@1']:>7.3f}{a['recall@5']:>7.3f}{a['mrr']:>7.3f}"
              f"{m['held_out']['recall@5']:>10.3f}{a['recall@15']:>7.3f}{m['corpus']['build_ms']:>7.1f}ms"
              f"{m['2000_tools']['build_ms']:>8.1f}ms{m['2000_tools']['query_p50_ms']:>9.3f}ms{imp:>9}")
    t = report["tokens"]
    print(f"tokens per request: eager {t['eager_definitions']:,}, deferred {t['deferred']:,} "
          f"({t['ratio']:.1%} of eager)")
    if "end_to_end" in report:
        e = report["end_to_end"]
        print(f"end to end ({e['servers']} stdio servers): first request tool definitions "
              f"{e['false']['tool_definitions_chars']:,} chars eager, {e['auto']['tool_definitions_chars']:,} auto "
              f"({e['auto_vs_eager_tool_definitions']:.1%}); with the system prompt "
              f"{e['auto_vs_eager_tools_and_system']:.1%}")


if __name__ == "__main__":
    sys.exit(main())
