"""Running the agent from the command line: one-shot print mode (`-p`) and launching the interactive REPL.

Both start their session through `session.start_session`; the REPL itself lives in repl.py.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from mini_claude.cli.exit_codes import EXIT_ERROR, EXIT_OK, EXIT_USAGE
from mini_claude.cli.host_ui import PrintHostUI
from mini_claude.cli.render import TerminalUI
from mini_claude.cli.repl import Repl
from mini_claude.cli.session import start_session
from mini_claude.cli.turn_input import user_turn
from mini_claude.mcp.manager import ServerStatus

__all__ = ["run_interactive", "run_print"]


def run_print(args: argparse.Namespace) -> int:
    prompt = args.prompt
    if prompt is None:
        if sys.stdin.isatty():
            sys.stderr.write("mini-claude: -p needs a prompt (as an argument or on stdin)\n")
            return EXIT_USAGE
        prompt = sys.stdin.read()
    if not prompt.strip():  # the API rejects an empty user message: say so here, in one line
        sys.stderr.write("mini-claude: -p needs a non-empty prompt (as an argument or on stdin)\n")
        return EXIT_USAGE
    return asyncio.run(_print_main(args, prompt))


async def _print_main(args: argparse.Namespace, prompt: str) -> int:
    ui = TerminalUI(print_mode=True)
    parts = await start_session(args, ui, host_ui=PrintHostUI(ui))
    try:
        await parts.manager.wait_started()
        if parts.skills is not None:
            await parts.skills.settle()  # MCP skills are listed as servers come up; the first prompt lists them
        for state in parts.manager.states.values():
            if state.status is ServerStatus.FAILED:
                ui.warn(f"MCP server {state.name} failed: {state.error}")
        outcome = await parts.agent.run(await user_turn(parts, prompt, ui))
        # the answer is out before the servers are shut down (that may take a while)
        sys.stdout.write(outcome.text.rstrip("\n") + "\n")
        sys.stdout.flush()
    finally:
        await parts.manager.aclose()
    if outcome.stop == "max_turns":
        ui.warn(f"stopped after --max-turns {parts.agent.max_turns} turns")
        return EXIT_ERROR
    return EXIT_OK


def run_interactive(args: argparse.Namespace) -> int:
    if not sys.stdin.isatty():
        sys.stderr.write("mini-claude: the interactive REPL needs a terminal on stdin; "
                         "for scripts use -p \"prompt\" (or pipe the prompt into -p)\n")
        return EXIT_USAGE
    return asyncio.run(Repl(args).run())
