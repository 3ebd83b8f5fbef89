"""A stdio server's environment (no agent credentials), and the `mcp` subcommands' files, masking and exit codes."""

from __future__ import annotations

import json
import sys

import pytest

from tests.integration.conftest import Cli, answer, probe_entry, result_text, tool_results, tool_use

pytestmark = pytest.mark.timeout(90)

DEMO = {"command": sys.executable, "args": ["-m", "mini_claude.mcp.demo_server"]}


def test_server_env_has_no_agent_credentials(cli: Cli) -> None:
    (cli.work / ".env").write_text("ANTHROPIC_AUTH_TOKEN=from-dotenv\n")
    config = cli.config_file({"p": probe_entry(env={"PROBE_OWN": "own-value"})})
    r = cli.run("mcp", "call", "p", "env_keys", "--mcp-config", config)
    assert r.rc == 0, r.stderr
    keys = set(json.loads(r.stdout))
    assert "PATH" in keys and "PROBE_OWN" in keys and "HOME" in keys
    for secret in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        assert secret not in keys
    r = cli.run("mcp", "call", "p", "get_env", '{"name": "PROBE_OWN"}', "--mcp-config", config)
    assert r.stdout.strip() == "own-value"

    # the same through the agent in -p mode
    mock = cli.mock([tool_use("mcp__p__env_keys"), answer("{{last_tool_result}}")])
    r = cli.run("-p", "env?", "--mcp-config", config, "--yolo")
    assert r.rc == 0, r.stderr
    keys = set(json.loads(result_text(tool_results(mock)[0])))
    assert {"PATH", "PROBE_OWN"} <= keys
    assert not keys & {"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_AUTH_TOKEN"}


def test_mcp_add_writes_claude_code_files(cli: Cli) -> None:
    r = cli.run("mcp", "add", "-s", "local", "-e", "TOKEN=s3cret", "loc", "--", "node", "srv.js", "--flag")
    assert r.rc == 0, r.stderr
    r = cli.run("mcp", "add", "-s", "project", "proj", "--", "uvx", "thing")
    assert r.rc == 0, r.stderr
    r = cli.run("mcp", "add", "-s", "user", "-t", "http", "-H", "Authorization: Bearer abc123", "web",
                "https://example.invalid/mcp")
    assert r.rc == 0, r.stderr

    claude_json = json.loads((cli.home / ".claude.json").read_text())
    local = claude_json["projects"][str(cli.work)]["mcpServers"]["loc"]
    assert local == {"type": "stdio", "command": "node", "args": ["srv.js", "--flag"], "env": {"TOKEN": "s3cret"}}
    assert claude_json["mcpServers"]["web"] == {"type": "http", "url": "https://example.invalid/mcp",
                                                "headers": {"Authorization": "Bearer abc123"}}
    assert json.loads((cli.work / ".mcp.json").read_text()) == {
        "mcpServers": {"proj": {"type": "stdio", "command": "uvx", "args": ["thing"]}}}

    for name, secret in (("loc", "s3cret"), ("web", "abc123")):
        for extra in ((), ("--json",)):
            got = cli.run("mcp", "get", name, *extra, env={"MCP_TIMEOUT": "1500"})
            assert got.rc == 0, got.stderr
            assert secret not in got.stdout and secret not in got.stderr
            assert "***" in got.stdout
    info = cli.run("mcp", "get", "loc", "--json", env={"MCP_TIMEOUT": "1500"}).json()
    assert info["config"]["env"] == {"TOKEN": "***"}
    assert info["source"] == "~/.claude.json"

    r = cli.run("mcp", "remove", "loc")
    assert r.rc == 0, r.stderr
    assert "loc" not in json.loads((cli.home / ".claude.json").read_text())["projects"][str(cli.work)].get(
        "mcpServers", {})


