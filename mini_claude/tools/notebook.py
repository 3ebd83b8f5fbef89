"""Jupyter notebooks: how `Read` shows one (`notebook_view`) and the `NotebookEdit` tool (Claude Code's name and
input: `notebook_path`, `cell_id`, `new_source`, `cell_type`, `edit_mode` replace / insert / delete).

Read shows each cell between `<cell id="…">` and `</cell>` (a markdown or raw cell says its type), followed by its
outputs in a compact text form: stream text, a result's `text/plain`, an error's name, value and traceback, and a
placeholder for images and other rich data. A cell without an id (nbformat before 4.5) is shown as `cell-N`, its
0-based index, and NotebookEdit takes that form too.

NotebookEdit edits the notebook's JSON (nbformat 4) and keeps everything else as it was: it needs the notebook to
have been read with Read in this session and unchanged on disk since (`ToolContext.read_files`, as Edit does);
replacing a code cell's source clears its outputs and execution count (they described the old code); an inserted
cell gets a fresh id when the notebook's cells carry ids (nbformat 4.5 and later). The file is written back with
Jupyter's own layout (one-space indent, non-ASCII kept, a final newline).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import stat
import uuid
from pathlib import Path
from typing import Any

from mini_claude.tools.base import FileState, ToolContext, ToolResult

__all__ = ["NOTEBOOK_EDIT_TOOL_NAME", "NotebookEditTool", "notebook_view"]

NOTEBOOK_EDIT_TOOL_NAME = "NotebookEdit"
MAX_NOTEBOOK_BYTES = 50 * 1024 * 1024
MAX_VIEW_CHARS = 100_000
MAX_OUTPUT_CHARS = 4000  # of one cell's outputs, in the view
_INDEX_ID_RE = re.compile(r"^cell-(\d+)$")
_ANSI_RE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_EDIT_MODES = ("replace", "insert", "delete")
_CELL_TYPES = ("code", "markdown")


# --------------------------------------------------------------------------------------------------------------
# reading


def _text(value: Any) -> str:
    """nbformat's multiline string: a string, or a list of strings to be joined."""
    if isinstance(value, list):
        return "".join(v for v in value if isinstance(v, str))
    return value if isinstance(value, str) else ""


def _output_text(output: Any) -> str:
    if not isinstance(output, dict):
        return ""
    kind = output.get("output_type")
    if kind == "stream":
        return _text(output.get("text"))
    if kind == "error":
        trace = "\n".join(_text(line) for line in output.get("traceback") or [])
        head = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
        return _ANSI_RE.sub("", trace) if trace else head
    data = output.get("data")
    if isinstance(data, dict):
        if "text/plain" in data:
            return _text(data["text/plain"])
        return " ".join(f"[{mime} output]" for mime in data)
    return ""


def _cells(notebook: Any) -> list[dict[str, Any]] | None:
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        return None
    cells = notebook["cells"]
    return cells if all(isinstance(cell, dict) for cell in cells) else None


def _cell_id(cell: dict[str, Any], index: int) -> str:
    given = cell.get("id")
    return given if isinstance(given, str) and given else f"cell-{index}"


def notebook_view(data: bytes, path: Path) -> ToolResult | None:
    """The notebook as Read shows it, or None when `data` is not a notebook (Read then shows it as text)."""
    try:
        cells = _cells(json.loads(data.decode("utf-8", "replace")))
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes: shown as text
        return None
    if cells is None:
        return None
    parts: list[str] = []
    size = 0
    for index, cell in enumerate(cells):
        ident = _cell_id(cell, index)
        kind = cell.get("cell_type")
        typed = f' type="{kind}"' if kind in ("markdown", "raw") else ""
        piece = f'<cell id="{ident}"{typed}>\n{_text(cell.get("source"))}\n</cell>'
        outputs = "\n".join(t.rstrip("\n") for t in map(_output_text, cell.get("outputs") or []) if t.strip())
        if outputs:
            if len(outputs) > MAX_OUTPUT_CHARS:
                outputs = outputs[:MAX_OUTPUT_CHARS] + f"\n… [output cut: {len(outputs)} characters]"
            piece += f'\n<output cell="{ident}">\n{outputs}\n</output>'
        if parts and size + len(piece) > MAX_VIEW_CHARS:
            parts.append(f"(notebook {path} has {len(cells)} cells; showing the first {index}: output capped at "
                         f"{MAX_VIEW_CHARS} characters)")
            break
        parts.append(piece)
        size += len(piece) + 1
    if not parts:
        return ToolResult.text(f"(notebook {path} has no cells)")
    return ToolResult.text("\n".join(parts))


