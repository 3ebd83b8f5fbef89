"""Single MCP tools switched off (`disabledMcpTools`, mcp/tool_switches.py) through the real CLI: `mcp disable
SERVER/TOOL -s SCOPE` writes the scope's settings file; a `-p` run against the mock model then sends no definition
of that tool (the request log shows it absent), and a call that names it gets an error saying it is switched off;
`mcp enable` gives it back, or says which file still holds it off. A repository's file switches tools off without
trust."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import Cli, answer, probe_entry, result_text, tool_results, tool_use


def _mcp_tools(request: dict[str, Any]) -> list[str]:
    return sorted(t["name"] for t in request["body"].get("tools", []) if t["name"].startswith("mcp__"))


def _settings(cli: Cli, scope: str) -> Path:
    return {"user": cli.home / ".claude" / "settings.json", "project": cli.work / ".claude" / "settings.json",
            "local": cli.work / ".claude" / "settings.local.json"}[scope]


@pytest.mark.parametrize("scope", ["user", "project", "local"])
def test_a_tool_switched_off_in_each_scope_is_never_offered(cli: Cli, scope: str) -> None:
    config = cli.config_file({"probe": probe_entry()})
    off = cli.run("mcp", "disable", "probe/poke", "-s", scope)
    assert off.rc == 0, off.stderr
    assert "Disabled MCP tool 'poke'" in off.stdout
    assert json.loads(_settings(cli, scope).read_text())["disabledMcpTools"] == ["probe/poke"]
    mock = cli.mock([tool_use("mcp__probe__poke"), answer("done")])
    result = cli.run("-p", "poke it", "--mcp-config", config, "--allowedTools", "mcp__probe",
                     env={"MINI_CLAUDE_TOOL_SEARCH": "false"})
    assert result.rc == 0, result.stderr
    offered = _mcp_tools(mock.requests[0])
    assert "mcp__probe__poke" not in offered and "mcp__probe__peek" in offered
    (refused,) = tool_results(mock)
    assert refused.get("is_error") is True
    assert "switched off" in result_text(refused) and "disabledMcpTools" in result_text(refused)


def test_a_whole_server_s_tools_off_and_enable_says_what_still_holds_it(cli: Cli) -> None:
    config = cli.config_file({"probe": probe_entry()})
    assert cli.run("mcp", "disable", "probe/*", "-s", "project").rc == 0
    assert cli.run("mcp", "disable", "probe/echo").rc == 0  # default scope: local
    assert json.loads(_settings(cli, "local").read_text())["disabledMcpTools"] == ["probe/echo"]
    mock = cli.mock([answer("hi"), answer("hi")])
    assert cli.run("-p", "hi", "--mcp-config", config, env={"MINI_CLAUDE_TOOL_SEARCH": "false"}).rc == 0
    assert _mcp_tools(mock.requests[0]) == []
    still = cli.run("mcp", "enable", "probe/echo")
    assert still.rc == 1 and ".claude/settings.json lists probe/*" in still.stdout
    assert json.loads(_settings(cli, "local").read_text())["disabledMcpTools"] == []
    back = cli.run("mcp", "enable", "probe/*", "-s", "project")
    assert back.rc == 0, back.stdout + back.stderr
    assert cli.run("-p", "hi", "--mcp-config", config, env={"MINI_CLAUDE_TOOL_SEARCH": "false"}).rc == 0
    assert "mcp__probe__echo" in _mcp_tools(mock.requests[1])


def test_a_disabled_tool_is_not_found_by_tool_search(cli: Cli) -> None:
    config = cli.config_file({"probe": probe_entry()})
    assert cli.run("mcp", "disable", "probe/poke").rc == 0
    mock = cli.mock([tool_use("ToolSearch", {"query": "select:mcp__probe__poke,mcp__probe__peek"}), answer("ok")])
    result = cli.run("-p", "find", "--mcp-config", config, env={"MINI_CLAUDE_TOOL_SEARCH": "true"})
    assert result.rc == 0, result.stderr
    (found,) = tool_results(mock)
    assert "mcp__probe__poke" not in json.dumps(found) and "mcp__probe__poke" not in json.dumps(mock.requests[0])
    assert "mcp__probe__peek" in json.dumps(mock.requests[1]["body"])


def test_bad_entries_and_linked_files_are_refused(cli: Cli) -> None:
    bad = cli.run("mcp", "disable", "probe/")
    assert bad.rc == 3 and "SERVER/TOOL" in bad.stderr
    (cli.work / ".claude").mkdir(parents=True, exist_ok=True)
    target = cli.tmp / "elsewhere.json"
    target.write_text("{}")
    (cli.work / ".claude" / "settings.local.json").symlink_to(target)
    linked = cli.run("mcp", "disable", "probe/poke")
    assert linked.rc != 0 and "symbolic link" in linked.stderr and target.read_text() == "{}"


def test_mcp_list_shows_what_the_switches_save(cli: Cli) -> None:
    config = cli.config_file({"probe": probe_entry()})
    before = cli.run("mcp", "list", "--json", "--mcp-config", config, env={"MINI_CLAUDE_TOOL_SEARCH": "false"})
    assert before.rc == 0, before.stderr
    (whole,) = json.loads(before.stdout)
    assert "tools_off" not in whole
    assert cli.run("mcp", "disable", "probe/poke").rc == 0
    assert cli.run("mcp", "disable", "probe/peek", "-s", "project").rc == 0
    listed = cli.run("mcp", "list", "--json", "--mcp-config", config, env={"MINI_CLAUDE_TOOL_SEARCH": "false"})
    (row,) = json.loads(listed.stdout)
    assert sorted(row["tools_off"]) == ["peek", "poke"]
    # the definitions left out are what the offered ones no longer carry
    assert row["tokens_saved"] > 0 and row["tool_tokens"] + row["tokens_saved"] - whole["tool_tokens"] in (-1, 0, 1)
    text = cli.run("mcp", "list", "--mcp-config", config, env={"MINI_CLAUDE_TOOL_SEARCH": "false"})
    assert f"2 tools off (saves ~{row['tokens_saved']} tokens)" in text.stdout, text.stdout


@pytest.mark.parametrize("scope", ["user", "project", "local"])
def test_a_user_server_switched_off_in_each_scope_is_not_started(cli: Cli, scope: str) -> None:
    entry = probe_entry()
    added = cli.run("mcp", "add", "-s", "user", "probe", "--", entry["command"], *entry["args"])
    assert added.rc == 0, added.stderr
    off = cli.run("mcp", "disable", "probe", "-s", scope)
    assert off.rc == 0, off.stderr
    assert json.loads(_settings(cli, scope).read_text())["disabledMcpServers"] == ["probe"]
    mock = cli.mock([answer("hi"), answer("hi")])
    assert cli.run("-p", "hi", env={"MINI_CLAUDE_TOOL_SEARCH": "false"}).rc == 0
    assert _mcp_tools(mock.requests[0]) == []
    listed = json.loads(cli.run("mcp", "list", "--json").stdout)
    assert [(s["name"], s["status"]) for s in listed] == [("probe", "disabled")]
    back = cli.run("mcp", "enable", "probe", "-s", scope)
    assert back.rc == 0, back.stdout
    assert cli.run("-p", "hi", env={"MINI_CLAUDE_TOOL_SEARCH": "false"}).rc == 0
    assert "mcp__probe__echo" in _mcp_tools(mock.requests[1])


def test_a_project_server_switched_off_uses_claude_code_s_key_and_beats_the_flag(cli: Cli) -> None:
    (cli.work / ".mcp.json").write_text(json.dumps({"mcpServers": {"probe": probe_entry()}}))
    assert cli.run("mcp", "disable", "probe", "-s", "project").rc == 0
    assert json.loads(_settings(cli, "project").read_text()) == {"disabledMcpjsonServers": ["probe"]}
    assert cli.run("mcp", "disable", "probe", "-s", "local").rc == 0
    mock = cli.mock([answer("hi")])
    assert cli.run("-p", "hi", "--trust-project-mcp", env={"MINI_CLAUDE_TOOL_SEARCH": "false"}).rc == 0
    assert _mcp_tools(mock.requests[0]) == []
    still = cli.run("mcp", "enable", "probe", "-s", "local")
    assert still.rc == 1 and ".claude/settings.json" in still.stdout


def _git(cwd: Path, *args: str) -> None:
    import subprocess

    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                   capture_output=True, timeout=30)


def test_a_local_choice_holds_in_every_worktree_of_the_repository(cli: Cli) -> None:
    _git(cli.work, "init", "-q")
    _git(cli.work, "commit", "-q", "--allow-empty", "-m", "start")
    linked, other = cli.tmp / "linked", cli.tmp / "other"
    _git(cli.work, "worktree", "add", "-q", str(linked))
    _git(cli.work, "worktree", "add", "-q", str(other))
    config = cli.config_file({"probe": probe_entry()})
    cli.work = linked  # switched off in one linked worktree …
    off = cli.run("mcp", "disable", "probe/poke")
    assert off.rc == 0 and "the main worktree's" in off.stdout, off.stdout + off.stderr
    assert cli.run("mcp", "disable", "probe", "-s", "local").rc == 0
    main_local = json.loads((cli.tmp / "work" / ".claude" / "settings.local.json").read_text())
    assert main_local == {"disabledMcpTools": ["probe/poke"], "disabledMcpServers": ["probe"]}
    assert not (linked / ".claude").exists()
    mock = cli.mock([answer("hi")] * 4)
    for tree in (other, cli.tmp / "work"):  # … holds in the other linked one and in the main one
        cli.work = tree
        assert cli.run("-p", "hi", "--mcp-config", config, env={"MINI_CLAUDE_TOOL_SEARCH": "false"}).rc == 0
        assert _mcp_tools(mock.requests[-1]) == []
    cli.work = other
    assert cli.run("mcp", "enable", "probe", "-s", "local").rc == 0
    assert cli.run("-p", "hi", "--mcp-config", config, env={"MINI_CLAUDE_TOOL_SEARCH": "false"}).rc == 0
    offered = _mcp_tools(mock.requests[-1])
    assert "mcp__probe__peek" in offered and "mcp__probe__poke" not in offered
    listed = cli.run("mcp", "list", "--mcp-config", config, env={"MINI_CLAUDE_TOOL_SEARCH": "false"})
    assert "1 tool off" in listed.stdout, listed.stdout


def test_a_forged_git_file_points_nowhere(cli: Cli, tmp_path: Path) -> None:
    from mini_claude.worktrees import main_worktree

    elsewhere = tmp_path / "elsewhere"
    (elsewhere / ".git" / "worktrees" / "x").mkdir(parents=True)
    (elsewhere / ".git" / "worktrees" / "x" / "commondir").write_text("../..")
    (elsewhere / ".git" / "worktrees" / "x" / "gitdir").write_text("/somewhere/else/.git")  # no back link to us
    (cli.work / ".git").write_text(f"gitdir: {elsewhere / '.git' / 'worktrees' / 'x'}\n")
    assert main_worktree(cli.work) is None
    (elsewhere / ".git" / "worktrees" / "x" / "gitdir").write_text(str(cli.work / ".git"))
    assert main_worktree(cli.work) == elsewhere


def test_mcp_tools_marks_the_switched_off_tools(cli: Cli) -> None:
    config = cli.config_file({"probe": probe_entry()})
    assert cli.run("mcp", "disable", "probe/poke").rc == 0
    text = cli.run("mcp", "tools", "probe", "--mcp-config", config)
    assert text.rc == 0, text.stderr
    marked = [line for line in text.stdout.splitlines() if "switched off" in line]
    assert [line.split()[0] for line in marked] == ["mcp__probe__poke"]
    rows = json.loads(cli.run("mcp", "tools", "probe", "--json", "--mcp-config", config).stdout)
    assert [r["name"] for r in rows if r.get("switched_off")] == ["poke"]
