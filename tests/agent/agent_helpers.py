"""Helpers for the agent integration tests (imported as `agent_helpers`): scenario shorthands, a real Agent wired
to the real SDK backends against the mock model, and a validator for the history the Messages API would accept."""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from mini_claude.agent.loop import Agent
from mini_claude.models.anthropic import AnthropicModel
from mini_claude.models.openai_compat import OpenAICompatModel
from mini_claude.models.retry import RetryPolicy
from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.tools.base import Tool, ToolContext
from mini_claude.tools.builtins import builtin_tools

FAST_RETRY = RetryPolicy(max_attempts=2, base_delay_s=0.001, max_delay_s=0.01)


def tool(name: str, **args: Any) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "name": name, "input": args}]}


def say(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def make_model(url: str, *, backend: str = "anthropic", stream: bool = True) -> Any:
    if backend == "anthropic":
        return AnthropicModel("mock-claude", api_key="x", base_url=url, stream=stream, retry=FAST_RETRY)
    return OpenAICompatModel("mock-gpt", api_key="x", base_url=url + "/v1", stream=stream, retry=FAST_RETRY)


def make_agent(url: str, cwd: Path, *, backend: str = "anthropic", stream: bool = True, mode: str = "default",
               allow: tuple[str, ...] = (), extra_tools: tuple[Tool, ...] = (), max_turns: int = 50) -> Agent:
    """A real Agent: real backend SDK, real gate (non-interactive), real built-in tools."""
    rules = RuleSet.from_strings(allow=allow)
    gate = PermissionGate(PermissionMode.parse(mode), rules, ask=None, cwd=cwd, server_of=lambda name: None)
    tools = [*builtin_tools(), *extra_tools]
    ctx = ToolContext(cwd=cwd, spill_dir=cwd / ".spill")
    return Agent(model=make_model(url, backend=backend, stream=stream), tools=lambda: tools, gate=gate, ctx=ctx,
                 system="You are a test agent.", max_turns=max_turns)


def validate_history(messages: list[dict[str, Any]]) -> None:
    """Assert `messages` (Anthropic Messages format) is a history the API accepts: it starts with the user, roles
    alternate, and every assistant tool_use is answered by exactly one tool_result in the next user message (and
    no tool_result answers anything else)."""
    assert messages, "empty history"
    assert messages[0]["role"] == "user", messages[0]
    for i, (a, b) in enumerate(itertools.pairwise(messages)):
        assert a["role"] != b["role"], f"messages {i} and {i + 1} are both {a['role']}"
    for i, message in enumerate(messages):
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        assert blocks, f"message {i} has no content"
        if message["role"] == "assistant":
            ids = [b["id"] for b in blocks if b.get("type") == "tool_use"]
            assert len(ids) == len(set(ids)), f"duplicate tool_use ids in message {i}"
            assert not any(b.get("type") == "tool_result" for b in blocks), f"tool_result in assistant message {i}"
            if not ids:
                continue
            assert i + 1 < len(messages), f"tool_use in message {i} has no following user message"
            following = messages[i + 1]["content"]
            answered = [b["tool_use_id"] for b in following
                        if isinstance(b, dict) and b.get("type") == "tool_result"]
            assert sorted(answered) == sorted(ids), f"message {i} tool_use ids {ids} answered by {answered}"
        else:
            results = [b for b in blocks if b.get("type") == "tool_result"]
            if results:
                assert i > 0, "tool_result in the first message"
                previous = [b["id"] for b in messages[i - 1]["content"] if b.get("type") == "tool_use"]
                assert all(r["tool_use_id"] in previous for r in results), f"stray tool_result in message {i}"


def last_user_tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool_result blocks of the last (user) message of an Anthropic request body."""
    last = body["messages"][-1]
    assert last["role"] == "user", last
    return [b for b in last["content"] if b.get("type") == "tool_result"]


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [])


class RawChatServer:
    """A tiny OpenAI-compatible server answering scripted raw chat-completion *messages* (non-streaming), for
    answers the mock's scenario format cannot express (tool arguments that are not a JSON object)."""

    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.messages = list(messages)
        self.bodies: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
                outer.bodies.append(body)
                if outer.messages:
                    message = outer.messages.pop(0)
                    status, payload = 200, {
                        "id": "chatcmpl-raw", "object": "chat.completion", "created": 0, "model": "raw",
                        "choices": [{"index": 0, "message": message,
                                     "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
                else:
                    status, payload = 500, {"error": {"message": "raw server exhausted", "type": "api_error"}}
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.send_header("x-should-retry", "false")
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @contextmanager
    def running(self) -> Iterator[RawChatServer]:
        thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._httpd.shutdown()
            self._httpd.server_close()
            thread.join(timeout=5)
