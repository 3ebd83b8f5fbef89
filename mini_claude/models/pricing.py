"""Estimated dollars for token usage: list prices per million tokens by model family (input, output). An estimate
for `/cost` and `total_cost_usd`, not a bill: a model not in the table costs 0 and says so (`known_price`)."""

from __future__ import annotations

from mini_claude.models.base import Usage

__all__ = ["PRICES_PER_MTOK", "cost_usd", "known_price"]

# (substring of the model name, $ per million input tokens, $ per million output tokens); first match wins
PRICES_PER_MTOK: tuple[tuple[str, float, float], ...] = (
    ("opus-4-5", 5.0, 25.0),
    ("opus", 15.0, 75.0),
    ("sonnet", 3.0, 15.0),
    ("haiku-4", 1.0, 5.0),
    ("haiku", 0.8, 4.0),
    ("gpt-4o-mini", 0.15, 0.6),
    ("gpt-4o", 2.5, 10.0),
)


def known_price(model: str) -> bool:
    return any(key in model.lower() for key, _, _ in PRICES_PER_MTOK)


CACHE_READ_FACTOR = 0.1  # cache reads cost a tenth of the input price
CACHE_WRITE_FACTOR = 1.25  # cache writes (5-minute) a quarter more


def cost_usd(model: str, usage: Usage) -> float:
    for key, per_input, per_output in PRICES_PER_MTOK:
        if key in model.lower():
            inputs = (usage.input_tokens + usage.cache_read_tokens * CACHE_READ_FACTOR
                      + usage.cache_write_tokens * CACHE_WRITE_FACTOR)
            return (inputs * per_input + usage.output_tokens * per_output) / 1_000_000
    return 0.0
