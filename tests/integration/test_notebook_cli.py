"""`mini-claude -p` reading a notebook and editing a cell end to end: the real CLI, the mock model, a real .ipynb."""

from __future__ import annotations

import json

import pytest

from tests.integration.conftest import Cli, answer, result_text, tool_results, tool_use

pytestmark = pytest.mark.timeout(90)

NOTEBOOK = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
    {"cell_type": "code", "id": "c1", "metadata": {}, "execution_count": 1, "source": "x = 1",
     "outputs": [{"output_type": "stream", "name": "stdout", "text": "1\n"}]}]}


def test_read_then_edit_a_cell_in_accept_edits_mode(cli: Cli) -> None:
    (cli.work / "n.ipynb").write_text(json.dumps(NOTEBOOK))
    mock = cli.mock([tool_use("Read", {"file_path": "n.ipynb"}),
                     tool_use("NotebookEdit", {"notebook_path": "n.ipynb", "cell_id": "c1", "new_source": "x = 7"}),
                     answer("done")])
    result = cli.run("-p", "edit it", "--permission-mode", "acceptEdits")
    assert result.rc == 0, result.stderr
    read, edited = (result_text(b) for b in tool_results(mock))
    assert read == '<cell id="c1">\nx = 1\n</cell>\n<output cell="c1">\n1\n</output>'
    assert edited == f"Replaced the source of cell c1; its outputs were cleared in {cli.work / 'n.ipynb'}"
    cell = json.loads((cli.work / "n.ipynb").read_text())["cells"][0]
    assert cell["source"] == "x = 7" and cell["outputs"] == [] and cell["execution_count"] is None


def test_print_mode_refuses_an_edit_without_a_rule(cli: Cli) -> None:
    (cli.work / "n.ipynb").write_text(json.dumps(NOTEBOOK))
    mock = cli.mock([tool_use("Read", {"file_path": "n.ipynb"}),
                     tool_use("NotebookEdit", {"notebook_path": "n.ipynb", "cell_id": "c1", "new_source": "x = 7"}),
                     answer("done")])
    cli.run("-p", "edit it")
    refused = tool_results(mock)[1]
    assert refused.get("is_error") and 'add "NotebookEdit" to permissions.allow' in result_text(refused)
    assert json.loads((cli.work / "n.ipynb").read_text()) == NOTEBOOK
