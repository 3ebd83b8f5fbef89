"""`--include-partial-messages`: the model's stream as `stream_event` lines, the SDK's `StreamEvent` messages.

What the models layer surfaces while a request streams is its text deltas (`on_text`), so each model request writes
the Messages stream's events for its text: `message_start`, then for the text `content_block_start`, one
`content_block_delta` (`text_delta`) per chunk and `content_block_stop`, and at the end `message_delta` (the stop
reason) and `message_stop`. Tool-use and thinking blocks arrive whole, in the `assistant` message that follows.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mini_claude.agent.loop import Agent
    from mini_claude.cli.sdk_control.channel import LineWriter

__all__ = ["stream_partial_messages"]


def stream_partial_messages(agent: Agent, out: LineWriter, session_id: Callable[[], str]) -> None:
    """Wrap the agent's model so each request also writes its stream events through `out`."""
    model = agent.model
    complete = model.complete

    def send(event: dict[str, Any]) -> None:
        out.send({"type": "stream_event", "uuid": str(uuid.uuid4()), "session_id": session_id(), "event": event,
                  "parent_tool_use_id": None})

    async def streamed(**kwargs: Any) -> Any:
        given: Callable[[str], None] | None = kwargs.pop("on_text", None)
        started = False

        def on_text(chunk: str) -> None:
            nonlocal started
            if not started:
                started = True
                send({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
            send({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": chunk}})
            if given is not None:
                given(chunk)

        send({"type": "message_start", "message": {"id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message",
                                                   "role": "assistant", "model": model.name, "content": [],
                                                   "stop_reason": None, "stop_sequence": None}})
        turn = await complete(**kwargs, on_text=on_text)
        if started:
            send({"type": "content_block_stop", "index": 0})
        send({"type": "message_delta", "delta": {"stop_reason": turn.stop_reason,
                                                 "stop_sequence": None}})
        send({"type": "message_stop"})
        return turn

    model.complete = streamed  # type: ignore[method-assign]
