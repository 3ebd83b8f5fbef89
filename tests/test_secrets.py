"""mini_claude.secrets: which variable names look secret, the environment a command gets, and masking the known
secret values — with the places that register them (an apiKeyHelper's key, a headersHelper's and a config's
`Authorization` headers) run for real. End-to-end: tests/regressions/test_secrets_stay_out_of_commands.py."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mini_claude.mcp.config import ServerConfig
from mini_claude.mcp.connect import build_transport
from mini_claude.mcp.transports.headers_helper import HeadersHelper
from mini_claude.models.credentials import AnthropicCredentials, ApiKeyHelper
from mini_claude.secrets import (
    SECRETS,
    EnvPolicy,
    command_env,
    looks_secret,
    mask,
    mask_blocks,
    without_credentials,
)
from mini_claude.tools.base import ToolContext
from mini_claude.tools.shell import BashTool


@pytest.fixture(autouse=True)
def fresh_registry() -> Iterator[None]:
    SECRETS.clear()
    yield
    SECRETS.clear()


SECRET_NAMES = ["ANTHROPIC_API_KEY", "GITHUB_TOKEN", "GH_TOKEN", "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID",
                "AWS_SESSION_TOKEN", "NPM_TOKEN", "GITHUB_PAT", "PGPASSWORD", "MYSQL_PWD", "DB_PASS", "SMTP_PASSWD",
                "NPM_CONFIG__AUTH", "DOCKER_AUTH_CONFIG", "OPENAI_APIKEY", "HF_TOKEN", "API_KEYS", "CLIENT_SECRET",
                "GPG_PASSPHRASE", "AZURE_CREDENTIALS", "SESSION_COOKIE", "stripe_secret_key", "x-api-key"]
EVERYDAY_NAMES = ["PATH", "HOME", "PWD", "OLDPWD", "SSH_AUTH_SOCK", "GPG_AGENT_INFO", "GPG_TTY", "KEYTIMEOUT",
                  "XKB_KEYMAP", "TOKENIZERS_PARALLELISM", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "XAUTHORITY",
                  "GIT_ASKPASS", "SSH_ASKPASS", "PASSWORD_STORE_DIR", "GOOGLE_APPLICATION_CREDENTIALS",
                  "AWS_SHARED_CREDENTIALS_FILE", "SSH_KEY_PATH", "GNOME_KEYRING_CONTROL", "ANTHROPIC_BASE_URL",
                  "LANG", "TERM", "EDITOR", "Authorization"]


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_names_that_look_secret(name: str) -> None:
    assert looks_secret(name)


@pytest.mark.parametrize("name", EVERYDAY_NAMES)
def test_names_everyday_tools_need_are_not_secret(name: str) -> None:
    assert not looks_secret(name)


def test_command_env_leaves_out_credentials_and_secret_looking_names_unless_passed() -> None:
    base = {"PATH": "/bin", "ANTHROPIC_API_KEY": "sk-model-0123456789", "GITHUB_TOKEN": "ghp-0123456789",
            "NPM_TOKEN": "npm-0123456789", "SET_BY_SETTINGS_TOKEN": "settings-0123456789", "SSH_AUTH_SOCK": "/s"}
    built = command_env(base, EnvPolicy(pass_through=("GITHUB_*", "ANTHROPIC_*"),
                                        chosen=frozenset({"SET_BY_SETTINGS_TOKEN", "ANTHROPIC_API_KEY"})))
    assert built.env == {"PATH": "/bin", "GITHUB_TOKEN": "ghp-0123456789",
                         "SET_BY_SETTINGS_TOKEN": "settings-0123456789", "SSH_AUTH_SOCK": "/s"}
    assert built.left_out == ("ANTHROPIC_API_KEY", "NPM_TOKEN")
    # every secret value is masked, passed through or not
    assert mask("ghp-0123456789 npm-0123456789 sk-model-0123456789") == (
        "[secret GITHUB_TOKEN] [secret NPM_TOKEN] [secret ANTHROPIC_API_KEY]")
    assert without_credentials(base, [("X", "1")]) == {**{k: v for k, v in base.items()
                                                         if k != "ANTHROPIC_API_KEY"}, "X": "1"}


def test_mask_longest_value_first_short_values_ignored_labels_safe() -> None:
    SECRETS.add("SHORT", "1234567")  # under 8 characters: would hit ordinary text
    SECRETS.add("INNER", "abcdefgh")
    SECRETS.add('mcp:"evil"\x1b[31m', "abcdefgh-and-more")
    assert mask("1234567 abcdefgh abcdefgh-and-more") == (
        "1234567 [secret INNER] [secret mcp:_evil___31m]")
    assert mask("") == "" and mask("nothing here") == "nothing here"


def test_mask_blocks_masks_nested_text_and_leaves_image_data() -> None:
    SECRETS.add("TOKEN", "tok-0123456789")
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "tok-0123456789"}}
    text = {"type": "text", "text": "x tok-0123456789"}
    resource = {"type": "resource", "resource": {"uri": "file:///a", "text": "tok-0123456789"}}
    out = mask_blocks([image, text, resource])
    assert out == [image, {"type": "text", "text": "x [secret TOKEN]"},
                   {"type": "resource", "resource": {"uri": "file:///a", "text": "[secret TOKEN]"}}]
    assert out[0] is image
    clean_blocks = [{"type": "text", "text": "nothing"}]
    assert mask_blocks(clean_blocks) is clean_blocks


def test_mask_is_fast_enough_to_run_over_every_result() -> None:
    import time

    for index in range(30):
        SECRETS.add(f"V{index}", f"value-{index:03d}-0123456789")
    text = "an ordinary line of tool output, nothing secret in it\n" * 600  # ~32 KB
    began = time.process_time()  # this process's CPU: another process's load does not stretch it
    for _ in range(50):
        mask(text)
    assert (time.process_time() - began) / 50 < 0.02  # measured ~0.1 ms; a regex gone quadratic is far slower


async def test_bash_tool_without_session_settings_passes_nothing_secret(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "service-0123456789")
    monkeypatch.setenv("FAVOURITE", "teal")
    tool = BashTool()
    ctx = ToolContext(cwd=tmp_path, spill_dir=tmp_path / "spill")
    result = await tool.run({"command": 'echo "${SOME_SERVICE_TOKEN:-unset} $FAVOURITE"'}, ctx)
    assert result.as_text() == "unset teal"
    assert "SOME_SERVICE_TOKEN" in tool.left_out


async def test_an_api_key_helpers_key_is_masked(tmp_path: Path) -> None:
    helper = ApiKeyHelper("echo sk-from-the-helper-0123456789", source="~/.claude/settings.json", cwd=tmp_path,
                          env=dict(os.environ), ttl_s=60, timeout_s=10)
    assert await helper.key() == "sk-from-the-helper-0123456789"
    assert mask("key: sk-from-the-helper-0123456789") == "key: [secret apiKeyHelper]"
    AnthropicCredentials(api_key="sk-ant-from-dotenv-0123456789")
    assert mask("sk-ant-from-dotenv-0123456789") == "[secret ANTHROPIC_API_KEY]"


async def test_a_headers_helpers_authorization_is_masked(tmp_path: Path) -> None:
    script = tmp_path / "headers.py"
    script.write_text('import json; print(json.dumps({"Authorization": "Bearer hh-0123456789abc", '
                      '"X-Api-Key": "xk-0123456789abc", "X-Trace": "trace-0123456789"}))')
    helper = HeadersHelper(f"{sys.executable} {script}", server="web", url="http://127.0.0.1:9/mcp",
                           env=dict(os.environ))
    headers = await helper.run()
    assert headers["X-Trace"] == "trace-0123456789"
    assert mask("Bearer hh-0123456789abc / hh-0123456789abc / xk-0123456789abc / trace-0123456789") == (
        "[secret mcp:web Authorization] / [secret mcp:web Authorization] / [secret mcp:web X-Api-Key] / "
        "trace-0123456789")


def test_a_configs_authorization_header_is_masked() -> None:
    cfg = ServerConfig(name="docs", type="http", url="http://127.0.0.1:9/mcp",
                       headers={"Authorization": "Bearer cfg-0123456789abc"})
    build_transport(cfg, {})
    assert mask("token cfg-0123456789abc") == "token [secret mcp:docs Authorization]"


def test_the_agent_process_is_not_dumpable_unless_asked() -> None:
    """Review of issue 27: a command of the same user read the model key out of /proc/<agent pid>/mem; the CLI
    makes its process non-dumpable at start (MINI_CLAUDE_DUMPABLE=1 keeps it attachable for a profiler)."""
    import subprocess
    import sys

    probe = ("import ctypes; from mini_claude.secrets import protect_own_memory; protect_own_memory(); "
             "print(ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))")  # PR_GET_DUMPABLE
    env = {k: v for k, v in os.environ.items() if k != "MINI_CLAUDE_DUMPABLE"}
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == "0", out
    out = subprocess.run([sys.executable, "-c", probe], env={**env, "MINI_CLAUDE_DUMPABLE": "1"},
                         capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == "1", out


def test_spilled_output_is_masked_on_disk(tmp_path: Path) -> None:
    """Review of issue 27: an MCP tool's oversized text and binary blobs were spilled to the state folder before
    anything masked them, and a command could read the file back; spills are masked as they are written."""
    from mini_claude.secrets import SECRETS
    from mini_claude.spill import spill_bytes, spill_text

    SECRETS.add("REVIEW_SPILL_TOKEN", "spill-canary-0123456789")
    text = spill_text("head spill-canary-0123456789 tail", tmp_path, "out").read_text()
    blob = spill_bytes(b"\x00\xffspill-canary-0123456789\x01", tmp_path, "blob").read_bytes()
    assert text == "head [secret REVIEW_SPILL_TOKEN] tail"
    assert blob == b"\x00\xff[secret REVIEW_SPILL_TOKEN]\x01"
