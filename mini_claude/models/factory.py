"""Choosing and building the model backend from the environment, and reading `.env` files.

Backend: `--model anthropic:NAME` / `openai:NAME` or `MINI_CLAUDE_BACKEND=anthropic|openai` forces one; otherwise
`ANTHROPIC_API_KEY`, `ANTHROPIC_AUTH_TOKEN` or an `apiKeyHelper` picks Anthropic (`ANTHROPIC_BASE_URL` honoured;
credentials.py says which header carries what), `OPENAI_API_KEY` picks OpenAI-compatible (`OPENAI_BASE_URL`
honoured), and `OPENAI_BASE_URL` alone picks a keyless OpenAI-compatible server (a local one).
Model name: the `name` argument (`--model`, without its provider), else (Anthropic) `ANTHROPIC_MODEL`, else the
settings' `model`, else `MINI_CLAUDE_MODEL`, else the backend's default — Claude Code's order. For Anthropic the
aliases (`opus`, `sonnet`, `haiku`, `fable`, `opusplan`; any case) and the default come from the model table
(catalog.py, measured on Claude Code 2.1.328), or `ANTHROPIC_DEFAULT_OPUS_MODEL` / `…_SONNET_…` / `…_HAIKU_…` when
set, as there; an id the table does not know goes through with a warning (`ModelPlan.warning`). The output limit
and extended thinking follow the table and `ThinkingPrefs` (MAX_THINKING_TOKENS, CLAUDE_CODE_EFFORT_LEVEL, the
`alwaysThinkingEnabled` and `effortLevel` settings).
`MINI_CLAUDE_STREAM=0` turns streaming off; `MINI_CLAUDE_RETRY_BASE_S` sets the retry base delay. Anthropic is
spoken over httpx directly (anthropic_http.py, no SDK import); `MINI_CLAUDE_ANTHROPIC_SDK=1` uses the SDK.
Key values are passed to the SDK and never printed or logged.

A project's `.env` is a stranger's file (`model_environment`): it may supply the model credentials and the model
name, and only to the agent's own model client. Where the client sends them (`ANTHROPIC_BASE_URL`,
`OPENAI_BASE_URL`, `MINI_CLAUDE_BACKEND`) and how it behaves (`MINI_CLAUDE_STREAM`, `MINI_CLAUDE_RETRY_BASE_S`) come
from it only once the folder is trusted, and until then a `.env` key for a backend the user's environment does not
configure at all (no key, no endpoint) does not move the user's prompts away from the backend it chose (nor may the project's settings: see
`settings_trust.without_project_widening`, which drops a project `model` naming a backend). Anything else in it is never used: nothing from `.env` reaches the
environment of MCP servers or shell commands, nor decides the state directory. The real environment always wins.
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from mini_claude.errors import ModelError
from mini_claude.jsonfile import read_regular_text
from mini_claude.models.base import Model
from mini_claude.models.catalog import ALIASES, DEFAULT_MODEL, ThinkingPrefs, describe, resolve
from mini_claude.models.credentials import AnthropicCredentials, ApiKeyHelper, helper_timeout_s, helper_ttl_s
from mini_claude.models.http_pool import HttpPool
from mini_claude.models.retry import RetryPolicy
from mini_claude.net.tls import HTTPX_FIRST_USE_MODULES, plain_http
from mini_claude.settings import MODEL_BACKENDS, SettingsHelper

__all__ = [
    "BACKENDS",
    "DEFAULT_ANTHROPIC_MODEL",
    "DEFAULT_OPENAI_MODEL",
    "DOTENV_ALWAYS_VARS",
    "DOTENV_TRUSTED_VARS",
    "MODEL_ALIASES",
    "NO_KEY_MESSAGE",
    "ModelEnvironment",
    "ModelPlan",
    "api_key_helper",
    "choose_backend",
    "create_model",
    "load_dotenv",
    "model_environment",
    "plan_model",
    "resolve_alias",
    "split_provider",
]

log = logging.getLogger(__name__)

DEFAULT_ANTHROPIC_MODEL = DEFAULT_MODEL
DEFAULT_OPENAI_MODEL = "gpt-4o-mini"
BACKENDS = MODEL_BACKENDS
NO_KEY_MESSAGE = ("no model API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN for a gateway, or an "
                  "apiKeyHelper in ~/.claude/settings.json), or OPENAI_API_KEY (with OPENAI_BASE_URL for another "
                  "compatible server), or OPENAI_BASE_URL alone for a local server that needs no key, in the "
                  "environment or .env")
MODEL_ALIASES = ALIASES  # the table's (catalog.py)
# local OpenAI-compatible servers (llama.cpp, vLLM, Ollama) need no key, but the SDK insists on one
UNUSED_OPENAI_KEY = "not-needed"
MAX_DOTENV_BYTES = 1024 * 1024
_FALSE_VALUES = frozenset({"0", "false", "no", "off"})
_KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
# What a project `.env` may give the model client in any folder: the credentials it authenticates with (sent only
# to the endpoint the *user* chose) and which model to ask for (a name, not a place).
DOTENV_ALWAYS_VARS = frozenset({
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "MINI_CLAUDE_API_KEY", "MINI_CLAUDE_MODEL",
    "ANTHROPIC_MODEL",
})
# which backend a `.env` credential would pick (choose_backend)
_CREDENTIAL_BACKEND = {"ANTHROPIC_API_KEY": "anthropic", "ANTHROPIC_AUTH_TOKEN": "anthropic",
                       "OPENAI_API_KEY": "openai"}
# what in the real environment shows the user configured a backend (a key or an endpoint of theirs)
_BACKEND_VARS = {"anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"),
                 "openai": ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
# ... and only in a trusted folder: where the client sends the user's key and prompts, and how it behaves.
DOTENV_TRUSTED_VARS = frozenset({
    "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "MINI_CLAUDE_BACKEND", "MINI_CLAUDE_STREAM", "MINI_CLAUDE_RETRY_BASE_S",
})


@dataclass(frozen=True)
class ModelEnvironment:
    """The environment the model client is built from, and the `.env` names trust would have let in (sorted)."""

    env: dict[str, str] = field(repr=False)  # keys among them
    ignored: tuple[str, ...] = ()


def model_environment(base: Mapping[str, str], dotenv: Mapping[str, str], *, trusted: bool) -> ModelEnvironment:
    """`base` (the real environment) plus what the policy in the module docstring lets `dotenv` add. For the model
    client only: never pass the result to a subprocess."""
    env = dict(base)
    ignored: list[str] = []
    unused: list[str] = []
    added: list[str] = []
    for key, value in dotenv.items():
        if key in DOTENV_ALWAYS_VARS or (trusted and key in DOTENV_TRUSTED_VARS):
            if key not in env:
                env[key] = value
                added.append(key)
        elif key in DOTENV_TRUSTED_VARS:
            if key not in base:  # shadowed by the real environment anyway: trust would change nothing
                ignored.append(key)
        else:
            unused.append(key)
    chosen = _backend_or_none(base)
    if not trusted and chosen is not None and _backend_or_none(env) != chosen:
        # a key for a backend the user did not configure at all would move their prompts there (ANTHROPIC_API_KEY
        # wins over the user's own OPENAI_BASE_URL): untrusted, the backend the real environment chose stays
        for key in added:
            backend = _CREDENTIAL_BACKEND.get(key)
            if backend is not None and backend != chosen and not any(_get(base, v) for v in _BACKEND_VARS[backend]):
                del env[key]
                ignored.append(key)
    if unused:
        log.debug(".env: not used (only model settings are read from it): %s", ", ".join(sorted(unused)))
    return ModelEnvironment(env, tuple(sorted(ignored)))


def _backend_or_none(env: Mapping[str, str]) -> str | None:
    """The backend `env` alone chooses, None when it chooses none (or an invalid one)."""
    try:
        return choose_backend(env)
    except ModelError:
        return None


def split_provider(name: str | None) -> tuple[str | None, str | None]:
    """`"openai:gpt-4o"` → ("openai", "gpt-4o"); a name without a known provider prefix is kept whole
    (`"llama3:8b"` is a model name)."""
    if name and ":" in name:
        provider, _, model = name.partition(":")
        if provider.lower() in BACKENDS:
            return provider.lower(), model or None
    return None, name


def choose_backend(env: Mapping[str, str], provider: str | None = None, *, helper: bool = False) -> str:
    """'anthropic' or 'openai', following the rules in the module docstring (`helper`: an apiKeyHelper is set)."""
    if provider is not None:
        return provider
    forced = _get(env, "MINI_CLAUDE_BACKEND").lower()
    if forced:
        if forced not in BACKENDS:
            raise ModelError(f"MINI_CLAUDE_BACKEND must be 'anthropic' or 'openai', not {forced!r}")
        return forced
    if _get(env, "ANTHROPIC_API_KEY") or _get(env, "ANTHROPIC_AUTH_TOKEN") or helper:
        return "anthropic"
    if _get(env, "OPENAI_API_KEY") or _get(env, "OPENAI_BASE_URL"):
        return "openai"
    raise ModelError(NO_KEY_MESSAGE)


def resolve_alias(name: str, env: Mapping[str, str]) -> str:
    """An Anthropic model name as sent (catalog.resolve): an alias becomes a full id, any other name is kept."""
    return resolve(name, env)


def api_key_helper(helper: SettingsHelper, *, cwd: Path, env: Mapping[str, str]) -> ApiKeyHelper:
    """The settings' `apiKeyHelper`, to run in `cwd` with `env` (the session's environment, never a `.env`)."""
    return ApiKeyHelper(helper.command, source=helper.file, cwd=cwd, env=env, ttl_s=helper_ttl_s(env),
                        timeout_s=helper_timeout_s(env))


def create_model(name: str | None, env: Mapping[str, str], *, settings_model: str | None = None,
                 key_helper: ApiKeyHelper | None = None, thinking: ThinkingPrefs | None = None) -> Model:
    """Build the model backend the environment asks for (`plan_model`, then its client). Raises ModelError (one
    line) when it cannot."""
    return plan_model(name, env, settings_model=settings_model, key_helper=key_helper, thinking=thinking).build()


@dataclass(frozen=True)
class ModelPlan:
    """A model backend chosen and checked, its client not yet built: `plan_model` imports no HTTP stack, so a
    session finds a missing key before it starts anything, and builds the client later (`build`)."""

    backend: str  # "anthropic" | "openai"
    name: str
    base_url: str | None
    stream: bool
    retry: RetryPolicy
    credentials: AnthropicCredentials | None = field(default=None, repr=False)  # anthropic
    sdk: bool = False  # anthropic: through the SDK (MINI_CLAUDE_ANTHROPIC_SDK=1)
    api_key: str = field(default="", repr=False)  # openai
    keyless: bool = False  # openai: a local server that needs no key
    thinking: ThinkingPrefs = field(default_factory=ThinkingPrefs)  # anthropic: what the user asked about thinking
    requested: str = ""  # the name as asked for (`opusplan` stays itself here; `name` is what is sent)
    pool: HttpPool | None = field(default=None, repr=False, compare=False)  # anthropic: shared connections

    @property
    def warning(self) -> str | None:
        """One line to show when the table does not know the Anthropic model asked for (it still goes through)."""
        return describe(self.name) if self.backend == "anthropic" else None

    @property
    def over_tls(self) -> bool:
        """Whether its client needs the shared TLS context (net/tls.py): our own HTTP client, to an https URL."""
        return self.backend == "anthropic" and not self.sdk and not plain_http(self.base_url or "")  # None: the default, https

    @property
    def first_use_modules(self) -> tuple[str, ...]:
        """The modules its client imports when built and at its first request, for a session to import ahead."""
        if self.backend == "anthropic":
            client = "mini_claude.models.anthropic" if self.sdk else "mini_claude.models.anthropic_http"
        else:
            client = "mini_claude.models.openai_compat"
        return (client, *HTTPX_FIRST_USE_MODULES)

    def build(self) -> Model:
        """The client; ModelError (one line) when it cannot be built (an unreadable SSL_CERT_FILE, a proxy URL its
        HTTP stack cannot use)."""
        try:
            if self.base_url:  # a port out of range or not a number: said here, not as a crash at the first connect
                urlsplit(self.base_url).port  # noqa: B018 (reading it is the check: ValueError)
            return self._build()
        except ModelError:
            raise
        except Exception as exc:
            raise ModelError(f"the {self.backend} model client could not be built: {type(exc).__name__}: {exc}"
                             ) from exc

    def _build(self) -> Model:
        if self.backend == "anthropic":
            if self.credentials is None:
                raise ModelError("no Anthropic credentials")
            if self.sdk:
                from mini_claude.models.anthropic import AnthropicModel

                return AnthropicModel(self.name, base_url=self.base_url, stream=self.stream, retry=self.retry,
                                      credentials=self.credentials, thinking=self.thinking,
                                      requested=self.requested)
            from mini_claude.models.anthropic_http import AnthropicHttpModel  # no SDK import: a fast start

            return AnthropicHttpModel(self.name, base_url=self.base_url, stream=self.stream, retry=self.retry,
                                      credentials=self.credentials, thinking=self.thinking,
                                      requested=self.requested, pool=self.pool)
        from mini_claude.models.openai_compat import OpenAICompatModel

        return OpenAICompatModel(self.name, api_key=self.api_key, base_url=self.base_url, stream=self.stream,
                                 retry=self.retry, keyless=self.keyless)


def plan_model(name: str | None, env: Mapping[str, str], *, settings_model: str | None = None,
               key_helper: ApiKeyHelper | None = None, thinking: ThinkingPrefs | None = None,
               pool: HttpPool | None = None) -> ModelPlan:
    """The model backend the environment asks for: `name` is `--model`, `settings_model` the settings' `model`
    (each may carry a `backend:` prefix; the flag's wins), `key_helper` the settings' apiKeyHelper, `thinking` the
    settings' thinking preferences (None: the environment's alone). Raises ModelError (one line) when it cannot be
    built. `pool`: HTTP connections shared with other sessions (models/http_pool.py)."""
    provider, name = split_provider(name)
    settings_provider, settings_name = split_provider(settings_model)
    if provider is None and name is None:
        provider = settings_provider
    backend = choose_backend(env, provider, helper=key_helper is not None)
    stream = _get(env, "MINI_CLAUDE_STREAM").lower() not in _FALSE_VALUES
    retry = RetryPolicy.from_env(env)
    fallback = settings_name or split_provider(_get(env, "MINI_CLAUDE_MODEL"))[1]
    if backend == "anthropic":
        key, token = _get(env, "ANTHROPIC_API_KEY"), _get(env, "ANTHROPIC_AUTH_TOKEN")
        if not (key or token or key_helper):
            raise ModelError("no model API key: MINI_CLAUDE_BACKEND=anthropic needs ANTHROPIC_API_KEY, "
                             "ANTHROPIC_AUTH_TOKEN or an apiKeyHelper (in the environment, .env or settings)")
        credentials = AnthropicCredentials(api_key=key, auth_token=token, helper=key_helper)
        requested = name or _get(env, "ANTHROPIC_MODEL") or fallback or DEFAULT_ANTHROPIC_MODEL
        return ModelPlan("anthropic", resolve(requested, env), _get(env, "ANTHROPIC_BASE_URL") or None, stream,
                         retry, credentials=credentials,
                         sdk=_get(env, "MINI_CLAUDE_ANTHROPIC_SDK").lower() in ("1", "true", "yes", "on"),
                         thinking=thinking or ThinkingPrefs.from_env(env), requested=requested.strip(), pool=pool)
    key = _get(env, "OPENAI_API_KEY")
    base_url = _get(env, "OPENAI_BASE_URL") or None
    keyless = not key
    if keyless:
        if base_url is None:
            raise ModelError("no model API key: MINI_CLAUDE_BACKEND=openai needs OPENAI_API_KEY (or "
                             "OPENAI_BASE_URL for a compatible server that needs no key) in the environment or .env")
        key = UNUSED_OPENAI_KEY
    return ModelPlan("openai", name or fallback or DEFAULT_OPENAI_MODEL, base_url, stream, retry, api_key=key,
                     keyless=keyless)


def load_dotenv(path: Path) -> dict[str, str]:
    """Parse a `.env` file with python-dotenv: `KEY=VALUE` lines, optional `export `, `#` comments, single or
    double quotes (double-quoted values understand `\\n`, `\\t`, `\\"`, `\\\\` and may span lines, so an unclosed
    `"` runs on to the next one; single-quoted ones understand only `\\'` and `\\\\`); an unquoted value ends at
    ` #`. `${VAR}` is not expanded (the file's values are taken as written). Lines that are not assignments are
    skipped (python-dotenv logs their line numbers, never their text), as are keys without a value and keys that
    are not environment variable names. A missing file is empty; one that is not a regular file, is larger than
    `MAX_DOTENV_BYTES`, is not UTF-8 or cannot be read raises ConfigError (it is read through `jsonfile`'s bounded
    door, and python-dotenv is given that text). Values are returned, never logged.
    """
    text = read_regular_text(path, str(path), max_bytes=MAX_DOTENV_BYTES)  # ConfigError: not regular, too big
    if text is None:
        return {}
    from dotenv import dotenv_values  # imported on first use: most runs read no .env

    parsed = dotenv_values(stream=io.StringIO(text), interpolate=False)
    return {key: value for key, value in parsed.items() if value is not None and _KEY_RE.fullmatch(key)}


def _get(env: Mapping[str, str], key: str) -> str:
    return (env.get(key) or "").strip()
