"""Settings `env` applied to the session (issue 20): what a shell command, an MCP server and a hook see, from the
user's file, `--settings`, and a repository's file only once the folder is trusted. A repository's `.env` never
reaches any of them."""

from __future__ import annotations

import json

import pytest

from tests.integration.conftest import answer, probe_entry, result_text, tool_results, tool_use
from tests.settings.conftest import SettingsCli

pytestmark = pytest.mark.timeout(120)


def _results(mock: object) -> list[str]:
    return [result_text(block) for block in tool_results(mock)]  # type: ignore[arg-type]


def test_env_reaches_shell_commands_mcp_servers_and_hooks(cli: SettingsCli) -> None:
    hook_out = cli.tmp / "hook.txt"
    cli.user_settings({"env": {"SETTINGS_VAR": "from-user", "SHARED": "user"},
                       "hooks": {"UserPromptSubmit": [{"hooks": [
                           {"type": "command", "command": f'printf %s "$SETTINGS_VAR/$FLAG_VAR" > {hook_out}'}]}]}})
    (cli.work / ".env").write_text("DOTENV_VAR=from-dotenv\n")
    config = cli.config_file({"p": probe_entry()})
    mock = cli.mock([
        tool_use("Bash", {"command": 'printf "%s|%s|%s|%s" "$SETTINGS_VAR" "$FLAG_VAR" "$SHARED" '
                                     '"${DOTENV_VAR:-unset}" > out.txt; cat out.txt'}),
        tool_use("mcp__p__get_env", {"name": "SETTINGS_VAR"}),
        tool_use("mcp__p__get_env", {"name": "FLAG_VAR"}),
        tool_use("mcp__p__get_env", {"name": "DOTENV_VAR"}),
        answer("done"),
    ])
    r = cli.run("-p", "--settings", json.dumps({"env": {"FLAG_VAR": "from-flag", "SHARED": "flag"}}),
                "--mcp-config", config, "--dangerously-skip-permissions", "go")
    assert r.rc == 0, r.stderr
    # the flag's layer wins over the user's file, key by key, as Claude Code merges them
    assert (cli.work / "out.txt").read_text() == "from-user|from-flag|flag|unset"
    assert _results(mock)[1:] == ["from-user", "from-flag", "<unset>"]
    assert hook_out.read_text() == "from-user/from-flag"


def test_a_repository_env_waits_for_trust(cli: SettingsCli) -> None:
    cli.project_settings({"env": {"REPO_VAR": "from-repo"}})
    command = tool_use("Bash", {"command": 'printf %s "${REPO_VAR:-unset}"'})
    config = cli.config_file({"p": probe_entry()})
    probe = tool_use("mcp__p__get_env", {"name": "REPO_VAR"})
    mock = cli.mock([command, probe, answer("done")])
    r = cli.run("-p", "--mcp-config", config, "--dangerously-skip-permissions", "go")
    assert r.rc == 0, r.stderr
    assert _results(mock) == ["unset", "<unset>"]
    warnings = [line for line in r.stderr.splitlines() if "is not trusted" in line]
    assert len(warnings) == 1 and ".claude/settings.json env" in warnings[0], r.stderr

    mock = cli.mock([command, probe, answer("done")])
    r = cli.run("-p", "--trust", "--mcp-config", config, "--dangerously-skip-permissions", "go")
    assert r.rc == 0, r.stderr
    assert _results(mock) == ["from-repo", "from-repo"]
    assert "is not trusted" not in r.stderr


def test_env_may_not_move_home_or_the_state_folder(cli: SettingsCli) -> None:
    cli.user_settings({"env": {"HOME": str(cli.tmp), "MINI_CLAUDE_STATE_DIR": str(cli.work / "state"),
                               "OK_VAR": "yes"}})
    mock = cli.mock([tool_use("Bash", {"command": 'printf "%s|%s|%s" "$HOME" "$MINI_CLAUDE_STATE_DIR" "$OK_VAR"'}),
                     answer("done")])
    r = cli.run("-p", "--dangerously-skip-permissions", "go")
    assert r.rc == 0, r.stderr
    assert _results(mock) == [f"{cli.home}|{cli.state}|yes"]
    assert "env.HOME: not applied" in r.stderr and "env.MINI_CLAUDE_STATE_DIR: not applied" in r.stderr
    assert not (cli.work / "state").exists()


def test_env_sets_the_model_client_too(cli: SettingsCli) -> None:
    """ANTHROPIC_MODEL (and the endpoint, keys…) in settings env configure the model client, as in Claude Code."""
    mock = cli.mock([answer("hi")])
    cli.user_settings({"env": {"ANTHROPIC_MODEL": "haiku", "ANTHROPIC_BASE_URL": cli.env.pop("ANTHROPIC_BASE_URL")}})
    r = cli.run("-p", "hi")
    assert r.rc == 0, r.stderr
    assert [req["body"]["model"] for req in mock.requests] == ["claude-haiku-5-5"]


def test_mcp_subcommands_give_servers_the_settings_env(cli: SettingsCli) -> None:
    cli.user_settings({"env": {"SETTINGS_VAR": "from-user"}})
    config = cli.config_file({"p": probe_entry()})
    r = cli.run("mcp", "call", "p", "get_env", '{"name": "SETTINGS_VAR"}', "--mcp-config", config)
    assert r.rc == 0, r.stderr
    assert r.stdout.strip() == "from-user"
