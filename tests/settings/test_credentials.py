"""Credentials as Claude Code users have them (issue 20): `ANTHROPIC_AUTH_TOKEN` as a bearer token, the
`apiKeyHelper` (its key sent, cached, run again after a 401, bounded when it hangs, a repository's only once
trusted), and 401/403 errors that name what to fix without printing any secret. The real CLI against the mock
model, which records the headers it was sent."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from mini_claude.models.credentials import ApiKeyHelper
from tests.helpers import wait_until
from tests.integration.conftest import answer
from tests.settings.conftest import SettingsCli, sent

pytestmark = pytest.mark.timeout(120)

REFUSED = {"error": {"status": 401, "message": "invalid x-api-key", "type": "authentication_error"}}


def _counting_helper(cli: SettingsCli) -> tuple[str, Path]:
    """A helper printing key-1, key-2, … (one more each run), and the file counting its runs."""
    count = cli.tmp / "helper-runs"
    script = cli.script("helper.sh", f'#!/bin/sh\nn=$(cat {count} 2>/dev/null || echo 0)\nn=$((n+1))\n'
                                     f'echo $n > {count}\necho "key-$n"\n')
    return str(script), count


def test_auth_token_is_sent_as_bearer_on_both_backends(cli: SettingsCli) -> None:
    del cli.env["ANTHROPIC_API_KEY"]
    for sdk in ("0", "1"):
        mock = cli.mock([answer("hi")])
        r = cli.run("-p", "hi", env={"ANTHROPIC_AUTH_TOKEN": "gateway-token", "MINI_CLAUDE_ANTHROPIC_SDK": sdk})
        assert r.rc == 0, (sdk, r.stderr)
        assert sent(mock, "authorization") == ["Bearer gateway-token"], sdk
        assert sent(mock, "x-api-key") == [None], sdk


def test_api_key_helper_output_is_the_key(cli: SettingsCli) -> None:
    del cli.env["ANTHROPIC_API_KEY"]
    helper, count = _counting_helper(cli)
    cli.user_settings({"apiKeyHelper": helper})
    for sdk in ("0", "1"):
        mock = cli.mock([answer("hi")])
        r = cli.run("-p", "hi", env={"MINI_CLAUDE_ANTHROPIC_SDK": sdk})
        assert r.rc == 0, r.stderr
        n = count.read_text().strip()
        # Claude Code sends a helper's key both ways (measured on 2.1.197)
        assert sent(mock, "x-api-key") == [f"key-{n}"] and sent(mock, "authorization") == [f"Bearer key-{n}"]
        assert f"key-{n}" not in r.stdout + r.stderr


def test_api_key_helper_runs_again_after_a_401(cli: SettingsCli) -> None:
    del cli.env["ANTHROPIC_API_KEY"]
    helper, count = _counting_helper(cli)
    cli.user_settings({"apiKeyHelper": helper})
    mock = cli.mock([REFUSED, answer("hi")])
    r = cli.run("-p", "hi")
    assert r.rc == 0, r.stderr
    assert r.stdout.strip() == "hi"
    assert sent(mock, "x-api-key") == ["key-1", "key-2"]
    assert count.read_text().strip() == "2"

    # refused again with the new key: one re-run only, then an error naming the helper and its file
    count.unlink()
    mock = cli.mock([REFUSED, REFUSED, answer("never")])
    r = cli.run("-p", "hi")
    assert r.rc == 1
    assert sent(mock, "x-api-key") == ["key-1", "key-2"]
    assert ("model API error 401: invalid x-api-key — the credentials from the apiKeyHelper in "
            "~/.claude/settings.json were refused, also after running the helper again: check or replace them"
            ) in r.stderr
    assert "key-1" not in r.stderr + r.stdout and "key-2" not in r.stderr + r.stdout


def test_a_hanging_helper_is_bounded_and_its_group_killed(cli: SettingsCli) -> None:
    del cli.env["ANTHROPIC_API_KEY"]
    pidfile = cli.tmp / "grandchild.pid"
    helper = cli.script("hang.sh", f"#!/bin/sh\nsleep 300 &\necho $! > {pidfile}\nsleep 300\n")
    cli.user_settings({"apiKeyHelper": str(helper)})
    mock = cli.mock([answer("never")])
    began = time.monotonic()
    r = cli.run("-p", "hi", env={"MINI_CLAUDE_API_KEY_HELPER_TIMEOUT_MS": "500"})
    assert time.monotonic() - began < 30
    assert r.rc == 1
    assert ("apiKeyHelper (in ~/.claude/settings.json) timed out after 0.5s (its process group was stopped)"
            in r.stderr), r.stderr
    assert mock.requests == []
    grandchild = int(pidfile.read_text())
    wait_until(lambda: not _alive(grandchild), "the helper's grandchild to be killed", within_s=10)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def test_a_failing_helper_says_which_file_and_why(cli: SettingsCli) -> None:
    del cli.env["ANTHROPIC_API_KEY"]
    helper = cli.script("fail.sh", "#!/bin/sh\necho 'vault: not logged in' >&2\nexit 3\n")
    cli.user_settings({"apiKeyHelper": str(helper)})
    cli.mock([answer("never")])
    r = cli.run("-p", "hi")
    assert r.rc == 1
    assert "apiKeyHelper (in ~/.claude/settings.json) failed: exit code 3: vault: not logged in" in r.stderr


def test_a_repository_helper_runs_only_once_trusted(cli: SettingsCli) -> None:
    marker = cli.tmp / "repo-helper-ran"
    cli.project_settings({"apiKeyHelper": f"touch {marker}; echo repo-key"})
    mock = cli.mock([answer("hi")])
    r = cli.run("-p", "hi")
    assert r.rc == 0, r.stderr
    assert not marker.exists()
    assert sent(mock, "x-api-key") == ["x"]  # the user's own ANTHROPIC_API_KEY
    assert "apiKeyHelper" in next(line for line in r.stderr.splitlines() if "is not trusted" in line)

    mock = cli.mock([answer("hi")])
    r = cli.run("-p", "--trust", "hi")
    assert r.rc == 0, r.stderr
    assert marker.exists()
    assert sent(mock, "authorization") == ["Bearer repo-key"]


@pytest.mark.parametrize(("env", "names"), [
    ({"ANTHROPIC_API_KEY": "sk-ant-very-secret"}, "ANTHROPIC_API_KEY"),
    ({"ANTHROPIC_API_KEY": "", "ANTHROPIC_AUTH_TOKEN": "tok-very-secret"}, "ANTHROPIC_AUTH_TOKEN"),
])
def test_a_401_names_the_variable_to_fix(cli: SettingsCli, env: dict[str, str], names: str) -> None:
    secret = next(v for v in env.values() if v)
    # a gateway that echoes the credential it refused: the echo is masked too
    mock = cli.mock([{"error": {"status": 401, "message": f"bad credential {secret}", "type": "authentication_error"}}])
    r = cli.run("-p", "hi", env=env)
    assert r.rc == 1
    assert (f"model API error 401: bad credential *** — the credentials from {names} were refused: check or "
            "replace them") in r.stderr
    assert secret not in r.stdout + r.stderr
    assert len(mock.requests) == 1  # a fixed key is not tried again

    cli.mock([{"error": {"status": 403, "message": "not allowed", "type": "permission_error"}}])
    r = cli.run("-p", "hi", env=env)
    assert (f"model API error 403: not allowed — the credentials from {names} are not allowed to do this: check "
            "their permissions") in r.stderr


def test_an_openai_401_names_openai_api_key(cli: SettingsCli) -> None:
    mock = cli.mock([REFUSED])
    url = cli.env.pop("ANTHROPIC_BASE_URL")
    r = cli.run("-p", "--model", "openai:gpt-4o", "hi", env={"OPENAI_BASE_URL": f"{url}/v1"})
    assert r.rc == 1
    assert "— the credentials from OPENAI_API_KEY were refused: check or replace them" in r.stderr
    assert "y-secret" not in r.stderr + r.stdout
    assert len(mock.requests) == 1


async def test_the_helper_key_is_cached_for_its_ttl(tmp_path: Path) -> None:
    """Claude Code's cache: the key is reused for CLAUDE_CODE_API_KEY_HELPER_TTL_MS (default 5 minutes), then the
    helper runs again; `invalidate` (after a 401) runs it on the next use."""
    from mini_claude.models.credentials import helper_ttl_s

    assert helper_ttl_s({}) == 300 and helper_ttl_s({"CLAUDE_CODE_API_KEY_HELPER_TTL_MS": "1500"}) == 1.5
    now = [0.0]
    count = tmp_path / "n"
    helper = ApiKeyHelper(f'n=$(cat {count} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {count}; echo k$n',
                          source="test", cwd=tmp_path, env=dict(os.environ), ttl_s=300, timeout_s=10,
                          clock=lambda: now[0])
    assert await helper.key() == "k1"
    now[0] = 299.0
    assert await helper.key() == "k1"
    now[0] = 300.0
    assert await helper.key() == "k2"
    helper.invalidate()
    assert await helper.key() == "k3"
    assert helper.runs == 3
