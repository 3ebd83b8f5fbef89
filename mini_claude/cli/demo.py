"""`mini-claude demo`: a scripted session, offline, through the real code paths.

The real `anthropic` SDK streams from the bundled mock model server over loopback HTTP; the built-in tools edit a
real file; `mcp__demo__add` is answered by the bundled demo MCP server, started as a subprocess and spoken to
over stdio by our own client. The mock only scripts the model's side: the sum in the answer is whatever the
server returned.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from importlib import resources
from pathlib import Path

from mini_claude.cli.terminal.render import TerminalUI
from mini_claude.mcp.config import load_mcp_config
from mini_claude.session.agent_half import build_session
from mini_claude.session.parts import SessionOptions
from mini_claude.settings import load_settings

__all__ = ["DEMO_PROMPTS", "main"]

DEMO_PROMPTS = ("Fix the typo in notes.txt.", "Use the add tool to compute 17 + 25.")
DEMO_FILE_TEXT = "The quick brown fox jumsp over the lazy dog.\n"


def main(argv: list[str]) -> int:
    if argv and argv[0] in ("-h", "--help"):
        print("usage: mini-claude demo\n\nRun the offline demo (no API key, no network).")
        return 0
    return asyncio.run(_demo())


async def _demo() -> int:
    from mini_claude.models.anthropic import AnthropicModel
    from mini_claude.models.mock_server import MockModelServer
    from mini_claude.models.scenario import load_scenario

    scenario_path = resources.files("mini_claude") / "demo" / "scenario.json"
    with tempfile.TemporaryDirectory(prefix="mini-claude-demo-") as tmp, \
            resources.as_file(scenario_path) as scenario_file:
        work = Path(tmp) / "project"
        home = Path(tmp) / "home"
        work.mkdir()
        home.mkdir()
        (work / "notes.txt").write_text(DEMO_FILE_TEXT)
        env = {"HOME": str(home), "MINI_CLAUDE_STATE_DIR": str(Path(tmp) / "state"), "PATH": _path()}
        server = {"mcpServers": {"demo": {"command": sys.executable, "args": ["-m", "mini_claude.mcp.demo_server"]}}}
        config = load_mcp_config(cwd=work, home=home, env=env, extra=[json.dumps(server)], strict=True)
        settings = load_settings(cwd=work, home=home)
        ui = TerminalUI()
        with MockModelServer(load_scenario(scenario_file)) as mock:
            url = mock.start()
            model = AnthropicModel("mock-claude", api_key="mock-key", base_url=url)
            opts = SessionOptions(cwd=work, allowed_tools=["Read", "Edit", "mcp__demo"])
            parts = build_session(opts, model=model, env=env, ui=ui, held={}, config=config, settings=settings,
                                  ask_permission=None)
            ui.info(f"[demo] mock model at {url}; starting MCP server 'demo' (bundled, stdio)")
            parts.manager.start()
            try:
                await parts.manager.wait_started()
                state = parts.manager.states["demo"]
                ui.info(f"[demo] MCP server demo: {state.status.value} ({state.summary()})")
                if state.status.value != "ready":
                    ui.error(f"[demo] the demo MCP server did not start: {state.error}")
                    return 1
                for prompt in DEMO_PROMPTS:
                    print(f"\n> {prompt}")
                    await parts.agent.run(prompt)
            finally:
                await parts.agent.ctx.background.aclose()
                await parts.manager.aclose()
        print(f"\n[demo] notes.txt now reads: {(work / 'notes.txt').read_text().strip()}")
    return 0


def _path() -> str:
    import os

    return os.environ.get("PATH", "/usr/bin:/bin")