def test_mcp_tools_and_call_exit_codes(cli: Cli) -> None:
    config = cli.config_file({"demo": DEMO, "p": probe_entry(),
                              "gone": {"command": str(cli.tmp / "nope"), "args": []}})
    r = cli.run("mcp", "tools", "demo", "--mcp-config", config)
    assert r.rc == 0, r.stderr
    assert "mcp__demo__add" in r.stdout
    rows = cli.run("mcp", "tools", "demo", "--json", "--mcp-config", config).json()
    assert {"add", "multiply", "echo"} <= {row["name"] for row in rows}

    r = cli.run("mcp", "call", "demo", "add", '{"a":17,"b":25}', "--mcp-config", config)
    assert (r.rc, r.stdout.strip()) == (0, "42"), r.stderr
    r = cli.run("mcp", "call", "p", "fail", "--mcp-config", config)
    assert r.rc == 1 and "probe failure" in r.stdout
    r = cli.run("mcp", "call", "gone", "x", "{}", "--mcp-config", config)
    assert r.rc == 2 and "nope" in r.stderr
    r = cli.run("mcp", "call", "demo", "add", "{not json", "--mcp-config", config)
    assert r.rc == 3 and "JSON" in r.stderr
    r = cli.run("mcp", "call", "demo", "add", "[1]", "--mcp-config", config)
    assert r.rc == 3
    r = cli.run("mcp", "call", "nosuch", "add", "{}", "--mcp-config", config)
    assert r.rc == 3 and "nosuch" in r.stderr
    r = cli.run("mcp", "call", "demo", "nosuchtool", "{}", "--mcp-config", config)
    assert r.rc == 3
    r = cli.run("mcp", "frobnicate")
    assert r.rc == 3


@pytest.mark.parametrize("scope", ["local", "project", "user"])
def test_added_server_is_usable(cli: Cli, scope: str) -> None:
    r = cli.run("mcp", "add", "-s", scope, "demo", "--", DEMO["command"], *DEMO["args"])
    assert r.rc == 0, r.stderr
    extra = ("--trust-project-mcp",) if scope == "project" else ()
    r = cli.run("mcp", "call", "demo", "add", '{"a":1,"b":2}', *extra)
    assert (r.rc, r.stdout.strip()) == (0, "3"), r.stderr
    rows = cli.run("mcp", "list", "--json", *extra).json()
    assert rows == [{"name": "demo", "status": "ready", "tools": rows[0]["tools"], "tool_tokens": rows[0]["tool_tokens"],
                     "deferred": False, "error": None,
                     "source": {"local": "~/.claude.json", "project": ".mcp.json", "user": "~/.claude.json"}[scope],
                     "type": "stdio", "startup_s": rows[0]["startup_s"]}]
    assert isinstance(rows[0]["startup_s"], float) and 0 < rows[0]["startup_s"] < 30
    assert rows[0]["tools"] == 5 and 200 < rows[0]["tool_tokens"] < 500  # the demo server's five small tools


def test_mcp_add_flags_after_name_as_claude_code_accepts(cli: Cli) -> None:
    # regression: flags after NAME were swallowed into the command ("command": "-e")
    r = cli.run("mcp", "add", "my-server", "-e", "API_KEY=123", "-s", "user", "--", "/path/to/server", "arg1",
                "-e", "x")
    assert r.rc == 0, r.stderr
    r = cli.run("mcp", "add", "-t", "http", "web", "https://example.invalid/mcp", "-H", "X-Key: k1", "-s", "user")
    assert r.rc == 0, r.stderr
    servers = json.loads((cli.home / ".claude.json").read_text())["mcpServers"]
    assert servers["my-server"] == {"type": "stdio", "command": "/path/to/server", "args": ["arg1", "-e", "x"],
                                    "env": {"API_KEY": "123"}}
    assert servers["web"] == {"type": "http", "url": "https://example.invalid/mcp", "headers": {"X-Key": "k1"}}
    r = cli.run("mcp", "add", "bad", "npx", "-y", "pkg")
    assert r.rc == 3 and "--" in r.stderr
    assert "bad" not in json.loads((cli.home / ".claude.json").read_text()).get("projects", {}).get(
        str(cli.work), {}).get("mcpServers", {})


def test_max_mcp_output_tokens_from_env_never_from_dotenv(cli: Cli) -> None:
    config = cli.config_file({"p": probe_entry()})
    big = "word " * 4_000  # ~5k tokens: under the default limit, over 500
    scenario = [tool_use("mcp__p__echo", {"text": big}), answer("done")]
    mock = cli.mock(scenario)
    assert cli.run("-p", "x", "--mcp-config", config, "--yolo").rc == 0
    full = len(result_text(tool_results(mock)[0]))
    mock = cli.mock(scenario)
    r = cli.run("-p", "x", "--mcp-config", config, "--yolo", env={"MAX_MCP_OUTPUT_TOKENS": "500"})
    assert r.rc == 0, r.stderr
    limited = len(result_text(tool_results(mock)[0]))
    assert limited < full / 4, (limited, full)
    # a project's .env gives the model client credentials only (issue 10): it sets no session setting
    (cli.work / ".env").write_text("MAX_MCP_OUTPUT_TOKENS=500\n")
    mock = cli.mock(scenario)
    r = cli.run("-p", "x", "--mcp-config", config, "--yolo", "--trust")
    assert r.rc == 0, r.stderr
    assert len(result_text(tool_results(mock)[0])) == full
