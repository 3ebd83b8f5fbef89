"""A search index over MCP tools for `ToolSearch`: BM25F over the tool's name parts, its server, its description
and its parameters, with light stemming and a small synonym table, in plain Python (nothing to import: building
it for 2,000 tools takes ~40 ms here, a query ~0.5 ms: postings, not a scan; see tests/tools/test_tool_index.py).

Fields and weights: name parts 3.0 (`mcp__github__create_issue` → create, issue; camelCase, kebab, dots split),
server 1.5, description 1.0, parameter names and descriptions 0.6. A query's words are stemmed and expanded with
their synonyms (an expansion counts half), so "remove a ticket" finds `delete_issue`.
"""

from __future__ import annotations

import gc
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["IndexedTool", "ToolIndex", "terms"]

K1 = 1.2
B = 0.75
FIELD_WEIGHTS = {"name": 3.0, "server": 1.5, "description": 1.0, "params": 0.6}
SYNONYM_WEIGHT = 0.5
NAMED_SERVER_BOOST = 2.0
_GENERIC_SERVER_WORDS = frozenset({"mcp", "server", "peer", "tool", "tools", "api"})
_WORD = re.compile(r"[A-Za-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_STOP = frozenset({"a", "an", "the", "of", "to", "for", "in", "on", "at", "by", "with", "and", "or", "from", "this",
                   "that", "it", "is", "are", "be", "my", "me", "i", "you", "your", "please", "can", "could",
                   "would", "how", "do", "does", "what", "which"})
