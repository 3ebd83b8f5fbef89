"""Tool-definition and instructions pinning: what each server's tools and instructions looked like when the user
first used or accepted them.

A server the user approved can change what its tools say afterwards (a "rug pull": a new description that tells
the model to read ~/.ssh, a schema that asks for one more field), or what its `instructions` tell the model in the
system prompt. So the first time a server is listed (after approval, for a project server; on first use, for any
other) each tool's definition — name, title, description, inputSchema, outputSchema and annotations
(`readOnlyHint` and friends change how calls are gated) — and the server's instructions text are pinned, with
their SHA-256. From then on:

* a tool whose definition matches its pin is offered as usual;
* a tool whose definition differs is *withheld* (never offered to the model, a call by name is refused) until the
  user looks at the diff and accepts it (`mini-claude mcp accept NAME`, `/mcp accept NAME`, the REPL's question);
* instructions that differ from the pinned text (or appear where the server had none) are withheld from the system
  prompt the same way, and accepted by the same commands;
* a tool never seen before is pinned on first sight and offered (the review lists it: "new tool: x");
* a tool that disappeared just disappears (its pin stays, so removing a tool and bringing it back changed is not
  a way around the review); instructions that disappear likewise keep their pin.

Pins are kept per server, named as the user names it — its scope and name (and project folder for project and
local servers) — with the fingerprint of its config beside them (`server_key`: the name plus what it reaches,
hashed). A changed config is a new first sight of that server: its definitions are pinned afresh and replace the
old entry, so one server never has two. Storage, bounds and clean-up are pin_files.py's: one file per server,
so a server that becomes ready reads and writes only its own. The old definitions are stored in full (they are
not secret) so the review can show a unified diff.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mini_claude import paths
from mini_claude.mcp.config import ServerConfig
from mini_claude.mcp.negotiation import hashed_key
from mini_claude.mcp.pin_changes import (
    MAX_STORED_DEFINITION_CHARS,
    UNHASHABLE,
    InstructionsChange,
    ToolChange,
    definition_digest,
    digest_and_size,
    instructions_pin,
    pin_entry,
    review_instructions,
    tool_definition,
)
from mini_claude.mcp.pin_files import PINS_DIR_NAME, PinFiles, PinKey
from mini_claude.mcp.protocol import McpTool

__all__ = [
    "MAX_STORED_DEFINITION_CHARS",
    "PINS_DIR_NAME",
    "InstructionsChange",
    "PinKey",
    "PinReview",
    "PinStore",
    "ReviewCallback",
    "ToolChange",
    "ToolPins",
    "definition_digest",
    "pin_key",
    "server_key",
    "tool_definition",
]

log = logging.getLogger(__name__)

_INSTRUCTIONS_TOLD = "\0instructions"  # the instructions' mark among the withheld changes a server was told of


def server_key(cfg: ServerConfig) -> str:
    """A server's config fingerprint before hashing (and its key in the era memory): its name plus what it
    reaches, so a server whose command or URL changed is pinned afresh (a project server is approved again then,
    see approval.py)."""
    target = cfg.url if cfg.url else " ".join([cfg.command or "", *cfg.args])
    return f"{cfg.name} {target}"


def pin_key(cfg: ServerConfig, project: Path | None = None) -> PinKey:
    """The pin key of a server: scope and name (plus the project folder, `project` or the working directory, for a
    project or local server) and its hashed config fingerprint."""
    folder = ""
    if cfg.scope in ("project", "local"):
        where = project if project is not None else Path.cwd()
        try:
            folder = str(where.resolve())
        except OSError:
            folder = os.path.abspath(where)
    return PinKey(cfg.scope, cfg.name, hashed_key(server_key(cfg)), folder)


@dataclass(frozen=True)
class PinReview:
    """One server's listed tools (and instructions) compared with their pins.

    `allowed` are offered to the model (unchanged, new, or all of them the first time); `changed` are withheld;
    `new` names tools pinned just now on an already pinned server; `first_sight` is True when the server had no
    pins at all (everything was pinned, nothing is worth announcing); `instructions` is set when the server's
    instructions are withheld."""

    server: str
    allowed: tuple[McpTool, ...]
    changed: tuple[ToolChange, ...] = ()
    new: tuple[str, ...] = ()
    first_sight: bool = False
    instructions: InstructionsChange | None = None

    @property
    def withheld(self) -> tuple[str, ...]:
        return tuple(change.name for change in self.changed)

    def warning(self) -> str:
        """One line for a non-interactive run: what tools are withheld and the command that reviews them."""
        names = ", ".join(repr(name) for name in self.withheld)
        what = f"tool {names} changed" if len(self.changed) == 1 else f"tools {names} changed"
        return (f"MCP server {self.server!r}: {what} since accepted, withheld from the model; review and accept "
                f"with `mini-claude mcp accept {self.server}`")

    def instructions_warning(self) -> str:
        """One line saying the server's instructions are withheld (and the command that reviews them)."""
        return (f"MCP server {self.server!r}: its instructions changed since accepted, withheld from the system "
                f"prompt; review and accept with `mini-claude mcp accept {self.server}`")

    def notes(self) -> list[str]:
        """Lines for the REPL as the review arrives: one per tool pinned just now on an already pinned server
        ("new tool: x"), and the instructions warning when they are withheld."""
        lines = [f"MCP server {self.server!r}: new tool: {name}" for name in self.new]
        return [*lines, self.instructions_warning()] if self.instructions is not None else lines

    def diff(self) -> str:
        parts = [change.diff(self.server) for change in self.changed]
        if self.instructions is not None:
            parts.append(self.instructions.diff(self.server))
        return "\n".join(parts)


