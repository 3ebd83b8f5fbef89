"""The two terminal `HostUI`s of the MCP host (mini_claude.mcp.host.ui): the REPL's, which asks, and `-p`'s, which
never does. Every piece of server text goes through `clean` before it is shown.

`-p` (`PrintHostUI`): sampling denied, forms and URLs declined — each said in one stderr line so the user knows
what a server wanted; server notices as warning lines; progress as a line at most every `PROGRESS_EVERY_S`.
The REPL (`ReplHostUI`): sampling shows the request and asks once / always / no; a form is filled in field by
field (`read_field` turns a typed answer into a value); a URL is shown and may be opened in the browser.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

from mini_claude.cli.terminal.render import TerminalUI, clean
from mini_claude.mcp.host.ui import FormAnswer, FormRequest, SamplingChoice, SamplingRequest, UrlRequest
from mini_claude.net.urls import is_loopback_host

__all__ = ["PROGRESS_EVERY_S", "PrintHostUI", "ReplHostUI", "is_openable_url", "read_field", "sampling_summary"]

PROGRESS_EVERY_S = 5.0
PROGRESS_BAR_WIDTH = 20
_SHOW_CHARS = 400
_SHOWN_MESSAGES = 6

AskFn = Callable[[str, dict[str, str]], Awaitable[str]]  # (question, {key: answer}) -> answer
PromptFn = Callable[[str], Awaitable[str | None]]  # (label) -> text typed, None when dismissed (Ctrl+C / Ctrl+D)


def sampling_summary(request: SamplingRequest) -> list[str]:
    """What the user sees of a sampling request (neutralised; each message cut to a few hundred characters and
    the older messages left out, each cut saying how much is not shown)."""
    asker = f"MCP server {clean(request.server)!r}"
    if request.view:
        asker += f" (through its view of {clean(request.view)!r} in the browser)"
    lines = [f"{asker} asks the model to answer (up to {request.max_tokens} tokens):"]
    if request.system_prompt:
        lines.append(f"  system: {_cut(clean(request.system_prompt))}")
    if len(request.messages) > _SHOWN_MESSAGES:
        lines.append(f"  (… {len(request.messages) - _SHOWN_MESSAGES} earlier messages not shown)")
    for message in request.messages[-_SHOWN_MESSAGES:]:
        role = message.get("role", "?") if isinstance(message, dict) else "?"
        content = message.get("content") if isinstance(message, dict) else None
        blocks = content if isinstance(content, list) else [content]
        text = " ".join(b.get("text", f"[{b.get('type')}]") for b in blocks if isinstance(b, dict))
        lines.append(f"  {clean(str(role))}: {_cut(clean(text))}")
    if request.tools:
        lines.append(f"  tools offered: {_cut(clean(', '.join(request.tools)))}")
    return lines


def _cut(text: str) -> str:
    return text if len(text) <= _SHOW_CHARS else f"{text[:_SHOW_CHARS]}… (+{len(text) - _SHOW_CHARS:,} characters)"


class _Progress:
    def __init__(self) -> None:
        self.last: dict[str, float] = {}

    def due(self, call: str, every: float) -> bool:
        now = time.monotonic()
        if now - self.last.get(call, -every) < every:
            return False
        self.last[call] = now
        return True


def _progress_text(call: str, progress: float, total: float | None, message: str | None) -> str:
    """`call [#####.....] 3/6 message` when the total is known, else `call: 3 message`."""
    if total and total > 0:
        filled = max(0, min(PROGRESS_BAR_WIDTH, round(PROGRESS_BAR_WIDTH * progress / total)))
        bar = "#" * filled + "." * (PROGRESS_BAR_WIDTH - filled)
        head = f"{call} [{bar}] {progress:g}/{total:g}"
    else:
        head = f"{call}: {progress:g}"
    return f"{head}{' ' + message if message else ''}"


class PrintHostUI:
    """`-p` and scripts: nobody to ask."""

    interactive = False

    def __init__(self, ui: TerminalUI, *, progress_every_s: float = PROGRESS_EVERY_S) -> None:
        self.ui = ui
        self.progress_every_s = progress_every_s
        self._progress = _Progress()

    async def approve_sampling(self, request: SamplingRequest) -> SamplingChoice:
        self.ui.warn(f"MCP server {request.server!r} asked the model to answer a request; declined (no one to ask "
                     f"in -p; set \"sampling\": \"allow\" for it in your MCP config to allow it)")
        return SamplingChoice.DENY

    async def fill_form(self, request: FormRequest) -> FormAnswer:
        self.ui.warn(f"MCP server {request.server!r} asked you for input ({request.message[:200]}); declined "
                     "(no one to ask in -p)")
        return FormAnswer("decline")

    async def open_url(self, request: UrlRequest) -> str:
        self.ui.warn(f"MCP server {request.server!r} asks you to open {request.url[:500]} "
                     f"({request.message[:200]}); declined (no one to ask in -p)")
        return "decline"

    def notice(self, server: str, text: str) -> None:
        self.ui.warn(f"MCP {server}: {text}")

    def progress(self, call: str, progress: float, total: float | None, message: str | None) -> None:
        if self._progress.due(call, self.progress_every_s):
            self.ui.info(_progress_text(call, progress, total, message))


class ReplHostUI(PrintHostUI):
    """The REPL: questions at the prompt (`ask` for choices, `prompt` for typed text)."""

    interactive = True

    def __init__(self, ui: TerminalUI, *, ask: AskFn, prompt: PromptFn, progress_every_s: float = 0.5,
                 lock: asyncio.Lock | None = None, can_ask: Callable[[], bool] = lambda: True,
                 refusing_views: Callable[[str], bool] = lambda _server: False) -> None:
        super().__init__(ui, progress_every_s=progress_every_s)
        self.ask = ask
        self.prompt = prompt
        self.lock = lock or asyncio.Lock()  # one question (or form) at a time, shared with permission questions
        self.can_ask = can_ask  # False while the user is typing at the main prompt: questions cannot go there
        # the servers whose MCP Apps views the user refused for the session (the REPL's `b`): their views' sampling
        # requests are denied without a question
        self.refusing_views = refusing_views

    async def approve_sampling(self, request: SamplingRequest) -> SamplingChoice:
        if request.view and self.refusing_views(request.server):
            return SamplingChoice.DENY
        if not self.can_ask():
            return await super().approve_sampling(request)
        async with self.lock:
            if request.view and self.refusing_views(request.server):  # refused while this one waited its turn
                return SamplingChoice.DENY
            return await self._approve_sampling(request)

    async def fill_form(self, request: FormRequest) -> FormAnswer:
        if not self.can_ask():
            return await super().fill_form(request)
        async with self.lock:
            return await self._fill_form(request)

    async def open_url(self, request: UrlRequest) -> str:
        if not self.can_ask():
            return await super().open_url(request)
        async with self.lock:
            return await self._open_url(request)

    async def _approve_sampling(self, request: SamplingRequest) -> SamplingChoice:
        for line in sampling_summary(request):
            self.ui.warn(line)
        answer = await self.ask("Let the model answer?", {"y": "once", "a": "always", "n": "deny"})
        return SamplingChoice(answer)

    async def _fill_form(self, request: FormRequest) -> FormAnswer:
        self.ui.warn(f"MCP server {request.server!r} asks: {request.message}")
        answer = await self.ask("Answer it?", {"y": "accept", "d": "decline", "n": "cancel"})
        if answer != "accept":
            return FormAnswer(answer)
        required = set(request.schema.get("required") or ())
        content: dict[str, Any] = {}
        for name, prop in (request.schema.get("properties") or {}).items():
            while True:
                label = _field_label(str(name), prop, str(name) in required)
                typed = await self.prompt(label)
                if typed is None:
                    return FormAnswer("cancel")
                value, problem = read_field(prop, typed)
                if problem is None and value is None and str(name) in required and "default" not in prop:
                    problem = f"{clean(str(name))} is required"
                if problem is None:
                    break
                self.ui.warn(problem)
            if value is not None:
                content[str(name)] = value
        return FormAnswer("accept", content)

    async def _open_url(self, request: UrlRequest) -> str:
        self.ui.warn(f"MCP server {request.server!r} asks you to open a web page: {request.message}")
        self.ui.warn(f"  {request.url}")
        openable = is_openable_url(request.url)
        if not openable:
            self.ui.warn("  (not an https address, so it will not be opened from here)")
        choices = {"y": "open", "s": "shown", "n": "decline"} if openable else {"s": "shown", "n": "decline"}
        answer = await self.ask("Open it in your browser?" if openable else "Did you open it yourself?", choices)
        if answer == "open":
            try:
                import webbrowser  # only when a browser is opened: not on every start

                webbrowser.open(request.url)
            except Exception as exc:  # no browser here: the URL is on screen
                self.ui.warn(f"could not open a browser: {exc}")
            return "accept"
        return "accept" if answer == "shown" else "decline"


def is_openable_url(url: str) -> bool:
    """Only https (or http to this machine) is handed to the browser: a server's `file:`, `vscode:` or other
    scheme would start whatever handles it."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    if clean(url) != url or not parts.hostname:
        return False
    return parts.scheme == "https" or (parts.scheme == "http" and is_loopback_host(parts.hostname))


