"""Issue 20, acceptance 2 (settings half): the same scenarios against mini-claude and Claude Code's own binary give
the same observable results — the headers and model ids the mock model received, what a shell command and an MCP
server saw, what landed on disk.

Claude Code runs offline against the same mock (`ANTHROPIC_BASE_URL`, an isolated `HOME`, `IS_SANDBOX=1`, `-p
--output-format json`); its binary is found by tests/parity.py (skipped, saying why,
without it). The scripted model calls each client's own shell tool (`Bash` / `bash`). Differences, kept on purpose:

* a repository's `env` in `-p`: Claude Code applies it without asking (no trust dialog in `-p`); mini-claude only
  once the folder is trusted (`--trust`), as for every setting that widens (docs/SECURITY.md, Settings that act);
* a 401 with a plain key: Claude Code tries the same key again, mini-claude stops and names the variable
  (tests/settings/test_credentials.py);
* a model without a known price: Claude Code prices it as its default model, mini-claude at 0 (README).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from tests.integration.conftest import PROBE
from tests.parity import client_argv

pytestmark = pytest.mark.timeout(180)

CLIENTS = pytest.mark.parametrize("client", ["mini-claude", "claude-code"])
RUN_TIMEOUT_S = 120


@dataclass
class Run:
    rc: int
    requests: list[dict[str, Any]]
    work: Path
    stderr: str

    def sent(self, header: str) -> list[str | None]:
        return [r["headers"].get(header) for r in self.requests if r["path"] == "/v1/messages"]

    def models(self) -> list[str]:
        return [r["body"]["model"] for r in self.requests if r["path"] == "/v1/messages"]

    def results(self) -> list[str]:
        seen: dict[str, str] = {}
        for request in self.requests:
            for message in request["body"]["messages"]:
                for block in message["content"] if isinstance(message["content"], list) else []:
                    if block.get("type") == "tool_result":
                        content = block.get("content")
                        text = content if isinstance(content, str) else "".join(
                            b.get("text", "") for b in content or [])
                        seen.setdefault(block["tool_use_id"], text)
        return list(seen.values())


def answer(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def shell(client: str, command: str) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "name": "Bash",
                         "input": {"command": command}}]}


def run(client: str, tmp: Path, turns: list[dict[str, Any]], *args: str, settings: dict[str, Any] | None = None,
        env: dict[str, str] | None = None, prompt: str = "go") -> Run:
    home, work = tmp / "home", tmp / "work"
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    work.mkdir(exist_ok=True)
    if settings is not None:
        (home / ".claude" / "settings.json").write_text(json.dumps(settings))
    mock = MockModelServer(parse_scenario({"turns": [*turns, answer("(unused)")]}, source="parity"),
                           record_credentials=True)
    full = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "ANTHROPIC_BASE_URL": mock.start(),
            **(env if env is not None else {"ANTHROPIC_API_KEY": "x"})}
    argv = client_argv(client, full, tmp)
    try:
        proc = subprocess.run([*argv, "-p", "--output-format", "json", *args, "--", prompt], cwd=work, env=full,
                              capture_output=True, text=True, timeout=RUN_TIMEOUT_S, stdin=subprocess.DEVNULL)
    finally:
        mock.stop()
    return Run(proc.returncode, mock.requests, work, proc.stderr)


def probe_config(tmp: Path, name: str) -> str:
    path = tmp / f"{name}.json"
    path.write_text(json.dumps({"mcpServers": {name: {"command": sys.executable, "args": [str(PROBE)]}}}))
    return str(path)


@CLIENTS
def test_env_reaches_a_shell_command_and_an_mcp_server(client: str, tmp_path: Path) -> None:
    config = probe_config(tmp_path, "p")
    r = run(client, tmp_path, [shell(client, 'printf "%s|%s" "$SETTINGS_VAR" "$FLAG_VAR" > out.txt'),
                               {"content": [{"type": "tool_use", "name": "mcp__p__get_env",
                                             "input": {"name": "SETTINGS_VAR"}}]}, answer("done")],
            "--settings", json.dumps({"env": {"FLAG_VAR": "from-flag"}}), "--mcp-config", config,
            "--dangerously-skip-permissions", settings={"env": {"SETTINGS_VAR": "from-user"}})
    assert r.rc == 0, r.stderr
    assert (r.work / "out.txt").read_text() == "from-user|from-flag"
    assert r.results()[-1] == "from-user"


@CLIENTS
def test_api_key_helper_and_its_rerun_after_a_401(client: str, tmp_path: Path) -> None:
    count = tmp_path / "runs"
    helper = f'n=$(cat {count} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {count}; echo "key-$n"'
    refused = {"error": {"status": 401, "message": "invalid x-api-key", "type": "authentication_error"}}
    r = run(client, tmp_path, [refused, answer("hi")], settings={"apiKeyHelper": helper}, env={})
    assert r.rc == 0, r.stderr
    assert r.sent("x-api-key") == ["key-1", "key-2"]
    assert r.sent("authorization") == ["Bearer key-1", "Bearer key-2"]


@CLIENTS
def test_auth_token_is_a_bearer_token(client: str, tmp_path: Path) -> None:
    r = run(client, tmp_path, [answer("hi")], env={"ANTHROPIC_AUTH_TOKEN": "gateway-token"})
    assert r.rc == 0, r.stderr
    assert r.sent("authorization") == ["Bearer gateway-token"] and r.sent("x-api-key") == [None]


@CLIENTS
def test_aliases_and_settings_model(client: str, tmp_path: Path) -> None:
    ids = []
    for alias in ("opus", "sonnet", "haiku", "fable"):
        ids += run(client, tmp_path, [answer("hi")], "--model", alias).models()
    flag_file = tmp_path / "flag.json"
    flag_file.write_text(json.dumps({"model": "haiku"}))
    ids += run(client, tmp_path, [answer("hi")], "--settings", str(flag_file), settings={"model": "opus"}).models()
    if client == "claude-code":  # 2.1.197, the parity binary
        assert ids == ["claude-opus-4-8", "claude-sonnet-5", "claude-haiku-4-5-20251001", "claude-fable-5",
                       "claude-haiku-4-5-20251001"]
    else:  # 2.1.328's ids (models/catalog.py, measured on that version)
        assert ids == ["claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5", "claude-fable-5-2",
                       "claude-haiku-5-5"]


@CLIENTS
def test_space_separated_list_flags(client: str, tmp_path: Path) -> None:
    a, b = probe_config(tmp_path, "a"), probe_config(tmp_path, "b")
    call = [{"content": [{"type": "tool_use", "name": f"mcp__{s}__echo", "input": {"text": s}}]} for s in "ab"]
    r = run(client, tmp_path, [*call, shell(client, "touch denied-marker"), answer("done")],
            "--mcp-config", a, b, "--allowedTools", "mcp__a__echo", "mcp__b__echo",
            "--disallowedTools", "Bash", "Edit")
    assert r.rc == 0, r.stderr  # answered, the Bash call denied on the way: 0 for both
    results = r.results()
    assert results[0].endswith("echo:a") and results[1].endswith("echo:b")
    assert not (r.work / "denied-marker").exists()


@CLIENTS
def test_a_repository_env_in_print_mode_is_the_one_difference(client: str, tmp_path: Path) -> None:
    """Claude Code applies a repository's `env` in `-p` without asking; mini-claude waits for trust (`--trust`)."""
    (tmp_path / "work" / ".claude").mkdir(parents=True)
    (tmp_path / "work" / ".claude" / "settings.json").write_text(json.dumps({"env": {"REPO_VAR": "from-repo"}}))
    turns = [shell(client, 'printf %s "${REPO_VAR:-unset}"'), answer("done")]
    r = run(client, tmp_path, turns, "--dangerously-skip-permissions")
    assert r.rc == 0, r.stderr
    assert r.results() == (["from-repo"] if client == "claude-code" else ["unset"])
    if client == "mini-claude":
        r = run(client, tmp_path, turns, "--dangerously-skip-permissions", "--trust")
        assert r.results() == ["from-repo"]
