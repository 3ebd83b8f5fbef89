"""Retries on 429 / 529 / `overloaded` with Claude Code's backoff (issue 20). Measured against Claude Code 2.1.197 on
the mock model: 11 attempts, waits of 0.5 s doubling to 32 s with up to a quarter more at random (gaps 0.59, 1.21,
2.11, 4.04, 9.11, 18.49, 35.94, 34.99, 36.86, 39.32 s), a longer `retry-after` waited instead of the backoff. The
waits go through an injected sleep here: nothing sleeps for real."""

from __future__ import annotations

from typing import Any

import pytest

from mini_claude.errors import ModelError
from mini_claude.models.anthropic_http import AnthropicHttpModel
from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.openai_compat import OpenAICompatModel
from mini_claude.models.retry import RetryPolicy
from mini_claude.models.scenario import parse_scenario
from tests.integration.conftest import answer
from tests.settings.conftest import SettingsCli

OVERLOADED = {"error": {"status": 529, "message": "Overloaded", "type": "overloaded_error"}}
BACKOFF_S = [0.5, 1, 2, 4, 8, 16, 32, 32, 32, 32]


class Sleeps:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def _served(turns: list[dict[str, Any]]) -> MockModelServer:
    server = MockModelServer(parse_scenario({"turns": turns}))
    server.start()
    return server


def _user() -> list[dict[str, Any]]:
    return [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]


@pytest.mark.parametrize("stream", [True, False])
async def test_529_waits_claude_codes_schedule_then_answers(stream: bool) -> None:
    server = _served([OVERLOADED] * 10 + [answer("finally")])
    sleeps = Sleeps()
    model = AnthropicHttpModel("m", api_key="k", base_url=server.url, stream=stream,
                               retry=RetryPolicy(sleep=sleeps))
    try:
        turn = await model.complete(system="", messages=_user(), tools=[])
    finally:
        await model.aclose()
        server.stop()
    assert turn.text == "finally"
    assert len(server.requests) == 11
    assert len(sleeps.waits) == 10
    for waited, backoff in zip(sleeps.waits, BACKOFF_S, strict=True):
        assert backoff <= waited <= backoff * 1.25


async def test_529_gives_up_after_eleven_attempts() -> None:
    server = _served([OVERLOADED] * 12)
    sleeps = Sleeps()
    model = AnthropicHttpModel("m", api_key="k", base_url=server.url, retry=RetryPolicy(sleep=sleeps, jitter=0))
    try:
        with pytest.raises(ModelError) as info:
            await model.complete(system="", messages=_user(), tools=[])
    finally:
        await model.aclose()
        server.stop()
    assert str(info.value) == ("model API error 529: Overloaded (gave up after 11 attempts); "
                              "the API is overloaded: try again in a few minutes, or choose another model with /model")
    assert sleeps.waits == BACKOFF_S
    assert sum(sleeps.waits) == 159.5  # about 3 minutes in all, with the jitter, as Claude Code


async def test_retry_after_is_honoured_and_a_long_one_ends_the_retries() -> None:
    limited = {"error": {"status": 429, "message": "slow down", "headers": {"retry-after": "3"}}}
    server = _served([limited, limited, limited, limited, limited, answer("ok")])
    sleeps = Sleeps()
    model = AnthropicHttpModel("m", api_key="k", base_url=server.url, retry=RetryPolicy(sleep=sleeps, jitter=0))
    try:
        assert (await model.complete(system="", messages=_user(), tools=[])).text == "ok"
    finally:
        await model.aclose()
        server.stop()
    assert sleeps.waits == [3, 3, 3, 4, 8]  # the longer of retry-after and the backoff, as Claude Code waits

    server = _served([{"error": {"status": 529, "message": "Overloaded", "headers": {"retry-after": "3600"}}},
                      answer("never")])
    model = AnthropicHttpModel("m", api_key="k", base_url=server.url, retry=RetryPolicy(sleep=sleeps))
    try:
        with pytest.raises(ModelError) as info:
            await model.complete(system="", messages=_user(), tools=[])
    finally:
        await model.aclose()
        server.stop()
    assert "the server asked to wait 3600s before trying again; try again later" in str(info.value)
    assert len(server.requests) == 1


async def test_the_openai_compatible_backend_waits_the_same() -> None:
    server = _served([OVERLOADED, answer("ok")])
    sleeps = Sleeps()
    model = OpenAICompatModel("m", api_key="k", base_url=f"{server.start()}/v1", retry=RetryPolicy(sleep=sleeps))
    try:
        assert (await model.complete(system="", messages=_user(), tools=[])).text == "ok"
    finally:
        await model.aclose()
        server.stop()
    assert len(sleeps.waits) == 1 and 0.5 <= sleeps.waits[0] <= 0.625


def test_the_cli_retries_ten_times(cli: SettingsCli) -> None:
    """The real CLI: ten 529s then an answer is a success; eleven give up with the count. The backoff base is
    set to 0 through MINI_CLAUDE_RETRY_BASE_S so the run takes no time."""
    fast = {"MINI_CLAUDE_RETRY_BASE_S": "0"}
    mock = cli.mock([OVERLOADED] * 10 + [answer("made it")])
    r = cli.run("-p", "hi", env=fast)
    assert r.rc == 0, r.stderr
    assert r.stdout.strip() == "made it" and len(mock.requests) == 11
    mock = cli.mock([OVERLOADED] * 11)
    r = cli.run("-p", "hi", env=fast)
    assert r.rc == 1
    assert ("model API error 529: Overloaded (gave up after 11 attempts); "
            "the API is overloaded: try again in a few minutes, or choose another model with /model" in r.stderr)
    assert len(mock.requests) == 11
