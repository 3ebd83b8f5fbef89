"""MCP tool results → Anthropic `tool_result` content blocks (text and image only).

Every MCP content type maps to something the model API accepts, and nothing a server sends can make the
conversion fail or produce a block the API would reject (an empty text, an image whose bytes are not the media
type it claims, an unsupported image format):

* text → text (empty / whitespace-only texts are dropped: the API refuses them)
* image png/jpeg/gif/webp (≤ `MAX_IMAGE_BYTES`) → image; other images, audio, blobs → a file and a line naming it
* embedded resource: text inline under its URI; blob → file (inline when it is UTF-8 text, an image block when
  it is a supported image)
* resource_link → one descriptive line; structuredContent → JSON text unless a text block already carries it
* unknown types → a line describing them
* text beyond the output limit (`MAX_MCP_OUTPUT_TOKENS`, ~4 characters a token) → a file, a preview and a warning

Work is linear in the size of the result (one pass over the blocks; base64 is decoded once, only for files and
format sniffing), so a 40 MB result converts in well under a second.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import math
import mimetypes
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mini_claude.mcp.protocol import CallToolResult
from mini_claude.spill import preview, spill_bytes, spill_text

__all__ = [
    "CHARS_PER_TOKEN",
    "DEFAULT_MAX_OUTPUT_TOKENS",
    "IMAGE_MEDIA_TYPES",
    "MAX_IMAGE_BYTES",
    "PREVIEW_CHARS",
    "ConvertedResult",
    "convert_result",
    "output_token_limit",
]

log = logging.getLogger(__name__)

DEFAULT_MAX_OUTPUT_TOKENS = 25_000  # MAX_MCP_OUTPUT_TOKENS's default
CHARS_PER_TOKEN = 4  # the estimate: 25 000 tokens ≈ 100 KB of text
PREVIEW_CHARS = 4_000  # what the model sees of an output that went to a file (never more than the limit)
IMAGE_MEDIA_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
MAX_IMAGE_BYTES = 5 * 1024 * 1024  # the model API's per-image limit; bigger images go to a file
_DESCRIBE_CHARS = 300  # how much of an unknown block is quoted
_TEXT_TYPES = frozenset({"application/json", "application/xml", "application/yaml", "application/x-yaml",
                         "application/javascript", "application/toml", "application/x-sh"})
# file suffixes for common types; `mimetypes` alone depends on the machine's /etc/mime.types
_SUFFIXES = {
    "image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp", "image/svg+xml": ".svg",
    "image/bmp": ".bmp", "image/tiff": ".tiff", "image/x-icon": ".ico", "image/avif": ".avif",
    "audio/wav": ".wav", "audio/x-wav": ".wav", "audio/wave": ".wav", "audio/mpeg": ".mp3", "audio/mp3": ".mp3",
    "audio/ogg": ".ogg", "audio/flac": ".flac", "audio/webm": ".webm", "audio/aac": ".aac", "audio/mp4": ".m4a",
    "application/pdf": ".pdf", "application/json": ".json", "application/zip": ".zip", "application/gzip": ".gz",
    "text/plain": ".txt", "text/csv": ".csv", "text/html": ".html", "text/markdown": ".md",
}


@dataclass(frozen=True)
class ConvertedResult:
    """Anthropic content blocks for a tool_result, the error flag, and notes for the user/model."""

    blocks: list[dict[str, Any]]
    is_error: bool
    warnings: list[str] = field(default_factory=list)


def output_token_limit() -> int:
    """The output limit in tokens: env MAX_MCP_OUTPUT_TOKENS, else `DEFAULT_MAX_OUTPUT_TOKENS`."""
    raw = os.environ.get("MAX_MCP_OUTPUT_TOKENS", "").strip()
    try:
        value = int(raw)
    except ValueError:
        return DEFAULT_MAX_OUTPUT_TOKENS
    return value if value > 0 else DEFAULT_MAX_OUTPUT_TOKENS


def convert_result(
    result: CallToolResult,
    *,
    spill_dir: Path,
    stem: str,
    max_output_tokens: int | None = None,
) -> ConvertedResult:
    """Convert one `tools/call` result. Files (binary content, oversized text) are written under `spill_dir`,
    named after `stem` (e.g. the qualified tool name)."""
    converter = _Converter(spill_dir, stem)
    for block in result.content:
        converter.add(block)
    structured = result.structured_content
    if structured is not None and not _duplicated(structured, converter.texts):
        try:
            converter.text(json.dumps(structured, ensure_ascii=False, indent=None))
        except (TypeError, ValueError):  # not JSON (cannot happen from the wire); say so rather than crash
            converter.text(f"[structured content that is not JSON: {structured!r:.{_DESCRIBE_CHARS}}]")
    limit = max_output_tokens if max_output_tokens and max_output_tokens > 0 else output_token_limit()
    converter.enforce_limit(limit)
    blocks = converter.blocks or [{"type": "text", "text": "(no content)"}]
    return ConvertedResult(blocks=blocks, is_error=result.is_error, warnings=converter.warnings)


class _Converter:
    """Accumulates blocks; remembers the raw text blocks (for the structuredContent duplicate check)."""

    def __init__(self, spill_dir: Path, stem: str) -> None:
        self.spill_dir = spill_dir
        self.stem = stem
        self.blocks: list[dict[str, Any]] = []
        self.texts: list[str] = []  # the server's own text blocks
        self.warnings: list[str] = []
        self._files = 0

    def text(self, text: str) -> None:
        if text and not text.isspace():  # (isspace: no copy of a big text)
            self.blocks.append({"type": "text", "text": text})

    def add(self, block: Any) -> None:
        if not isinstance(block, dict):
            self.text(f"[content item that is not an object: {block!r:.{_DESCRIBE_CHARS}}]")
            return
        kind = block.get("type")
        try:
            if kind == "text":
                text = block.get("text")
                if not isinstance(text, str):
                    self.text(_describe(block, "text block without a text string"))
                    return
                self.texts.append(text)
                self.text(text)
            elif kind == "image":
                self._image(block.get("data"), block.get("mimeType"), what="image")
            elif kind == "audio":
                self._binary(block.get("data"), block.get("mimeType"), what="audio")
            elif kind == "resource":
                self._resource(block.get("resource"))
            elif kind == "resource_link":
                self.text(_resource_link(block))
            else:
                self.text(_describe(block, f"unsupported MCP content type {kind!r}"))
        except OSError as exc:  # the spill directory is not writable: the model still gets a line
            log.warning("could not save MCP %s content: %s", kind, exc)
            self.text(f"[{kind} content could not be saved to a file: {exc}]")
            self.warnings.append(f"could not save {kind} content to {self.spill_dir}: {exc}")
        except Exception:  # a converter bug must cost one block, never the tool result
            log.exception("could not convert an MCP %r content block", kind)
            self.text(_describe(block, f"MCP {kind!r} content that could not be converted"))

    def _image(self, data: Any, mime: Any, *, what: str, label: str = "") -> None:
        raw = _b64decode(data)
        if raw is None:
            self.text(f"[{what}{label}: invalid or missing base64 data ({_mime(mime) or 'no mime type'})]")
            return
        sniffed = _sniff_image(raw)
        declared = _mime(mime)
        if sniffed is not None and len(raw) <= MAX_IMAGE_BYTES:
            if declared and declared != sniffed:
                log.debug("image declared %s is really %s", declared, sniffed)
            if label:
                self.text(f"[{what}{label} ({sniffed}, {len(raw)} bytes) follows]")
            self.blocks.append({"type": "image", "source": {"type": "base64", "media_type": sniffed,
                                                            "data": _clean_b64(data)}})
            return
        why = "too large to show" if sniffed is not None else "format not shown to the model"
        self._save(raw, declared or "application/octet-stream", what=what, label=label, note=why)

    def _binary(self, data: Any, mime: Any, *, what: str, label: str = "") -> None:
        raw = _b64decode(data)
        if raw is None:
            self.text(f"[{what}{label}: invalid or missing base64 data ({_mime(mime) or 'no mime type'})]")
            return
        self._save(raw, _mime(mime) or "application/octet-stream", what=what, label=label)

    def _save(self, raw: bytes, mime: str, *, what: str, label: str, note: str = "") -> None:
        self._files += 1
        suffix = _suffix(mime)
        path = spill_bytes(raw, self.spill_dir, f"{self.stem}-{what}-{self._files}", suffix)
        extra = f"; {note}" if note else ""
        self.text(f"[{what}{label} ({mime}, {len(raw)} bytes{extra}) saved to {path}]")

    def _resource(self, resource: Any) -> None:
        if not isinstance(resource, dict):
            self.text(_describe({"type": "resource", "resource": resource}, "embedded resource without contents"))
            return
        uri = resource.get("uri")
        uri_text = uri if isinstance(uri, str) else "(no uri)"
        mime = _mime(resource.get("mimeType"))
        text = resource.get("text")
        if isinstance(text, str):
            header = f"[resource {uri_text}" + (f" ({mime})" if mime else "") + "]"
            self.text(f"{header}\n{text}" if text else f"{header} (empty)")
            return
        blob = resource.get("blob")
        if isinstance(blob, str):
            decoded = _text_blob(blob, mime)
            if decoded is not None:  # a text document sent as a blob: the model reads it inline
                header = f"[resource {uri_text} ({mime})]"
                self.text(f"{header}\n{decoded}" if decoded.strip() else f"{header} (empty)")
            elif mime in IMAGE_MEDIA_TYPES:
                self._image(blob, mime, what="resource", label=f" {uri_text}")
            else:
                self._binary(blob, mime, what="resource", label=f" {uri_text}")
            return
        self.text(f"[resource {uri_text}: no text or blob]")

    def enforce_limit(self, max_tokens: int) -> None:
        """Text over the limit goes to one file; the model gets a preview and the path (images are kept)."""
        max_chars = max_tokens * CHARS_PER_TOKEN
        total = sum(len(b["text"]) for b in self.blocks if b["type"] == "text")
        if total <= max_chars:
            return
        full = "\n".join(b["text"] for b in self.blocks if b["type"] == "text")
        shown = preview(full, max(200, min(PREVIEW_CHARS, max_chars // 2)))
        tokens = math.ceil(len(full) / CHARS_PER_TOKEN)
        size = f"{len(full)} characters (~{tokens} tokens, limit {max_tokens})"
        try:
            path = spill_text(full, self.spill_dir, f"{self.stem}-output")
        except OSError as exc:
            log.warning("could not save a large MCP output: %s", exc)
            note = f"[output too large for the context: {size}; only this preview is shown (saving it failed)]"
            warning = (f"MCP output of {self.stem} was ~{tokens} tokens, over the {max_tokens}-token limit "
                       f"(MAX_MCP_OUTPUT_TOKENS), and could not be saved to {self.spill_dir}: {exc}")
        else:
            note = (f"[output too large for the context: {size}; the full output was saved to {path} — read or "
                    "search that file for the rest]")
            warning = (f"MCP output of {self.stem} was ~{tokens} tokens, over the {max_tokens}-token limit "
                       f"(MAX_MCP_OUTPUT_TOKENS); saved to {path}")
        images = [b for b in self.blocks if b["type"] != "text"]
        self.blocks = [{"type": "text", "text": f"{shown}\n\n{note}"}, *images]
        self.warnings.append(warning)


def _duplicated(structured: Any, texts: list[str]) -> bool:
    """Does a text block already carry `structured`? (The spec asks servers to send its JSON as text too.)

    Also true when a one-field object wraps what a text says: FastMCP sends `"42"` with `{"result": 42}`, and
    the filesystem server its text with `{"content": text}`.
    """
    inner = next(iter(structured.values())) if isinstance(structured, dict) and len(structured) == 1 else None
    for text in texts:
        if isinstance(inner, str) and text == inner:
            return True
        stripped = text.strip()
        if not stripped or stripped[0] not in '{["-0123456789tfn':
            continue
        try:
            value = json.loads(stripped)
        except (ValueError, RecursionError):
            continue
        if value == structured or (inner is not None and value == inner):
            return True
    return False


def _resource_link(block: dict[str, Any]) -> str:
    name = block.get("title") or block.get("name")
    uri = block.get("uri")
    parts = ["resource link:"]
    if isinstance(name, str) and name:
        parts.append(name)
    parts.append(f"<{uri}>" if isinstance(uri, str) else "<no uri>")
    mime = _mime(block.get("mimeType"))
    if mime:
        parts.append(f"({mime})")
    line = " ".join(parts)
    description = block.get("description")
    if isinstance(description, str) and description.strip():
        line += f" – {description.strip()}"
    return line


def _describe(block: dict[str, Any], what: str) -> str:
    try:
        shown = json.dumps(block, ensure_ascii=False, default=repr)
    except (TypeError, ValueError, RecursionError):
        shown = repr(block)
    if len(shown) > _DESCRIBE_CHARS:
        shown = shown[:_DESCRIBE_CHARS] + "…"
    return f"[{what}: {shown}]"


def _mime(value: Any) -> str:
    return value.strip().lower() if isinstance(value, str) else ""


def _suffix(mime: str) -> str:
    base = mime.split(";", 1)[0].strip()
    if not base:
        return ".bin"
    return _SUFFIXES.get(base) or mimetypes.guess_extension(base, strict=False) or ".bin"


def _is_textual(mime: str) -> bool:
    base = mime.split(";", 1)[0].strip()
    return base.startswith("text/") or base in _TEXT_TYPES or base.endswith(("+json", "+xml"))


def _text_blob(blob: str, mime: str) -> str | None:
    """The blob as text, when its type says text and its bytes are UTF-8; else None."""
    if not mime or not _is_textual(mime):
        return None
    raw = _b64decode(blob)
    if raw is None:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _clean_b64(data: str) -> str:
    """The base64 payload alone: without a `data:...;base64,` prefix and without line breaks."""
    if data.startswith("data:"):
        data = data.partition(",")[2]
    if "\n" in data or "\r" in data or " " in data:
        data = "".join(data.split())
    return data


def _b64decode(data: Any) -> bytes | None:
    if not isinstance(data, str) or not data:
        return None
    try:
        return base64.b64decode(_clean_b64(data), validate=True)
    except (binascii.Error, ValueError):
        return None


def _sniff_image(raw: bytes) -> str | None:
    """The real format of image bytes, if it is one the model API takes (a wrong mimeType would be a 400)."""
    if raw.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if raw.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if raw.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if raw[:4] == b"RIFF" and raw[8:12] == b"WEBP":
        return "image/webp"
    return None
