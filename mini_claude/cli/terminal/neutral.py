"""The one door to the terminal for text that a model, a server or a repository produced.

`clean()` is that door: the secret
values the session knows are masked (mini_claude.secrets; not in `exact` text, which must be what runs), and nothing
it returns holds an escape sequence, a C0/C1 control (but newline and tab), a bidi override/isolate or an invisible
format character. Prose from servers and repositories (names, descriptions, logs) has them removed; where the
exact text matters — the model's own text, the `● tool(…)` lines, what a prompt asks the user to approve — they
are made visible instead (`visible=True`: ESC shows as `\\x1b`, U+202E as `\\u202e`). `json_text()` is its twin
for JSON output: the same characters escaped as `\\uXXXX`, so the JSON stays valid and still holds the exact text.
render.py re-exports these three; modules under render (tool_lines, tool_display) import them from here.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mini_claude.secrets import mask

__all__ = ["clean", "json_text", "one_line"]

# Whole escape sequences first, so their parameters do not survive as stray text: control strings (OSC — incl.
# OSC 8 hyperlinks —, DCS, SOS, PM, APC; 7-bit or C1 introducer, ended by BEL or ST), CSI sequences (7-bit or the
# C1 byte U+009B), then any other ESC sequence (ESC, intermediates, final: `ESC ( B`, `ESC c`, …).
_ESCAPES = re.compile(
    r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
    r"|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|\x1b[ -/]*[0-~]"
)
# Then every character that controls or hides rather than shows: C0 but \n and \t (\r too: it overwrites a line),
# DEL, C1 (U+0080–U+009F, which some terminals read as ESC sequences), the bidi embeddings/overrides/isolates and
# marks (U+202A–U+202E, U+2066–U+2069, U+200E/F, U+061C: they reorder what is shown, "Trojan Source"), and
# invisible characters that make two different texts look the same: zero-width space, word joiner and invisible
# operators, BOM, interlinear annotation, Unicode tag characters (which can smuggle hidden ASCII). Zero-width
# (non-)joiners (U+200C/D) and variation selectors stay: emoji sequences and several scripts need them.
_HIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069"
    "\ufeff\ufff9-\ufffb\U000e0000-\U000e007f]"
)
# invisible but otherwise harmless in prose (joiners, variation selectors, fillers, a soft hyphen, the Unicode line
# and paragraph separators U+2028/U+2029, which an editor may break a line at): kept in what the model writes
# (emoji need them), shown as escapes where the text shown is the text that runs (`exact`)
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200c\u200d\u2028\u2029\u206a-\u206f\u3164\ufe00-\ufe0f"
    "\uffa0\U000e0100-\U000e01ef]"
)

def clean(text: str, *, visible: bool = False, exact: bool = False) -> str:
    """`text` fit for the terminal: escape sequences, control characters (but newlines and tabs), C1 controls,
    bidi overrides/isolates and invisible format characters removed — or, with `visible`, each such character
    shown as an escape (`\\x1b`, `\\x9b`, `\\x0d`, `\\u202e`, `\\U000e0041`; a CR before a newline is dropped),
    so the reader sees that it was there and what follows it is plain text. The one door for text from servers,
    repositories and models to the screen. The result never holds ESC or a C1 control, whatever the input; `visible` works
    character by character, so text streamed in pieces is safe piece by piece. `exact` (with `visible`; for a
    command, a path or a plan the user approves) also shows the invisible characters prose keeps (zero-width
    joiners, variation selectors, a soft hyphen…), so the text approved is, character for character, what runs."""
    # the known secret values masked (mini_claude.secrets), but what the user approves is shown as it will run
    text = _INVISIBLE.sub(_escaped, text) if exact else mask(text)
    if _HIDDEN.search(text) is None:  # the usual case: one scan, no copy
        return text
    if visible:
        return _HIDDEN.sub(_escaped, text.replace("\r\n", "\n"))
    return _HIDDEN.sub("", _ESCAPES.sub("", text))


def one_line(text: str) -> str:
    """`clean(text, visible=True)` on one line: a line break shows as `\\n`, a tab as `\\t` (a status line
    whose server name or error a repository or server wrote cannot print a line of its own)."""
    return clean(text, visible=True).replace("\n", "\\n").replace("\t", "\\t")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _json_escaped(match: re.Match[str]) -> str:
    data = match.group().encode("utf-16-be")  # an astral character becomes its surrogate pair, as JSON wants
    return "".join(f"\\u{int.from_bytes(data[i:i + 2], 'big'):04x}" for i in range(0, len(data), 2))


def json_text(value: Any, **kwargs: Any) -> str:
    """`json.dumps(value, ensure_ascii=False, **kwargs)` with every character `clean` would not let through
    escaped as `\\uXXXX`: valid JSON with the exact text, printable letters of every script left as they are, and
    nothing a terminal would act on (json.dumps itself escapes C0 but leaves DEL, C1 and bidi controls raw)."""
    text = mask(json.dumps(value, ensure_ascii=False, **kwargs))
    # outside strings JSON is printable ASCII, newlines and spaces: every match is inside a string
    return _HIDDEN.sub(_json_escaped, text)
