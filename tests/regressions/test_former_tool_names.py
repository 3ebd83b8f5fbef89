"""The built-in tools took Claude Code's names and input keys (`read_file(path)` became `Read(file_path)`, `bash`
became `Bash`, …). What was written under the former names still works: a saved conversation resumes with its tool
calls renamed (the model sees one name per tool), and a permission rule naming a former name still names the tool."""

from __future__ import annotations

from mini_claude.agent.sessions import SessionLog, sessions_dir
from mini_claude.tools.former_names import FORMER_NAMES, upgrade_history
from tests.integration.conftest import Cli, answer, result_text, tool_results, tool_use

_OLD_HISTORY = [
    {"role": "user", "content": [{"type": "text", "text": "look at notes"}]},
    {"role": "assistant", "content": [
        {"type": "text", "text": "reading"},
        {"type": "tool_use", "id": "toolu_old_1", "name": "read_file", "input": {"path": "notes.txt", "limit": 5}},
        {"type": "tool_use", "id": "toolu_old_2", "name": "bash", "input": {"command": "ls", "timeout_ms": 900}},
        {"type": "tool_use", "id": "toolu_old_3", "name": "grep",
         "input": {"pattern": "x", "case_insensitive": True, "context": 2, "max_results": 9}},
        {"type": "tool_use", "id": "toolu_old_4", "name": "mcp__srv__read_file", "input": {"path": "kept"}}]},
    {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": f"toolu_old_{i}", "content": "ok"} for i in range(1, 5)]},
    {"role": "assistant", "content": [{"type": "text", "text": "all read"}]},
]


def test_upgrade_renames_calls_and_keys_and_leaves_the_rest() -> None:
    upgraded = upgrade_history(_OLD_HISTORY)
    calls = [b for b in upgraded[1]["content"] if b["type"] == "tool_use"]
    assert [(c["name"], c["input"]) for c in calls] == [
        ("Read", {"file_path": "notes.txt", "limit": 5}),
        ("Bash", {"command": "ls", "timeout": 900}),
        ("Grep", {"pattern": "x", "-i": True, "-C": 2, "head_limit": 9}),
        ("mcp__srv__read_file", {"path": "kept"}),  # an MCP tool's name and input are its server's
    ]
    assert [c["id"] for c in calls] == ["toolu_old_1", "toolu_old_2", "toolu_old_3", "toolu_old_4"]
    assert _OLD_HISTORY[1]["content"][1]["name"] == "read_file"  # the saved copy is not changed in place
    current = upgrade_history(upgraded)
    assert current is upgraded  # nothing former left: the same list back


def test_a_conversation_saved_under_the_former_names_resumes_with_todays(cli: Cli) -> None:
    log = SessionLog.create(cli.state, cli.work, "0ld5e55i-0000-4000-8000-000000000001")
    log.sync(_OLD_HISTORY)
    log.close()
    assert sessions_dir(cli.state, cli.work).is_dir()
    mock = cli.mock([answer("continued")])
    result = cli.run("-p", "and now?", "--continue")
    assert result.rc == 0 and result.stdout == "continued\n", result.stderr
    sent = mock.requests[0]["body"]["messages"]
    names = [b["name"] for m in sent for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_use"]
    assert names == ["Read", "Bash", "Grep", "mcp__srv__read_file"]
    assert sent[1]["content"][1]["input"] == {"file_path": "notes.txt", "limit": 5}
    assert not set(names) & set(FORMER_NAMES) - {"mcp__srv__read_file"}


def test_a_rule_naming_a_former_tool_name_still_names_the_tool(cli: Cli) -> None:
    (cli.work / "notes.txt").write_text("private\n")
    mock = cli.mock([tool_use("Read", {"file_path": "notes.txt"}), answer("done")])
    cli.run("-p", "read it", "--disallowedTools", "read_file")
    [refused] = tool_results(mock)
    assert refused.get("is_error") and 'denied by rule "read_file"' in result_text(refused)
    assert "private" not in result_text(refused)
