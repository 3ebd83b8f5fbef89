"""`Client`: one agent session in this process, for as many turns as the program sends — the Python API's
`ClaudeSDKClient`.

    async with Client(Options(cwd=".", allowed_tools=["Read"])) as client:
        await client.query("What is in README.md?")
        async for message in client.receive_response():   # ... ends with a ResultMessage
            print(message)

`connect` assembles the session (session/start.py: settings, trust, model, gate, tools, MCP servers, hooks) and
fires the SessionStart hooks; each `query` queues a turn; one worker task runs the turns in order and turns what
the agent does into messages (session/records.py → api/types.py) on one queue, which `receive_messages` (all of
them, until `disconnect`) and `receive_response` (up to the next ResultMessage) read. `interrupt` cancels the turn
in progress: the loop keeps what happened, every tool call it made gets its result, and the turn's ResultMessage
says it was interrupted. `disconnect` fires SessionEnd, stops the servers and background commands and frees the
session; nothing of it outlives the client.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import AsyncIterable, AsyncIterator
from typing import TYPE_CHECKING, Any

from mini_claude.api.options import Options, in_process_servers, session_options
from mini_claude.api.types import Message, ResultMessage, message_from_record
from mini_claude.errors import ConfigError, MiniClaudeError

if TYPE_CHECKING:
    from mini_claude.agent.loop import RunOutcome
    from mini_claude.models.http_pool import HttpPool
    from mini_claude.session.parts import SessionParts
    from mini_claude.session.records import RunError, Transcript
    from mini_claude.session.structured import TurnEnd

__all__ = ["Client"]

log = logging.getLogger("mini_claude.api")
_END = object()  # the message queue's end: the client disconnected
INPUT_ENDED = object()  # a streaming input was read to its end (api/exchange.py waits for its last result)
Turn = str | list[dict[str, Any]]


class Client:
    """One session, many turns. Not thread-safe: use it from one event loop."""

    _shows_views = True  # MCP Apps views (api/apps.py); `query()`'s one exchange ends before a view could be used

    def __init__(self, options: Options | None = None) -> None:
        self.options = options or Options()
        self.parts: SessionParts | None = None
        self._messages: asyncio.Queue[Any] = asyncio.Queue()
        self._turns: asyncio.Queue[Turn | None] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None
        self._running: asyncio.Task[TurnEnd] | None = None
        self._feeders: set[asyncio.Task[None]] = set()
        self._transcript: Transcript | None = None
        self._original_cwd = ""
        self._closed = False
        self._feed_error: BaseException | None = None  # a streaming input that was not user messages

    # ---- lifecycle -----------------------------------------------------------------------------------------------
    async def connect(self, prompt: str | AsyncIterable[dict[str, Any]] | None = None) -> None:
        """Start the session (its MCP servers started and waited for); then send `prompt`, if given."""
        if self.parts is None:
            self.parts = await self._start()
            self._worker = asyncio.create_task(self._work(), name="mini-claude api session")
        if prompt is not None:
            await self.query(prompt)

    async def __aenter__(self) -> Client:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.disconnect()

    async def disconnect(self) -> None:
        """End the session: the turn in progress cancelled, SessionEnd hooks fired, servers and background
        commands stopped. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        for feeder in self._feeders:
            feeder.cancel()
        self._turns.put_nowait(None)  # an idle worker ends at once
        if self._running is not None:
            self._running.cancel()
        if self._worker is not None:
            self._worker.cancel()
            await asyncio.gather(self._worker, *self._feeders, return_exceptions=True)
        parts = self.parts
        if parts is not None:
            from mini_claude.session.lifecycle import end_session

            await end_session(parts, "other")
        self._messages.put_nowait(_END)

    # ---- turns ---------------------------------------------------------------------------------------------------
    async def query(self, prompt: str | AsyncIterable[dict[str, Any]], session_id: str = "default") -> None:
        """Queue a turn: text, or (streaming input) each user message of an async iterable as its own turn:
        `{"type": "user", "message": {"role": "user", "content": ...}}`."""
        self._check_open()
        if isinstance(prompt, str):
            if not prompt.strip():
                raise ConfigError("query: the prompt is empty")
            self._turns.put_nowait(prompt)
            return
        feeder = asyncio.create_task(self._feed(prompt))
        self._feeders.add(feeder)
        feeder.add_done_callback(self._feeders.discard)

    async def receive_messages(self) -> AsyncIterator[Message]:
        """Every message of the session as it comes, until it is disconnected."""
        async for message in self.receive_with_markers():
            if message is not INPUT_ENDED:
                yield message

    async def receive_with_markers(self) -> AsyncIterator[Any]:
        """`receive_messages`, with INPUT_ENDED where a streaming input ended (for api/exchange.py)."""
        while True:
            message = await self._messages.get()
            if message is _END:
                self._messages.put_nowait(_END)  # for any other reader
                return
            if message is INPUT_ENDED and self._feed_error is not None:
                error, self._feed_error = self._feed_error, None
                raise error
            yield message

    async def receive_response(self) -> AsyncIterator[Message]:
        """The messages up to and including the next ResultMessage."""
        async for message in self.receive_messages():
            yield message
            if isinstance(message, ResultMessage):
                return

    async def interrupt(self) -> None:
        """Stop the turn in progress (its ResultMessage still comes, saying it was interrupted)."""
        self._check_open()
        if self._running is not None and not self._running.done():
            self._running.cancel()

    # ---- controls ------------------------------------------------------------------------------------------------
    async def set_permission_mode(self, mode: str) -> None:
        from mini_claude.session import controls

        controls.set_permission_mode(self._session(), mode)

    async def set_model(self, model: str | None = None) -> None:
        from mini_claude.session import controls

        controls.set_model(self._session(), model)

    async def get_mcp_status(self) -> dict[str, Any]:
        from mini_claude.session import controls

        return controls.mcp_status(self._session())

    async def reconnect_mcp_server(self, name: str) -> None:
        from mini_claude.session import controls

        await controls.reconnect_server(self._session(), name)

    async def set_mcp_server_enabled(self, name: str, enabled: bool) -> None:
        from mini_claude.session import controls

        await controls.toggle_server(self._session(), name, enabled)

    async def get_context_usage(self) -> dict[str, Any]:
        from mini_claude.session import controls

        return controls.context_usage(self._session())

    @property
    def session_id(self) -> str:
        return self._session().session_id

    # ---- inside --------------------------------------------------------------------------------------------------
    def _session(self) -> SessionParts:
        if self.parts is None:
            raise ConfigError("the client is not connected: call connect() (or use `async with`)")
        return self.parts

    def _check_open(self) -> None:
        if self._closed:
            raise ConfigError("the client is disconnected")
        self._session()

    async def _start(self) -> SessionParts:
        from mini_claude.api.front import ApiHostUI, ApiUI
        from mini_claude.session.lifecycle import begin_session
        from mini_claude.session.start import start_session

        options = self.options
        opts = session_options(options)
        opts.http_pool = _loop_pool()
        opts.apps = self._shows_views  # MCP Apps views (api/apps.py; the `mcpApps` setting may say no)
        own = in_process_servers(options.mcp_servers)
        ui = ApiUI(options, self._emit_record, lambda: self.parts.session_id if self.parts is not None else "")
        host_ui = ApiHostUI(options, lambda: own.keys(), ui.info)
        ask = None
        if options.can_use_tool is not None:
            from mini_claude.api.permissions import asker

            ask = asker(options.can_use_tool)
        parts = await start_session(opts, ui, host_ui=host_ui, ask_permission=ask)
        if parts.apps is not None:
            from mini_claude.api.apps import ApiAppsFront

            parts.apps.front = ApiAppsFront(self._emit_record, self._queue_view_turn, self._turns.qsize, ui.warn,
                                            lambda: self.parts.session_id if self.parts is not None else "")
        try:
            await begin_session(parts, ui, continue_=options.continue_conversation, resume=options.resume,
                                fork=options.fork_session)
        except BaseException:
            from mini_claude.session.lifecycle import end_session

            await end_session(parts, "other", hooks=False)
            raise
        from mini_claude.models.pricing import ListPriced
        from mini_claude.session.records import Transcript, instrument

        agent = parts.agent
        self._original_cwd = str(agent.ctx.cwd)
        self._transcript = Transcript(session_id=parts.session_id, model=agent.model.name,
                                      priced=agent.model if isinstance(agent.model, ListPriced) else None)
        self._transcript.skip(agent.history)
        instrument(agent, self._transcript, self._emit_records, budget_usd=options.max_budget_usd)
        return parts

    def _queue_view_turn(self, text: str) -> bool:
        """An MCP Apps view's `ui/message`: the next turn, as if `query(text)` (False once disconnected)."""
        if self._closed:
            return False
        self._turns.put_nowait(text)
        return True

    async def _feed(self, stream: AsyncIterable[dict[str, Any]]) -> None:
        from mini_claude.session.lifecycle import turn_from_record

        try:
            async for record in stream:
                self._turns.put_nowait(turn_from_record(record))
        except ConfigError as exc:
            self._feed_error = exc
        finally:
            self._messages.put_nowait(INPUT_ENDED)

    async def _work(self) -> None:
        try:
            while True:
                turn = await self._turns.get()
                if turn is None:
                    return
                await self._run_turn(turn)
        except Exception:  # a bug in the session's machinery: the program's readers must not wait forever
            log.exception("the session's worker failed")
            self._messages.put_nowait(_END)

    async def _run_turn(self, turn: Turn) -> None:
        from mini_claude.session.init_record import init_record
        from mini_claude.session.records import RunError, run_error
        from mini_claude.session.structured import run_turn

        parts, transcript = self._session(), self._transcript
        assert transcript is not None
        transcript.begin()
        transcript.session_id = parts.session_id
        self._emit_record(await init_record(parts, original_cwd=self._original_cwd))
        outcome: RunOutcome | None = None
        error: RunError | None = None
        structured = None
        if parts.apps is not None:  # what views asked the model to know, once, with this turn
            from mini_claude.api.apps import with_view_context

            turn = with_view_context(turn, parts.apps.take_model_context())
        self._running = asyncio.create_task(run_turn(parts, turn))
        try:
            end = await asyncio.shield(self._running)
            outcome, structured, error = end.outcome, end.structured, end.error
        except asyncio.CancelledError:
            if self._closed or not self._running.cancelled():  # the worker itself is being cancelled (disconnect)
                self._running.cancel()
                raise
            error = RunError("interrupted by the program", "error_during_execution", "aborted_streaming")
        except MiniClaudeError as exc:
            error = run_error(exc)
        except Exception as exc:  # a bug must not leave the program waiting for a result forever
            log.exception("the turn failed")
            error = RunError(f"internal error: {type(exc).__name__}: {exc}")
        finally:
            self._running = None
        self._emit_records(transcript.new_records(parts.agent.history))
        self._emit_record(transcript.result_record(outcome, error=error, structured_output=structured))

    def _emit_records(self, records: list[dict[str, Any]]) -> None:
        for record in records:
            self._emit_record(record)

    def _emit_record(self, record: dict[str, Any]) -> None:
        self._messages.put_nowait(message_from_record(record))


_POOLS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, HttpPool] = weakref.WeakKeyDictionary()


def _loop_pool() -> HttpPool:
    """The HTTP connections this event loop's sessions share (models/http_pool.py)."""
    from mini_claude.models.http_pool import HttpPool

    loop = asyncio.get_running_loop()
    pool = _POOLS.get(loop)
    if pool is None:
        pool = _POOLS[loop] = HttpPool()
    return pool
