"""The models we know, in one table: ids, aliases, context window, output limit, thinking, effort and list prices.

Every fact here was measured on Claude Code 2.1.328 against the mock model (the request's `model`, `max_tokens`,
`thinking`, `output_config`, and the json result's `modelUsage`: `contextWindow`, `maxOutputTokens`, and `costUSD`
for known token counts, which gives the price per million tokens, and with cache reads and writes the factors of
the input price they cost). With no model chosen it asks for
`claude-opus-5-5`; `opus`, `sonnet`, `haiku` and `fable` name the newest of their family (`ALIASES`), and
`opusplan` is opus while planning and sonnet otherwise (`plan_variant`). Full ids are accepted, with a date or a
provider prefix (`anthropic/…`, `us.anthropic.…`) around them. An id not in the table still goes through
(`describe` warns once); it gets `UNKNOWN_MAX_OUTPUT`, no thinking, and no price.

How a request uses a model (`request_shape`): `max_tokens` is its output limit; a model that thinks adaptively is
sent `thinking: {type: adaptive}` and `output_config.effort` (its default effort, or the one asked for); an older
one thinks within a budget (`{type: enabled, budget_tokens}`, one token under the output limit, as Claude Code
sends). `MAX_THINKING_TOKENS=N` asks for a budget of N (0: no thinking); the `alwaysThinkingEnabled: false`
setting turns thinking off. While thinking is on, old thinking is left to the API's context management
(`clear_thinking_20251015`, keeping `all` as Claude Code does, so the cached prefix stays valid).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

__all__ = ["ALIASES", "CACHE_READ_FACTOR", "CACHE_WRITE_FACTOR", "DEFAULT_MODEL", "EFFORT_LEVELS", "MODELS",
           "OPUSPLAN", "UNKNOWN_MAX_OUTPUT", "ModelInfo", "RequestShape", "ThinkingPrefs", "describe", "lookup",
           "plan_variant", "request_shape", "resolve"]


@dataclass(frozen=True)
class ModelInfo:
    """One model: its id and name, its context window and output limit (tokens), how it thinks (`adaptive`,
    `budget` or `none`), its default `effort` (None: it takes no effort setting) and its list prices ($ per million
    input / output tokens; None: not known)."""

    id: str
    label: str
    context_window: int
    max_output: int
    thinking: str = "none"
    effort: str | None = None
    price_in: float | None = None
    price_out: float | None = None
    anthropic: bool = True  # a Claude model (served by the Anthropic API); False: an OpenAI one
    cache_read: float = 0.1  # what a cache read costs, as a part of the input price


_M, _K = 1_000_000, 1_000
MODELS: tuple[ModelInfo, ...] = (
    ModelInfo("claude-opus-5-5", "Opus 5.5", _M, 128 * _K, "adaptive", "medium", 4.0, 20.0, cache_read=0.05),
    ModelInfo("claude-sonnet-5-5", "Sonnet 5.5", _M, 128 * _K, "adaptive", "medium", 2.0, 10.0, cache_read=0.05),
    ModelInfo("claude-haiku-5-5", "Haiku 5.5", _M, 128 * _K, "adaptive", "medium", 0.1, 0.5),
    ModelInfo("claude-fable-5-2", "Fable 5.2", _M, 128 * _K, "adaptive", "medium", 8.0, 40.0, cache_read=0.025),
    ModelInfo("claude-fable-5-1", "Fable 5.1", _M, 64 * _K, "adaptive", "high", 10.0, 50.0),
    ModelInfo("claude-fable-5", "Fable 5", _M, 64 * _K, "adaptive", "high", 10.0, 50.0),
    ModelInfo("claude-opus-5", "Opus 5", _M, 64 * _K, "adaptive", "high", 5.0, 25.0),
    ModelInfo("claude-sonnet-5", "Sonnet 5", _M, 64 * _K, "adaptive", "high", 2.0, 10.0),
    ModelInfo("claude-opus-4-8", "Opus 4.8", _M, 64 * _K, "adaptive", "high", 5.0, 25.0),
    ModelInfo("claude-opus-4-7", "Opus 4.7", _M, 64 * _K, "adaptive", "xhigh", 5.0, 25.0),
    ModelInfo("claude-opus-4-6", "Opus 4.6", 200 * _K, 64 * _K, "adaptive", "high", 5.0, 25.0),
    ModelInfo("claude-sonnet-4-6", "Sonnet 4.6", 200 * _K, 32 * _K, "adaptive", "high", 3.0, 15.0),
    ModelInfo("claude-opus-4-5", "Opus 4.5", 200 * _K, 32 * _K, "budget", "high", 5.0, 25.0),
    ModelInfo("claude-sonnet-4-5", "Sonnet 4.5", 200 * _K, 32 * _K, "budget", None, 3.0, 15.0),
    ModelInfo("claude-haiku-4-5", "Haiku 4.5", 200 * _K, 32 * _K, "budget", None, 1.0, 5.0),
    # older ones, priced only (their list prices; not measured)
    ModelInfo("claude-opus-4-1", "Opus 4.1", 200 * _K, 32 * _K, "budget", None, 15.0, 75.0),
    ModelInfo("claude-opus-4", "Opus 4", 200 * _K, 32 * _K, "budget", None, 15.0, 75.0),
    ModelInfo("claude-sonnet-4", "Sonnet 4", 200 * _K, 32 * _K, "budget", None, 3.0, 15.0),
    ModelInfo("claude-3-7-sonnet", "Sonnet 3.7", 200 * _K, 32 * _K, "budget", None, 3.0, 15.0),
    ModelInfo("claude-3-5-sonnet", "Sonnet 3.5", 200 * _K, 8 * _K, "none", None, 3.0, 15.0),
    ModelInfo("claude-3-5-haiku", "Haiku 3.5", 200 * _K, 8 * _K, "none", None, 0.8, 4.0),
    ModelInfo("claude-3-opus", "Opus 3", 200 * _K, 4 * _K, "none", None, 15.0, 75.0),
    ModelInfo("claude-3-haiku", "Haiku 3", 200 * _K, 4 * _K, "none", None, 0.25, 1.25),
    ModelInfo("gpt-4o-mini", "GPT-4o mini", 128 * _K, 16 * _K, price_in=0.15, price_out=0.6, anthropic=False),
    ModelInfo("gpt-4o", "GPT-4o", 128 * _K, 16 * _K, price_in=2.5, price_out=10.0, anthropic=False),
)
DEFAULT_MODEL = "claude-opus-5-5"
ALIASES = {"opus": "claude-opus-5-5", "sonnet": "claude-sonnet-5-5", "haiku": "claude-haiku-5-5",
           "fable": "claude-fable-5-2"}
OPUSPLAN = "opusplan"  # opus while planning, sonnet otherwise
EFFORT_LEVELS = ("low", "medium", "high", "xhigh", "max")  # Claude Code's --effort / effortLevel names
UNKNOWN_MAX_OUTPUT = 32_000  # what Claude Code sends for an id it does not know
MIN_THINKING_BUDGET = 1024  # the smallest `budget_tokens` the API accepts
CACHE_READ_FACTOR = 0.1  # a cache read costs a tenth of the input price (`ModelInfo.cache_read`: less for some)
CACHE_WRITE_FACTOR = 1.25  # a (5-minute) cache write a quarter more
CLEAR_THINKING: dict[str, Any] = {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]}

# an id as written around a table id: an optional provider prefix (`anthropic/`, `us.anthropic.`), then a date
# (`-20251001`, `@20251001`) and a version (`-v1:0`) after it
_AROUND = r"(?:-\d{8}|@\d{8}|-latest)?(?:-v\d+(?::\d+)?)?"


@cache
def _patterns() -> tuple[tuple[re.Pattern[str], ModelInfo], ...]:
    ordered = sorted(MODELS, key=lambda m: -len(m.id))  # `claude-sonnet-5-5` before `claude-sonnet-5`
    return tuple((re.compile(r"(?:.*[/.])?" + re.escape(m.id) + _AROUND, re.IGNORECASE), m) for m in ordered)


def lookup(model_id: str) -> ModelInfo | None:
    """The table's entry for `model_id` (a full id, dated or prefixed as above), None when it is not there."""
    name = model_id.strip()
    for pattern, info in _patterns():
        if pattern.fullmatch(name):
            return info
    return None


