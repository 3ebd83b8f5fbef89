"""MCP Apps in the REPL, in a real terminal (tmux), with the mock model, the real stdio server with a view
(tests/mcp/servers/apps_host_server.py) and the real loopback web side, whose session page is driven over its SSE
+ POST relay as a browser would drive it (no browser here: the browser tests are tests/integration/apps/'s).

The view's line is printed; a view's `ui/message` while the user sits at the prompt is the next turn, shown as from
the view, and what the user had typed comes back; a view's tool call that needs a permission makes the prompt step
aside for the question (saying a view asks), and a "no" reaches the view as an error; "refuse this server's views"
refuses later calls, links and files to save without a question; a link the user would not open is refused too; a
file the view asks to save is asked about, then saved in ~/Downloads beside (never over) a file of that name."""

from __future__ import annotations

import json
import re
import secrets
import shlex
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from tests.helpers import PYTHON, ROOT, require_program, uncached, wait_until
from tests.integration.test_host_repl import Terminal

pytestmark = pytest.mark.timeout(120)
SERVER = {"command": sys.executable, "args": [str(ROOT / "tests" / "mcp" / "servers" / "apps_host_server.py")]}
VIEW_LINE = re.compile(r"view: (http://127\.0\.0\.1:\d+/[A-Za-z0-9_-]+/)#view-([A-Za-z0-9_-]+)")


def flat(screen: str) -> str:
    """The screen's words on one line (the terminal's renderer may break a long line at a space)."""
    return " ".join(screen.split())


