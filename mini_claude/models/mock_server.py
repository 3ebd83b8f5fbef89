"""The offline mock model: an HTTP server on 127.0.0.1 that answers from a scenario, turn by turn.

It speaks enough of two wire formats for the real SDKs to talk to it unmodified:

* `POST /v1/messages` — Anthropic Messages, JSON or SSE (`"stream": true`) with the event sequence the SDK
  expects: message_start, content_block_start, ping, content_block_delta…, content_block_stop, message_delta,
  message_stop. Errors use Anthropic's `{"type": "error", "error": {"type", "message"}}` shape.
* `POST /v1/messages/count_tokens` — `{"input_tokens": N}`, N from the request's size (scenario.py says how).
* `POST /v1/chat/completions` (or `/chat/completions`) — OpenAI chat completions, JSON or `data:` chunks ending
  in `data: [DONE]`, with `tool_calls` deltas.

Each request consumes the next scenario turn. When the script is exhausted, or a turn's
`expect_tool_result_contains` is not met, the answer is HTTP 500 with `x-should-retry: false` and a message
saying so; a failed expectation does not consume the turn. Tool-use ids are generated (`toolu_mock_<n>`,
`call_mock_<n>`). Like the API (mock_memory.py), a Messages request that alters or drops thinking blocks the mock
sent, while their tool loop goes on, is refused with HTTP 400 (without using a turn), and usage reports
`cache_read_input_tokens` / `cache_creation_input_tokens` from the request's `cache_control` breakpoints. Thinking
blocks stream as `thinking_delta` and `signature_delta` events; a turn stopped at `max_tokens` that ends in a
tool call streams only the first half of its input. Stdlib only, so `mini-claude mock-model` starts fast.

Beside it: mock_memory.py (the state kept between requests: the prompt cache, the thinking sent), mock_blocks.py
(content blocks whole and streamed), mock_requests.py (what is read from a request: the system prompt, the last
tool result) and mock_cli.py (the `mini-claude mock-model` command).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

from mini_claude.models.base import SUMMARY_SYSTEM_PROMPT
from mini_claude.models.mock_blocks import (
    chunks,
    number_server_blocks,
    ordered_block,
    stream_pieces,
)
from mini_claude.models.mock_memory import PromptCache, ThinkingLedger
from mini_claude.models.mock_requests import (
    clip,
    last_tool_result_chat,
    last_tool_result_messages,
    system_text,
)
from mini_claude.models.scenario import (
    Scenario,
    ScenarioError,
    ScenarioTurn,
    ToolResultSeen,
    render_content,
)

__all__ = ["HOST", "MockModelServer"]

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
POLL_INTERVAL_S = 0.05
MAX_BODY_BYTES = 64 * 1024 * 1024
_AUTH_HEADERS = frozenset({"authorization", "x-api-key", "api-key", "proxy-authorization", "cookie"})
_MESSAGES_PATHS = frozenset({"/v1/messages"})
_COUNT_PATH = "/v1/messages/count_tokens"
_CHAT_PATHS = frozenset({"/v1/chat/completions", "/chat/completions"})
_FINISH_REASONS = {"tool_use": "tool_calls", "end_turn": "stop", "max_tokens": "length", "stop_sequence": "stop"}


class MockModelServer:
    """Serve `scenario` on 127.0.0.1:`port` (0: any free port) from a daemon thread.

    `start()` returns the base URL (`http://127.0.0.1:PORT`; the OpenAI SDK wants `…/v1`). `requests` lists what
    arrived as `{"path", "headers", "body"}` (auth header values redacted, unless `record_credentials`: a test that
    checks which key or token a client sent); with `log_path` each is also appended as one JSON line.
    """

    def __init__(self, scenario: Scenario, *, port: int = 0, log_path: Path | None = None,
                 record_credentials: bool = False) -> None:
        self.scenario = scenario
        self.port = port
        self.log_path = log_path
        self.record_credentials = record_credentials
        self._lock = threading.Lock()
        self._requests: list[dict[str, Any]] = []
        self._next_turn = 0
        self._tool_ids = 0
        self._cache = PromptCache()
        self._thinking = ThinkingLedger()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- lifecycle ---------------------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the mock model server is not running")
        return f"http://{HOST}:{self._httpd.server_address[1]}"

    def start(self) -> str:
        """Start serving (idempotent) and return the base URL."""
        if self._httpd is not None:
            return self.url
        httpd = ThreadingHTTPServer((HOST, self.port), _Handler)
        httpd.daemon_threads = True
        httpd.mock = self  # type: ignore[attr-defined]  # read by _Handler
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": POLL_INTERVAL_S},
                                        name="mock-model", daemon=True)
        self._thread.start()
        return self.url

    def stop(self) -> None:
        httpd, thread = self._httpd, self._thread
        self._httpd = self._thread = None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.server_close()
        if thread is not None:
            thread.join(timeout=5)

    def __enter__(self) -> MockModelServer:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    # ---- state -------------------------------------------------------------------------------------------------

    @property
    def requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._requests)

    @property
    def turns_used(self) -> int:
        with self._lock:
            return self._next_turn

    def _record(self, path: str, headers: dict[str, str], body: Any) -> None:
        entry = {"path": path, "headers": headers, "body": body}
        with self._lock:
            self._requests.append(entry)
            if self.log_path is not None:
                try:
                    with self.log_path.open("a", encoding="utf-8") as f:
                        f.write(json.dumps(entry, ensure_ascii=False) + "\n")
                except OSError as exc:
                    log.warning("mock-model: cannot append to %s: %s", self.log_path, exc)

    def _take_turn(self, seen: ToolResultSeen | None) -> tuple[int, ScenarioTurn | None, str | None]:
        """(turn number, the turn, None) or (…, None, why it cannot be answered). Consumes the turn if answered."""
        with self._lock:
            number = self._next_turn + 1
            total = len(self.scenario.turns)
            if self._next_turn >= total:
                return number, None, f"mock-model: scenario exhausted after {total} turns"
            turn = self.scenario.turns[self._next_turn]
            expected = turn.expect_tool_result_contains
            if expected is not None and (seen is None or expected not in seen.text):
                got = "no tool_result in the request" if seen is None else f"got {clip(seen.text)!r}"
                return number, None, (f"mock-model: turn {number} expected the last tool_result to contain "
                                      f"{expected!r}, {got}")
            self._next_turn += 1
            return number, turn, None

    def _usage(self, body: dict[str, Any], total: int) -> dict[str, int]:
        """The usage of a Messages request: its input split into uncached, cache reads and cache writes."""
        with self._lock:
            uncached, read, written = self._cache.account(body, total)
        return {"input_tokens": uncached, "cache_read_input_tokens": read, "cache_creation_input_tokens": written}

    def _thinking_problem(self, body: dict[str, Any]) -> str | None:
        with self._lock:
            return self._thinking.problem(body)

    def _sent(self, content: list[dict[str, Any]]) -> None:
        with self._lock:
            self._thinking.remember(content)

    def _new_tool_id(self, prefix: str) -> str:
        with self._lock:
            self._tool_ids += 1
            return f"{prefix}{self._tool_ids}"


class _Handler(BaseHTTPRequestHandler):
    server_version = "mock-model/1"
    protocol_version = "HTTP/1.0"  # the body ends when the connection closes: simplest correct SSE framing

    @property
    def mock(self) -> MockModelServer:
        return self.server.mock  # type: ignore[attr-defined,no-any-return]

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("mock-model: " + format, *args)

    def do_GET(self) -> None:
        self._send_json(404, _anthropic_error("not_found_error", f"mock-model: no route GET {self.path}"))

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0]
        if path not in _MESSAGES_PATHS and path not in _CHAT_PATHS and path != _COUNT_PATH:
            self._send_json(404, _anthropic_error("not_found_error", f"mock-model: no route POST {path}"))
            return
        chat = path in _CHAT_PATHS
        try:
            length = int(self.headers.get("content-length") or 0)
            if not 0 <= length <= MAX_BODY_BYTES:
                raise ValueError("bad content-length")
            body = json.loads(self.rfile.read(length) or b"null")
        except (ValueError, OSError) as exc:
            self._send_error(chat, 400, "invalid_request_error", f"mock-model: request body is not JSON: {exc}")
            return
        shown = self.mock.record_credentials
        headers = {k.lower(): ("<redacted>" if k.lower() in _AUTH_HEADERS and not shown else v)
                   for k, v in self.headers.items()}
        self.mock._record(path, headers, body)
        if not isinstance(body, dict):
            self._send_error(chat, 400, "invalid_request_error", "mock-model: request body must be a JSON object")
            return
        if path == _COUNT_PATH:
            counted = len(json.dumps(body, ensure_ascii=False)) / self.mock.scenario.chars_per_token
            self._send_json(200, {"input_tokens": max(1, int(counted))})
            return
        input_tokens = max(1, len(json.dumps(body)) // 4)
        limit = self.mock.scenario.context_limit_tokens
        if limit is not None and input_tokens > limit:
            self._send_error(chat, 400, "invalid_request_error",
                             f"prompt is too long: {input_tokens} tokens > {limit} maximum")
            return
        if not chat and system_text(body) == SUMMARY_SYSTEM_PROMPT:
            summary = f"Summary of {len(body.get('messages') or [])} earlier messages (mock model)."
            turn = ScenarioTurn(content=({"type": "text", "text": summary},))
            self._answer_messages(0, turn, [{"type": "text", "text": summary}], body, input_tokens)
            return
        problem = None if chat else self.mock._thinking_problem(body)
        if problem is not None:
            self._send_error(chat, 400, "invalid_request_error", problem)
            return
        seen = last_tool_result_chat(body) if chat else last_tool_result_messages(body)
        number, turn, problem = self.mock._take_turn(seen)
        if problem is not None or turn is None:
            self._send_error(chat, 500, "api_error", problem or "mock-model: no turn",
                             headers={"x-should-retry": "false"})
            return
        if turn.error is not None:
            self._send_scripted_error(chat, turn.error)
            return
        if turn.delay_ms:
            time.sleep(turn.delay_ms / 1000)  # a model thinking (each request has its own server thread)
        content = render_content(turn, seen)
        if chat:
            content = [b for b in content if b["type"] not in ("thinking", "redacted_thinking")]
            self._answer_chat(number, turn, content, str(body.get("model") or "mock-model"), input_tokens,
                              body.get("stream") is True, body)
        else:
            self._answer_messages(number, turn, content, body, input_tokens)

    # ---- Anthropic Messages ------------------------------------------------------------------------------------

    def _answer_messages(self, number: int, turn: ScenarioTurn, content: list[dict[str, Any]], body: dict[str, Any],
                         input_tokens: int) -> None:
        model, stream = str(body.get("model") or "mock-model"), body.get("stream") is True
        for block in content:
            if block["type"] == "tool_use":
                block["id"] = self.mock._new_tool_id("toolu_mock_")
            elif block["type"] == "thinking" and not block.get("signature"):
                block["signature"] = f"mock-signature-{number}-{self.mock._new_tool_id('')}"
        searches = number_server_blocks(content, self.mock._new_tool_id)
        self.mock._sent(content)
        output_tokens = max(1, len(json.dumps(content)) // 4)
        message_id = f"msg_mock_{number}"
        stop = turn.effective_stop_reason
        usage = self.mock._usage(body, input_tokens)
        if not stream:
            self._send_json(200, {
                "id": message_id, "type": "message", "role": "assistant", "model": model,
                "content": [ordered_block(b) for b in content], "stop_reason": stop, "stop_sequence": None,
                "usage": {**usage, "output_tokens": output_tokens, **searches},
            })
            return
        self._start_stream()
        self._event("message_start", {"type": "message_start", "message": {
            "id": message_id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {**usage, "output_tokens": 1},
        }})
        pinged = False
        for index, block in enumerate(content):
            start, pieces = stream_pieces(block, cut=stop == "max_tokens" and index == len(content) - 1)
            self._event("content_block_start", {"type": "content_block_start", "index": index,
                                                "content_block": start})
            if not pinged:
                self._event("ping", {"type": "ping"})
                pinged = True
            for delta in pieces:
                self._event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
            self._event("content_block_stop", {"type": "content_block_stop", "index": index})
        if not pinged:
            self._event("ping", {"type": "ping"})
        self._event("message_delta", {"type": "message_delta",
                                      "delta": {"stop_reason": stop, "stop_sequence": None},
                                      "usage": {"output_tokens": output_tokens, **searches}})
        self._event("message_stop", {"type": "message_stop"})

    def _event(self, name: str, data: dict[str, Any]) -> None:
        self.wfile.write(f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode())
        self.wfile.flush()

    # ---- OpenAI chat completions -------------------------------------------------------------------------------

    def _answer_chat(self, number: int, turn: ScenarioTurn, content: list[dict[str, Any]], model: str,
                     input_tokens: int, stream: bool, body: dict[str, Any]) -> None:
        text = "".join(b["text"] for b in content if b["type"] == "text")
        calls = [{"id": self.mock._new_tool_id("call_mock_"), "type": "function",
                  "function": {"name": b["name"], "arguments": json.dumps(b["input"], ensure_ascii=False)}}
                 for b in content if b["type"] == "tool_use"]
        finish = _FINISH_REASONS.get(turn.effective_stop_reason, "stop")
        output_tokens = max(1, len(json.dumps(content)) // 4)
        usage = {"prompt_tokens": input_tokens, "completion_tokens": output_tokens,
                 "total_tokens": input_tokens + output_tokens}
        base = {"id": f"chatcmpl-mock-{number}", "created": int(time.time()), "model": model}
        if not stream:
            message: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                message["tool_calls"] = calls
            self._send_json(200, {**base, "object": "chat.completion", "usage": usage,
                                  "choices": [{"index": 0, "message": message, "finish_reason": finish}]})
            return

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> None:
            self._data({**base, "object": "chat.completion.chunk",
                        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]})

        self._start_stream()
        chunk({"role": "assistant", "content": ""})
        for piece in chunks(text):
            chunk({"content": piece})
        for index, call in enumerate(calls):
            chunk({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                   "function": {"name": call["function"]["name"], "arguments": ""}}]})
            for piece in chunks(call["function"]["arguments"]):
                chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        chunk({}, finish)
        options = body.get("stream_options")
        if isinstance(options, dict) and options.get("include_usage"):
            self._data({**base, "object": "chat.completion.chunk", "choices": [], "usage": usage})
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def _data(self, data: dict[str, Any]) -> None:
        self.wfile.write(f"data: {json.dumps(data, ensure_ascii=False)}\n\n".encode())
        self.wfile.flush()

    # ---- plumbing ----------------------------------------------------------------------------------------------

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _send_error(self, chat: bool, status: int, kind: str, message: str,
                    headers: dict[str, str] | None = None) -> None:
        payload = _chat_error(kind, message) if chat else _anthropic_error(kind, message)
        self._send_json(status, payload, headers)

    def _send_scripted_error(self, chat: bool, error: ScenarioError) -> None:
        self._send_error(chat, error.status, error.type, error.message, dict(error.headers))


def _anthropic_error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def _chat_error(kind: str, message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}