# --------------------------------------------------------------------------------------------------------------
# editing


class _Refused(Exception):
    """An edit that cannot be made, with the message for the model."""


def _find(cells: list[dict[str, Any]], cell_id: str) -> int:
    for index, cell in enumerate(cells):
        if cell.get("id") == cell_id:
            return index
    match = _INDEX_ID_RE.match(cell_id)
    if match and int(match.group(1)) < len(cells) and not isinstance(cells[int(match.group(1))].get("id"), str):
        return int(match.group(1))
    shown = ", ".join(_cell_id(cell, i) for i, cell in enumerate(cells[:20]))
    raise _Refused(f"no cell with id {cell_id!r} in the notebook (its cells: {shown or 'none'}"
                   f"{', …' if len(cells) > 20 else ''}); Read shows each cell's id")


def _new_cell(kind: str, source: str, with_id: bool) -> dict[str, Any]:
    cell: dict[str, Any] = {"cell_type": kind}
    if with_id:
        cell["id"] = uuid.uuid4().hex[:8]
    cell["metadata"] = {}
    cell["source"] = source
    if kind == "code":
        cell["execution_count"] = None
        cell["outputs"] = []
    return cell


def _apply(notebook: dict[str, Any], args: dict[str, Any]) -> str:
    """Make the edit `args` asks for in `notebook` (in place); returns what was done."""
    cells = _cells(notebook)
    if cells is None:
        raise _Refused("the file is not a Jupyter notebook (no list of cells)")
    mode = args.get("edit_mode") or "replace"
    cell_id = args.get("cell_id")
    kind = args.get("cell_type")
    source = args.get("new_source")
    if cell_id is not None and (not isinstance(cell_id, str) or not cell_id):
        raise _Refused("cell_id must be a non-empty string")
    if kind is not None and kind not in _CELL_TYPES:
        raise _Refused(f"cell_type must be one of {', '.join(_CELL_TYPES)}")
    if mode not in _EDIT_MODES:
        raise _Refused(f"edit_mode must be one of {', '.join(_EDIT_MODES)}")
    if not isinstance(source, str) and mode != "delete":
        raise _Refused("new_source must be a string")
    if mode == "insert":
        if kind is None:
            raise _Refused("inserting a cell needs its cell_type (code or markdown)")
        at = _find(cells, cell_id) + 1 if cell_id is not None else 0
        with_id = any(isinstance(cell.get("id"), str) for cell in cells) or _has_ids(notebook)
        cell = _new_cell(kind, str(source), with_id)
        cells.insert(at, cell)
        where = f"after cell {cell_id}" if cell_id is not None else "at the start"
        return f"Inserted a {kind} cell {_cell_id(cell, at)} {where}"
    if cell_id is None:
        raise _Refused(f"{mode} needs the cell_id of the cell to {mode}")
    index = _find(cells, cell_id)
    if mode == "delete":
        del cells[index]
        return f"Deleted cell {cell_id}"
    cell = cells[index]
    old_kind = cell.get("cell_type")
    new_kind = kind or old_kind
    cell["source"] = source
    note = ""
    if new_kind != old_kind:
        cell["cell_type"] = new_kind
        note = f" (now a {new_kind} cell)"
    if new_kind == "code":
        cleared = bool(cell.get("outputs"))
        cell["outputs"] = []
        cell["execution_count"] = None
        note += "; its outputs were cleared" if cleared else ""
    else:
        cell.pop("outputs", None)
        cell.pop("execution_count", None)
    return f"Replaced the source of cell {cell_id}{note}"


