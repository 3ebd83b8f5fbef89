"""NotebookEdit and Read of a notebook on real .ipynb files, and how the gate and hooks treat NotebookEdit."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from mini_claude.hooks.claude_form import claude_tool_input
from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.tools.base import ToolContext
from mini_claude.tools.builtins import builtin_tools
from mini_claude.tools.notebook import NotebookEditTool
from mini_claude.tools.read import ReadFileTool

pytestmark = pytest.mark.timeout(30)


def notebook(minor: int = 5) -> dict[str, Any]:
    def cell_id(value: str) -> dict[str, str]:
        return {"id": value} if minor >= 5 else {}

    return {
        "nbformat": 4, "nbformat_minor": minor,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "cells": [
            {"cell_type": "markdown", **cell_id("intro"), "metadata": {}, "source": ["# Título\n", "Some text"]},
            {"cell_type": "code", **cell_id("c1"), "metadata": {"tags": ["keep"]}, "execution_count": 3,
             "source": ["x = 1\n", "print(x)"],
             "outputs": [{"output_type": "stream", "name": "stdout", "text": ["1\n"]},
                         {"output_type": "execute_result", "execution_count": 3, "metadata": {},
                          "data": {"text/plain": ["42"], "text/html": ["<b>42</b>"]}},
                         {"output_type": "display_data", "metadata": {}, "data": {"image/png": "iVBOR"}}]},
            {"cell_type": "code", **cell_id("c2"), "metadata": {}, "execution_count": 4, "source": "1/0",
             "outputs": [{"output_type": "error", "ename": "ZeroDivisionError", "evalue": "division by zero",
                          "traceback": ["\x1b[0;31mZeroDivisionError\x1b[0m: division by zero"]}]},
        ],
    }


@pytest.fixture
def nb_path(ctx: ToolContext) -> Path:
    path = ctx.cwd / "analysis.ipynb"
    path.write_text(json.dumps(notebook(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def put(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


def raw(path: Path) -> bytes:
    return path.read_bytes()


def text_of(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


async def read(ctx: ToolContext, path: Path) -> str:
    result = await ReadFileTool().run({"file_path": str(path)}, ctx)
    assert not result.is_error, result.as_text()
    return result.as_text()


async def edit(ctx: ToolContext, path: Path, **args: Any) -> tuple[bool, str]:
    result = await NotebookEditTool().run({"notebook_path": str(path), **args}, ctx)
    return result.is_error, result.as_text()


async def test_read_shows_cells_ids_and_outputs(ctx: ToolContext, nb_path: Path) -> None:
    assert await read(ctx, nb_path) == "\n".join([
        '<cell id="intro" type="markdown">', "# Título", "Some text", "</cell>",
        '<cell id="c1">', "x = 1", "print(x)", "</cell>",
        '<output cell="c1">', "1", "42", "[image/png output]", "</output>",
        '<cell id="c2">', "1/0", "</cell>",
        '<output cell="c2">', "ZeroDivisionError: division by zero", "</output>",
    ])


async def test_read_of_a_notebook_without_ids_names_cells_by_index(ctx: ToolContext) -> None:
    path = ctx.cwd / "old.ipynb"
    put(path, json.dumps(notebook(minor=4)))
    text = await read(ctx, path)
    assert text.startswith('<cell id="cell-0" type="markdown">\n# Título')
    assert '<cell id="cell-2">\n1/0\n</cell>' in text
    # and NotebookEdit takes that form
    assert await edit(ctx, path, cell_id="cell-2", new_source="2/1") == (
        False, f"Replaced the source of cell cell-2; its outputs were cleared in {path}")
    assert load(path)["cells"][2]["source"] == "2/1" and "id" not in load(path)["cells"][2]


async def test_read_of_a_broken_notebook_shows_its_text(ctx: ToolContext) -> None:
    path = ctx.cwd / "broken.ipynb"
    put(path, '{"cells": [\n')
    assert await read(ctx, path) == '     1\t{"cells": ['


async def test_replace_clears_outputs_and_keeps_the_rest(ctx: ToolContext, nb_path: Path) -> None:
    await read(ctx, nb_path)
    failed, text = await edit(ctx, nb_path, cell_id="c1", new_source="x = 5\nprint(x)")
    assert not failed and text == f"Replaced the source of cell c1; its outputs were cleared in {nb_path}"
    data = load(nb_path)
    cell = data["cells"][1]
    assert cell == {"cell_type": "code", "id": "c1", "metadata": {"tags": ["keep"]}, "execution_count": None,
                    "source": "x = 5\nprint(x)", "outputs": []}
    assert data["cells"][0] == notebook()["cells"][0] and data["metadata"] == notebook()["metadata"]
    # Jupyter's layout: one-space indent, non-ASCII kept, final newline
    assert text_of(nb_path) == json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    assert "Título" in text_of(nb_path)
    # the edit's own write counts as read: a second edit needs no new Read
    failed, text = await edit(ctx, nb_path, cell_id="intro", new_source="plain", cell_type="code")
    assert not failed and text == f"Replaced the source of cell intro (now a code cell) in {nb_path}"
    assert load(nb_path)["cells"][0] == {"cell_type": "code", "id": "intro", "metadata": {},
                                         "source": "plain", "outputs": [], "execution_count": None}


async def test_insert_after_a_cell_and_at_the_start(ctx: ToolContext, nb_path: Path) -> None:
    await read(ctx, nb_path)
    failed, text = await edit(ctx, nb_path, cell_id="c1", new_source="## Notes", cell_type="markdown",
                              edit_mode="insert")
    assert not failed
    cells = load(nb_path)["cells"]
    new = cells[2]
    assert text == f"Inserted a markdown cell {new['id']} after cell c1 in {nb_path}"
    assert new["cell_type"] == "markdown" and new["source"] == "## Notes" and new["metadata"] == {}
    assert len(new["id"]) == 8 and new["id"] not in ("intro", "c1", "c2")
    assert "outputs" not in new
    failed, text = await edit(ctx, nb_path, new_source="import os", cell_type="code", edit_mode="insert")
    first = load(nb_path)["cells"][0]
    assert not failed and text == f"Inserted a code cell {first['id']} at the start in {nb_path}"
    assert first["outputs"] == [] and first["execution_count"] is None
    assert [c.get("id") for c in load(nb_path)["cells"]][1:] == ["intro", "c1", new["id"], "c2"]
    # the notebook still reads as a notebook, ids and all
    assert f'<cell id="{new["id"]}" type="markdown">\n## Notes\n</cell>' in await read(ctx, nb_path)


async def test_insert_into_a_notebook_without_ids_adds_none(ctx: ToolContext) -> None:
    path = ctx.cwd / "old.ipynb"
    put(path, json.dumps(notebook(minor=4)))
    await read(ctx, path)
    failed, text = await edit(ctx, path, new_source="x", cell_type="code", edit_mode="insert")
    assert not failed and text == f"Inserted a code cell cell-0 at the start in {path}"
    assert all("id" not in cell for cell in load(path)["cells"])


async def test_delete(ctx: ToolContext, nb_path: Path) -> None:
    await read(ctx, nb_path)
    assert await edit(ctx, nb_path, cell_id="c2", new_source="", edit_mode="delete") == (
        False, f"Deleted cell c2 in {nb_path}")
    assert [c["id"] for c in load(nb_path)["cells"]] == ["intro", "c1"]


async def test_unread_notebook_refused(ctx: ToolContext, nb_path: Path) -> None:
    before = raw(nb_path)
    failed, text = await edit(ctx, nb_path, cell_id="c1", new_source="y")
    assert failed and text == f"{nb_path} has not been read in this session; read it with Read before editing it"
    assert raw(nb_path) == before


async def test_notebook_changed_on_disk_refused(ctx: ToolContext, nb_path: Path) -> None:
    await read(ctx, nb_path)
    changed = notebook()
    changed["cells"][0]["source"] = "someone else's edit"
    put(nb_path, json.dumps(changed))
    os.utime(nb_path, ns=(1, 1))
    failed, text = await edit(ctx, nb_path, cell_id="c1", new_source="y")
    assert failed and text == f"{nb_path} changed on disk since it was read; read it again"
    assert load(nb_path)["cells"][0]["source"] == "someone else's edit"


async def test_bad_cell_ids_and_arguments(ctx: ToolContext, nb_path: Path) -> None:
    await read(ctx, nb_path)
    before = raw(nb_path)
    failed, text = await edit(ctx, nb_path, cell_id="nope", new_source="y")
    assert failed and text == ("no cell with id 'nope' in the notebook (its cells: intro, c1, c2); Read shows each "
                               "cell's id")
    # `cell-N` names a cell by index only where cells have no ids
    assert (await edit(ctx, nb_path, cell_id="cell-1", new_source="y"))[0]
    failed, text = await edit(ctx, nb_path, cell_id="c1", new_source="y", edit_mode="insert")
    assert failed and text == "inserting a cell needs its cell_type (code or markdown)"
    failed, text = await edit(ctx, nb_path, new_source="y")
    assert failed and text == "replace needs the cell_id of the cell to replace"
    failed, text = await edit(ctx, nb_path, cell_id="c1", new_source="y", edit_mode="append")
    assert failed and text == "edit_mode must be one of replace, insert, delete"
    assert raw(nb_path) == before
    other = ctx.cwd / "a.py"
    put(other, "x")
    failed, text = await edit(ctx, other, cell_id="c1", new_source="y")
    assert failed and text == f"{other} is not a Jupyter notebook (.ipynb); use Edit for other files"


def test_offered_among_the_builtins() -> None:
    names = [tool.name for tool in builtin_tools()]
    assert names.index("NotebookEdit") == names.index("Edit") + 1
    tool = next(t for t in builtin_tools() if t.name == "NotebookEdit")
    assert tool.input_schema["required"] == ["notebook_path", "new_source"]
    assert set(tool.input_schema["properties"]) == {"notebook_path", "cell_id", "new_source", "cell_type",
                                                    "edit_mode"}


# --------------------------------------------------------------------------------------------- gate and hooks


class Asker:
    def __init__(self) -> None:
        self.asked: list[str] = []

    async def __call__(self, tool: Any, args: dict[str, Any]) -> str:
        self.asked.append(tool.name)
        return "no"


def gate_for(tmp_path: Path, mode: str = "default", *, allow: tuple[str, ...] = (), deny: tuple[str, ...] = (),
             ask: Asker | None = None) -> PermissionGate:
    return PermissionGate(PermissionMode.parse(mode), RuleSet.from_strings(allow=allow, deny=deny), ask=ask,
                          cwd=tmp_path / "work", home=tmp_path / "home")


def call(path: str) -> dict[str, Any]:
    return {"notebook_path": path, "cell_id": "c1", "new_source": "x"}


async def test_gate_edit_rules_cover_notebook_edit(tmp_path: Path) -> None:
    tool = NotebookEditTool()
    decision = await gate_for(tmp_path, allow=("Edit(*.ipynb)",), deny=("Edit(secret/**)",)).check(
        tool, call("secret/x.ipynb"))
    assert not decision.allowed and decision.reason == (
        'permission denied for NotebookEdit: denied by rule "Edit(secret/**)" in rules')
    decision = await gate_for(tmp_path, allow=("Edit(*.ipynb)",)).check(tool, call("a.ipynb"))
    assert decision.allowed and decision.reason == 'allowed by rule "Edit(*.ipynb)" in rules'
    decision = await gate_for(tmp_path, deny=("NotebookEdit",), mode="bypassPermissions").check(tool, call("a.ipynb"))
    assert not decision.allowed and "NotebookEdit" in decision.reason


async def test_gate_modes(tmp_path: Path) -> None:
    tool = NotebookEditTool()
    decision = await gate_for(tmp_path, "acceptEdits").check(tool, call("a.ipynb"))
    assert decision.allowed and decision.reason == "acceptEdits mode"
    decision = await gate_for(tmp_path, "plan", allow=("Edit",)).check(tool, call("a.ipynb"))
    assert not decision.allowed and "plan mode is read-only" in decision.reason
    asker = Asker()
    decision = await gate_for(tmp_path, ask=asker).check(tool, call("a.ipynb"))
    assert not decision.allowed and asker.asked == ["NotebookEdit"]
    decision = await gate_for(tmp_path).check(tool, call("a.ipynb"))  # nobody to ask
    assert not decision.allowed and '"NotebookEdit"' in decision.reason


async def test_gate_path_outside_the_project_asks_even_in_accept_edits(tmp_path: Path) -> None:
    tool = NotebookEditTool()
    asker = Asker()
    gate = gate_for(tmp_path, "acceptEdits", allow=("Edit",), ask=asker)
    decision = await gate.check(tool, call(str(tmp_path / "elsewhere" / "a.ipynb")))
    assert not decision.allowed and asker.asked == ["NotebookEdit"]
    assert gate.always_rules(tool, call(str(tmp_path / "elsewhere" / "a.ipynb"))) == [
        f"Edit(/{tmp_path / 'elsewhere' / 'a.ipynb'})"]
    # a protected file stays protected: .git inside the project
    asker = Asker()
    gate = gate_for(tmp_path, "acceptEdits", allow=("Edit",), ask=asker)
    decision = await gate.check(tool, call(".git/hooks/x.ipynb"))
    assert not decision.allowed and asker.asked == ["NotebookEdit"]


def test_hooks_see_an_absolute_notebook_path(tmp_path: Path) -> None:
    seen = claude_tool_input("NotebookEdit", call("nb/a.ipynb"), cwd=tmp_path, home=tmp_path / "home")
    assert seen == {**call("nb/a.ipynb"), "notebook_path": str(tmp_path / "nb" / "a.ipynb")}
