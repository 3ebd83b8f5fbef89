"""The REPL in a real terminal (tmux) against the mock model, for issue 18's findings 7 and 8: the model's text
reaches the screen with its control and bidi characters shown, not obeyed; the permission question never cuts a
command silently — a payload after 3,000 characters of padding is shown (the tail is always shown), one hidden in
the middle is announced by a marker, and "v" shows the whole call before the user answers; a resource read is asked
about naming the server and the URI it would send, and nothing reaches the server on "no"."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from cli_helpers import start_repl

from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from tests.helpers import ROOT

pytestmark = pytest.mark.timeout(120)

PAYLOAD = "__import__('os').system('touch PWNED')"
PAD = " " * 1500
MIDDLE = f'python3 -c "print(1){PAD};{PAYLOAD}{PAD}"'  # the payload where the question cuts
TAIL = f'python3 -c "print(2){PAD}{PAD};{PAYLOAD}"'  # the payload where the old question cut it off (600 chars)


def _flat(screen: str) -> str:
    return " ".join(screen.split())


def _mock(turns: list[dict[str, object]]) -> MockModelServer:
    return MockModelServer(parse_scenario({"turns": turns}, source="test"))


def test_the_models_answer_shows_escapes_instead_of_obeying_them(tmp_path: Path) -> None:
    answer = "BEGIN \x1b]52;c;cm0gLXJmIH4=\x07 \x1b[2J \u202eRTL-TEXT \x9b31m END"
    mock = _mock([{"content": [{"type": "text", "text": answer}]}])
    url = mock.start()
    work = tmp_path / "work"
    work.mkdir()
    term = start_repl(tmp_path, work, url, "answer")
    try:
        term.wait_for(lambda s: "/help for commands" in s, "the prompt")
        term.enter("say it")
        term.wait_for(lambda s: "END" in s, "the answer")
        screen = term.screen()
        assert "BEGIN \\x1b]52;c;cm0gLXJmIH4=\\x07 \\x1b[2J \\u202eRTL-TEXT \\x9b31m END" in screen, screen
        assert "say it" in screen  # the clear-screen was not obeyed
        term.keys("C-d")
    finally:
        term.close()
        mock.stop()


def test_a_padded_command_is_never_cut_silently_and_v_shows_it_whole(tmp_path: Path) -> None:
    mock = _mock([{"content": [{"type": "tool_use", "name": "Bash", "input": {"command": MIDDLE}}]},
                  {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": TAIL}}]},
                  {"content": [{"type": "text", "text": "DECLINED-BOTH"}]}])
    url = mock.start()
    work = tmp_path / "work"
    work.mkdir()
    term = start_repl(tmp_path, work, url, "padded")
    try:
        term.wait_for(lambda s: "/help for commands" in s, "the prompt")
        term.enter("run it")
        term.wait_for(lambda s: "v = view the whole call" in s, "the question with a view answer")
        screen = _flat(term.screen())
        assert "Run a shell command: python3 -c \"print(1)" in screen
        assert "more characters (38 not blank) not shown here — answer v to see the whole text" in screen, screen
        assert PAYLOAD not in screen  # hidden — but the marker says so
        term.keys("v", "Enter")
        term.wait_for(lambda s: PAYLOAD in s, "the whole command")
        term.wait_for(lambda s: _flat(s).endswith("n = no [y/a/n]"), "the question again, without v")
        term.keys("n", "Enter")
        term.wait_for(lambda s: "What should the model do instead?" in s, "the follow-up")
        term.keys("Enter")
        # the second command: the tail is always shown, so the payload the old question cut off is on screen
        term.wait_for(lambda s: 'Run a shell command: python3 -c "print(2)' in _flat(s), "the second question")
        term.wait_for(lambda s: f";{PAYLOAD}\"" in s and _flat(s).endswith("v = view the whole call [y/a/n/v]"),
                      "the tail and the question")
        term.keys("n", "Enter")
        term.wait_for(lambda s: s.count("What should the model do instead?") == 2, "the second follow-up")
        term.keys("Enter")
        term.wait_for(lambda s: "DECLINED-BOTH" in s, "the end of the turn")
        assert not (work / "PWNED").exists()
        term.keys("C-d")
    finally:
        term.close()
        mock.stop()


def test_a_resource_read_asks_showing_the_server_and_the_whole_uri_before_sending_it(tmp_path: Path) -> None:
    """Issue 18, finding 5 (the question): `read_mcp_resource` is asked about like its server's tools, and the
    question names the server and shows the URI it would send — a long one head, tail and marker, `v` whole."""
    reads = tmp_path / "reads.log"
    secret_uri = "docs://x?k=" + "A" * 3000 + "-THE-TAIL"
    probe = {"command": sys.executable, "args": [str(ROOT / "tests" / "mcp" / "servers" / "probe_server.py"),
                                                  "--resources", str(reads)]}
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"probe": probe}}))
    mock = _mock([{"content": [{"type": "tool_use", "name": "ReadMcpResourceTool",
                                "input": {"server": "probe", "uri": secret_uri}}]},
                  {"content": [{"type": "text", "text": "NOT-READ"}]}])
    url = mock.start()
    work = tmp_path / "work"
    work.mkdir()
    term = start_repl(tmp_path, work, url, "resource", "--mcp-config", str(config))
    try:
        term.wait_for(lambda s: "/help for commands" in s and "MCP probe" in s, "the prompt and the server")
        term.enter("read it")
        term.wait_for(lambda s: "v = view the whole call" in s, "the question")
        screen = _flat(term.screen())
        assert "Read the resource docs://x?k=AAAA" in screen
        assert "-THE-TAIL from MCP server probe (the server receives this URI)" in screen
        assert "not shown here — answer v to see the whole text" in screen
        assert not reads.exists() or reads.read_text() == ""  # nothing sent while asking
        term.keys("v", "Enter")
        term.wait_for(lambda s: "A" * 3000 in s.replace("\n", ""), "the whole URI")
        term.keys("n", "Enter")
        term.wait_for(lambda s: "What should the model do instead?" in s, "the follow-up")
        term.keys("Enter")
        term.wait_for(lambda s: "NOT-READ" in s, "the end of the turn")
        assert not reads.exists() or secret_uri not in reads.read_text()
        term.keys("C-d")
    finally:
        term.close()
        mock.stop()
