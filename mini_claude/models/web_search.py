"""A web search through the Anthropic Messages API's server-side web search tool (`web_search_20250305`).

The `WebSearch` tool (tools/web_search.py) runs here: a request of its own to the session's model, apart from the
conversation, whose only tool is the server tool, as Claude Code does it (measured against 2.1.328: a separate
streamed request with `tools: [{"type": "web_search_20250305", "name": "web_search", "allowed_domains" |
"blocked_domains", "max_uses": 8}]`, a short system prompt and one user message naming the query). The API runs
the searches and answers with `server_tool_use` blocks (the queries it ran), `web_search_tool_result` blocks (each
result's title and URL, or an error code) and text: the model's summary. `parse_search` turns that answer into a
`SearchOutcome`.

Only a backend that speaks the Messages API can do this: it declares so by implementing `WebSearchBackend`
(`send_messages_request`: one request of the caller's making, retried like the backend's own, its answer as
decoded JSON). The two Anthropic backends do, each through its own client (`sdk_messages_request`,
`http_messages_request`); the OpenAI-compatible one does not, and a proxy may refuse the server tool (an HTTP 4xx)
or ignore it (an answer without any search): the tool says which.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from mini_claude.models.retry import Credentials, RetryPolicy, run_with_retry

__all__ = [
    "MAX_SEARCHES",
    "SEARCH_MAX_TOKENS",
    "WEB_SEARCH_SERVER_TOOL",
    "SearchHit",
    "SearchOutcome",
    "WebSearchBackend",
    "http_messages_request",
    "parse_search",
    "sdk_messages_request",
    "search_params",
]

WEB_SEARCH_SERVER_TOOL = "web_search_20250305"
MAX_SEARCHES = 8  # searches the API may run for one call (Claude Code's max_uses)
SEARCH_MAX_TOKENS = 8192  # the summary is short; below the SDK's limit for a request that is not streamed
SEARCH_SYSTEM_PROMPT = ("You run web searches on behalf of another assistant, which is waiting for the results. "
                        "Search for what it asks, once or a few times if the first results miss, then reply with a "
                        "short factual summary of what the results say. Do not answer from memory.")


@runtime_checkable
class WebSearchBackend(Protocol):
    """A model backend whose API is Anthropic's Messages API, so it can run the server-side web search tool."""

    name: str

    async def send_messages_request(self, params: dict[str, Any]) -> dict[str, Any]:
        """Send one Messages request built by the caller (without `stream`); its answer as decoded JSON. Raises
        ModelError as `complete` does."""
        ...


@dataclass(frozen=True)
class SearchHit:
    title: str
    url: str
    page_age: str | None = None


@dataclass
class SearchOutcome:
    """What one web search found: the queries the API ran, the results (title and URL), error codes the search
    reported, and the model's summary."""

    queries: list[str] = field(default_factory=list)
    hits: list[SearchHit] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    summary: str = ""
    searches_run: int = 0  # server_tool_use blocks: 0 means the backend ran no search at all


def search_params(model: str, query: str, *, allowed_domains: Sequence[str] = (),
                  blocked_domains: Sequence[str] = ()) -> dict[str, Any]:
    """The Messages request body for one web search (without `stream`)."""
    tool: dict[str, Any] = {"type": WEB_SEARCH_SERVER_TOOL, "name": "web_search", "max_uses": MAX_SEARCHES}
    if allowed_domains:
        tool["allowed_domains"] = list(allowed_domains)
    if blocked_domains:
        tool["blocked_domains"] = list(blocked_domains)
    return {"model": model, "max_tokens": SEARCH_MAX_TOKENS, "system": SEARCH_SYSTEM_PROMPT,
            "messages": [{"role": "user", "content": [{"type": "text", "text": f"Search the web for: {query}"}]}],
            "tools": [tool], "tool_choice": {"type": "auto"}}


def parse_search(message: dict[str, Any]) -> SearchOutcome:
    """A Messages answer to `search_params` as a SearchOutcome (blocks of other types are ignored)."""
    outcome = SearchOutcome()
    texts: list[str] = []
    seen: set[str] = set()
    for block in message.get("content") or []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "server_tool_use":
            outcome.searches_run += 1
            query = (block.get("input") or {}).get("query") if isinstance(block.get("input"), dict) else None
            if isinstance(query, str) and query:
                outcome.queries.append(query)
        elif kind == "web_search_tool_result":
            content = block.get("content")
            if isinstance(content, dict):  # {"type": "web_search_tool_result_error", "error_code": ...}
                outcome.errors.append(str(content.get("error_code") or "unknown_error"))
                continue
            for item in content if isinstance(content, list) else []:
                url = item.get("url") if isinstance(item, dict) else None
                if not isinstance(url, str) or not url or url in seen:
                    continue
                seen.add(url)
                title = item.get("title")
                age = item.get("page_age")
                outcome.hits.append(SearchHit(title if isinstance(title, str) and title else url, url,
                                              age if isinstance(age, str) and age else None))
        elif kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
    outcome.summary = "".join(texts).strip()
    return outcome


# ---- the request through each Anthropic backend's own client -------------------------------------------------


async def sdk_messages_request(client: Any, params: dict[str, Any], *, headers: Callable[[], Awaitable[dict[str, str]]],
                               policy: RetryPolicy, map_error: Callable[[BaseException], Any],
                               credentials: Credentials) -> dict[str, Any]:
    """`params` sent with the `anthropic` SDK's client (models/anthropic.py), retried."""
    async def once() -> dict[str, Any]:
        message = await client.messages.create(**params, extra_headers=await headers())
        answer: dict[str, Any] = message.model_dump(warnings=False)
        return answer

    return await run_with_retry(once, policy=policy, map_error=map_error, credentials=credentials)


async def http_messages_request(send: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]], params: dict[str, Any],
                                *, policy: RetryPolicy, map_error: Callable[[BaseException], Any],
                                credentials: Credentials) -> dict[str, Any]:
    """`params` sent with anthropic_http.py's own request function (`send`: one attempt), retried."""
    return await run_with_retry(lambda: send(params), policy=policy, map_error=map_error, credentials=credentials)
