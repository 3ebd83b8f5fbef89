"""`-p` while the model API fails: each retry is one line on stderr (stdout keeps only the answer), and
`--output-format stream-json` writes Claude Code's `{"type": "system", "subtype": "api_retry", ...}` record before
each wait (its shape measured on Claude Code 2.1.328 against a closed port and the mock model's 529 / 429 / 503)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import anthropic_env, run_cli

pytestmark = pytest.mark.timeout(120)

CLOSED = "http://127.0.0.1:9"
RETRY_KEYS = ["type", "subtype", "attempt", "max_retries", "retry_delay_ms", "error_status", "error", "session_id",
              "uuid"]  # Claude Code's, in its order


def test_each_retry_is_a_line_on_stderr_and_the_final_error_says_what_to_change(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    done = run_cli(["-p", "hi"], cwd=work, env=anthropic_env(tmp_path, CLOSED))
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    retries = [line for line in lines if line.startswith("API error: ")]
    assert len(retries) == 10, done.stderr
    for number, line in enumerate(retries, start=1):
        assert re.fullmatch(rf"API error: connection refused \(127\.0\.0\.1:9\) · retrying in [0-9.]+s · "
                            rf"attempt {number}/10", line), line
    assert lines[-1] == ("mini-claude: cannot reach the model API at http://127.0.0.1:9: connection refused (gave "
                         "up after 11 attempts); nothing is listening at 127.0.0.1:9: start the server, or fix "
                         "ANTHROPIC_BASE_URL")


def _records(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_stream_json_writes_an_api_retry_record_before_each_wait(tmp_path: Path, mock_model: Any) -> None:
    mock = mock_model([
        {"error": {"status": 529, "message": "Overloaded"}},
        {"error": {"status": 429, "message": "slow down", "headers": {"retry-after-ms": "20"}}},
        {"error": {"status": 503, "message": "upstream down"}},
        {"content": [{"type": "text", "text": "answered after three retries"}]},
    ])
    work = tmp_path / "work"
    work.mkdir()
    done = run_cli(["-p", "hi", "--output-format", "stream-json", "--verbose"], cwd=work,
                   env=anthropic_env(tmp_path, mock.url))
    assert done.returncode == 0, done.stderr
    records = _records(done.stdout)
    retries = [r for r in records if r.get("subtype") == "api_retry"]
    assert [list(r) for r in retries] == [RETRY_KEYS] * 3
    assert [(r["attempt"], r["max_retries"], r["error_status"], r["error"]) for r in retries] == [
        (1, 10, 529, "overloaded"), (2, 10, 429, "rate_limit"), (3, 10, 503, "server_error")]
    assert all(isinstance(r["retry_delay_ms"], int) and r["retry_delay_ms"] >= 0 for r in retries)
    assert retries[1]["retry_delay_ms"] >= 20  # the server's retry-after
    session = records[0]["session_id"]
    assert {r["session_id"] for r in retries} == {session}
    kinds = [r["type"] if r["type"] != "system" else r["subtype"] for r in records]
    assert kinds == ["init", "api_retry", "api_retry", "api_retry", "assistant", "result"]
    assert records[-1]["result"] == "answered after three retries" and records[-1]["is_error"] is False
    assert len([line for line in done.stderr.splitlines() if line.startswith("API error: ")]) == 3


def test_stream_json_retries_without_an_answer_have_a_null_status(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    done = run_cli(["-p", "hi", "--output-format", "stream-json", "--verbose"], cwd=work,
                   env=anthropic_env(tmp_path, CLOSED))
    assert done.returncode == 1
    records = _records(done.stdout)
    retries = [r for r in records if r.get("subtype") == "api_retry"]
    assert [r["attempt"] for r in retries] == list(range(1, 11))
    assert {(r["error_status"], r["error"], r["max_retries"]) for r in retries} == {(None, "unknown", 10)}
    assert records[-1]["type"] == "result" and records[-1]["is_error"] is True
    assert "nothing is listening at 127.0.0.1:9" in records[-1]["result"]
