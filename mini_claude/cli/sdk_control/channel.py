"""The stdin/stdout channel of `-p --input-format stream-json --output-format stream-json`, as the Claude Agent SDK
drives it: one JSON object a line each way.

In: `{"type": "user", ...}` lines are turns (queued for the run loop); `{"type": "control_request", "request_id",
"request": {"subtype", ...}}` lines are the SDK's requests, each handled in its own task by the `handle` callable and
answered with one `control_response` line; `{"type": "control_response", "response": {"request_id", "subtype":
"success" | "error", ...}}` lines answer our own requests; `control_cancel_request` stops our work on one of the SDK's
requests (no answer is sent), and we send one for a request of ours we stopped waiting for. A line that is not JSON, or not one of these, ends the input with a
ConfigError for the run loop (the turns already queued still run); so does one nested deeper than MAX_LINE_DEPTH
(before, one past the decoder's depth killed the reader silently: the run ended as if stdin had).

Out: `LineWriter` writes whole lines only, under a lock, so a control line and a message line never mix mid-line.

Our own requests (`request()`): an id registered before the line goes out, a future per request, a timeout, and
every pending one failed at once when stdin ends (nothing waits for an answer that can no longer come).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import itertools
import json
import os
import threading
from collections.abc import Awaitable, Callable
from typing import IO, Any

from mini_claude.errors import ConfigError, MiniClaudeError
from mini_claude.jsonfile import nested_deeper_than

__all__ = ["ControlChannel", "ControlError", "LineWriter", "ThreadedLines", "Turn"]

Turn = str | list[dict[str, Any]]
Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]]
ReadLine = Callable[[], Awaitable[str]]

DEFAULT_TIMEOUT_S = 300.0
MAX_LINE_DEPTH = 256  # levels of objects/arrays in one line (a message or a tool input is a few levels deep)
_END = object()  # the turn queue's end marker


class ControlError(MiniClaudeError):
    """A control request of ours failed: the SDK answered with an error, did not answer in time, or its stdin
    ended first."""


class LineWriter(io.TextIOBase):
    """A text stream (`write`, `flush`) that hands `out` complete lines only, each in one write under a lock; and
    `send(record)` for one JSON line."""

    def __init__(self, out: IO[str]) -> None:
        super().__init__()
        self.out = out
        self._partial = ""
        self._lock = threading.Lock()  # a line may come from a worker thread too

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        with self._lock:
            text = self._partial + text
            head, sep, self._partial = text.rpartition("\n")
            if sep:
                self.out.write(head + "\n")
                self.out.flush()
        return len(text)

    def flush(self) -> None:
        """Complete lines are flushed as they are written; a partial one waits for its newline."""

    def send(self, record: dict[str, Any]) -> None:
        self.write(json.dumps(record, ensure_ascii=False) + "\n")


class ControlChannel:
    """Reads stdin (`read_line`: the next line, "" at its end) in a task of its own and writes through `writer`."""

    def __init__(self, read_line: ReadLine, writer: LineWriter, handle: Handler, *,
                 timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.read_line = read_line
        self.writer = writer
        self.handle = handle
        self.timeout_s = timeout_s
        self.turns: asyncio.Queue[Any] = asyncio.Queue()
        self.input_error: ConfigError | None = None
        self.closed = False  # stdin ended (or was unusable): no answer can come any more
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self._tasks: set[asyncio.Task[None]] = set()
        self._handlers: dict[str, asyncio.Task[None]] = {}  # the SDK's requests being answered, by id
        self._reader: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._reader = asyncio.create_task(self._read(), name="sdk-control-reader")

    async def next_turn(self) -> Turn | None:
        """The next user turn, or None once stdin has ended (raises the input's ConfigError, if it was bad)."""
        item = await self.turns.get()
        if item is _END:
            self.turns.put_nowait(_END)  # later calls see the end too
            if self.input_error is not None:
                raise self.input_error
            return None
        return item  # type: ignore[no-any-return]

    async def request(self, body: dict[str, Any], *, timeout_s: float | None = None) -> dict[str, Any]:
        """Send a control request of ours (`body` holds its subtype) and return the SDK's `response` object."""
        if self.closed:
            raise ControlError(f"cannot send {body.get('subtype')}: the SDK's input (stdin) has ended")
        request_id = f"mc_{next(self._ids)}_{os.urandom(3).hex()}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future  # registered before the line goes out
        try:
            self.writer.send({"type": "control_request", "request_id": request_id, "request": body})
            wait = self.timeout_s if timeout_s is None else timeout_s
            try:
                return await asyncio.wait_for(future, wait)
            except TimeoutError:
                raise ControlError(f"the SDK did not answer {body.get('subtype')} within {wait:g}s") from None
        finally:
            self._pending.pop(request_id, None)
            if (not future.done() or future.cancelled()) and not self.closed:  # given up (timed out, the turn interrupted): say so
                with contextlib.suppress(OSError, ValueError):
                    self.writer.send({"type": "control_cancel_request", "request_id": request_id})

    async def aclose(self) -> None:
        """Stop reading and cancel the requests still being handled (each is reaped)."""
        tasks = [t for t in (self._reader, *self._tasks) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._fail_pending("the run ended")

    # ---- reading -------------------------------------------------------------------------------------------------

    async def _read(self) -> None:
        try:
            while True:
                line = await self.read_line()
                if not line:
                    return
                if line.strip():
                    self._route(line)
        except ConfigError as exc:
            self.input_error = exc
        finally:
            self.closed = True
            self._fail_pending("the SDK's input (stdin) ended")
            self.turns.put_nowait(_END)

    def _route(self, line: str) -> None:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):  # nested past the decoder's depth: not JSON we can read either
            raise ConfigError(f"--input-format stream-json: a line is not JSON: {line.strip()[:80]!r}") from None
        if nested_deeper_than(record, MAX_LINE_DEPTH):  # before anything recurses into it (repr, json, copies)
            raise ConfigError(f"--input-format stream-json: a line nests deeper than {MAX_LINE_DEPTH} levels")
        kind = record.get("type") if isinstance(record, dict) else None
        if kind == "user":
            self.turns.put_nowait(_user_content(record))
        elif kind == "control_request":
            self._spawn(record)
        elif kind == "control_response":
            self._answered(record.get("response"))
        elif kind == "control_cancel_request":  # the SDK no longer waits for its request's answer
            handler = self._handlers.get(str(record.get("request_id")))
            if handler is not None:
                handler.cancel()
        elif kind in ("keep_alive", "update_environment_variables"):
            return
        else:
            raise ConfigError(f"--input-format stream-json: unknown line type {kind!r} (expected user, "
                              "control_request, control_response or control_cancel_request)")

    def _answered(self, response: Any) -> None:
        if not isinstance(response, dict):
            raise ConfigError("--input-format stream-json: a control_response without a response object")
        future = self._pending.get(str(response.get("request_id")))
        if future is None or future.done():
            return  # an answer that came after its timeout
        if response.get("subtype") == "error":
            future.set_exception(ControlError(str(response.get("error") or "the SDK answered with an error")))
        else:
            body = response.get("response")
            future.set_result(body if isinstance(body, dict) else {})

    def _spawn(self, record: dict[str, Any]) -> None:
        task = asyncio.create_task(self._answer(record))
        self._tasks.add(task)
        request_id = str(record.get("request_id"))
        self._handlers[request_id] = task

        def done(finished: asyncio.Task[None]) -> None:
            self._tasks.discard(finished)
            if self._handlers.get(request_id) is finished:
                del self._handlers[request_id]

        task.add_done_callback(done)

    async def _answer(self, record: dict[str, Any]) -> None:
        request_id = record.get("request_id")
        body = record.get("request")
        try:
            if not isinstance(body, dict) or not isinstance(body.get("subtype"), str):
                raise ConfigError("a control_request needs a request object with a subtype")
            answer = await self.handle(body)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # every request gets an answer: the error's text
            self.writer.send({"type": "control_response",
                              "response": {"subtype": "error", "request_id": request_id, "error": str(exc)}})
            return
        response: dict[str, Any] = {"subtype": "success", "request_id": request_id}
        if answer is not None:
            response["response"] = answer
        self.writer.send({"type": "control_response", "response": response})

    def _fail_pending(self, why: str) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ControlError(f"no answer: {why}"))


def _user_content(record: dict[str, Any]) -> Turn:
    """A user line's content (Claude Code's shape: {"type": "user", "message": {"role": "user", "content": ...}})."""
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str) and content:
        return content
    if isinstance(content, list) and content and all(isinstance(b, dict) for b in content):
        return [dict(b) for b in content]
    raise ConfigError('--input-format stream-json: each user line must be {"type": "user", "message": '
                      '{"role": "user", "content": ...}} with a string or a list of blocks')


class ThreadedLines:
    """`stream`'s lines, read by a daemon thread (a blocked read never holds the process open at its exit):
    `await lines()` is the next one, "" at the stream's end."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self._queue: asyncio.Queue[str] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        threading.Thread(target=self._pump, name="sdk-control-stdin", daemon=True).start()

    def _pump(self) -> None:
        while True:
            try:
                line = self.stream.readline()
            except (OSError, ValueError):
                line = ""
            try:
                self._loop.call_soon_threadsafe(self._queue.put_nowait, line)
            except RuntimeError:  # the loop is closed: nobody reads any more
                return
            if not line:
                return

    async def __call__(self) -> str:
        return await self._queue.get()
