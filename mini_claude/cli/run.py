"""Running the agent from the command line: one-shot print mode (`-p`) and launching the interactive REPL.

Both start their session through `session.start_session`; the REPL itself lives in repl.py.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable
from typing import TYPE_CHECKING, Any

from mini_claude.cli.questions.host_ui import PrintHostUI
from mini_claude.cli.session_args import start_session
from mini_claude.cli.terminal.exit_codes import EXIT_ERROR, EXIT_USAGE
from mini_claude.cli.terminal.render import TerminalUI
from mini_claude.cli.terminate import end_session_on_terminate
from mini_claude.errors import MiniClaudeError

if TYPE_CHECKING:
    from mini_claude.agent.loop import Agent, RunOutcome
    from mini_claude.cli.output_format import ResultWriter
    from mini_claude.cli.sdk_control.driver import SdkControl
    from mini_claude.session.records import RunError
    from mini_claude.session.structured import TurnEnd

__all__ = ["run_interactive", "run_print"]


STDIN_WAIT_S = 2.0  # how long -p waits for piped input to begin when a prompt was also given
# what a -p run needs once its session exists: imported with the agent half while the servers start
_PRINT_IMPORTS = ("mini_claude.cli.output_format", "mini_claude.session.lifecycle", "mini_claude.session.init_record",
                  "mini_claude.session.structured", "mini_claude.cli.turn_input", "mini_claude.models.pricing")


def run_print(args: argparse.Namespace) -> int:
    if args.input_format == "stream-json":
        if args.output_format != "stream-json":
            sys.stderr.write("mini-claude: --input-format stream-json needs --output-format stream-json\n")
            return EXIT_USAGE
        return asyncio.run(_print_main(args, None))
    prompt = args.prompt
    piped = _piped_stdin(wait_s=None if prompt is None else STDIN_WAIT_S)
    if prompt is None:
        if piped is None:
            sys.stderr.write("mini-claude: -p needs a prompt (as an argument or on stdin)\n")
            return EXIT_USAGE
        prompt = piped
    elif piped and piped.strip():  # `cat main.py | mini-claude -p "explain this"`
        prompt = f"{prompt}\n\n{piped}"
    if not prompt.strip():  # the API rejects an empty user message: say so here, in one line
        sys.stderr.write("mini-claude: -p needs a non-empty prompt (as an argument or on stdin)\n")
        return EXIT_USAGE
    return asyncio.run(_print_main(args, prompt))


def _piped_stdin(*, wait_s: float | None) -> str | None:
    """What is piped into stdin, or None when stdin is a terminal (or absent). With `wait_s`, a pipe that has sent
    nothing (not even its end) within that time is left alone, so a never-closed stdin cannot hang `-p`."""
    import os
    import select
    import stat

    try:
        if sys.stdin is None or sys.stdin.isatty():
            return None
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError):
        return None
    if wait_s is not None and not stat.S_ISREG(mode):
        ready, _, _ = select.select([sys.stdin], [], [], wait_s)
        if not ready:
            sys.stderr.write(f"mini-claude: nothing arrived on stdin within {wait_s:g}s; answering the prompt "
                             "alone\n")
            return None
    return sys.stdin.read()


async def _print_main(args: argparse.Namespace, prompt: str | None) -> int:
    """One `-p` run: `prompt`, or (None) every user message read from stdin as stream-json, each a turn."""
    end_session_on_terminate()
    ui = TerminalUI(print_mode=True)
    control = None
    if prompt is None:  # the SDK's control protocol: stdin is read from now on (it asks `initialize` at once)
        from mini_claude.cli.sdk_control.driver import SdkControl

        control = SdkControl(stdio_permissions=args.permission_prompt_tool == "stdio").start()
        args.mcp_config = control.take_sdk_servers(args.mcp_config)
    try:
        return await _print_session(args, prompt, ui, control)
    finally:
        if control is not None:
            await control.aclose()


async def _print_session(args: argparse.Namespace, prompt: str | None, ui: TerminalUI,
                         control: SdkControl | None) -> int:
    parts = await start_session(args, ui, host_ui=PrintHostUI(ui), imports=_PRINT_IMPORTS,
                                ask_permission=control.ask() if control is not None else None,
                                in_process=control.sdk_peers() if control is not None else {})
    if args.session_id is not None:
        parts.session_id = args.session_id
    from mini_claude.cli.output_format import ResultWriter, exit_code
    from mini_claude.cli.turn_input import run_user_turn
    from mini_claude.models.pricing import ListPriced
    from mini_claude.session.init_record import api_key_source, init_record
    from mini_claude.session.lifecycle import begin_session, end_session
    from mini_claude.session.structured import run_turn

    agent = parts.agent
    original_cwd = str(agent.ctx.cwd)
    try:
        await begin_session(parts, ui, continue_=args.continue_, resume=args.resume, fork=args.fork_session)
    except BaseException:
        await end_session(parts, "other", hooks=False)
        raise
    writer = ResultWriter(args.output_format, session_id=parts.session_id, model=agent.model.name,
                          priced=agent.model if isinstance(agent.model, ListPriced) else None,
                          out=control.out if control is not None else None)
    if control is not None:
        control.attach(parts, account={"apiKeySource": api_key_source(agent.model)}, warn=ui.warn)
        _messages_as_they_come(agent, writer)
        if args.include_partial_messages:
            from mini_claude.cli.sdk_control.partial import stream_partial_messages

            stream_partial_messages(agent, control.out, lambda: parts.session_id)
    writer.skip(agent.history)  # a resumed conversation is not written again
    outcome: RunOutcome | None = None
    interrupted = False  # the last turn was interrupted by the SDK
    failed = False  # a turn ended without the answer --json-schema asks for
    try:
        _stream_messages(agent, writer, budget_usd=args.max_budget_usd)
        turns = _control_turns(control) if control is not None else _one(prompt or "")
        async for turn in turns:
            writer.begin()
            if args.output_format == "stream-json":
                writer.init(await init_record(parts, original_cwd=original_cwd))
            work = (_plain(run_user_turn(parts, turn, ui)) if isinstance(turn, str) and parts.structured is None
                    else run_turn(parts, turn))
            try:
                end: TurnEnd = await (control.run_turn(work) if control is not None else work)
            except MiniClaudeError as exc:
                if control is not None and control.interrupted(exc):  # every tool call was answered: go on
                    writer.messages(agent.history)
                    writer.result(None, error=_run_error(exc))
                    interrupted = True
                    continue
                if args.output_format == "text":
                    raise
                writer.messages(agent.history)
                writer.result(None, error=_run_error(exc))
                ui.error(str(exc))
                return EXIT_ERROR
            outcome = end.outcome
            failed = failed or end.error is not None
            writer.messages(agent.history)
            # the answer is out before the servers are shut down (that may take a while)
            writer.result(outcome, error=end.error, structured_output=end.structured)
            interrupted = False
        if interrupted:  # the last turn was interrupted: an error result, exit 1 (as Claude Code)
            return EXIT_ERROR
        if outcome is None:
            ui.error("--input-format stream-json: no user message arrived on stdin")
            return EXIT_USAGE
    finally:
        await end_session(parts, "other")
    detailed = args.detailed_exit_codes
    code = EXIT_ERROR if failed else exit_code(outcome, detailed=detailed)
    said = f" (exit code {code})" if detailed else ""
    if outcome.stop == "max_turns":
        ui.warn(f"stopped after --max-turns {agent.max_turns} turns{said}")
    elif outcome.stop == "max_tokens":
        ui.warn(f"the answer was cut at the model's output token limit{said}")
    elif outcome.denials:
        count = len(outcome.denials)
        ui.warn(f"{count} tool call{'s were' if count > 1 else ' was'} denied on the way{said}")
    return code


async def _plain(run: Awaitable[RunOutcome]) -> TurnEnd:
    from mini_claude.session.structured import TurnEnd

    return TurnEnd(await run)


async def _one(prompt: str) -> AsyncIterator[str | list[dict[str, Any]]]:
    yield prompt


async def _control_turns(control: SdkControl) -> AsyncIterator[str | list[dict[str, Any]]]:
    """`--input-format stream-json`: each user line (Claude Code's shape) a turn, until stdin ends; the control
    lines between them are answered meanwhile (cli/sdk_control). A line that is not usable raises ConfigError."""
    while (turn := await control.next_turn()) is not None:
        yield turn


def _messages_as_they_come(agent: Agent, writer: ResultWriter) -> None:
    """The SDK's stream: each message is written as the history takes it (an assistant's tool calls before they
    run, so the SDK can interrupt them), not only before the next model request."""
    saved = agent.on_history

    def changed(history: list[dict[str, Any]], rewritten: bool) -> None:
        if saved is not None:
            saved(history, rewritten)
        writer.messages(history)

    agent.on_history = changed


def _run_error(exc: MiniClaudeError) -> RunError:
    """How the result object names a run that failed with `exc` (session/records.py; an SDK interrupt too)."""
    from mini_claude.cli.sdk_control.driver import TurnInterrupted
    from mini_claude.session.records import RunError, run_error

    if isinstance(exc, TurnInterrupted):
        return RunError(str(exc), "error_during_execution", "aborted_streaming")
    return run_error(exc)


def _stream_messages(agent: Agent, writer: ResultWriter, *, budget_usd: float | None = None) -> None:
    """Before each model request: stream-json's new messages, the budget check; and time the model's work."""
    from mini_claude.session.records import instrument

    instrument(agent, writer.transcript, writer.records, budget_usd=budget_usd, budget_name="--max-budget-usd")


def run_interactive(args: argparse.Namespace) -> int:
    if not sys.stdin.isatty():
        sys.stderr.write("mini-claude: the interactive REPL needs a terminal on stdin; "
                         "for scripts use -p \"prompt\" (or pipe the prompt into -p)\n")
        return EXIT_USAGE
    from mini_claude.cli.repl import Repl  # the REPL's imports (prompt_toolkit…) are not -p's

    return asyncio.run(Repl(args).run())
