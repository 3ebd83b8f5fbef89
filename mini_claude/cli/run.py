"""Running the agent from the command line: one-shot print mode (`-p`) and launching the interactive REPL.

Both start their session through `session.start_session`; the REPL itself lives in repl.py.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from mini_claude.cli.questions.host_ui import PrintHostUI
from mini_claude.cli.session_args import start_session
from mini_claude.cli.terminal.exit_codes import EXIT_ERROR, EXIT_USAGE
from mini_claude.cli.terminal.render import TerminalUI
from mini_claude.cli.terminate import end_session_on_terminate
from mini_claude.errors import ConfigError, MiniClaudeError
from mini_claude.mcp.manager import ServerStatus

if TYPE_CHECKING:
    from mini_claude.agent.loop import Agent, RunOutcome
    from mini_claude.cli.output_format import ResultWriter

__all__ = ["run_interactive", "run_print"]


STDIN_WAIT_S = 2.0  # how long -p waits for piped input to begin when a prompt was also given
# what a -p run needs once its session exists: imported with the agent half while the servers start
_PRINT_IMPORTS = ("mini_claude.cli.output_format", "mini_claude.cli.resume", "mini_claude.session.init_record",
                  "mini_claude.cli.turn_input", "mini_claude.models.pricing")


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
    parts = await start_session(args, ui, host_ui=PrintHostUI(ui), imports=_PRINT_IMPORTS)
    from mini_claude.cli.output_format import ResultWriter, exit_code
    from mini_claude.cli.resume import record_session, resume_session
    from mini_claude.cli.turn_input import run_user_turn
    from mini_claude.models.pricing import ListPriced
    from mini_claude.session.init_record import init_record
    from mini_claude.session.records import run_error

    agent = parts.agent
    original_cwd = str(agent.ctx.cwd)
    record_session(parts)
    try:
        await resume_session(parts, continue_=args.continue_, resume=args.resume, ui=ui, pick=None)
    except MiniClaudeError:
        await parts.manager.aclose()
        raise
    writer = ResultWriter(args.output_format, session_id=parts.session_id, model=agent.model.name,
                          priced=agent.model if isinstance(agent.model, ListPriced) else None)
    writer.skip(agent.history)  # a resumed conversation is not written again
    outcome: RunOutcome | None = None
    try:
        if parts.hooks is not None:  # what SessionStart hooks print joins the first prompt
            await parts.hooks.session_start("resume" if args.continue_ or args.resume else "startup")
        await parts.manager.wait_started()
        if parts.skills is not None:
            await parts.skills.settle()  # MCP skills are listed as servers come up; the first prompt lists them
        for state in parts.manager.states.values():
            if state.status is ServerStatus.FAILED:
                ui.warn(f"MCP server {state.name} failed: {state.error}")
        _stream_messages(agent, writer, budget_usd=args.max_budget_usd)
        turns = _stdin_turns() if prompt is None else _one(prompt)
        async for turn in turns:
            writer.begin()
            if args.output_format == "stream-json":
                writer.init(await init_record(parts, original_cwd=original_cwd))
            try:
                outcome = await (run_user_turn(parts, turn, ui) if isinstance(turn, str) else agent.run(turn))
            except MiniClaudeError as exc:
                if args.output_format == "text":
                    raise
                writer.messages(agent.history)
                writer.result(None, error=run_error(exc))
                ui.error(str(exc))
                return EXIT_ERROR
            writer.messages(agent.history)
            # the answer is out before the servers are shut down (that may take a while)
            writer.result(outcome)
        if outcome is None:
            ui.error("--input-format stream-json: no user message arrived on stdin")
            return EXIT_USAGE
    finally:
        if parts.hooks is not None:
            await parts.hooks.session_end("other")
        await agent.ctx.background.aclose()  # no background command outlives the run
        if parts.gate.sandbox is not None:  # its proxy and private /tmp (os._exit skips atexit)
            await parts.gate.sandbox.aclose()
        await parts.manager.aclose()
    detailed = args.detailed_exit_codes
    code = exit_code(outcome, detailed=detailed)
    said = f" (exit code {code})" if detailed else ""
    if outcome.stop == "max_turns":
        ui.warn(f"stopped after --max-turns {agent.max_turns} turns{said}")
    elif outcome.stop == "max_tokens":
        ui.warn(f"the answer was cut at the model's output token limit{said}")
    elif outcome.denials:
        count = len(outcome.denials)
        ui.warn(f"{count} tool call{'s were' if count > 1 else ' was'} denied on the way{said}")
    return code


async def _one(prompt: str) -> AsyncIterator[str | list[dict[str, Any]]]:
    yield prompt


async def _stdin_turns() -> AsyncIterator[str | list[dict[str, Any]]]:
    """`--input-format stream-json`: one `{"type": "user", "message": {"role": "user", "content": ...}}` a line
    (Claude Code's shape), each a turn, until stdin ends. A line that is not one raises ConfigError."""
    while True:
        line = await asyncio.to_thread(sys.stdin.readline)
        if not line:
            return
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            raise ConfigError(f"--input-format stream-json: a line is not JSON: {line.strip()[:80]!r}") from None
        message = record.get("message") if isinstance(record, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(record, dict) or record.get("type") != "user" or not content:
            raise ConfigError('--input-format stream-json: each line must be {"type": "user", "message": '
                              '{"role": "user", "content": ...}}')
        if isinstance(content, str):
            yield content
        elif isinstance(content, list) and all(isinstance(b, dict) for b in content):
            yield [dict(b) for b in content]
        else:
            raise ConfigError("--input-format stream-json: content must be a string or a list of blocks")


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
