"""The model table (models/catalog.py) against what Claude Code 2.1.328 sent and reported on the mock model."""

from __future__ import annotations

import pytest

from mini_claude.models.base import Usage
from mini_claude.models.catalog import (
    ALIASES,
    DEFAULT_MODEL,
    ThinkingPrefs,
    describe,
    lookup,
    plan_variant,
    request_shape,
    resolve,
)
from mini_claude.models.pricing import cost_usd, known_price, model_usage

# what Claude Code 2.1.328 sends for each alias and with no model chosen (measured against the mock model)
CLAUDE_CODE_IDS = {"opus": "claude-opus-5-5", "sonnet": "claude-sonnet-5-5", "haiku": "claude-haiku-5-5",
                   "fable": "claude-fable-5-2"}


def test_aliases_and_default_are_claude_codes() -> None:
    assert ALIASES == CLAUDE_CODE_IDS and DEFAULT_MODEL == "claude-opus-5-5"
    assert resolve("Opus", {}) == "claude-opus-5-5"
    assert resolve("haiku", {"ANTHROPIC_DEFAULT_HAIKU_MODEL": "claude-haiku-custom"}) == "claude-haiku-custom"
    assert resolve("claude-sonnet-4-5", {}) == "claude-sonnet-4-5"  # a full id goes as written


def test_opusplan_is_opus_while_planning() -> None:
    assert plan_variant("opusplan", {}, planning=True) == "claude-opus-5-5"
    assert plan_variant("opusplan", {}, planning=False) == resolve("opusplan", {}) == "claude-sonnet-5-5"
    assert plan_variant("haiku", {}, planning=True) == "claude-haiku-5-5"


@pytest.mark.parametrize(("name", "table_id"), [
    ("claude-sonnet-5-5", "claude-sonnet-5-5"), ("claude-sonnet-5", "claude-sonnet-5"),
    ("claude-haiku-4-5-20251001", "claude-haiku-4-5"), ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5"),
    ("anthropic/claude-opus-4-8", "claude-opus-4-8"), ("us.anthropic.claude-opus-4-5-20251101-v1:0", "claude-opus-4-5"),
    ("openrouter/openai/gpt-4o-mini", "gpt-4o-mini"), ("claude-opus-5-5-turbo", None), ("llama3:8b", None),
])
def test_lookup_accepts_full_ids_with_dates_and_prefixes(name: str, table_id: str | None) -> None:
    info = lookup(name)
    assert (info.id if info else None) == table_id


def test_an_unknown_id_gets_a_one_line_warning() -> None:
    warning = describe("claude-opus-9")
    assert warning is not None and "claude-opus-9" in warning and "\n" not in warning
    assert describe("claude-opus-5-5") is None


@pytest.mark.parametrize(("model", "tokens", "cost"), [
    # Claude Code 2.1.328's costUSD on the mock: (input, output, cache read, cache write) → $
    ("claude-opus-5-5", (12524, 8, 0, 0), 0.050256),
    ("claude-sonnet-5-5", (12464, 507, 0, 0), 0.029998),
    ("claude-haiku-5-5", (13190, 507, 0, 0), 0.0015725),
    ("claude-fable-5-2", (13664, 8, 0, 0), 0.109632),
    ("claude-sonnet-4-5", (22118, 8, 0, 0), 0.066474),
    ("claude-opus-5-5", (609, 44, 12260, 12413), 0.067833),
    ("claude-sonnet-4-5", (664, 44, 21779, 21955), 0.09151695),
    ("claude-fable-5-2", (611, 41, 13357, 13508), 0.1442794),
])
def test_prices_match_claude_codes_cost(model: str, tokens: tuple[int, int, int, int], cost: float) -> None:
    assert round(cost_usd(model, Usage(*tokens)), 8) == cost


def test_model_usage_is_claude_codes_shape() -> None:
    usage = model_usage([("claude-opus-5-5", Usage(10, 2, 30, 40)), ("claude-opus-5-5", Usage(1, 1, 0, 0)),
                         ("my-model", Usage(5, 5))])
    assert usage["claude-opus-5-5"] == {"inputTokens": 11, "outputTokens": 3, "cacheReadInputTokens": 30,
                                        "cacheCreationInputTokens": 40, "costUSD": 0.00031,
                                        "contextWindow": 1_000_000, "maxOutputTokens": 128_000}
    assert usage["my-model"]["costUSD"] == 0 and not known_price("my-model")


def test_thinking_preferences_from_the_environment_and_settings() -> None:
    prefs = ThinkingPrefs.from_env({"MAX_THINKING_TOKENS": "4096", "CLAUDE_CODE_EFFORT_LEVEL": "high"},
                                   enabled=None, effort="low")
    assert prefs == ThinkingPrefs(budget=4096, enabled=True, effort="high")
    assert ThinkingPrefs.from_env({}, enabled=False, effort="low", flag_effort="max") == ThinkingPrefs(
        enabled=False, effort="max")
    assert ThinkingPrefs.from_env({"MAX_THINKING_TOKENS": "lots", "CLAUDE_CODE_EFFORT_LEVEL": "huge"}) == \
        ThinkingPrefs()
    assert request_shape("claude-sonnet-4-5", ThinkingPrefs(effort="high")).effort is None  # it takes none
    assert request_shape("gpt-4o", ThinkingPrefs()).thinking is None
