"""A turn whose answer must have a given shape (a session with an output schema: tools/structured_output.py).

`run_turn` runs the turn; when the model ends it without a valid `StructuredOutput` call, it is reminded once (the
same conversation, one more user message), and if it still gives none the turn ends in Claude Code's
`error_max_structured_output_retries`. The two runs count as one turn: turns and usage added up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mini_claude.session.records import RunError

if TYPE_CHECKING:
    from mini_claude.agent.loop import RunOutcome
    from mini_claude.session.parts import SessionParts

__all__ = ["REMINDER", "TurnEnd", "run_turn"]

REMINDER = ("You ended without calling the StructuredOutput tool. Call it now with your final answer, in exactly "
            "the shape of its input schema.")
RETRIES = 1
_ANSWERED = ("end_turn", "stop_sequence")  # stops after which a missing answer is worth a reminder


@dataclass
class TurnEnd:
    outcome: RunOutcome
    structured: Any = None  # the StructuredOutput answer, when the session asked for one
    error: RunError | None = None  # the answer never came


async def run_turn(parts: SessionParts, turn: str | list[dict[str, Any]]) -> TurnEnd:
    agent, tool = parts.agent, parts.structured
    if tool is not None:
        tool.value, tool.received = None, False
    outcome = await agent.run(turn)
    if tool is None:
        return TurnEnd(outcome)
    for _ in range(RETRIES):
        if tool.received or outcome.stop not in _ANSWERED:
            break
        outcome = _joined(outcome, await agent.run(REMINDER))
    if tool.received:
        return TurnEnd(outcome, tool.value)
    if outcome.stop not in _ANSWERED:  # max turns, a cut answer, a hook: the usual ending says why
        return TurnEnd(outcome)
    return TurnEnd(outcome, error=RunError("the model did not give its answer in the required shape (StructuredOutput)"
                                           f" after {RETRIES} reminder", "error_max_structured_output_retries"))


def _joined(first: RunOutcome, then: RunOutcome) -> RunOutcome:
    from mini_claude.agent.loop import RunOutcome
    from mini_claude.models.base import Usage

    usage = Usage()
    usage.add(first.usage)
    usage.add(then.usage)
    return RunOutcome(then.text, then.stop, first.turns + then.turns, usage, [*first.denials, *then.denials],
                      first.subagent_turns + then.subagent_turns, [*first.subagent_usage, *then.subagent_usage])
