"""Tool-definition pinning: what each server's tools looked like when the user first used or accepted them.

A server the user approved can change what its tools say afterwards (a "rug pull": a new description that tells
the model to read ~/.ssh, a schema that asks for one more field). So the first time a server's tools are listed
(after approval, for a project server; on first use, for any other) each tool's definition — name, title,
description, inputSchema, outputSchema and annotations (`readOnlyHint` and friends change how calls are gated) —
is pinned in one file under the state directory, with its SHA-256. From then on:

* a tool whose definition matches its pin is offered as usual;
* a tool whose definition differs is *withheld* (never offered to the model, a call by name is refused) until the
  user looks at the diff and accepts it (`mini-claude mcp accept NAME`, `/mcp accept NAME`);
* a tool never seen before is pinned on first sight and offered (the review lists it: "new tool: x");
* a tool that disappeared just disappears (its pin stays, so removing a tool and bringing it back changed is not
  a way around the review).

The old definitions are stored in full (they are not secret) so the review can show a unified diff. The file's
keys are SHA-256 digests of the server's name plus what it reaches (a URL or command line may carry secrets),
as in the era memory. It is 0600, written atomically under an exclusive lock, so two sessions never lose each
other's pins. A missing file is no pins; an unreadable one is logged and treated as none.
"""

from __future__ import annotations

import contextlib
import difflib
import fcntl
import hashlib
import json
import logging
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mini_claude import paths
from mini_claude.jsonfile import write_json_atomic
from mini_claude.mcp.config import ServerConfig
from mini_claude.mcp.negotiation import hashed_key
from mini_claude.mcp.protocol import McpTool

__all__ = [
    "MAX_STORED_DEFINITION_CHARS",
    "PINS_FILE_NAME",
    "PinReview",
    "PinStore",
    "ReviewCallback",
    "ToolChange",
    "ToolPins",
    "definition_digest",
    "server_key",
    "tool_definition",
]

log = logging.getLogger(__name__)

PINS_FILE_NAME = "mcp-tool-pins.json"
# a definition longer than this (as compact JSON) is pinned by its digest only: the diff then cannot show it
MAX_STORED_DEFINITION_CHARS = 200_000
_VERSION = 1
_UNHASHABLE = "unhashable"  # the digest of a definition too deep to serialise: never equal to a real one


def server_key(cfg: ServerConfig) -> str:
    """A server's key in the pin file (and the era memory): its name plus what it reaches, so a server whose
    command or URL changed is a different server (a project server is approved again then, see approval.py)."""
    target = cfg.url if cfg.url else " ".join([cfg.command or "", *cfg.args])
    return f"{cfg.name} {target}"


def tool_definition(tool: McpTool) -> dict[str, Any]:
    """The parts of a tool the pin covers, as the model and the permission gate will see them (wire names)."""
    return {
        "name": tool.name,
        "title": tool.title,
        "description": tool.description,
        "inputSchema": tool.input_schema,
        "outputSchema": tool.output_schema,
        "annotations": tool.annotations,
    }


