"""`mini-claude -p` calling WebSearch end to end: the real CLI process, the mock model answering the search request
with server blocks, the results on the user's stderr, the tool result in the next request; and the gate without a
rule."""

from __future__ import annotations

import pytest

from tests.integration.conftest import Cli, answer, result_text, tool_results, tool_use

pytestmark = pytest.mark.timeout(90)

SEARCH = {"content": [
    {"type": "server_tool_use", "input": {"query": "mini-claude release"}},
    {"type": "web_search_tool_result", "content": [
        {"title": "Release notes", "url": "https://example.org/releases"},
        {"title": "Changelog \u001b[31mred\u001b[0m", "url": "https://example.org/changelog"}]},
    {"type": "text", "text": "Version 9 came out."}]}


@pytest.mark.parametrize("sdk", ["0", "1"], ids=["http", "sdk"])
def test_print_mode_web_search(cli: Cli, sdk: str) -> None:
    mock = cli.mock([tool_use("WebSearch", {"query": "mini-claude release"}), SEARCH, answer("It is version 9.")])
    result = cli.run("-p", "what is new?", "--allowedTools", "WebSearch", env={"MINI_CLAUDE_ANTHROPIC_SDK": sdk})
    assert result.rc == 0, result.stderr
    assert result.stdout.strip() == "It is version 9."
    # the search request in between: the server tool only
    search_request = mock.requests[1]["body"]
    assert [t.get("type") for t in search_request["tools"]] == ["web_search_20250305"]
    (sent,) = tool_results(mock)
    text = result_text(sent)
    assert not sent.get("is_error")
    assert text.startswith('Web search for "mini-claude release": 2 results\n1. Release notes — '
                           "https://example.org/releases\n")
    assert "Version 9 came out." in text
    # the results, shown to the user on stderr, whole and through the terminal's one door (no escape sequence)
    assert result.stderr.endswith('● WebSearch(mini-claude release)\n'
                                  '  ⎿  Web search for "mini-claude release": 2 results\n'
                                  "     1. Release notes — https://example.org/releases\n"
                                  "     2. Changelog red — https://example.org/changelog\n")
    assert "Version 9" not in result.stderr  # the summary is for the model


def test_print_mode_web_search_without_a_rule_is_refused(cli: Cli) -> None:
    mock = cli.mock([tool_use("WebSearch", {"query": "anything"}), answer("ok")])
    result = cli.run("-p", "search")
    (sent,) = tool_results(mock)
    assert sent.get("is_error")
    assert 'add "WebSearch" to permissions.allow' in result_text(sent)
    assert len(mock.requests) == 2  # no search request was made
    assert "permission denied for WebSearch" in result.stderr
