"""`AnthropicModel`: the Anthropic Messages API through the official `anthropic` SDK, streaming or not.

Selected with `MINI_CLAUDE_ANTHROPIC_SDK=1` (models/factory.py); the default backend is anthropic_http.py, which
speaks the same API over httpx without the SDK. Both share anthropic_messages.py: the model asked for and the
request's shape (`ModelChoice`), the request body and its beta header, and reading the answer (`StreamAssembler`
for the raw event stream of `messages.create(stream=True)`, `turn_from_message` for a whole one). The SDK is
imported in the constructor, not at module import (it takes over half a second), and its own retries are off:
`retry.run_with_retry` is the one retry layer. What the SDK has no keyword for goes in `extra_body`
(`sdk_arguments`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

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
from mini_claude.models.retry import Endpoint, RetryPolicy, complete_with_retry
from mini_claude.models.sdk_errors import map_anthropic_error

__all__ = ["AnthropicModel", "sdk_arguments"]

NON_STREAMING_TIMEOUT_S = 600.0
# what the SDK's `messages.create` takes as keywords; anything else in our body goes as `extra_body`
_SDK_KEYWORDS = frozenset({"model", "max_tokens", "messages", "system", "tools", "stop_sequences", "thinking",
                           "output_config", "metadata", "tool_choice"})


class AnthropicModel(ModelChoice):
    """A `Model` backed by the Anthropic Messages API (or anything that speaks it, such as the mock server)."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str = "",
        base_url: str | None = None,
        max_tokens: int | None = None,
        stream: bool = True,
        retry: RetryPolicy | None = None,
        credentials: AnthropicCredentials | None = None,
        thinking: ThinkingPrefs | None = None,
        requested: str = "",
    ) -> None:
        import anthropic

        self._choose(model, requested=requested, thinking=thinking, max_tokens=max_tokens)
        self.stream = stream
        self.retry = retry or RetryPolicy.from_env()
        self.credentials = credentials or AnthropicCredentials(api_key=api_key)
        self._client = anthropic.AsyncAnthropic(
            api_key="unset",
            base_url=base_url,
            max_retries=0,  # run_with_retry is the one retry layer
        )  # the SDK's default timeouts (10 min read, 5 s connect) suit long generations
        # no key of the SDK's own (nor one it would read from os.environ): each request carries exactly the headers
        # `credentials` gives (`_auth_headers`)
        self._client.api_key = None
        self._client.auth_token = None
        self.base_url = str(self._client.base_url).rstrip("/")
        self.live = is_live(self.base_url)

    async def complete(
        self,
        *,
        system: str,
        messages: list[dict[str, Any]],
        tools: list[ToolSpec],
        on_text: Callable[[str], None] | None = None,
        options: GenerationOptions | None = None,
        on_retry: RetryListener | None = None,
    ) -> AssistantTurn:
        params = build_params(self.name, self.shape(options), system, messages, tools, options)
        return await complete_with_retry(
            lambda: self._complete_once(params), lambda emit: self._stream_once(params, emit), stream=self.stream,
            on_text=on_text, policy=self.retry, map_error=partial(map_anthropic_error, base_url=self.base_url),
            credentials=self.credentials, endpoint=Endpoint(self.base_url, "ANTHROPIC_BASE_URL"), on_retry=on_retry)

    @property
    def list_priced(self) -> bool:
        """Claude models are priced at Anthropic's list prices wherever the API is (a gateway included)."""
        return True

    async def _auth_headers(self, params: dict[str, Any] | None = None) -> dict[str, str]:
        """The next request's extra headers: the beta header it needs and the credentials' key or token."""
        return {**(request_headers(params) if params is not None else {}), **await self.credentials.headers()}

    async def count_tool_tokens(self, tools: list[ToolSpec]) -> int:
        """What `tools` add to a request, by the count-tokens endpoint (`tools_cost`)."""
        async def count(params: dict[str, Any]) -> int:
            return (await self._client.messages.count_tokens(**params, extra_headers=await self._auth_headers())
                    ).input_tokens

        return await tools_cost(count, self.name, tools)

    async def send_messages_request(self, params: dict[str, Any]) -> dict[str, Any]:
        """One Messages request built elsewhere (the web search's: `WebSearchBackend`, models/web_search.py)."""
        from mini_claude.models.web_search import sdk_messages_request
        return await sdk_messages_request(self._client, params, headers=partial(self._auth_headers, params),
                                          policy=self.retry, credentials=self.credentials,
                                          map_error=partial(map_anthropic_error, base_url=self.base_url))

    async def aclose(self) -> None:
        await self._client.close()

    # ---- one attempt -------------------------------------------------------------------------------------------

    async def _complete_once(self, params: dict[str, Any]) -> AssistantTurn:
        # an explicit timeout: without one the SDK refuses a non-streaming request whose max_tokens could take long
        message = await self._client.messages.create(**sdk_arguments(params), timeout=NON_STREAMING_TIMEOUT_S,
                                                     extra_headers=await self._auth_headers(params))
        return turn_from_message(message.model_dump(warnings=False))  # the one parser both backends use

    async def _stream_once(self, params: dict[str, Any], emit: Callable[[str], None]) -> AssistantTurn:
        assembler = StreamAssembler(emit)
        stream = await self._client.messages.create(**sdk_arguments(params), stream=True,
                                                    extra_headers=await self._auth_headers(params))
        async with stream:
            async for event in stream:
                assembler.feed(event.type, event.model_dump(warnings=False))
        return assembler.turn(self.base_url)


def sdk_arguments(params: dict[str, Any]) -> dict[str, Any]:
    """`params` as the SDK's `messages.create` keywords: what it has no keyword for goes in `extra_body`."""
    known = {k: v for k, v in params.items() if k in _SDK_KEYWORDS}
    extra = {k: v for k, v in params.items() if k not in _SDK_KEYWORDS}
    return {**known, "extra_body": extra} if extra else known
