"""URL secrets never reach a log (issue 10, hole 8): `logredact` units, and `mini-claude --debug -p` against a real
loopback HTTP MCP server (tests/mcp/servers/tiny_http_server.py) whose URL carries `?token=SECRET123`: the server
gets the token, stderr (httpx's request lines included) never shows it."""

from __future__ import annotations

import io
import json
import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mini_claude.cli.terminal.render import clean
from mini_claude.logredact import RedactingFilter, add_redaction, redact_text, redact_url
from tests.helpers import anthropic_env, run_cli, start_tiny_http

pytestmark = pytest.mark.timeout(60)

SECRET = "SECRET123"


@pytest.mark.parametrize(("url", "shown"), [
    ("https://api.example.com/mcp?token=S3&page=2", "https://api.example.com/mcp?token=***&page=***"),
    ("https://alice:pw@host:8443/p", "https://***@host:8443/p"),
    ("https://alice@host/p?x", "https://***@host/p?***"),
    ("http://h/cb#access_token=T&state=s", "http://h/cb#access_token=***&state=***"),
    ("http://h/p?a=1&&b=", "http://h/p?a=***&&b=***"),
    ("http://h/plain/path", "http://h/plain/path"),
    ("not a url", "not a url"),
])
def test_redact_url(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_redact_text_finds_urls_in_messages_and_reprs_and_masks_bearer_tokens() -> None:
    text = ("HTTP Request: POST http://127.0.0.1:9/mcp?token=SECRET123 \"HTTP/1.1 200 OK\"; "
            "URL('https://u:p@x.io/a?k=v'); Authorization: Bearer abc.def-ghi; basic dXNlcjpwdw==")
    assert redact_text(text) == ("HTTP Request: POST http://127.0.0.1:9/mcp?token=*** \"HTTP/1.1 200 OK\"; "
                                 "URL('https://***@x.io/a?k=***'); Authorization: Bearer ***; basic ***")


def test_filter_on_the_root_handler_covers_child_loggers_arguments_and_tracebacks() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    old_level = root.level
    root.setLevel(logging.DEBUG)
    add_redaction(scrub=clean)
    add_redaction(scrub=clean)  # idempotent
    assert sum(isinstance(f, RedactingFilter) for f in handler.filters) == 1
    try:
        logging.getLogger("httpx").info('HTTP Request: %s %s "%s"', "POST", "http://h/mcp?token=SECRET123", "200")
        logging.getLogger("x.y").warning("server said \x1b[2J%s", "\u202eboom")
        try:
            raise ValueError("while fetching https://user:SECRET123@h/")
        except ValueError:
            logging.getLogger("x").exception("failed")
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
    out = stream.getvalue()
    assert SECRET not in out
    assert 'httpx: HTTP Request: POST http://h/mcp?token=*** "200"' in out
    assert "x.y: server said boom" in out
    assert "ValueError: while fetching https://***@h/" in out


@pytest.fixture
def tiny_http(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    log = tmp_path / "requests.log"
    port, proc = start_tiny_http("--log", str(log))
    try:
        yield f"http://127.0.0.1:{port}/mcp?token={SECRET}", log
    finally:
        proc.kill()
        proc.wait(timeout=5)


def test_debug_run_never_prints_the_token_in_a_server_url(mock_model: Any, tmp_path: Path,
                                                          tiny_http: tuple[str, Path]) -> None:
    url, requests_log = tiny_http
    work = tmp_path / "work"
    work.mkdir()
    mock = mock_model([{"content": [{"type": "tool_use", "name": "mcp__tiny__echo", "input": {"text": "hi"}}]},
                       {"content": [{"type": "text", "text": "done"}]}])
    config = json.dumps({"mcpServers": {"tiny": {"type": "http", "url": url}}})
    proc = run_cli(["--debug", "-p", "go", "--yolo", "--strict-mcp-config", "--mcp-config", config],
                   cwd=work, env=anthropic_env(tmp_path, mock.url))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "done\n"
    assert f"/mcp?token={SECRET}" in requests_log.read_text().splitlines()  # the server did get it
    assert "HTTP Request: POST http://127.0.0.1:" in proc.stderr  # httpx did log its requests ...
    assert "/mcp?token=*** \"HTTP/1.0 200 OK\"" in proc.stderr  # ... redacted (http.server speaks 1.0)
    assert SECRET not in proc.stderr


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("terminal", [True, False], ids=["stderr-terminal", "stderr-redirected"])
def test_a_warning_while_the_spinner_is_live(monkeypatch: pytest.MonkeyPatch, terminal: bool) -> None:
    """On a terminal the log handler writes to `sys.stderr` as it is at the time, so rich's Live (which swaps in a
    proxy) prints a background task's warning above the spinner, not through its line; with stderr redirected to a
    file (`2>debug.log`) the record goes to that file, never to the screen."""
    from rich.console import Console
    from rich.live import Live

    from mini_claude.cli.terminal.render import _CurrentStderr

    stderr = _Tty() if terminal else io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    logger = logging.getLogger("test.spinner")
    handler = _CurrentStderr()
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    logger.addHandler(handler)
    screen = io.StringIO()
    try:
        with Live("⠋ Thinking…", console=Console(file=screen, force_terminal=True, width=60), transient=True):
            logger.warning("server x: connection lost")
    finally:
        logger.removeHandler(handler)
    on_screen = "WARNING server x: connection lost" in screen.getvalue()
    in_stderr = "WARNING server x: connection lost" in stderr.getvalue()
    assert (on_screen, in_stderr) == ((True, False) if terminal else (False, True))


def test_an_exception_record_is_one_line_unless_debug() -> None:
    import sys

    code = ("import logging; from mini_claude.cli.terminal.render import setup_logging; setup_logging(debug={debug})\n"
            "try:\n    raise ValueError('bad thing')\nexcept ValueError:\n"
            "    logging.getLogger('mini_claude.x').exception('server %s failed', 'a')\n")
    quiet = subprocess.run([sys.executable, "-c", code.format(debug=False)], capture_output=True, text=True,
                           timeout=30)
    assert quiet.stderr == "ERROR mini_claude.x: server a failed (ValueError: bad thing)\n"
    loud = subprocess.run([sys.executable, "-c", code.format(debug=True)], capture_output=True, text=True, timeout=30)
    assert "Traceback (most recent call last)" in loud.stderr and "ValueError: bad thing" in loud.stderr
