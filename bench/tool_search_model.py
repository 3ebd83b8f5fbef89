"""What `ToolSearch` finds when a model writes the query: each corpus query goes, as the user's prompt, through the
agent's own first step — the system prompt a session with the 57 corpus servers deferred would send (the servers
and their tools' names), `ToolSearch` as the only tool, the real loop and the real index — and the model's first
search is scored against the tool the query names.

    ANTHROPIC_API_KEY=… .venv/bin/python bench/tool_search_model.py [--model NAME] [--limit N] [--jobs 6] [--json]

bench/tool_search.py measures the index on the queries as users phrase them; this measures what the product does
with a model in the loop (it reads the listed names, may `select:` one, and words its own query). It needs a real
model (any backend `mini-claude` can use, from the same environment variables); against the offline mock it only
checks the plumbing (tests/integration/test_tool_search_corpus.py). Reported: recall@5 of the first search (what it
loads), how often the model picked with `select:`, how often it answered without searching; per query in --json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from tool_search import Query, load_corpus, load_queries  # noqa: E402

from mini_claude.agent.compaction import DEFAULT_CONTEXT_TOKENS  # noqa: E402
from mini_claude.agent.loop import Agent  # noqa: E402
from mini_claude.agent.system_prompt import build_system_prompt  # noqa: E402
from mini_claude.errors import ModelError  # noqa: E402
from mini_claude.models.base import Model  # noqa: E402
from mini_claude.models.factory import create_model  # noqa: E402
from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet  # noqa: E402
from mini_claude.tools.base import ToolContext  # noqa: E402
from mini_claude.tools.tool_index import IndexedTool  # noqa: E402
from mini_claude.tools.tool_search import DeferredTools, ToolSearchTool  # noqa: E402


@dataclass
class _Deferred:
    """A corpus tool as DeferredTools sees an MCP adapter (never called: only searched)."""

    name: str
    server: str
    description: str
    input_schema: dict[str, Any]
    mcp_tool: Any
    manager: Any = field(default_factory=lambda: SimpleNamespace(states={}))


def _adapters(tools: Sequence[IndexedTool]) -> list[Any]:
    return [_Deferred(t.qualified_name, t.server, t.description, t.input_schema, SimpleNamespace(name=t.name))
            for t in tools]


async def first_search(model: Model, tools: list[Any], query: Query, cwd: Path) -> dict[str, Any]:
    """One query through the agent's first step: what the model searched for and what the search loaded."""
    deferred = DeferredTools(lambda: tools, setting="true", context_tokens=DEFAULT_CONTEXT_TOKENS)
    search = ToolSearchTool(deferred)
    system = f"{build_system_prompt(cwd)}\n\n{deferred.prompt_section()}"
    gate = PermissionGate(PermissionMode.BYPASS, RuleSet(), ask=None, cwd=cwd)
    agent = Agent(model=model, tools=lambda: [search], gate=gate, system=system, max_turns=1,
                  ctx=ToolContext(cwd=cwd, spill_dir=cwd / "spill"))
    await agent.run(query.text)
    calls = [b for m in agent.history if m["role"] == "assistant" for b in m["content"]
             if b.get("type") == "tool_use" and b.get("name") == "ToolSearch"]
    if not calls:
        return {"query": query.text, "searched": None, "loaded": [], "hit": False}
    written = str(calls[0].get("input", {}).get("query", ""))
    ranked = [t.qualified_name for t in deferred.index().search(written, 5)]
    return {"query": query.text, "searched": written, "loaded": ranked, "hit": bool(query.wanted & set(ranked)),
            "wanted": sorted(query.wanted)}


async def run(model: Model, queries: Sequence[Query], tools: list[Any], jobs: int) -> list[dict[str, Any]]:
    gate = asyncio.Semaphore(jobs)
    with tempfile.TemporaryDirectory() as cwd:
        async def one(query: Query) -> dict[str, Any]:
            async with gate:
                try:
                    return await first_search(model, tools, query, Path(cwd))
                except ModelError as exc:  # counted apart, not as a miss
                    return {"query": query.text, "error": str(exc)}

        return list(await asyncio.gather(*(one(q) for q in queries)))


def summary(rows: Sequence[dict[str, Any]], held_out: set[str]) -> dict[str, Any]:
    def rate(selected: Sequence[dict[str, Any]], key: str) -> float:
        return round(sum(1 for r in selected if r[key]) / max(1, len(selected)), 3)

    failed = [r for r in rows if "error" in r]
    rows = [r for r in rows if "error" not in r]
    held = [r for r in rows if r["query"] in held_out]
    return {"queries": len(rows), "failed": len(failed), "recall@5": rate(rows, "hit"),
            "recall@5_held_out": rate(held, "hit"),
            "select_rate": round(sum(1 for r in rows if (r["searched"] or "").startswith("select:"))
                                 / max(1, len(rows)), 3),
            "no_search_rate": round(sum(1 for r in rows if r["searched"] is None) / max(1, len(rows)), 3)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="the model to ask (default: as mini-claude chooses)")
    parser.add_argument("--limit", type=int, default=0, help="only the first N queries")
    parser.add_argument("--jobs", type=int, default=6, help="queries in flight at once")
    parser.add_argument("--json", action="store_true", help="print every query's search as JSON")
    args = parser.parse_args(argv)
    tools, _ = load_corpus()
    queries = load_queries(tools)[: args.limit or None]
    model = create_model(args.model, os.environ)

    async def measure() -> list[dict[str, Any]]:
        try:
            return await run(model, queries, _adapters(tools), max(1, args.jobs))
        finally:
            await model.aclose()  # type: ignore[attr-defined]

    rows = asyncio.run(measure())
    result = {"model": model.name, **summary(rows, {q.text for q in queries if q.held_out})}
    if args.json:
        print(json.dumps({**result, "rows": rows}, indent=2))
    else:
        print(f"{result['model']}: {result['queries']} queries, recall@5 of the model's first search "
              f"{result['recall@5']:.3f} (held out {result['recall@5_held_out']:.3f}); select: "
              f"{result['select_rate']:.1%}, no search {result['no_search_rate']:.1%}, failed {result['failed']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