_SYNONYMS: tuple[tuple[str, ...], ...] = (
    # actions
    ("delete", "remove", "erase", "destroy", "drop", "forget", "purge", "discard", "trash", "wipe", "uninstall"),
    ("create", "add", "new", "make", "insert", "open", "spawn", "generate", "compose", "draft", "register"),
    ("get", "fetch", "read", "retrieve", "show", "view", "open", "load", "see", "display", "inspect", "detail", "info"),
    ("list", "enumerate", "all", "browse", "overview", "inventory", "exist"),
    ("search", "find", "query", "lookup", "look", "locate", "discover", "grep", "filter", "mention", "contain"),
    ("update", "edit", "modify", "change", "set", "patch", "alter", "adjust", "tweak", "reschedule", "push"),
    ("rename", "retitle"),
    ("move", "relocate", "transfer", "migrate"),
    ("send", "post", "publish", "tell", "notify", "announce", "share", "inform"),
    ("run", "execute", "exec", "invoke", "trigger", "start", "launch", "kick", "fire"),
    ("stop", "cancel", "halt", "abort", "terminate", "kill", "end", "pause", "suspend", "off", "disable"),
    ("close", "resolve", "done", "finish", "complete"),
    ("download", "grab", "pull", "save", "export"),
    ("upload", "attach", "import"),
    ("click", "press", "tap", "hit"),
    ("select", "choose", "pick", "option", "dropdown"),
    ("fill", "type", "enter", "input", "field", "form"),
    ("count", "number", "many", "tally", "total"),
    ("sum", "add", "plus", "total"),
    ("compare", "diff", "difference", "versus"),
    ("summary", "summarize", "summarise", "report", "digest"),
    ("remember", "memory", "knowledge", "recall", "stored", "fact", "observation"),
    ("think", "reason", "plan", "thought", "step", "reflect", "backtrack", "sequential"),
    # things
    ("issue", "ticket", "bug", "defect", "story", "task"),
    ("pr", "pull", "merge", "mr"),
    ("comment", "note", "remark", "reply", "feedback", "annotation"),
    ("file", "document", "doc"),
    ("text", "txt", "content", "contents", "body", "source", "html", "markdown"),
    ("folder", "directory", "dir", "path"),
    ("message", "msg", "chat", "dm", "post"),
    ("image", "picture", "photo", "img", "screenshot", "snapshot", "capture"),
    ("time", "clock", "date", "timezone", "when"),
    ("calendar", "event", "meeting", "appointment", "invite", "book", "schedule", "sync"),
    ("available", "free", "busy", "availability", "freebusy"),
    ("user", "person", "member", "account", "profile", "people", "colleague", "teammate", "who"),
    ("repo", "repository", "project", "codebase"),
    ("money", "balance", "fund", "cash"),
    ("payment", "charge", "invoice", "bill", "billing", "pay", "refund"),
    ("subscription", "sub", "recurring", "membership", "plan"),
    ("customer", "client", "buyer", "contact"),
    ("email", "mail", "gmail", "inbox"),
    ("log", "error", "problem", "warning", "exception", "crash", "failure", "issue"),
    ("deploy", "deployment", "release", "ship", "rollout", "live"),
    ("database", "db", "table", "sql", "select", "postgres", "pg", "mysql"),
    ("schema", "structure", "fields", "columns", "shape", "mapping"),
    ("web", "page", "url", "site", "website", "link", "http", "https"),
    ("dialog", "popup", "alert", "confirm", "prompt", "modal"),
    ("tab", "page", "window"),
    ("performance", "speed", "slow", "profile", "trace", "lcp", "timing", "load"),
    ("network", "request", "traffic", "response", "header"),
    ("container", "docker", "image"),
    ("cluster", "kubernetes", "k8s", "node", "pod", "kubectl"),
    ("metric", "prometheus", "graph", "chart", "dashboard", "stat", "statistic"),
    ("incident", "oncall", "outage", "alert", "page"),
    ("branch", "checkout", "switch"),
    ("commit", "history", "blame", "change"),
    ("secret", "key", "token", "credential", "password"),
    ("config", "configuration", "setting", "variable", "env", "environment"),
    ("scale", "resize", "dyno", "instance", "replica", "size"),
    ("cost", "price", "spend", "usage", "pricing"),
    ("paper", "article", "publication", "research", "arxiv"),
    ("cite", "citation", "reference", "cited"),
    ("video", "clip", "channel", "youtube"),
    ("transcript", "caption", "subtitle"),
    ("light", "lamp", "device", "entity", "switch"),
    ("note", "vault", "obsidian"),
    ("spreadsheet", "sheet", "excel", "xlsx", "workbook", "cell", "row", "column"),
    ("object", "gameobject", "cube", "mesh", "model", "asset", "prefab"),
    ("scene", "level", "world"),
    ("text", "txt", "content", "contents"),
)


def _stem(word: str) -> str:
    """A light suffix stripper: plurals, -ing, -ed, -ation, then a final -e (create / created / creating → creat)."""
    if len(word) <= 3 or word.isdigit():
        return word
    if word.endswith(("ies", "ied")) and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "zes", "ches", "shes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ation", "ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    return word


_SYNONYM_OF: dict[str, set[str]] = {}
for _group in _SYNONYMS:
    for _word in _group:
        _SYNONYM_OF.setdefault(_stem(_word), set()).update(_stem(w) for w in _group if w != _word)


def terms(text: str) -> list[str]:
    """Lower-case stemmed words of `text`: snake, kebab, dots and camelCase split; stop words dropped."""
    words: list[str] = []
    for raw in _WORD.findall(_CAMEL.sub(" ", text.replace("_", " "))):
        word = raw.lower()
        if word not in _STOP:
            words.append(_stem(word))
    return words


@dataclass(frozen=True)
class IndexedTool:
    qualified_name: str
    server: str
    name: str
    description: str
    input_schema: dict[str, Any]


