"""One door to the terminal for the model's text too (issue 18, finding 7): a final answer holding OSC 52 (a
clipboard write), `ESC[2J`, a right-to-left override and a C1 CSI was written byte for byte by `-p`; the REPL's
Markdown passed ESC through; the tool call lines (then `→ tool({json})`, now `● Tool(argument)`) showed bidi overrides and C1 controls from the arguments. Now
every such character is shown as an escape (`render.clean(…, visible=True)`), newlines and tabs kept, and the JSON
formats escape them as `\\uXXXX` while keeping the exact text — all through the real CLI against the mock model."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from mini_claude.cli.terminal.render import TerminalUI, clean, json_text
from mini_claude.cli.terminal.tool_lines import call_line
from mini_claude.models.base import AssistantTurn
from tests.helpers import anthropic_env, run_cli

pytestmark = pytest.mark.timeout(60)

# what a terminal would obey: ESC (CSI, OSC 52 clipboard write, DCS), BEL, a C1 CSI, a C1 NEL, DEL, the RLO / LRI
# bidi controls, a Unicode tag character, a bare CR
HOSTILE_ANSWER = ("Done.\x1b]52;c;cm0gLXJmIH4=\x07 \x1b[2J\x1bP+q\x1b\\ see \u202egnp.exe\u202c and \x9b31m"
                  "\x7f\u2066x\u2069\U000e0041\rfin\n\tindented line\n")
SHOWN_ANSWER = ("Done.\\x1b]52;c;cm0gLXJmIH4=\\x07 \\x1b[2J\\x1bP+q\\x1b\\ see \\u202egnp.exe\\u202c and \\x9b31m"
                "\\x7f\\u2066x\\u2069\\U000e0041\\x0dfin\n\tindented line\n")
# no character of these may reach a terminal raw
RAW = ("\x1b", "\x07", "\x9b", "\x85", "\x7f", "\u202e", "\u202c", "\u2066", "\u2069", "\U000e0041", "\r")
HOSTILE_ARG = "src/\u202etxt.exe\x9b2J\x1b]8;;http://evil.example/\x07"


def assert_raw_free(*outputs: str) -> None:
    for output in outputs:
        for ch in RAW:
            assert ch not in output, f"{ch!r} in {output!r}"


# ---- the functions ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("raw", "shown"), [
    ("a\x1b[2Jb", "a\\x1b[2Jb"),
    ("osc52\x1b]52;c;aGk=\x07", "osc52\\x1b]52;c;aGk=\\x07"),
    ("c1\x9b2J\x90dcs\x9c", "c1\\x9b2J\\x90dcs\\x9c"),
    ("abc\u202egnp.exe\u202c", "abc\\u202egnp.exe\\u202c"),
    ("\u2066iso\u2069\u200b\ufeff\U000e0041", "\\u2066iso\\u2069\\u200b\\ufeff\\U000e0041"),
    ("crlf\r\nbare\rcr", "crlf\nbare\\x0dcr"),
    ("lines\nand\ttabs, é 漢字 👨\u200d👩", "lines\nand\ttabs, é 漢字 👨\u200d👩"),
])
def test_clean_visible_shows_what_it_would_remove(raw: str, shown: str) -> None:
    assert clean(raw, visible=True) == shown


def test_clean_visible_is_safe_piece_by_piece() -> None:
    """Streamed text arrives in pieces: an escape sequence split between two pieces is still shown, not obeyed."""
    pieces = ["a\x1b", "[2", "J\x9b", "\u202e"]
    assert "".join(clean(p, visible=True) for p in pieces) == "a\\x1b[2J\\x9b\\u202e"


def test_json_text_escapes_controls_and_bidi_and_round_trips() -> None:
    value = {"text": HOSTILE_ANSWER, "ok": "é 漢字"}
    text = json_text(value)
    assert_raw_free(text)
    assert "\\u202e" in text and "\\u009b" in text and "\\u007f" in text and "\\udb40\\udc41" in text
    assert "é 漢字" in text  # printable letters of every script stay readable
    assert json.loads(text) == value
    assert json.loads(json_text(value, indent=2)) == value


def test_tool_line_shows_bidi_and_c1_from_arguments_as_escapes() -> None:
    assert call_line("Read", {"file_path": HOSTILE_ARG}) == "Read(src/\\u202etxt.exe\\x9b2J\\x1b]8;;http://evil.example/\\x07)"
    # a tool name the model made up: the name shown with its escapes, the argument as `key: "value"` JSON
    assert call_line("Read\u202e", {"file_path": HOSTILE_ARG}) == (
        'Read\\u202e(file_path: "src/\\u202etxt.exe\\u009b2J\\u001b]8;;http://evil.example/\\u0007")')


def test_repl_markdown_and_plain_stream_show_escapes_instead_of_obeying_them() -> None:
    """The REPL renders the model's text as rich Markdown (a code block too): cleaned before rich sees it."""
    answer = f"# Title\n\n{HOSTILE_ANSWER}\n```sh\necho \x1b[31mred\x9b0m\u202e\n```\n"
    for rich in (True, False):
        out = io.StringIO()
        ui = TerminalUI(out=out, err=io.StringIO(), rich_output=rich)
        for piece in (answer[:9], answer[9:40], answer[40:]):  # streamed in pieces, split inside a sequence
            ui.text_delta(piece)
        ui.assistant_done(AssistantTurn([{"type": "text", "text": answer}]))
        ui.tool_started("bash", {"command": f"echo {HOSTILE_ARG}"})
        shown = out.getvalue()
        assert_raw_free(shown)
        assert "\\x1b]52;c;cm0gLXJmIH4=" in shown and "\\u202egnp.exe" in shown and "\\x9b0m" in shown, shown
        assert "\\u202etxt.exe\\u009b2J" in shown


