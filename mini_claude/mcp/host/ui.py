"""The one interface between the MCP host and the person at the terminal: `HostUI`.

The host's services (sampling, elicitation, logging, progress) decide *what* to ask or tell; a `HostUI` decides
*how*. mini-claude has two implementations in `mini_claude.cli.questions.host_ui` — the REPL's (questions at the prompt) and
the non-interactive one (`-p`, scripts: every question answered "no", notices as stderr lines) — and tests drive a
scripted one. Everything here is plain data: server text inside it is untrusted and raw; an implementation that
shows it must neutralise it (`mini_claude.cli.terminal.render.clean`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "FormAnswer",
    "FormRequest",
    "HostUI",
    "NoQuestionsUI",
    "SamplingChoice",
    "SamplingRequest",
    "UrlRequest",
]


class SamplingChoice(enum.Enum):
    """The user's answer to a server's sampling request."""

    ONCE = "once"        # answer this request
    ALWAYS = "always"    # answer this one and every later one from this server, this session
    DENY = "deny"


@dataclass(frozen=True)
class SamplingRequest:
    """What a server wants the agent's model to answer (`sampling/createMessage`), as the user should see it."""

    server: str
    system_prompt: str
    messages: list[dict[str, Any]]  # the MCP messages as sent: {"role", "content"}
    max_tokens: int
    tools: list[str] = field(default_factory=list)  # names of the tools the server offers the model
    view: str = ""  # set when one of the server's MCP Apps views asks: the tool whose view it is


@dataclass(frozen=True)
class FormRequest:
    """A form-mode `elicitation/create`: the server's message and its restricted schema (flat primitives)."""

    server: str
    message: str
    schema: dict[str, Any]


@dataclass(frozen=True)
class FormAnswer:
    """`accept` with `content`, `decline`, or `cancel` (the user dismissed the question)."""

    action: str
    content: dict[str, Any] | None = None


@dataclass(frozen=True)
class UrlRequest:
    """A URL-mode elicitation: the user is asked to open `url` (outside the agent) for the server."""

    server: str
    message: str
    url: str
    elicitation_id: str


class HostUI(Protocol):
    """What the host asks of and tells the user. Questions are async (they wait for a person); notices are not."""

    @property
    def interactive(self) -> bool:
        """Whether a person can answer questions now (False: every question is answered "no" at once)."""
        ...

    async def approve_sampling(self, request: SamplingRequest) -> SamplingChoice: ...

    async def fill_form(self, request: FormRequest) -> FormAnswer: ...

    async def open_url(self, request: UrlRequest) -> str:
        """`accept` (the user opened it / will), `decline` or `cancel`."""
        ...

    def notice(self, server: str, text: str) -> None:
        """One line about a server (a log message at warning or above, an elicitation completed, ...)."""
        ...

    def progress(self, call: str, progress: float, total: float | None, message: str | None) -> None:
        """A long tool call `call` (its qualified name) reported progress."""
        ...


class NoQuestionsUI:
    """A HostUI with nobody to ask: sampling denied, forms and URLs declined, notices kept in `notices`."""

    interactive = False

    def __init__(self) -> None:
        self.notices: list[tuple[str, str]] = []

    async def approve_sampling(self, request: SamplingRequest) -> SamplingChoice:
        return SamplingChoice.DENY

    async def fill_form(self, request: FormRequest) -> FormAnswer:
        return FormAnswer("decline")

    async def open_url(self, request: UrlRequest) -> str:
        return "decline"

    def notice(self, server: str, text: str) -> None:
        self.notices.append((server, text))

    def progress(self, call: str, progress: float, total: float | None, message: str | None) -> None:
        pass
