"""Scenario validation, the mock server's HTTP surface, and its CLI entry point."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from mini_claude.errors import ConfigError
from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import load_scenario, parse_scenario


@pytest.mark.parametrize(("data", "expected"), [
    ([], "s.json: must be a JSON object"),
    ({"turn": []}, "s.json: turn: unknown key"),
    ({}, "s.json: turns: missing or not a list"),
    ({"turns": [{}]}, 's.json: turns[0]: needs exactly one of "content" or "error"'),
    ({"turns": [{"content": [{"type": "txt", "text": "x"}]}]},
     's.json: turns[0].content[0].type: must be "text", "tool_use", "thinking", "redacted_thinking", '
     '"server_tool_use" or "web_search_tool_result"'),
    ({"turns": [{"content": [{"type": "tool_use", "name": "x", "input": []}]}]},
     "s.json: turns[0].content[0].input: must be a JSON object"),
    ({"turns": [{"content": [], "expect_tool_results_contains": "x"}]},
     "s.json: turns[0].expect_tool_results_contains: unknown key"),
    ({"turns": [{"error": {"status": 200}}]}, "s.json: turns[0].error.status: must be an HTTP error status"),
    ({"turns": [{"error": {"status": 429, "headers": {"retry-after": None}}}]},
     "s.json: turns[0].error.headers.retry-after: must be a string or a number"),
    ({"turns": [], "chars_per_token": 0}, "s.json: chars_per_token: must be a positive number"),
    ({"turns": [], "chars_per_token": "4"}, "s.json: chars_per_token: must be a positive number"),
])
def test_scenario_validation_errors(data: Any, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_scenario(data, source="s.json")
    assert str(info.value).startswith(expected)
    assert "\n" not in str(info.value)


def test_load_scenario_file_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"turns": [')
    with pytest.raises(ConfigError, match=r"bad\.json: invalid JSON at line 1"):
        load_scenario(bad)
    with pytest.raises(ConfigError, match=r"missing\.json: no such file"):
        load_scenario(tmp_path / "missing.json")


def test_bundled_demo_scenario_is_valid() -> None:
    with resources.as_file(resources.files("mini_claude") / "demo" / "scenario.json") as path:
        scenario = load_scenario(path)
    assert len(scenario.turns) >= 1
    assert scenario.turns[0].effective_stop_reason == "tool_use"


def _post(url: str, body: Any, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"content-type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_unknown_path_is_404_json_and_errors_have_anthropic_shape(tmp_path: Path) -> None:
    scenario = parse_scenario({"turns": [{"error": {"status": 429, "message": "slow", "headers": {"retry-after": 1}}}]})
    log = tmp_path / "log.jsonl"
    with MockModelServer(scenario, log_path=log) as mock:
        status, body = _post(f"{mock.url}/v2/whatever", {})
        assert status == 404 and body["type"] == "error" and "no route" in body["error"]["message"]
        status, body = _post(f"{mock.url}/v1/messages", {"model": "m", "messages": []},
                             headers={"x-api-key": "secret-value"})
        assert (status, body) == (429, {"type": "error", "error": {"type": "rate_limit_error", "message": "slow"}})
        [entry] = [json.loads(line) for line in log.read_text().splitlines()]
        assert entry["path"] == "/v1/messages"
        assert entry["body"] == {"model": "m", "messages": []}
        assert entry["headers"]["x-api-key"] == "<redacted>"
        assert "secret-value" not in log.read_text()
        assert mock.requests == [entry]


def test_stop_is_idempotent_and_port_is_released() -> None:
    mock = MockModelServer(parse_scenario({"turns": []}))
    url = mock.start()
    assert mock.start() == url
    mock.stop()
    mock.stop()
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(f"{url}/v1/messages", data=b"{}", timeout=2)


def _run_cli(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    code = "import sys; from mini_claude.models.mock_cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)


def test_cli_serves_until_sigterm(tmp_path: Path) -> None:
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps({"turns": [{"content": [{"type": "text", "text": "hi from the cli"}]}]}))
    log = tmp_path / "requests.jsonl"
    proc = _run_cli("--scenario", str(scenario), "--log", str(log))
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("mock-model listening on http://127.0.0.1:")
        url = line.rsplit(" ", 1)[1]
        status, body = _post(f"{url}/v1/messages", {"model": "m", "max_tokens": 5, "messages": []})
        assert status == 200 and body["content"] == [{"type": "text", "text": "hi from the cli"}]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=5) == 0
        assert len(log.read_text().splitlines()) == 1
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_cli_bad_scenario_exits_2_with_one_line(tmp_path: Path) -> None:
    scenario = tmp_path / "broken.json"
    scenario.write_text('{"turns": [{"content": "not a list"}]}')
    proc = _run_cli("--scenario", str(scenario))
    _out, err = proc.communicate(timeout=10)
    assert proc.returncode == 2
    assert err.strip() == f"mock-model: {scenario}: turns[0].content: must be a list of blocks"
