"""A built-in tool's `number` input must be a JSON number: NaN (which Python's JSON parsers and the SDK's jiter
accept as `NaN`) slipped past `minimum` / `maximum` (every comparison with NaN is false), so the gate and the tool
judged a value the schema never allowed. Found by the hostile review of issue 26 on TaskOutput's `timeout`."""

from __future__ import annotations

import pytest

from mini_claude.tools.input_check import input_problem
from mini_claude.tools.task_tools import TaskOutputTool


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_nan_and_the_infinities_are_refused_where_a_number_belongs(value: float) -> None:
    problem = input_problem(TaskOutputTool().input_schema, {"task_id": "bash_1", "timeout": value})
    assert problem is not None and "timeout" in problem


def test_ordinary_numbers_still_pass() -> None:
    schema = TaskOutputTool().input_schema
    assert input_problem(schema, {"task_id": "bash_1", "timeout": 1500}) is None
    assert input_problem(schema, {"task_id": "bash_1", "timeout": 2.5}) is None