def resolve(name: str, env: Mapping[str, str]) -> str:
    """An Anthropic model name as sent: an alias (any case) becomes a full id (`ANTHROPIC_DEFAULT_<ALIAS>_MODEL`
    when set, as in Claude Code, else `ALIASES`); `opusplan` becomes its sonnet side (`plan_variant` gives the
    other); any other name is kept as written."""
    alias = name.strip().lower()
    if alias == OPUSPLAN:
        alias = "sonnet"
    if alias not in ALIASES:
        return name.strip()
    return (env.get(f"ANTHROPIC_DEFAULT_{alias.upper()}_MODEL") or "").strip() or ALIASES[alias]


def plan_variant(name: str, env: Mapping[str, str], *, planning: bool) -> str:
    """The id `name` asks for in or out of plan mode: `opusplan` is opus while planning, sonnet otherwise; any
    other name is the same in both (`resolve`)."""
    if name.strip().lower() == OPUSPLAN:
        return resolve("opus" if planning else "sonnet", env)
    return resolve(name, env)


def describe(model_id: str) -> str | None:
    """A one-line warning for an id not in the table (it is sent as written), None for a known one."""
    if lookup(model_id) is not None:
        return None
    return (f"model {model_id!r} is not one this version knows: it is sent as written, with a {UNKNOWN_MAX_OUTPUT}-"
            f"token output limit, no extended thinking and no price")


