"""Sampling from an MCP Apps view: exactly its server's own sampling (policy, question, rate limit, model), with
the real `SamplingService` behind the bridge (bridge_world.py) and a stand-in model and user."""

from __future__ import annotations

from typing import Any

import pytest

from mini_claude.cli.questions.host_ui import sampling_summary
from mini_claude.errors import JsonRpcError
from mini_claude.mcp.host import NoQuestionsUI, SamplingChoice, SamplingRequest, SamplingService
from mini_claude.models.base import AssistantTurn, GenerationOptions, ToolSpec
from tests.mcp.apps.bridge_world import (
    World,
)


class AnsweringModel:
    name = "model-x"

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    async def complete(self, *, system: str, messages: list[dict[str, Any]], tools: list[ToolSpec],
                       on_text: Any = None, options: GenerationOptions | None = None) -> AssistantTurn:
        self.calls.append({"system": system, "messages": messages, "options": options})
        return AssistantTurn([{"type": "text", "text": "four"}], "end_turn")


class AnsweringUI(NoQuestionsUI):
    """The user's answers to sampling questions, in order; what they were shown."""

    interactive = True

    def __init__(self, answers: list[SamplingChoice]) -> None:
        super().__init__()
        self.answers = answers
        self.asked: list[SamplingRequest] = []

    async def approve_sampling(self, request: SamplingRequest) -> SamplingChoice:
        self.asked.append(request)
        return self.answers.pop(0)


SAMPLE = {"messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}], "maxTokens": 50,
          "systemPrompt": "Be brief."}


async def sampling_world(policy: str, *, answers: list[SamplingChoice] | None = None, ui: Any = None,
                         rate_limit: int = 10) -> tuple[World, AnsweringModel, Any, SamplingService]:
    model = AnsweringModel()
    ui = ui if ui is not None else AnsweringUI(list(answers or []))
    service = SamplingService(lambda: model, ui, policies={"board": policy}, rate_limit=rate_limit)
    return World(sampling=service), model, ui, service


async def test_a_view_samples_under_an_allow_policy_as_its_server_would() -> None:
    world, model, ui, _ = await sampling_world("allow")
    try:
        _, view_id = await world.shown()
        init = await world.initialized(view_id)
        assert init["result"]["hostCapabilities"]["sampling"] == {"tools": {}}
        answer = await world.request(view_id, "sampling/createMessage", SAMPLE)
        assert answer["result"] == {"role": "assistant", "content": {"type": "text", "text": "four"},
                                    "model": "model-x", "stopReason": "endTurn"}
        assert model.calls == [{"system": "Be brief.", "options": GenerationOptions(max_tokens=50),
                                "messages": [{"role": "user", "content": [{"type": "text", "text": "2+2?"}]}]}]
        assert not ui.asked  # allowed: nobody asked
        bad = await world.request(view_id, "sampling/createMessage", {"messages": [], "maxTokens": 5})
        assert bad["error"] == {"code": -32602,  # the server path's own check and words
                                "message": "sampling/createMessage: messages must be a non-empty list"}
        assert len(model.calls) == 1
    finally:
        await world.apps.aclose()


async def test_a_views_sampling_is_asked_marked_as_the_views_and_yes_or_no_holds() -> None:
    world, model, ui, _ = await sampling_world("ask", answers=[SamplingChoice.ONCE, SamplingChoice.DENY])
    try:
        _, view_id = await world.shown()
        init = await world.initialized(view_id)
        assert "sampling" in init["result"]["hostCapabilities"]
        yes = await world.request(view_id, "sampling/createMessage", SAMPLE)
        assert yes["result"]["content"]["text"] == "four" and len(model.calls) == 1
        no = await world.request(view_id, "sampling/createMessage", SAMPLE)
        assert no["error"] == {"code": -1, "message": "User rejected sampling request"}
        assert len(model.calls) == 1
        asked = ui.asked[0]
        assert (asked.server, asked.view, asked.max_tokens, asked.system_prompt) == ("board", "show", 50, "Be brief.")
        assert sampling_summary(asked)[0] == ("MCP server 'board' (through its view of 'show' in the browser) asks "
                                              "the model to answer (up to 50 tokens):")
    finally:
        await world.apps.aclose()


async def test_nobody_to_ask_refuses_a_views_sampling_as_it_would_the_servers() -> None:
    world, model, _, _ = await sampling_world("ask", ui=NoQuestionsUI())
    try:
        _, view_id = await world.shown()
        await world.initialized(view_id)
        answer = await world.request(view_id, "sampling/createMessage", SAMPLE)
        assert answer["error"]["code"] == -1 and not model.calls
    finally:
        await world.apps.aclose()


async def test_a_deny_policy_is_not_advertised_and_refused() -> None:
    world, model, ui, _ = await sampling_world("deny")
    try:
        _, view_id = await world.shown()
        init = await world.initialized(view_id)
        assert "sampling" not in init["result"]["hostCapabilities"]
        answer = await world.request(view_id, "sampling/createMessage", SAMPLE)
        assert answer["error"] == {"code": -1, "message": "User rejected sampling request (sampling is denied "
                                                          "for this server)"}
        assert not model.calls and not ui.asked
    finally:
        await world.apps.aclose()


async def test_without_a_sampler_views_are_not_offered_sampling(world: World) -> None:
    _, view_id = await world.shown()
    init = await world.initialized(view_id)
    assert "sampling" not in init["result"]["hostCapabilities"]
    answer = await world.request(view_id, "sampling/createMessage", SAMPLE)
    assert answer["error"] == {"code": -32000, "message": "this session does not answer sampling requests from views"}


async def test_a_view_and_its_server_share_one_rate_limit() -> None:
    world, model, _, service = await sampling_world("allow", rate_limit=3)
    try:
        _, view_id = await world.shown()
        await world.initialized(view_id)
        await service.create_message("board", SAMPLE)  # the server's own, through its connection
        await service.create_message("board", SAMPLE)
        assert "result" in await world.request(view_id, "sampling/createMessage", SAMPLE)
        over = await world.request(view_id, "sampling/createMessage", SAMPLE)
        assert over["error"] == {"code": -1, "message": "too many sampling requests: at most 3 per 60 s from one "
                                                        "server"}
        with pytest.raises(JsonRpcError, match="too many"):  # and the view's use counts against the server
            await service.create_message("board", SAMPLE)
        assert len(model.calls) == 3
    finally:
        await world.apps.aclose()


async def test_elicitation_from_a_view_is_not_a_method(world: World) -> None:
    _, view_id = await world.shown()
    await world.initialized(view_id)
    answer = await world.request(view_id, "elicitation/create", {"message": "name?", "requestedSchema": {}})
    assert answer["error"]["code"] == -32601
