"""A `.ipynb` nested deeper than Python's JSON parser goes is shown as text by Read, and NotebookEdit refuses it
with the notebook error, instead of either tool failing with the parser's RecursionError. Found by the hostile
review of issue 26: a repository's `deep.ipynb` (`{"cells": [[[[…]]]]}`) made every Read of it fail, so the
model could not look at the file at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_claude.tools.base import ToolContext
from mini_claude.tools.notebook import NotebookEditTool
from mini_claude.tools.read import ReadFileTool

pytestmark = pytest.mark.timeout(30)

_DEPTH = 200_000


async def test_a_notebook_nested_too_deep_is_read_as_text_and_not_edited(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path, spill_dir=tmp_path / "spill")
    path = tmp_path / "deep.ipynb"
    path.write_text('{"cells": [' + "[" * _DEPTH + "]" * _DEPTH + "]}", encoding="utf-8")
    read = await ReadFileTool().run({"file_path": str(path)}, ctx)
    assert not read.is_error, read.as_text()
    assert '1\t{"cells": [[[[' in read.as_text()
    edit = await NotebookEditTool().run({"notebook_path": str(path), "cell_id": "x", "new_source": "y"}, ctx)
    assert edit.is_error and "is not valid notebook JSON" in edit.as_text(), edit.as_text()
    assert path.read_text(encoding="utf-8").startswith('{"cells": [[[[')