def _has_ids(notebook: dict[str, Any]) -> bool:
    """Does this notebook's format give cells ids (nbformat 4.5 or later)?"""
    major, minor = notebook.get("nbformat"), notebook.get("nbformat_minor")
    return isinstance(major, int) and isinstance(minor, int) and (major, minor) >= (4, 5)


def _absolute(raw: str, ctx: ToolContext) -> Path:
    """The path as Read keys `read_files` (files.py: resolved, `..` folded, symlinks kept)."""
    return Path(os.path.abspath(ctx.resolve(raw)))


def _edit_sync(path: Path, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                return ToolResult.error(f"{path} is not a regular file")
            state = ctx.read_files.get(path)
            if state is None:
                return ToolResult.error(f"{path} has not been read in this session; read it with Read before "
                                        "editing it")
            if state.mtime_ns != st.st_mtime_ns or state.size != st.st_size:
                return ToolResult.error(f"{path} changed on disk since it was read; read it again")
            if st.st_size > MAX_NOTEBOOK_BYTES:
                return ToolResult.error(f"{path} is {st.st_size} bytes; notebooks over {MAX_NOTEBOOK_BYTES} bytes "
                                        "are not edited")
            data = f.read()
    except (FileNotFoundError, NotADirectoryError):
        return ToolResult.error(f"{path} does not exist")
    except OSError as exc:
        return ToolResult.error(f"cannot read {path}: {exc.strerror or exc}")
    try:
        notebook = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        return ToolResult.error(f"{path} is not valid notebook JSON: {exc}")
    if not isinstance(notebook, dict):
        return ToolResult.error(f"{path} is not a Jupyter notebook (not a JSON object)")
    try:
        done = _apply(notebook, args)
    except _Refused as exc:
        return ToolResult.error(str(exc))
    text = json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        new = os.stat(path)
    except OSError as exc:
        return ToolResult.error(f"cannot write {path}: {exc.strerror or exc}")
    ctx.read_files[path] = FileState(mtime_ns=new.st_mtime_ns, size=new.st_size)
    return ToolResult.text(f"{done} in {path}")


class NotebookEditTool:
    """Replaces, inserts or deletes one cell of a Jupyter notebook that was read first."""

    name = NOTEBOOK_EDIT_TOOL_NAME
    description = (
        "Edit one cell of a Jupyter notebook (.ipynb). Read the notebook first: Read shows every cell with its id. "
        "edit_mode `replace` (default) sets the source of the cell `cell_id` (a code cell's outputs are cleared); "
        "`insert` adds a new cell of cell_type after the cell `cell_id`, or at the start when cell_id is left out; "
        "`delete` removes the cell `cell_id`. cell_type (code or markdown) may also change a replaced cell's type. "
        "The notebook must not have changed on disk since it was read."
    )
    read_only = False

    def __init__(self) -> None:
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "notebook_path": {"type": "string", "description": "The notebook to edit (absolute, or relative "
                                  "to the working directory)."},
                "cell_id": {"type": "string", "description": "The id of the cell to replace or delete, or to "
                            "insert after (as Read shows it)."},
                "new_source": {"type": "string", "description": "The cell's new source."},
                "cell_type": {"type": "string", "enum": list(_CELL_TYPES), "description": "The cell's type; "
                              "needed to insert, optional to replace (default: the cell's own)."},
                "edit_mode": {"type": "string", "enum": list(_EDIT_MODES), "description": "replace (default), "
                              "insert or delete."},
            },
            "required": ["notebook_path", "new_source"],
        }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raw = args.get("notebook_path")
        if not isinstance(raw, str) or not raw.strip():
            return ToolResult.error("notebook_path must be a non-empty string")
        path = _absolute(raw, ctx)
        if path.suffix.lower() != ".ipynb":
            return ToolResult.error(f"{path} is not a Jupyter notebook (.ipynb); use Edit for other files")
        return await asyncio.to_thread(_edit_sync, path, args, ctx)