# ---- the real CLI against the mock model -------------------------------------------------------------------------

def _run(mock_model: Any, tmp_path: Path, *flags: str) -> Any:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    mock = mock_model([{"content": [{"type": "tool_use", "name": "Glob", "input": {"pattern": HOSTILE_ARG}}]},
                       {"content": [{"type": "text", "text": HOSTILE_ANSWER}]}])
    return run_cli(["-p", "go", *flags], cwd=work, env=anthropic_env(tmp_path, mock.url))


def test_print_mode_text_answer_and_tool_line_show_escapes(mock_model: Any, tmp_path: Path) -> None:
    proc = _run(mock_model, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == SHOWN_ANSWER
    tool_lines = [line for line in proc.stderr.splitlines() if line.startswith("● Glob(")]
    assert tool_lines == ["● Glob(src/\\u202etxt.exe\\x9b2J\\x1b]8;;http://evil.example/\\x07)"]
    assert_raw_free(proc.stdout, proc.stderr)


@pytest.mark.parametrize("fmt", ["json", "stream-json"])
def test_json_output_keeps_the_exact_text_with_controls_escaped(mock_model: Any, tmp_path: Path, fmt: str) -> None:
    proc = _run(mock_model, tmp_path, "--output-format", fmt)
    assert proc.returncode == 0, proc.stderr
    assert_raw_free(proc.stdout, proc.stderr)
    records = [json.loads(line) for line in proc.stdout.splitlines()]  # every line valid JSON
    assert records[-1]["type"] == "result" and records[-1]["result"] == HOSTILE_ANSWER
    assert "\\u202egnp.exe\\u202c" in proc.stdout and "\\u009b31m" in proc.stdout
    if fmt == "stream-json":
        calls = [block for r in records if r["type"] == "assistant" for block in r["message"]["content"]
                 if block.get("type") == "tool_use"]
        assert calls[0]["input"] == {"pattern": HOSTILE_ARG}
