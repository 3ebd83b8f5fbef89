"""The default Anthropic backend: the Messages API spoken directly over httpx, so that `-p` reaches the model
without importing the `anthropic` SDK first (~0.5 s of pydantic models: bench/README.md, "Agent start-up").

It is the SDK path (anthropic.py) minus the SDK: the same request (`build_params`, anthropic_messages.py), the
same retry skeleton and backoff (`complete_with_retry`), the same errors in the same words (`_status_error` and the
transport mapping in retry.py), streaming over server-sent events (`message_start`, `content_block_*`, `message_delta`,
`message_stop`, `error`, `ping`). `MINI_CLAUDE_ANTHROPIC_SDK=1` selects the SDK path instead
(models/factory.py); tests run both against the mock model. The key or token of each request comes from
`AnthropicCredentials` (credentials.py: `x-api-key`, `Authorization: Bearer`, an apiKeyHelper run again after a 401).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx

from mini_claude import __version__
from mini_claude.errors import ModelError
from mini_claude.models.anthropic_messages import (
    ModelChoice,
    StreamAssembler,
    build_params,
    is_live,
    request_headers,
    tools_cost,
    turn_from_message,
)
from mini_claude.models.base import AssistantTurn, GenerationOptions, RetryListener, ToolSpec
from mini_claude.models.catalog import ThinkingPrefs
from mini_claude.models.credentials import AnthropicCredentials
from mini_claude.models.http_pool import HttpPool
from mini_claude.models.retry import Endpoint, RetryPolicy, complete_with_retry
from mini_claude.models.sdk_errors import (
    ANTHROPIC_ERROR_TYPE_STATUS,
    connection_error,
    status_error,
    transport_error,
)
from mini_claude.net.tls import tls_context_for

__all__ = ["API_VERSION", "AnthropicHttpModel"]

API_VERSION = "2023-06-01"
DEFAULT_BASE_URL = "https://api.anthropic.com"
CONNECT_TIMEOUT_S = 5.0
READ_TIMEOUT_S = 600.0  # long generations, as the SDK allows


class ApiStatusError(Exception):
    """A non-success answer (or an `error` event in a stream): the status, the API's message, the response."""

    def __init__(self, status: int, message: str, response: httpx.Response) -> None:
        self.status = status
        self.message = message
        self.response = response  # run_with_retry reads retry-after / x-should-retry from its headers
        super().__init__(f"{status}: {message}")


