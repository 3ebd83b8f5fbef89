"""WebSearch side by side with Claude Code's binary (issue 26): the same `-p` run against the mock model, which
answers the search request with the API's server blocks (server_tool_use, web_search_tool_result, text).

Both clients make a request of their own whose only tool is `{"type": "web_search_20250305", "name": "web_search",
"max_uses": 8}` (with the call's allowed_domains) and hand the model back the titles, URLs and summary.

Differences (the assertions branch on `client` only there):

* WebSearch is deferred behind Claude Code's tool search (the scenario's first turn loads it: `select:WebSearch`);
  mini-claude offers it up front, and that first call gets an error result (no such tool search).
* tool_choice: Claude Code 2.1.197 forces the server tool (`{"type": "tool", "name": "web_search"}`), 2.1.328 sends
  `auto`, as mini-claude does.
* The result's words: Claude Code writes `Links: [{"title", "url"}, …]` as JSON, mini-claude a numbered list
  (`1. title — url`), which the terminal shows the user as it is.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from tests.integration.conftest import result_text, sent_tool_results
from tests.parity import CLIENTS, RUN_TIMEOUT_S, client_argv

pytestmark = pytest.mark.timeout(180)

SEARCH = {"content": [
    {"type": "server_tool_use", "input": {"query": "mini-claude release"}},
    {"type": "web_search_tool_result", "content": [
        {"title": "Release notes", "url": "https://example.org/releases"},
        {"title": "Changelog", "url": "https://example.org/changelog"}]},
    {"type": "text", "text": "Version 9 came out."}]}


def tool_use(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "name": name, "input": args}]}


@CLIENTS
def test_web_search_side_by_side(client: str, tmp_path: Path) -> None:
    turns = [tool_use("ToolSearch", {"query": "select:WebSearch"}),
             tool_use("WebSearch", {"query": "mini-claude release", "allowed_domains": ["example.org"]}),
             SEARCH, {"content": [{"type": "text", "text": "It is version 9."}]}]
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    with MockModelServer(parse_scenario({"turns": turns}, source="web-search")) as mock:
        env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "ANTHROPIC_API_KEY": "sk-test",
               "ANTHROPIC_BASE_URL": mock.url}
        argv = [*client_argv(client, env, tmp_path), "-p", "what is new?", "--output-format", "json",
                "--allowedTools", "WebSearch"]
        proc = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S,
                              stdin=subprocess.DEVNULL)
        requests = mock.requests
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["result"] == "It is version 9."
    searches = [r["body"] for r in requests if any(t.get("type") for t in r["body"].get("tools", []))]
    assert len(searches) == 1
    (tool,) = searches[0]["tools"]
    assert {k: tool[k] for k in ("type", "name", "allowed_domains", "max_uses")} == {
        "type": "web_search_20250305", "name": "web_search", "allowed_domains": ["example.org"], "max_uses": 8}
    assert searches[0]["messages"][0]["role"] == "user" and len(searches[0]["messages"]) == 1
    assert "mini-claude release" in json.dumps(searches[0]["messages"])
    if client == "mini-claude":
        assert searches[0]["tool_choice"] == {"type": "auto"}
    sent = [b for b in sent_tool_results(requests) if "Version 9 came out." in result_text(b)]
    assert len(sent) == 1 and not sent[0].get("is_error")
    text = result_text(sent[0])
    for piece in ("Release notes", "https://example.org/releases", "Changelog", "https://example.org/changelog"):
        assert piece in text