def _canonical(definition: Mapping[str, Any]) -> str | None:
    """Compact, key-sorted JSON; None when the definition is too deep to serialise (a hostile schema)."""
    try:
        return json.dumps(definition, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except (RecursionError, ValueError, TypeError):
        return None


def definition_digest(definition: Mapping[str, Any]) -> str:
    """`sha256:<hex>` of the canonical JSON ("unhashable" when it cannot be serialised: never matches a pin)."""
    text = _canonical(definition)
    if text is None:
        return _UNHASHABLE
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ToolChange:
    """A tool whose definition differs from its pin: withheld until accepted. `old` is None when the pinned
    definition was too large to store (only its digest was kept)."""

    tool: McpTool
    old: dict[str, Any] | None
    new: dict[str, Any]
    digest: str  # of `new`: what accepting pins

    @property
    def name(self) -> str:
        return self.tool.name

    @property
    def pinnable(self) -> bool:
        """False for a definition too deeply nested to serialise: it stays withheld even when accepted."""
        return self.digest != _UNHASHABLE

    def diff(self, server: str) -> str:
        """A unified diff of the accepted definition against the current one (server text: clean it to print)."""
        before = _render(self.old) if self.old is not None else ["(the accepted definition was too large to keep)"]
        return "\n".join(difflib.unified_diff(before, _render(self.new), fromfile=f"{server}/{self.name} (accepted)",
                                              tofile=f"{server}/{self.name} (now)", lineterm=""))


def _render(definition: Mapping[str, Any]) -> list[str]:
    """One definition as diffable lines: the description as its own lines (most changes are there), every other
    field as indented, key-sorted JSON."""
    lines: list[str] = []
    for key in ("name", "title", "description", "inputSchema", "outputSchema", "annotations"):
        value = definition.get(key)
        if key == "description" and isinstance(value, str):
            lines.append("description:")
            lines.extend("  " + line for line in (value.splitlines() or [""]))
            continue
        try:
            text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
        except (RecursionError, ValueError, TypeError):
            text = "(too deeply nested to show)"
        first, *rest = text.splitlines()
        lines.append(f"{key}: {first}")
        lines.extend("  " + line for line in rest)
    return lines


@dataclass(frozen=True)
class PinReview:
    """One server's listed tools compared with their pins.

    `allowed` are offered to the model (unchanged, new, or all of them the first time); `changed` are withheld;
    `new` names tools pinned just now on an already pinned server; `first_sight` is True when the server had no
    pins at all (everything was pinned, nothing is worth announcing)."""

    server: str
    allowed: tuple[McpTool, ...]
    changed: tuple[ToolChange, ...] = ()
    new: tuple[str, ...] = ()
    first_sight: bool = False

    @property
    def withheld(self) -> tuple[str, ...]:
        return tuple(change.name for change in self.changed)

    def warning(self) -> str:
        """One line for a non-interactive run: what is withheld and the command that reviews it."""
        names = ", ".join(repr(name) for name in self.withheld)
        what = f"tool {names} changed" if len(self.changed) == 1 else f"tools {names} changed"
        return (f"MCP server {self.server!r}: {what} since accepted, withheld from the model; review and accept "
                f"with `mini-claude mcp accept {self.server}`")

    def notes(self) -> list[str]:
        """Informational lines, one per tool pinned just now on an already pinned server ("new tool: x")."""
        return [f"MCP server {self.server!r}: new tool: {name}" for name in self.new]

    def diff(self) -> str:
        return "\n".join(change.diff(self.server) for change in self.changed)


class PinStore:
    """The pinned tool definitions of every server, in one JSON file (default `state_dir()/mcp-tool-pins.json`).

        store = PinStore(tmp_path / "pins.json")
        review = store.review("github https://…", "github", tools)   # pins on first sight
        review.changed        # ToolChange for each tool that differs from its pin (withheld)
        store.accept("github https://…", [change.tool for change in review.changed])
    """

    def __init__(self, path: Path, *, record: bool = True) -> None:
        self.path = path
        self.record = record  # False: review only looks (`mcp list` shows what a session would withhold)

    @classmethod
    def default(cls, env: Mapping[str, str] | None = None, *, record: bool = True) -> PinStore:
        return cls(paths.state_dir(env) / PINS_FILE_NAME, record=record)

    def review(self, key: str, server: str, tools: Sequence[McpTool]) -> PinReview:
        """Compare `tools` with the server's pins, pin what is seen for the first time (unless this store only
        looks: `record=False`), and say what to offer."""
        with self._locked():
            data = self._load()
            servers: dict[str, Any] = data["servers"]
            stored = servers.get(hashed_key(key))
            known = stored.get("tools") if isinstance(stored, dict) else None
            first_sight = not isinstance(known, dict)
            pins: dict[str, Any] = known if isinstance(known, dict) else {}
            allowed: list[McpTool] = []
            changed: list[ToolChange] = []
            new: list[str] = []
            dirty = False
            for tool in tools:
                definition = tool_definition(tool)
                digest = definition_digest(definition)
                pin = pins.get(tool.name)
                if digest != _UNHASHABLE and not (isinstance(pin, dict) and isinstance(pin.get("sha256"), str)):
                    pins[tool.name] = _pin_entry(definition, digest)
                    dirty = True
                    allowed.append(tool)
                    if not first_sight:
                        new.append(tool.name)
                elif isinstance(pin, dict) and pin.get("sha256") == digest:
                    allowed.append(tool)
                else:  # changed, or too deep to pin at all (fail closed: withheld, and accepting cannot pin it)
                    old = pin.get("definition") if isinstance(pin, dict) else None
                    changed.append(ToolChange(tool, old if isinstance(old, dict) else None, definition, digest))
            if (dirty or first_sight) and self.record:
                servers[hashed_key(key)] = {"tools": pins}
                self._save(data)
        return PinReview(server, tuple(allowed), tuple(changed), tuple(new), first_sight)

    def accept(self, key: str, tools: Iterable[McpTool]) -> list[str]:
        """Pin the current definitions of `tools` (the user accepted them); the names pinned, in order."""
        accepted: list[str] = []
        with self._locked():
            data = self._load()
            entry = data["servers"].setdefault(hashed_key(key), {"tools": {}})
            if not isinstance(entry, dict) or not isinstance(entry.get("tools"), dict):
                entry = data["servers"][hashed_key(key)] = {"tools": {}}
            for tool in tools:
                definition = tool_definition(tool)
                digest = definition_digest(definition)
                if digest == _UNHASHABLE:
                    continue
                entry["tools"][tool.name] = _pin_entry(definition, digest)
                accepted.append(tool.name)
            if accepted:
                self._save(data)
        return accepted

    def pinned(self, key: str) -> dict[str, str]:
        """Tool name → pinned digest, for one server ({} when it has none)."""
        entry = self._load()["servers"].get(hashed_key(key))
        tools = entry.get("tools") if isinstance(entry, dict) else None
        if not isinstance(tools, dict):
            return {}
        return {name: pin["sha256"] for name, pin in tools.items()
                if isinstance(pin, dict) and isinstance(pin.get("sha256"), str)}

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """An exclusive lock on `<file>.lock` around one read-modify-write (milliseconds), so concurrent sessions
        never drop each other's pins. Without a writable state directory the pins are simply not kept."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(f"{self.path}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        except OSError as exc:
            log.warning("cannot lock %s (%s); tool pins are not shared safely", self.path, exc.strerror or exc)
            yield
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def _load(self) -> dict[str, Any]:
        empty: dict[str, Any] = {"version": _VERSION, "servers": {}}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return empty
        except (OSError, ValueError, RecursionError) as exc:
            log.warning("ignoring unreadable MCP tool pins %s (%s): servers are pinned afresh", self.path, exc)
            return empty
        if not isinstance(data, dict) or not isinstance(data.get("servers"), dict):
            return empty
        return data

    def _save(self, data: dict[str, Any]) -> None:
        try:  # atomic: a concurrent reader sees the old or the new file
            write_json_atomic(self.path, data, new_mode=0o600)
        except OSError as exc:
            log.warning("could not save the MCP tool pins %s: %s", self.path, exc)


# told of a review worth showing the user: newly withheld tools (with their diffs) or new tools
ReviewCallback = Callable[[PinReview], None]


class ToolPins:
    """Pinning as the manager runs it across listings (startup, reconnect, `tools/list_changed`): each server's
    last tool list, and which withheld definitions the user was already told about, so a reconnect or a repeated
    `list_changed` does not ask again. Without a store every listed tool is offered.

        pins = ToolPins(PinStore.default(env), on_review=lambda review: print(review.warning()))
        review = pins.review(key, "github", tools)   # offer review.allowed; review.changed is withheld
        pins.announce("github")                      # on_review(review) if it has news for the user
    """

    def __init__(self, store: PinStore | None, on_review: ReviewCallback | None = None) -> None:
        self.store = store
        self.on_review = on_review
        self._listed: dict[str, list[McpTool]] = {}
        self._told: dict[str, frozenset[str]] = {}  # per server: the withheld "name digest"s last announced
        self._pending: dict[str, PinReview] = {}

    def review(self, key: str, server: str, listed: list[McpTool]) -> PinReview:
        """What to offer of a fresh listing; a review with news waits for `announce(server)`."""
        self._listed[server] = listed
        if self.store is None:
            return PinReview(server, tuple(listed))
        review = self.store.review(key, server, listed)
        withheld = frozenset(f"{change.name} {change.digest}" for change in review.changed)
        if review.new or (withheld and withheld != self._told.get(server, frozenset())):
            self._pending[server] = review
        self._told[server] = withheld
        return review

    def accept(self, key: str, server: str, changes: Sequence[ToolChange]) -> PinReview:
        """Pin what the user accepted, then review the server's last listing again (nothing to announce)."""
        if self.store is not None:
            self.store.accept(key, [change.tool for change in changes if change.pinnable])
        review = self.review(key, server, self._listed.get(server, []))
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


def _pin_entry(definition: dict[str, Any], digest: str) -> dict[str, Any]:
    text = _canonical(definition)
    if text is None or len(text) > MAX_STORED_DEFINITION_CHARS:
        return {"sha256": digest}
    return {"sha256": digest, "definition": definition}
