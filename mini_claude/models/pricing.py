"""Estimated dollars for token usage, at the list prices in the model table (catalog.py). An estimate for `/cost`,
`total_cost_usd` and `--max-budget-usd`, not a bill.

A price is known only for a model in the table *served where that list price applies*: Claude models over the
Anthropic API (Anthropic's own or a gateway in front of it, as Claude Code counts them), OpenAI models on
api.openai.com. Anything else — a local or other OpenAI-compatible server, whatever its model is called, or a name
not in the table — costs 0 and `known_price` says "unknown" (Claude Code prices an unknown model at its default
model's rates; we do not). Pass the model object (`ListPriced`) where there is one: a name alone cannot say where
it is served. Cache writes cost `CACHE_WRITE_FACTOR` of the input price, cache reads the model's `cache_read` part
of it (a tenth, less for the newest models: measured on Claude Code 2.1.328).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from mini_claude.models.base import Usage
from mini_claude.models.catalog import (
    CACHE_READ_FACTOR,
    CACHE_WRITE_FACTOR,
    UNKNOWN_MAX_OUTPUT,
    ModelInfo,
    lookup,
)

__all__ = ["CACHE_READ_FACTOR", "CACHE_WRITE_FACTOR", "ListPriced", "cost_usd", "known_price", "model_usage",
           "price_per_mtok"]


class Named(Protocol):
    name: str


@runtime_checkable
class ListPriced(Protocol):
    """A model backend that says whether list prices apply where it is served (`list_priced`)."""

    name: str

    @property
    def list_priced(self) -> bool: ...


def price_per_mtok(model: str | ListPriced) -> tuple[float, float] | None:
    """($ per million input tokens, $ per million output tokens), or None when unknown (see the docstring)."""
    info = _priced(model)
    return (info.price_in, info.price_out) if info is not None and info.price_in is not None \
        and info.price_out is not None else None


def _priced(model: str | ListPriced) -> ModelInfo | None:
    """The table's entry for `model` where list prices apply, None otherwise."""
    if isinstance(model, ListPriced):
        if not model.list_priced:
            return None
        name = model.name
    else:
        name = model
    return lookup(name)


def known_price(model: str | ListPriced) -> bool:
    return price_per_mtok(model) is not None


def cost_usd(model: str | ListPriced, usage: Usage) -> float:
    """The estimated cost of `usage`; 0.0 when the price is unknown."""
    price = price_per_mtok(model)
    if price is None:
        return 0.0
    per_input, per_output = price
    read = info.cache_read if (info := _priced(model)) is not None else CACHE_READ_FACTOR
    inputs = usage.input_tokens + usage.cache_read_tokens * read + usage.cache_write_tokens * CACHE_WRITE_FACTOR
    return (inputs * per_input + usage.output_tokens * per_output) / 1_000_000


def model_usage(spent: Iterable[tuple[str | Named, Usage]]) -> dict[str, dict[str, float | int]]:
    """The json result's `modelUsage`, as Claude Code shapes it: per model id, its tokens (cache reads and writes
    apart), estimated cost, context window and output limit (the table's; 0 when it does not know the model). A
    model object is priced where it is served (`ListPriced`), a bare name or other model by its name."""
    out: dict[str, dict[str, float | int]] = {}
    for served, usage in spent:
        model = served if isinstance(served, str | ListPriced) else served.name
        name = model if isinstance(model, str) else model.name
        info = lookup(name)
        entry = out.setdefault(name, {"inputTokens": 0, "outputTokens": 0, "cacheReadInputTokens": 0,
                                      "cacheCreationInputTokens": 0, "costUSD": 0.0,
                                      "contextWindow": info.context_window if info else 0,
                                      "maxOutputTokens": info.max_output if info else UNKNOWN_MAX_OUTPUT})
        entry["inputTokens"] += usage.input_tokens
        entry["outputTokens"] += usage.output_tokens
        entry["cacheReadInputTokens"] += usage.cache_read_tokens
        entry["cacheCreationInputTokens"] += usage.cache_write_tokens
        entry["costUSD"] = round(entry["costUSD"] + cost_usd(model, usage), 6)
    return out
