"""Turning an SDK's or a transport's exception into a one-line `ModelError` that says whether to retry.

Foreign exceptions are translated in exactly one function per SDK: `map_anthropic_error` and `map_openai_error`.
Both classify by exception type and HTTP status (and by the structured `error.type` of an Anthropic mid-stream
error event), never by message text. The SDKs are imported lazily inside them, so importing this module stays
cheap. `status_error`, `connection_error` and `transport_error` give the same words to a backend that speaks HTTP
itself (anthropic_http.py).
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Mapping
from typing import Any

from mini_claude.errors import ModelError
from mini_claude.models.retry import NON_RETRYABLE_STATUSES, is_retryable_status, one_line, response_headers

__all__ = [
    "ANTHROPIC_ERROR_TYPE_STATUS",
    "connection_error",
    "map_anthropic_error",
    "map_openai_error",
    "status_error",
    "transport_error",
]

# Anthropic's mid-stream `error` events arrive on a 200 response; their `error.type` says what the status would
# have been (https://docs.anthropic.com/en/api/errors).
_ANTHROPIC_ERROR_TYPE_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}



def map_anthropic_error(exc: BaseException, *, base_url: str) -> ModelError | None:
    """Translate an `anthropic` SDK (or transport) exception into a one-line `ModelError`; None if foreign."""
    if isinstance(exc, ModelError):
        return exc
    import anthropic

    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        body = exc.body if isinstance(exc.body, Mapping) else None
        error = body.get("error") if body is not None else None
        error_type = error.get("type") if isinstance(error, Mapping) else None
        if status < 400 and isinstance(error_type, str):  # an `error` event inside a 200 stream
            status = _ANTHROPIC_ERROR_TYPE_STATUS.get(error_type, 500)
        api_message = exc.api_message if isinstance(getattr(exc, "api_message", None), str) else None
        return _status_error(status, api_message or _body_text(exc.body), response_headers(exc))
    if isinstance(exc, anthropic.APITimeoutError):
        return ModelError(f"the model API at {base_url} timed out", retryable=True)
    if isinstance(exc, anthropic.APIConnectionError):
        return _connection_error(exc, base_url)
    if isinstance(exc, anthropic.APIResponseValidationError):
        return ModelError(f"the model API at {base_url} sent an unexpected response: {one_line(exc.message)}",
                          status=exc.status_code)
    if isinstance(exc, anthropic.AnthropicError):
        return ModelError(f"model API client error: {one_line(exc) or type(exc).__name__}")
    return _transport_error(exc, base_url)


def map_openai_error(exc: BaseException, *, base_url: str) -> ModelError | None:
    """Translate an `openai` SDK (or transport) exception into a one-line `ModelError`; None if foreign."""
    if isinstance(exc, ModelError):
        return exc
    import openai

    if isinstance(exc, openai.APIStatusError):
        # the SDK has already unwrapped `{"error": {...}}` into `body`
        body = exc.body if isinstance(exc.body, Mapping) else None
        message = body.get("message") if body is not None else None
        text = message if isinstance(message, str) and message else _body_text(exc.body)
        return _status_error(exc.status_code, text, response_headers(exc))
    if isinstance(exc, openai.APITimeoutError):
        return ModelError(f"the model API at {base_url} timed out", retryable=True)
    if isinstance(exc, openai.APIConnectionError):
        return _connection_error(exc, base_url)
    if isinstance(exc, openai.APIResponseValidationError):
        return ModelError(f"the model API at {base_url} sent an unexpected response: {one_line(exc.message)}",
                          status=exc.status_code)
    if isinstance(exc, openai.APIError):  # an error object inside a stream: no status to go by
        return ModelError(f"model API error: {one_line(exc.message)}")
    if isinstance(exc, openai.OpenAIError):
        return ModelError(f"model API client error: {one_line(exc) or type(exc).__name__}")
    return _transport_error(exc, base_url)


def _status_error(status: int, text: str, headers: Mapping[str, str] | None) -> ModelError:
    retryable = is_retryable_status(status)
    should_retry = (headers or {}).get("x-should-retry")
    if should_retry in ("true", "false") and status not in NON_RETRYABLE_STATUSES:
        retryable = should_retry == "true"
    detail = one_line(text) or "(no message)"
    return ModelError(f"model API error {status}: {detail}", status=status, retryable=retryable)


def _connection_error(exc: BaseException, base_url: str) -> ModelError:
    # the SDK's own message ("Connection error.") says nothing; the reason is in the cause chain
    cause = exc.__cause__ or exc.__context__
    reason = _network_reason(cause) if cause is not None else "connection failed"
    return ModelError(f"cannot reach the model API at {base_url}: {reason}", retryable=True)


def _transport_error(exc: BaseException, base_url: str) -> ModelError | None:
    """Transport exceptions that escape an SDK while a stream is being read (httpx2, or httpx if loaded)."""
    timeouts = tuple(m.TimeoutException for m in _http_modules())
    transports = tuple(m.TransportError for m in _http_modules())
    if timeouts and isinstance(exc, timeouts):
        return ModelError(f"the model API at {base_url} timed out", retryable=True)
    if transports and isinstance(exc, transports):
        return ModelError(f"the connection to the model API at {base_url} broke: {_network_reason(exc)}",
                          retryable=True)
    return None


def _http_modules() -> list[Any]:
    return [m for m in (sys.modules.get("httpx2"), sys.modules.get("httpx")) if m is not None]


def _network_reason(exc: BaseException) -> str:
    """A short human reason from the cause chain, classified by exception type."""
    seen: set[int] = set()
    current: BaseException | None = exc
    fallback = ""
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ConnectionRefusedError):
            return "connection refused"
        if isinstance(current, ConnectionResetError):
            return "connection reset by the server"
        if isinstance(current, socket.gaierror):
            return "unknown host"
        if isinstance(current, TimeoutError):
            return "timed out"
        text = one_line(current)
        if text and not fallback:
            fallback = text
        current = current.__cause__ or current.__context__
    return fallback or "connection failed"


def _body_text(body: object) -> str:
    if body is None:
        return ""
    if isinstance(body, Mapping):
        for key in ("message", "detail", "error"):
            value = body.get(key)
            if isinstance(value, str) and value:
                return value
            if isinstance(value, Mapping) and isinstance(value.get("message"), str):
                return value["message"]
    return str(body)


# the same words for a backend that speaks HTTP itself (anthropic_http.py)
ANTHROPIC_ERROR_TYPE_STATUS = _ANTHROPIC_ERROR_TYPE_STATUS
status_error = _status_error
connection_error = _connection_error
transport_error = _transport_error
