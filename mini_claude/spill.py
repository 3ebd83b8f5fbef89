"""Saving what is too big (or not text) to show the model: a file, and a path the model can read instead."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

__all__ = ["preview", "spill_bytes", "spill_text"]

_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def _target(directory: Path, stem: str, digest: str, suffix: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    safe = _SAFE.sub("_", stem)[:60] or "output"
    return directory / f"{safe}-{digest[:12]}{suffix}"


def spill_text(text: str, directory: Path, stem: str, suffix: str = ".txt") -> Path:
    """Write `text` to a content-addressed file under `directory`; returns its path."""
    data = text.encode("utf-8", "surrogatepass")
    path = _target(directory, stem, hashlib.sha256(data).hexdigest(), suffix)
    if not path.exists():
        path.write_bytes(data)
    return path


def spill_bytes(data: bytes, directory: Path, stem: str, suffix: str = ".bin") -> Path:
    """Write binary `data` to a content-addressed file under `directory`; returns its path."""
    path = _target(directory, stem, hashlib.sha256(data).hexdigest(), suffix)
    if not path.exists():
        path.write_bytes(data)
    return path


def preview(text: str, max_chars: int) -> str:
    """Head and tail of `text` within about `max_chars`, with a marker saying how much was cut."""
    if len(text) <= max_chars:
        return text
    head = text[: max_chars * 3 // 4]
    tail = text[-(max_chars // 4):]
    cut = len(text) - len(head) - len(tail)
    return f"{head}\n… [{cut} characters omitted] …\n{tail}"