class PinStore:
    """The pinned tool definitions and instructions of every server, a file per server (pin_files.py) under
    `folder` (default `state_dir()/mcp-pins`).

        store = PinStore(tmp_path / "mcp-pins")
        key = store.key_for(cfg)
        review = store.review(key, "github", tools, instructions)   # pins on first sight
        review.changed        # ToolChange for each tool that differs from its pin (withheld)
        store.accept(key, [change.tool for change in review.changed])
    """

    def __init__(self, folder: Path, *, record: bool = True, project: Path | None = None) -> None:
        self.files = PinFiles(folder)
        self.record = record  # False: review only looks (`mcp list` shows what a session would withhold)
        self.project = project  # the folder project and local servers belong to (None: the working directory)

    @property
    def folder(self) -> Path:
        return self.files.folder

    @classmethod
    def default(cls, env: Mapping[str, str] | None = None, *, record: bool = True,
                project: Path | None = None) -> PinStore:
        return cls(paths.state_dir(env) / PINS_DIR_NAME, record=record, project=project)

    def key_for(self, cfg: ServerConfig) -> PinKey:
        return pin_key(cfg, self.project)

    def _entry(self, key: PinKey) -> tuple[dict[str, Any] | None, bool]:
        """The server's pins for its current config (or the old store's, adopted) and whether the stored entry is
        already the current one (False: a first sight, or a changed config whose entry is replaced)."""
        entry = self.files.load(key)
        if entry is not None and entry.get("fingerprint") == key.fingerprint:
            return entry, True
        return self.files.legacy(key.fingerprint), False

    def review(self, key: PinKey, server: str, tools: Sequence[McpTool], instructions: str | None = None
               ) -> PinReview:
        """Compare `tools` and `instructions` with the server's pins, pin what is seen for the first time (unless
        this store only looks: `record=False`), and say what to offer."""
        self.files.migrate_legacy()
        with self.files.locked():
            entry, current = self._entry(key)
            first_sight = entry is None
            pins: dict[str, Any] = dict(entry["tools"]) if entry is not None else {}
            allowed: list[McpTool] = []
            changed: list[ToolChange] = []
            new: list[str] = []
            dirty = not current
            for tool in tools:
                definition = tool_definition(tool)
                digest, size = digest_and_size(definition)
                pin = pins.get(tool.name)
                if digest != UNHASHABLE and not (isinstance(pin, dict) and isinstance(pin.get("sha256"), str)):
                    pins[tool.name] = pin_entry(definition, digest, size)
                    dirty = True
                    allowed.append(tool)
                    if not first_sight:
                        new.append(tool.name)
                elif isinstance(pin, dict) and pin.get("sha256") == digest:
                    allowed.append(tool)
                else:  # changed, or too deep to pin at all (fail closed: withheld, and accepting cannot pin it)
                    old = pin.get("definition") if isinstance(pin, dict) else None
                    changed.append(ToolChange(tool, old if isinstance(old, dict) else None, definition, digest))
            stored = entry.get("instructions") if entry is not None else None
            withheld, instructions_pin = review_instructions(stored, instructions)
            dirty = dirty or instructions_pin is not stored
            if self.record and dirty:
                self.files.save(key, {"tools": pins, "instructions": instructions_pin})
            elif self.record:
                self.files.touch(key)
        return PinReview(server, tuple(allowed), tuple(changed), tuple(new), first_sight, withheld)

    def accept(self, key: PinKey, tools: Sequence[McpTool], instructions: str | None = None) -> list[str]:
        """Pin the current definitions of `tools` (and `instructions`, when given: the user accepted them); the
        tool names pinned, in order."""
        accepted: list[str] = []
        self.files.migrate_legacy()
        with self.files.locked():
            entry, _ = self._entry(key)
            pins: dict[str, Any] = dict(entry["tools"]) if entry is not None else {}
            for tool in tools:
                definition = tool_definition(tool)
                digest = definition_digest(definition)
                if digest == UNHASHABLE:
                    continue
                pins[tool.name] = pin_entry(definition, digest)
                accepted.append(tool.name)
            saved: dict[str, Any] = {"tools": pins}
            if entry is not None and "instructions" in entry:
                saved["instructions"] = entry["instructions"]
            if instructions is not None:
                saved["instructions"] = instructions_pin(instructions)
            if accepted or instructions is not None:
                self.files.save(key, saved)
        return accepted

    def pinned(self, key: PinKey) -> dict[str, str]:
        """Tool name → pinned digest, for one server's current config ({} when it has none)."""
        self.files.migrate_legacy()
        entry, _ = self._entry(key)
        tools = entry.get("tools") if entry is not None else None
        if not isinstance(tools, dict):
            return {}
        return {name: pin["sha256"] for name, pin in tools.items()
                if isinstance(pin, dict) and isinstance(pin.get("sha256"), str)}

    def prune(self, *, now: float | None = None) -> int:
        """Remove what no session used for a while (pin_files.py says what); the number of entries removed."""
        return self.files.prune(now=now)

