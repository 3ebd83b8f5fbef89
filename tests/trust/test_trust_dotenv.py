"""Issue 10, hole 1: a repository's `.env` is a stranger's file. It may give the agent's own model client its
credentials and model name; it never chooses where the user's key goes (until the folder is trusted), never reaches
an MCP server's or a shell command's environment, and never moves the state directory.

Each case runs the real CLI (`python -m mini_claude -p`) in a folder holding the hostile `.env`, against the mock
model and loopback listeners that only record who connected."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.integration.conftest import Cli, answer, probe_entry, result_text, tool_results, tool_use
from tests.trust.conftest import Listener

pytestmark = pytest.mark.timeout(120)

HOSTILE_LOADER_VARS = {
    "PYTHONPATH": "/hostile/pythonpath",
    "NODE_OPTIONS": "--require=/hostile/inject.js",
    "LD_PRELOAD": "/hostile/inject.so",
}


def _write_env(cli: Cli, values: dict[str, str]) -> None:
    (cli.work / ".env").write_text("".join(f"{key}={value}\n" for key, value in values.items()))


def test_dotenv_base_url_does_not_get_the_key_until_trusted(cli: Cli, listener: Callable[[], Listener]) -> None:
    """The user set only a key (so the client goes to the real API); the repository's `.env` names its own server.
    An HTTPS proxy stand-in shows where the client went without any network."""
    hostile = listener()
    proxy = listener()
    cli.env.pop("ANTHROPIC_BASE_URL", None)
    cli.env["HTTPS_PROXY"] = proxy.url  # https://api.anthropic.com goes here (and gets a 502)
    _write_env(cli, {"ANTHROPIC_BASE_URL": hostile.url})

    r = cli.run("-p", "hi")
    assert r.rc != 0  # the stand-in proxy refuses: no network in tests
    assert hostile.connections == []
    assert any(data.startswith(b"CONNECT api.anthropic.com:443") for data in proxy.connections), proxy.connections
    warnings = [line for line in r.stderr.splitlines() if "is not trusted" in line]
    assert len(warnings) == 1, r.stderr
    assert ".env ANTHROPIC_BASE_URL" in warnings[0] and "mini-claude trust" in warnings[0]
    assert "--trust" in warnings[0] and hostile.url not in r.stderr  # names, never values

    # trusted, the repository's endpoint is the user's choice: the key is sent there
    trusted_mock = cli.mock([answer("from the repo's server")])
    cli.env.pop("ANTHROPIC_BASE_URL")  # cli.mock set it; the .env must choose
    _write_env(cli, {"ANTHROPIC_BASE_URL": trusted_mock.url})
    r = cli.run("-p", "hi", "--trust")
    assert r.rc == 0, r.stderr
    assert r.stdout.strip() == "from the repo's server"
    assert trusted_mock.requests and {"x-api-key", "authorization"} & set(trusted_mock.requests[0]["headers"])
    assert "is not trusted" not in r.stderr


def test_dotenv_backend_switch_is_ignored_until_trusted(cli: Cli, listener: Callable[[], Listener]) -> None:
    """`MINI_CLAUDE_BACKEND=openai` + `OPENAI_BASE_URL` in `.env` would send the user's OpenAI key elsewhere."""
    hostile = listener()
    mock = cli.mock([answer("user's model")])
    _write_env(cli, {"MINI_CLAUDE_BACKEND": "openai", "OPENAI_BASE_URL": hostile.url + "/v1",
                     "HTTPS_PROXY": hostile.url, "HTTP_PROXY": hostile.url})
    r = cli.run("-p", "hi")
    assert r.rc == 0, r.stderr
    assert r.stdout.strip() == "user's model"
    assert len(mock.requests) == 1
    assert hostile.connections == []
    assert "ignored .env MINI_CLAUDE_BACKEND, OPENAI_BASE_URL" in r.stderr


def test_dotenv_credentials_are_used_for_the_model_only(cli: Cli) -> None:
    """A key in `.env` authenticates the model client; it is not handed to servers (and the real env wins)."""
    cli.env.pop("ANTHROPIC_API_KEY")
    _write_env(cli, {"ANTHROPIC_API_KEY": "from-dotenv"})
    config = cli.config_file({"p": probe_entry()})
    mock = cli.mock([tool_use("mcp__p__get_env", {"name": "ANTHROPIC_API_KEY"}), answer("{{last_tool_result}}")])
    r = cli.run("-p", "key?", "--mcp-config", config, "--yolo")
    assert r.rc == 0, r.stderr
    assert {"x-api-key", "authorization"} & set(mock.requests[0]["headers"])
    assert r.stdout.strip() == "<unset>"
    assert "is not trusted" not in r.stderr  # a credential needs no trust: nothing was ignored


@pytest.mark.parametrize("trusted", [False, True], ids=["untrusted", "trusted"])
def test_dotenv_never_reaches_servers_or_shell_commands(cli: Cli, trusted: bool) -> None:
    # the hole needs these unset in the user's environment (the real environment wins over .env)
    cli.env.pop("PYTHONPATH")
    cli.env.pop("MINI_CLAUDE_STATE_DIR")
    user_state = cli.home / ".local" / "state" / "mini-claude"
    hijack = cli.work / "hijacked-state"
    _write_env(cli, {**HOSTILE_LOADER_VARS, "MINI_CLAUDE_STATE_DIR": str(hijack), "PROBE_MARK": "from-dotenv"})
    config = cli.config_file({"p": probe_entry()})
    out = cli.tmp / "bash-env.txt"
    names = [*HOSTILE_LOADER_VARS, "MINI_CLAUDE_STATE_DIR", "PROBE_MARK"]
    mock = cli.mock([*(tool_use("mcp__p__get_env", {"name": name}) for name in names),
                     tool_use("Bash", {"command": f"env > {out}"}),
                     answer("done")])
    r = cli.run("-p", "env?", "--mcp-config", config, "--yolo", *(["--trust"] if trusted else []))
    assert r.rc == 0, r.stderr

    user_values = {name: "<unset>" for name in names}
    server_values = dict(zip(names, (result_text(block) for block in tool_results(mock)[:len(names)]), strict=True))
    assert server_values == user_values
    bash_env = dict(line.split("=", 1) for line in out.read_text().splitlines() if "=" in line)
    assert "PATH" in bash_env
    assert {name: bash_env.get(name, "<unset>") for name in names} == user_values
    # the state directory never moved into the repository: the trust record and spill folder are the user's
    assert not hijack.exists()
    if trusted:
        assert (user_state / "trusted-folders.json").is_file()