class ToolIndex:
    """BM25F over a fixed list of tools (rebuilt when the list changes), kept as postings: each term maps to the
    tools that have it with their field-weighted, length-normalised frequency, so a query touches only those."""

    def __init__(self, tools: Sequence[IndexedTool]) -> None:
        self.tools = list(tools)
        # tens of thousands of small objects: the cyclic collector would walk the whole heap several times over
        # (none of them can form a cycle), so it waits until the index is built
        paused = gc.isenabled()
        gc.disable()
        try:
            self._build()
        finally:
            if paused:
                gc.enable()

    def _build(self) -> None:
        fields_of = [{"name": Counter(terms(t.name)), "server": Counter(terms(t.server)),
                      "description": Counter(terms(t.description)), "params": Counter(terms(_params(t)))}
                     for t in self.tools]
        n = max(1, len(self.tools))
        avg = {key: max(1.0, sum(sum(f[key].values()) for f in fields_of) / n) for key in FIELD_WEIGHTS}
        self._postings: dict[str, list[tuple[int, float]]] = {}
        for i, fields in enumerate(fields_of):
            weighted: dict[str, float] = {}
            for key, counts in fields.items():
                norm = FIELD_WEIGHTS[key] / (1 - B + B * sum(counts.values()) / avg[key])
                for term, count in counts.items():
                    weighted[term] = weighted.get(term, 0.0) + count * norm
            for term, tf in weighted.items():
                self._postings.setdefault(term, []).append((i, tf))
        self._idf = {term: math.log(1 + (n - len(posts) + 0.5) / (len(posts) + 0.5))
                     for term, posts in self._postings.items()}
        # a server the query names ("on GitHub", "in my Obsidian vault", "mongo"): its tools come first
        self._servers_of: dict[str, set[str]] = {}
        for tool in self.tools:
            for term in terms(tool.server.replace("-", " ")):
                if term not in _GENERIC_SERVER_WORDS:
                    self._servers_of.setdefault(term, set()).add(tool.server)

    def _named_servers(self, query_terms: Sequence[str]) -> set[str]:
        named: set[str] = set()
        for term in query_terms:
            named |= self._servers_of.get(term, set())
            # "mongo" names mongodb, "elastic" elasticsearch; a word many tools use ("file", "work", "post") is a
            # word, not a prefix of filesystem, workspace or postgres
            if len(term) >= 4 and len(self._postings.get(term, ())) <= max(1, len(self.tools) // 100):
                named |= {s for key, servers in self._servers_of.items() if key.startswith(term) for s in servers}
        return named

    def search(self, query: str, limit: int = 5) -> list[IndexedTool]:
        """The best matches for `query` (keywords or a sentence), best first; `select:a,b` picks by name."""
        if query.strip().startswith("select:"):
            wanted = [w.strip() for w in query.strip()[7:].split(",") if w.strip()]
            return [t for w in wanted for t in self.tools if w in (t.qualified_name, t.name)][:max(1, limit)]
        weights: dict[str, float] = {}
        query_terms = terms(query)
        for term in query_terms:
            weights[term] = max(weights.get(term, 0.0), 1.0)
            for synonym in _SYNONYM_OF.get(term, ()):
                weights[synonym] = max(weights.get(synonym, 0.0), SYNONYM_WEIGHT)
        scores: dict[int, float] = {}
        for term, weight in weights.items():
            idf = self._idf.get(term)
            if idf is None:
                continue
            for i, tf in self._postings[term]:
                scores[i] = scores.get(i, 0.0) + weight * idf * tf * (K1 + 1) / (tf + K1)
        named = self._named_servers(query_terms)
        if named:
            for i in scores:
                if self.tools[i].server in named:
                    scores[i] *= NAMED_SERVER_BOOST
        best = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:max(1, limit)]
        return [self.tools[i] for i, _ in best]


def _params(tool: IndexedTool) -> str:
    properties = tool.input_schema.get("properties")
    if not isinstance(properties, dict):
        return ""
    parts: list[str] = []
    for name, spec in list(properties.items())[:50]:
        parts.append(str(name))
        if isinstance(spec, dict) and isinstance(spec.get("description"), str):
            parts.append(spec["description"][:300])
    return " ".join(parts)