class AnthropicHttpModel(ModelChoice):
    """A `Model` over the Anthropic Messages API (or anything that speaks it, such as the mock server)."""

    def __init__(self, model: str, *, api_key: str = "", base_url: str | None = None,
                 max_tokens: int | None = None, stream: bool = True, retry: RetryPolicy | None = None,
                 credentials: AnthropicCredentials | None = None, thinking: ThinkingPrefs | None = None,
                 requested: str = "", pool: HttpPool | None = None) -> None:
        self._choose(model, requested=requested, thinking=thinking, max_tokens=max_tokens)
        self.credentials = credentials or AnthropicCredentials(api_key=api_key)
        self.stream = stream
        self.retry = retry or RetryPolicy.from_env()
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.live = is_live(self.base_url)
        self._owns_client = pool is None  # a pool's client is shared by other sessions: theirs to keep open
        self._client = pool.client(self.base_url, self._new_client) if pool is not None else self._new_client()

    def _new_client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            verify=tls_context_for(self.base_url), timeout=httpx.Timeout(READ_TIMEOUT_S, connect=CONNECT_TIMEOUT_S),
            headers={"anthropic-version": API_VERSION, "content-type": "application/json",
                     "user-agent": f"mini-claude/{__version__}"})

    async def complete(self, *, system: str, messages: list[dict[str, Any]], tools: list[ToolSpec],
                       on_text: Callable[[str], None] | None = None, options: GenerationOptions | None = None,
                       on_retry: RetryListener | None = None) -> AssistantTurn:
        params = build_params(self.name, self.shape(options), system, messages, tools, options)
        return await complete_with_retry(
            lambda: self._complete_once(params), lambda emit: self._stream_once(params, emit), stream=self.stream,
            on_text=on_text, policy=self.retry, map_error=self._map_error, credentials=self.credentials,
            endpoint=Endpoint(self.base_url, "ANTHROPIC_BASE_URL"), on_retry=on_retry)

    @property
    def list_priced(self) -> bool:
        """Claude models are priced at Anthropic's list prices wherever the API is (a gateway included)."""
        return True

    async def count_tool_tokens(self, tools: list[ToolSpec]) -> int:
        """What `tools` add to a request, by the count-tokens endpoint (`tools_cost`)."""
        return await tools_cost(self._count, self.name, tools)

    async def _count(self, params: dict[str, Any]) -> int:
        response = await self._client.post(f"{self.base_url}/v1/messages/count_tokens", json=params,
                                           headers=await self.credentials.headers())
        if response.status_code >= 400:
            raise self._map_error(_status_of(response, response.content)) or ModelError("count_tokens failed")
        tokens = response.json().get("input_tokens")
        if isinstance(tokens, bool) or not isinstance(tokens, int):
            raise ModelError(f"the model API at {self.base_url} answered count_tokens without input_tokens")
        return tokens

    async def send_messages_request(self, params: dict[str, Any]) -> dict[str, Any]:
        """One Messages request built elsewhere (the web search's: `WebSearchBackend`, models/web_search.py)."""
        from mini_claude.models.web_search import http_messages_request
        return await http_messages_request(self._post, params, policy=self.retry, map_error=self._map_error,
                                           credentials=self.credentials)

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    # ---- one attempt -------------------------------------------------------------------------------------------

    async def _complete_once(self, params: dict[str, Any]) -> AssistantTurn:
        return turn_from_message(await self._post(params))

    async def _post(self, params: dict[str, Any]) -> dict[str, Any]:
        response = await self._client.post(f"{self.base_url}/v1/messages", json=params,
                                           headers={**request_headers(params), **await self.credentials.headers()})
        if response.status_code >= 400:
            raise _status_of(response, response.content)
        try:
            message = response.json()
        except ValueError:
            raise ModelError(f"the model API at {self.base_url} sent an unexpected response: not JSON",
                             status=response.status_code) from None
        if not isinstance(message, dict):
            raise ModelError(f"the model API at {self.base_url} sent an unexpected response: not a JSON object",
                             status=response.status_code)
        return message

    async def _stream_once(self, params: dict[str, Any], emit: Callable[[str], None]) -> AssistantTurn:
        assembler = StreamAssembler(emit)
        headers = {**request_headers(params), **await self.credentials.headers()}
        async with self._client.stream("POST", f"{self.base_url}/v1/messages", json={**params, "stream": True},
                                       headers=headers) as response:
            if response.status_code >= 400:
                raise _status_of(response, await response.aread())
            async for kind, data in _events(response):
                if kind == "error":
                    error = data.get("error") if isinstance(data.get("error"), dict) else {}
                    status = ANTHROPIC_ERROR_TYPE_STATUS.get(str(error.get("type")), 500)
                    raise ApiStatusError(status, str(error.get("message") or "error event"), response)
                assembler.feed(kind, data)
        return assembler.turn(self.base_url)

    def _map_error(self, exc: BaseException) -> ModelError | None:
        if isinstance(exc, ModelError):
            return exc
        if isinstance(exc, ApiStatusError):
            return status_error(exc.status, exc.message, exc.response.headers)
        if isinstance(exc, httpx.TimeoutException):
            return ModelError(f"the model API at {self.base_url} timed out", retryable=True)
        if isinstance(exc, httpx.ConnectError):
            return connection_error(exc, self.base_url)
        return transport_error(exc, self.base_url)


def _status_of(response: httpx.Response, body: bytes) -> ApiStatusError:
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    error = data.get("error") if isinstance(data, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    text = message if isinstance(message, str) and message else body.decode("utf-8", "replace")[:300]
    return ApiStatusError(response.status_code, text, response)


_SSE_LINE_RE = re.compile(r"\r\n|\r|\n")


async def _sse_lines(response: httpx.Response) -> AsyncIterator[str]:
    """The stream's lines as server-sent events define them: ended by CRLF, LF or CR only. (httpx's `aiter_lines`
    also breaks at U+0085, U+2028 and the other `str.splitlines` breaks, which cut a JSON data line holding one of
    them in the model's text, and the rest of that text was lost.)"""
    pending = ""
    async for chunk in response.aiter_text():
        pending += chunk
        held = "\r" if pending.endswith("\r") else ""  # maybe the first half of a CRLF split between chunks
        *lines, pending = _SSE_LINE_RE.split(pending[:-1] if held else pending)
        pending += held
        for line in lines:
            yield line
    if pending:
        yield pending.removesuffix("\r")


async def _events(response: httpx.Response) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """(event name, decoded data) for each server-sent event; `ping` and undecodable data are skipped."""
    name, data_lines = "", []
    async for line in _sse_lines(response):
        if line == "":
            if data_lines and name != "ping":
                try:
                    data = json.loads("\n".join(data_lines))
                except ValueError:
                    data = None
                if isinstance(data, dict):
                    yield name or str(data.get("type") or ""), data
            name, data_lines = "", []
        elif line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data_lines.append(line[5:].lstrip(" "))
    if data_lines and name != "ping":  # a last event without its blank line
        try:
            data = json.loads("\n".join(data_lines))
        except ValueError:
            return
        if isinstance(data, dict):
            yield name or str(data.get("type") or ""), data