def _field_label(name: str, prop: dict[str, Any], required: bool) -> str:
    title = prop.get("title") if isinstance(prop.get("title"), str) else name
    parts = [clean(title)]
    if isinstance(prop.get("description"), str):
        parts.append(f"({clean(prop['description'])[:200]})")
    options = _options(prop)
    if options:
        parts.append("[" + ", ".join(f"{i}={clean(label)}" for i, (_, label) in enumerate(options, 1)) + "]")
    elif prop.get("type") == "boolean":
        parts.append("[y/n]")
    if "default" in prop:
        parts.append(f"default {clean(json.dumps(prop['default'], ensure_ascii=False))[:60]}")
    if required:
        parts.append("required")
    return " ".join(parts) + ": "


def _options(prop: dict[str, Any]) -> list[tuple[str, str]]:
    """(value, label) choices of a single- or multi-select property."""
    target = prop.get("items") if prop.get("type") == "array" and isinstance(prop.get("items"), dict) else prop
    assert isinstance(target, dict)
    if isinstance(target.get("enum"), list):
        names = target.get("enumNames") if isinstance(target.get("enumNames"), list) else target["enum"]
        return [(str(v), str(n)) for v, n in zip(target["enum"], names, strict=False)]
    for key in ("oneOf", "anyOf"):
        if isinstance(target.get(key), list):
            return [(str(o["const"]), str(o.get("title", o["const"]))) for o in target[key]
                    if isinstance(o, dict) and "const" in o]
    return []