# told of a review worth showing the user: newly withheld tools or instructions (with their diffs) or new tools
ReviewCallback = Callable[[PinReview], None]


class ToolPins:
    """Pinning as the manager runs it across listings (startup, reconnect, `tools/list_changed`): each server's
    last tool list and instructions, and which withheld changes the user was already told about, so a reconnect or
    a repeated `list_changed` does not ask again. Without a store every listed tool and text is offered.

        pins = ToolPins(PinStore.default(env), on_review=lambda review: print(review.warning()))
        review = pins.review(pins.key_for(cfg), "github", tools, instructions)   # offer review.allowed
        pins.offers_instructions("github", instructions)   # False while they are withheld
        pins.announce("github")                      # on_review(review) if it has news for the user
    """

    def __init__(self, store: PinStore | None, on_review: ReviewCallback | None = None) -> None:
        self.store = store
        self.on_review = on_review
        self._listed: dict[str, list[McpTool]] = {}
        self._texts: dict[str, str | None] = {}  # the instructions each server gave at its last review
        self._withheld_texts: dict[str, InstructionsChange] = {}
        self._told: dict[str, frozenset[str]] = {}  # per server: the withheld "name digest"s last announced
        self._pending: dict[str, PinReview] = {}

    def key_for(self, cfg: ServerConfig) -> PinKey:
        return self.store.key_for(cfg) if self.store is not None else pin_key(cfg)

    def review(self, key: PinKey, server: str, listed: list[McpTool], instructions: str | None = None
               ) -> PinReview:
        """What to offer of a fresh listing; a review with news waits for `announce(server)`."""
        self._listed[server] = listed
        self._texts[server] = instructions
        if self.store is None:
            return PinReview(server, tuple(listed))
        review = self.store.review(key, server, listed, instructions)
        told = {f"{change.name} {change.digest}" for change in review.changed}
        if review.instructions is not None:
            self._withheld_texts[server] = review.instructions
            told.add(f"{_INSTRUCTIONS_TOLD} {review.instructions.digest}")
        else:
            self._withheld_texts.pop(server, None)
        withheld = frozenset(told)
        if review.new or (withheld and withheld != self._told.get(server, frozenset())):
            self._pending[server] = review
        self._told[server] = withheld
        return review

    def withheld_instructions(self, server: str) -> InstructionsChange | None:
        """The server's instructions as they are now, when they are withheld (changed since accepted)."""
        return self._withheld_texts.get(server)

    def offers_instructions(self, server: str, text: str) -> bool:
        """Whether `text` may go into the system prompt: the text the server's last review passed."""
        if self.store is None:
            return True
        return self._texts.get(server) == text and server not in self._withheld_texts

    def accept(self, key: PinKey, server: str, changes: Sequence[ToolChange]) -> PinReview:
        """Pin what the user accepted — the tools in `changes` and the server's withheld instructions — then
        review the server's last listing again (nothing to announce)."""
        if self.store is not None:
            text = self._withheld_texts.get(server)
            self.store.accept(key, [change.tool for change in changes if change.pinnable],
                              instructions=text.new if text is not None else None)
        review = self.review(key, server, self._listed.get(server, []), self._texts.get(server))
        self._pending.pop(server, None)
        return review

    def announce(self, server: str) -> None:
        """Tell `on_review` of the server's pending review, if any (after the manager published the state)."""
        review = self._pending.pop(server, None)
        if review is not None and self.on_review is not None:
            try:
                self.on_review(review)
            except Exception:
                log.exception("on_review callback failed")