class Page:
    """The session page without a browser: the SSE stream read in a thread, messages POSTed to the relay."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.origin = "/".join(base.split("/")[:3])
        self.page = secrets.token_hex(16)
        self.envelopes: list[dict[str, Any]] = []
        self.http = httpx.Client(timeout=10)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        with httpx.Client(timeout=None) as client, client.stream(
                "GET", f"{self.base}events", params={"page": self.page}) as response:
            for line in response.iter_lines():
                if self._stop.is_set():
                    return
                if line.startswith("data: "):
                    self.envelopes.append(json.loads(line[6:]))

    def post(self, view: str, message: dict[str, Any]) -> None:
        response = self.http.post(f"{self.base}rpc", json={"page": self.page, "view": view, "message": message},
                                  headers={"Origin": self.origin})
        assert response.status_code == 204, response.text

    def answer(self, view: str, request_id: int) -> dict[str, Any] | None:
        return next((e["message"] for e in list(self.envelopes) if e.get("view") == view
                     and e.get("message", {}).get("id") == request_id and "method" not in e["message"]), None)

    def close(self) -> None:
        self._stop.set()
        self.http.close()


@pytest.fixture
def repl(tmp_path: Path) -> Iterator[Callable[[list[dict[str, Any]]], tuple[Terminal, MockModelServer, Path]]]:
    tmux = require_program("tmux", "drives the REPL in a real terminal")
    work = tmp_path / "work"
    work.mkdir()
    sessions: list[str] = []
    mocks: list[MockModelServer] = []

    def start(turns: list[dict[str, Any]]) -> tuple[Terminal, MockModelServer, Path]:
        mock = MockModelServer(parse_scenario({"turns": turns}, source="test"))
        url = mock.start()
        mocks.append(mock)
        config = tmp_path / "servers.json"
        config.write_text(json.dumps({"mcpServers": {"apps": SERVER}}))
        settings = json.dumps({"mcpApps": {"openBrowser": "never"}})
        session = f"mc-apps-{tmp_path.parent.name}-{tmp_path.name}"
        cmd = (f"cd {work} && ANTHROPIC_BASE_URL={url} ANTHROPIC_API_KEY=x HOME={tmp_path} "
               f"MINI_CLAUDE_STATE_DIR={tmp_path / 'state'} PYTHONPATH={ROOT} {PYTHON} -m mini_claude "
               f"--mcp-config {config} --allowedTools mcp__apps__show_board --settings {shlex.quote(settings)}")
        subprocess.run([tmux, "new-session", "-d", "-s", session, "-x", "200", "-y", "50", cmd], check=True)
        sessions.append(session)
        return Terminal(tmux, session), mock, tmp_path  # tmp_path is the session's HOME

    yield start
    for session in sessions:
        subprocess.run([tmux, "kill-session", "-t", session], capture_output=True)
    for mock in mocks:
        mock.stop()


def test_a_view_in_the_repl(repl: Callable[..., tuple[Terminal, MockModelServer, Path]]) -> None:
    turns = [{"content": [{"type": "tool_use", "name": "mcp__apps__show_board", "input": {}}]},
             {"content": [{"type": "text", "text": "BOARD-UP"}]},
             {"content": [{"type": "text", "text": "VIEW-HEARD"}]}]
    term, mock, home = repl(turns)
    (home / "Downloads").mkdir()
    term.wait_for(lambda s: "MCP apps" in s and "ready" in s, "the server to be ready")
    term.enter("show the board")
    term.wait_for(lambda s: "BOARD-UP" in s and VIEW_LINE.search(flat(s)) is not None, "the answer and the view line")
    found = VIEW_LINE.search(flat(term.screen()))
    assert found is not None and "(open it in a browser)" in flat(term.screen())
    page = Page(found.group(1))
    view = found.group(2)
    try:
        wait_until(lambda: any(e.get("view") == view and "added" in e for e in page.envelopes), "the view on the page")
        page.post(view, {"jsonrpc": "2.0", "id": 1, "method": "ui/initialize", "params": {}})
        page.post(view, {"jsonrpc": "2.0", "method": "ui/notifications/initialized", "params": {}})
        wait_until(lambda: any(e.get("message", {}).get("method") == "ui/notifications/tool-result"
                               for e in page.envelopes), "the tool's result in the view")

        # a message from the view while the user is typing at the prompt: it is the next turn, shown as the view's,
        # and what was typed comes back
        term.type("half typed")
        term.wait_for(lambda s: "> half typed" in s, "the typed text")
        page.post(view, {"jsonrpc": "2.0", "id": 2, "method": "ui/message",
                         "params": {"role": "user", "content": [{"type": "text", "text": "hello from the view"}]}})
        term.wait_for(lambda s: "from view apps/show_board: hello from the view" in flat(s) and "VIEW-HEARD" in s,
                      "the view's turn")
        assert page.answer(view, 2) == {"jsonrpc": "2.0", "id": 2, "result": {}}
        last = uncached(mock.requests[-1]["body"]["messages"][-1]["content"])
        assert [b["text"] for b in last if b.get("type") == "text"] == ["hello from the view"]
        term.wait_for(lambda s: s.rstrip().endswith("> half typed"), "the typed text back at the prompt")

        # a view's call of a tool nobody allowed: the prompt steps aside for the question, which says a view asks;
        # "n" refuses it at once (no model to tell what to do instead)
        term.keys("C-u")
        page.post(view, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "caps", "arguments": {}}})
        term.wait_for(lambda s: "mcp__apps__caps" in s and "[y/" in s, "the permission question")
        assert "A view of MCP server apps (a page in your browser, not the model) asks to run:" in flat(term.screen())
        term.enter("n")
        term.wait_for(lambda s: page.answer(view, 3) is not None, "the view's answer")
        refused = page.answer(view, 3)
        assert refused is not None and refused["error"]["code"] == -32000
        term.wait_for(lambda s: "a view of MCP server apps was refused caps" in flat(s), "the refusal's line")
        term.wait_for(lambda s: s.rstrip().endswith(">"), "the prompt again")
        assert "do instead" not in term.screen()

        # a link the view asks to open: asked first; "n" refuses it
        page.post(view, {"jsonrpc": "2.0", "id": 4, "method": "ui/open-link", "params": {"url": "https://example.com/"}})
        term.wait_for(lambda s: "asks to open https://example.com/. Open it? [y/n]" in flat(s), "the link question")
        term.enter("n")
        wait_until(lambda: page.answer(view, 4) is not None, "the view's answer about the link")
        link = page.answer(view, 4)
        assert link is not None and "did not open" in link["error"]["message"]
        term.wait_for(lambda s: s.rstrip().endswith(">"), "the prompt again")

        # a file the view asks to save: asked first, then in ~/Downloads (never over a file already there)
        downloads = home / "Downloads"
        (downloads / "q3.csv").write_text("mine")
        page.post(view, {"jsonrpc": "2.0", "id": 8, "method": "ui/download-file", "params": {"contents": [
            {"type": "resource", "resource": {"uri": "ui://apps/q3.csv", "mimeType": "text/csv", "text": "a,b"}}]}})
        term.wait_for(lambda s: f"asks to save q3.csv (3 B) to {downloads}. Save it? [y/n]" in flat(s),
                      "the download question")
        term.enter("y")
        wait_until(lambda: page.answer(view, 8) is not None, "the view's answer about the download")
        assert page.answer(view, 8) == {"jsonrpc": "2.0", "id": 8, "result": {}}
        assert (downloads / "q3 (1).csv").read_text() == "a,b" and (downloads / "q3.csv").read_text() == "mine"
        term.wait_for(lambda s: s.rstrip().endswith(">"), "the prompt again")

        # "b": refused, and so is every later call of this server's views that would ask, and a link, without a question
        page.post(view, {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "caps", "arguments": {}}})
        term.wait_for(lambda s: s.count("asks to run:") == 2 and s.rstrip().endswith("]"), "the second question")
        term.enter("b")
        term.wait_for(lambda s: page.answer(view, 5) is not None, "the view's second answer")
        term.wait_for(lambda s: "views of MCP server apps that need your approval are refused" in flat(s),
                      "the note that says so")
        term.wait_for(lambda s: s.rstrip().endswith(">"), "the prompt again")
        page.post(view, {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "caps", "arguments": {}}})
        wait_until(lambda: page.answer(view, 6) is not None, "the third call's answer, with no question asked")
        third = page.answer(view, 6)
        assert third is not None and "refuses this server's views' calls" in third["error"]["message"]
        assert term.screen().count("asks to run:") == 2
        page.post(view, {"jsonrpc": "2.0", "id": 7, "method": "ui/open-link", "params": {"url": "https://example.org/"}})
        wait_until(lambda: page.answer(view, 7) is not None, "the second link's answer, with no question asked")
        second_link = page.answer(view, 7)
        assert second_link is not None and "did not open" in second_link["error"]["message"]
        assert "https://example.org/" not in term.screen()
        page.post(view, {"jsonrpc": "2.0", "id": 9, "method": "ui/download-file", "params": {"contents": [
            {"type": "resource", "resource": {"uri": "ui://apps/later.csv", "text": "x"}}]}})
        wait_until(lambda: page.answer(view, 9) is not None, "the later download's answer, with no question asked")
        assert page.answer(view, 9) == {"jsonrpc": "2.0", "id": 9, "result": {"isError": True}}
        assert not (downloads / "later.csv").exists() and "later.csv" not in term.screen()

        term.keys("C-d")  # exit: the view is asked to tear down, then the page hears the session closed
        wait_until(lambda: any(e.get("message", {}).get("method") == "ui/resource-teardown"
                               for e in page.envelopes), "the teardown request")
        wait_until(lambda: any(e.get("closed") for e in page.envelopes), "the page to hear the end")
    finally:
        page.close()