def read_field(prop: dict[str, Any], typed: str) -> tuple[Any, str | None]:
    """A typed answer → (value, problem). Empty means "not given" (the default applies); a choice may be typed
    as its number or its value; a multi-select as numbers or values separated by commas."""
    text = typed.strip()
    if not text:
        return None, None
    kind = prop.get("type")
    options = _options(prop)
    if kind == "array":
        chosen = []
        for item in (part.strip() for part in text.split(",") if part.strip()):
            value = _choice(options, item)
            if value is None:
                return None, f"{item!r} is not one of the choices"
            chosen.append(value)
        return chosen, None
    if options:
        value = _choice(options, text)
        return (value, None) if value is not None else (None, f"{text!r} is not one of the choices")
    if kind == "boolean":
        if text.lower() in ("y", "yes", "true"):
            return True, None
        if text.lower() in ("n", "no", "false"):
            return False, None
        return None, "answer y or n"
    if kind in ("number", "integer"):
        try:
            return (int(text) if kind == "integer" else float(text)), None
        except ValueError:
            return None, f"{text!r} is not {'an integer' if kind == 'integer' else 'a number'}"
    return text, None


def _choice(options: list[tuple[str, str]], typed: str) -> str | None:
    if typed.isdigit() and 1 <= int(typed) <= len(options):
        return options[int(typed) - 1][0]
    for value, label in options:
        if typed in (value, label):
            return value
    return None
