"""Estimated dollars for token usage: list prices per million tokens by model family (input, output). An estimate
for `/cost`, `total_cost_usd` and `--max-budget-usd`, not a bill.

A price is known only for a model family in the table *served where that list price applies*: Claude models over
the Anthropic API (Anthropic's own or a gateway in front of it, as Claude Code counts them), OpenAI models on
api.openai.com. Anything else — a local or other OpenAI-compatible server, whatever its model is called, or a name
not in the table — costs 0 and `known_price` says "unknown" (Claude Code 2.1.197 prices an unknown model at its
default model's rates; we do not). Pass the model object (`ListPriced`) where there is one: a name alone cannot
say where it is served.
"""

from __future__ import annotations

import re
from typing import Protocol, runtime_checkable

from mini_claude.models.base import Usage

__all__ = ["PRICES_PER_MTOK", "ListPriced", "cost_usd", "known_price", "price_per_mtok"]

# (model family as a regex matched at the start of the name or after a `/` or `.` prefix such as `anthropic/`,
# $ per million input tokens, $ per million output tokens); first match wins. Checked against the costUSD Claude
# Code 2.1.197 reports for the ids its aliases send (fable $10/$50, opus $5/$25, sonnet $3/$15, haiku 4.5 $1/$5).
PRICES_PER_MTOK: tuple[tuple[str, float, float], ...] = (
    (r"claude-fable", 10.0, 50.0),
    (r"claude-opus-(?:4-[5-9]|[5-9])", 5.0, 25.0),
    (r"claude-(?:opus-4|3-opus)", 15.0, 75.0),
    (r"claude-(?:sonnet|3-[57]-sonnet|3-sonnet)", 3.0, 15.0),
    (r"claude-(?:haiku-4|haiku-[5-9])", 1.0, 5.0),
    (r"claude-3-5-haiku", 0.8, 4.0),
    (r"claude-3-haiku", 0.25, 1.25),
    (r"gpt-4o-mini", 0.15, 0.6),
    (r"gpt-4o", 2.5, 10.0),
)
_COMPILED = tuple((re.compile(r"(?:^|.*[/.])" + pattern, re.IGNORECASE), per_in, per_out)
                  for pattern, per_in, per_out in PRICES_PER_MTOK)

CACHE_READ_FACTOR = 0.1  # cache reads cost a tenth of the input price
CACHE_WRITE_FACTOR = 1.25  # cache writes (5-minute) a quarter more


@runtime_checkable
class ListPriced(Protocol):
    """A model backend that says whether list prices apply where it is served (`list_priced`)."""

    name: str

    @property
    def list_priced(self) -> bool: ...


def price_per_mtok(model: str | ListPriced) -> tuple[float, float] | None:
    """($ per million input tokens, $ per million output tokens), or None when unknown (see the docstring)."""
    if isinstance(model, ListPriced):
        if not model.list_priced:
            return None
        name = model.name
    else:
        name = model
    for pattern, per_input, per_output in _COMPILED:
        if pattern.match(name):
            return per_input, per_output
    return None


def known_price(model: str | ListPriced) -> bool:
    return price_per_mtok(model) is not None


def cost_usd(model: str | ListPriced, usage: Usage) -> float:
    """The estimated cost of `usage`; 0.0 when the price is unknown."""
    price = price_per_mtok(model)
    if price is None:
        return 0.0
    per_input, per_output = price
    inputs = (usage.input_tokens + usage.cache_read_tokens * CACHE_READ_FACTOR
              + usage.cache_write_tokens * CACHE_WRITE_FACTOR)
    return (inputs * per_input + usage.output_tokens * per_output) / 1_000_000
