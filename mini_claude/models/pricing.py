"""Estimated dollars for token usage, at the list prices in the model table (catalog.py). An estimate for `/cost`,
`total_cost_usd` and `--max-budget-usd`, not a bill.

A price is known only for a model in the table *served where that list price applies*: Claude models over the
Anthropic API (Anthropic's own or a gateway in front of it, as Claude Code counts them), OpenAI models on
api.openai.com. Anything else — a local or other OpenAI-compatible server, whatever its model is called, or a name
not in the table — costs 0 and `known_price` says "unknown" (Claude Code prices an unknown model at its default
model's rates; we do not). Pass the model object (`ListPriced`) where there is one: a name alone cannot say where
it is served. Cache reads cost `CACHE_READ_FACTOR` of the input price, cache writes `CACHE_WRITE_FACTOR`.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from mini_claude.models.base import Usage
from mini_claude.models.catalog import CACHE_READ_FACTOR, CACHE_WRITE_FACTOR, lookup

__all__ = ["CACHE_READ_FACTOR", "CACHE_WRITE_FACTOR", "ListPriced", "cost_usd", "known_price", "price_per_mtok"]


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
    info = lookup(name)
    if info is None or info.price_in is None or info.price_out is None:
        return None
    return info.price_in, info.price_out


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