@dataclass(frozen=True)
class ThinkingPrefs:
    """What the user asked for about thinking: `budget` (MAX_THINKING_TOKENS: None not set, 0 off), `enabled`
    (the `alwaysThinkingEnabled` setting: False turns it off), `effort` (CLAUDE_CODE_EFFORT_LEVEL, `--effort` or
    the `effortLevel` setting), and the output limit asked for (CLAUDE_CODE_MAX_OUTPUT_TOKENS)."""

    budget: int | None = None
    enabled: bool = True
    effort: str | None = None
    max_output: int | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str], *, enabled: bool | None = None, effort: str | None = None,
                 flag_effort: str | None = None) -> ThinkingPrefs:
        """From the environment (MAX_THINKING_TOKENS, CLAUDE_CODE_EFFORT_LEVEL, CLAUDE_CODE_MAX_OUTPUT_TOKENS),
        `--effort` (`flag_effort`) and the settings' `alwaysThinkingEnabled` / `effortLevel`: the flag's effort
        wins, then the environment's, then the settings'. A value that is not a whole number (or not an effort
        level) is ignored."""
        chosen = next((e for e in ((flag_effort or "").strip().lower(),
                                   (env.get("CLAUDE_CODE_EFFORT_LEVEL") or "").strip().lower(),
                                   (effort or "").strip().lower()) if e in EFFORT_LEVELS), "")
        return cls(budget=_whole(env.get("MAX_THINKING_TOKENS")), enabled=enabled is not False,
                   effort=chosen if chosen in EFFORT_LEVELS else None,
                   max_output=_whole(env.get("CLAUDE_CODE_MAX_OUTPUT_TOKENS")) or None)


@dataclass(frozen=True)
class RequestShape:
    """What a Messages request for one model carries besides the conversation."""

    max_tokens: int
    thinking: dict[str, Any] | None = None  # the `thinking` parameter; None: not sent
    effort: str | None = None  # `output_config.effort`
    context_management: dict[str, Any] | None = None
    cache: bool = True  # prompt-cache breakpoints (not for a one-off request: MCP sampling, a summary)

    @property
    def thinks(self) -> bool:
        return self.thinking is not None and self.thinking.get("type") in ("adaptive", "enabled")


def request_shape(model_id: str, prefs: ThinkingPrefs | None = None) -> RequestShape:
    """How a request to `model_id` is shaped under `prefs` (the module docstring says how)."""
    prefs = prefs or ThinkingPrefs()
    info = lookup(model_id)
    limit = info.max_output if info is not None else UNKNOWN_MAX_OUTPUT
    max_tokens = min(prefs.max_output, limit) if prefs.max_output else limit
    if info is None or not info.anthropic or info.thinking == "none":
        return RequestShape(max_tokens)
    effort = (prefs.effort or info.effort) if info.effort is not None else None
    if not prefs.enabled or prefs.budget == 0:
        return RequestShape(max_tokens, {"type": "disabled"}, effort)
    if prefs.budget is not None or info.thinking == "budget":
        # the API takes a budget from MIN_THINKING_BUDGET up to one under the output limit
        budget = min(max(prefs.budget or max_tokens - 1, MIN_THINKING_BUDGET), max_tokens - 1)
        thinking: dict[str, Any] = {"type": "enabled", "budget_tokens": budget}
    else:
        thinking = {"type": "adaptive"}
    return RequestShape(max_tokens, thinking, effort, CLEAR_THINKING)


def _whole(value: str | None) -> int | None:
    text = (value or "").strip()
    return int(text) if text.isdigit() else None
