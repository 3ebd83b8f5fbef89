"""stream-json's first line, `system/init`, carries Claude Code's keys with this session's values (a real `-p`
subprocess, the real SDK against the mock model, real MCP servers): the tools under Claude Code's names and each
server's, the servers in Claude Code's status words and sources, the custom commands and server prompts, where
the API key came from (named, never the key), the sub-agent types, the skills. Claude Code's own init line is
compared in tests/integration/test_scripting_parity.py."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from tests.integration.conftest import PROBE, Cli, answer
from tests.peers import peer_command

pytestmark = pytest.mark.timeout(120)

# Claude Code 2.1.328's init keys that mini-claude fills (session/init_record.py lists those it leaves out, and why)
INIT_KEYS = {"type", "subtype", "cwd", "session_id", "tools", "mcp_servers", "model", "permissionMode",
             "slash_commands", "apiKeySource", "mini_claude_version", "output_style", "agents", "skills", "plugins",
             "uuid", "original_cwd", "additional_directories"}


def init_line(cli: Cli, *args: str, env: dict[str, str] | None = None, openai: bool = False) -> dict[str, Any]:
    cli.mock([answer("ok")])
    if openai:  # a keyless OpenAI-compatible server (the mock speaks both)
        env = {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "", "OPENAI_BASE_URL": cli.env["ANTHROPIC_BASE_URL"] + "/v1"}
    result = cli.run("-p", "--output-format", "stream-json", "--verbose", *args, "--", "hi", env=env)
    assert result.rc == 0, result.stderr
    line: dict[str, Any] = json.loads(result.stdout.splitlines()[0])
    assert (line["type"], line["subtype"]) == ("system", "init")
    return line


def test_init_names_the_sessions_tools_servers_commands_agents_and_skills(cli: Cli) -> None:
    (cli.work / ".claude" / "commands" / "git").mkdir(parents=True)
    (cli.work / ".claude" / "commands" / "review.md").write_text("Review $1.")
    (cli.work / ".claude" / "commands" / "git" / "summary.md").write_text("Summarise the log.")
    (cli.work / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": {"command": sys.executable,
                                                                            "args": [str(PROBE)]}}}))
    (cli.home / ".claude" / "agents").mkdir(parents=True)
    (cli.home / ".claude" / "agents" / "critic.md").write_text("---\nname: critic\ndescription: critiques\n---\nBe "
                                                               "harsh.\n")
    (cli.home / ".claude" / "skills" / "tidy").mkdir(parents=True)
    (cli.home / ".claude" / "skills" / "tidy" / "SKILL.md").write_text("---\nname: tidy\ndescription: tidies\n---\n"
                                                                       "Tidy up.\n")
    extra = cli.tmp / "extra"
    extra.mkdir()
    config = cli.config_file({"probe": {"command": sys.executable, "args": [str(PROBE)]},
                              "broken": {"command": str(cli.tmp / "no-such-server")}})
    line = init_line(cli, "--mcp-config", config, "--permission-mode", "plan", "--add-dir", str(extra),
                     "--model", "claude-sonnet-4-5")
    assert set(line) == INIT_KEYS
    assert line["cwd"] == line["original_cwd"] == str(cli.work) and len(line["session_id"]) == 36
    assert line["model"] == "claude-sonnet-4-5" and line["permissionMode"] == "plan"
    for name in ("Read", "Write", "Edit", "Glob", "Grep", "Bash", "Agent", "mcp__probe__echo"):
        assert name in line["tools"]
    assert not any(name.startswith("mcp__proj__") for name in line["tools"])  # not approved: not started
    assert sorted(line["mcp_servers"], key=lambda s: s["name"]) == [
        {"name": "broken", "status": "failed", "source": "dynamic"},
        {"name": "probe", "status": "connected", "source": "dynamic"},
        {"name": "proj", "status": "disabled", "source": "project"}]
    assert sorted(line["slash_commands"]) == ["git:summary", "review"]
    assert line["apiKeySource"] == "ANTHROPIC_API_KEY" and line["output_style"] == "default"
    assert {"general-purpose", "Explore", "critic"} <= set(line["agents"])
    assert line["skills"] == ["tidy"] and line["plugins"] == []
    assert line["additional_directories"] == [str(extra)]


def test_api_key_source_is_named_never_the_key(cli: Cli) -> None:
    assert init_line(cli)["apiKeySource"] == "ANTHROPIC_API_KEY"
    (cli.home / ".claude").mkdir(exist_ok=True)
    (cli.home / ".claude" / "settings.json").write_text(json.dumps({"apiKeyHelper": "echo helper-key-123"}))
    line = init_line(cli, env={"ANTHROPIC_API_KEY": ""})
    assert line["apiKeySource"] == "apiKeyHelper" and "helper-key-123" not in json.dumps(line)
    (cli.home / ".claude" / "settings.json").unlink()
    line = init_line(cli, env={"ANTHROPIC_API_KEY": "", "ANTHROPIC_AUTH_TOKEN": "token-456"})
    assert line["apiKeySource"] == "none" and "token-456" not in json.dumps(line)  # a token is not an API key
    assert init_line(cli, "--model", "llama3:8b", openai=True)["apiKeySource"] == "none"


def test_server_prompts_are_slash_commands(cli: Cli) -> None:
    argv = peer_command("PEER_EVERYTHING")
    config = cli.config_file({"everything": {"command": argv[0], "args": argv[1:]}})
    line = init_line(cli, "--mcp-config", config)
    assert {"mcp__everything__simple-prompt", "mcp__everything__args-prompt"} <= set(line["slash_commands"])
    assert line["mcp_servers"] == [{"name": "everything", "status": "connected", "source": "dynamic"}]
