"""`StructuredOutput` (Claude Code's name): where a session was asked for an answer in a given shape (a JSON Schema:
the CLI's `--json-schema`, the API's `output_format`), the model ends its work by calling this tool with the answer
as its input.

The input is checked against the schema with `jsonschema` (the field's own validator; a schema that is not valid
JSON Schema is refused when the session starts). A valid answer is kept in `value` and the model is told it was
received; an invalid one is an error result naming what is wrong, so the model can call again. The session decides
what happens when the model ends without calling it (session/structured.py: one reminder, then an error).
"""

from __future__ import annotations

import copy
from typing import Any

from mini_claude.errors import ConfigError
from mini_claude.tools.base import ToolContext, ToolResult

__all__ = ["STRUCTURED_OUTPUT_TOOL_NAME", "StructuredOutputTool", "check_schema"]

STRUCTURED_OUTPUT_TOOL_NAME = "StructuredOutput"
MAX_ERRORS_SHOWN = 5


def check_schema(schema: Any, where: str) -> dict[str, Any]:
    """`schema` as a usable JSON Schema object (ConfigError naming `where` when it is not one)."""
    import jsonschema

    if not isinstance(schema, dict):
        raise ConfigError(f"{where}: a JSON Schema object is needed")
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ConfigError(f"{where}: not a valid JSON Schema: {exc.message}") from None
    return schema


class StructuredOutputTool:
    """The final answer, in the session's required shape."""

    name = STRUCTURED_OUTPUT_TOOL_NAME
    description = ("Give your final answer through this tool, once, when the task is done: its input is the answer "
                   "itself, in exactly the shape of the input schema. Plain text after it is not needed.")
    read_only = True
    checks_own_input = True  # the schema is the user's, checked whole by jsonschema in `run` (tools/base.py)

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = copy.deepcopy(schema)
        self.input_schema: dict[str, Any] = self.schema if self.schema.get("type") == "object" else {
            "type": "object", "properties": {"answer": self.schema}, "required": ["answer"]}
        self.value: Any = None
        self.received = False

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        import jsonschema

        answer = args if self.input_schema is self.schema else args.get("answer")
        validator = jsonschema.validators.validator_for(self.schema)(self.schema)
        errors = sorted(validator.iter_errors(answer), key=lambda e: list(e.path))
        if errors:
            lines = [f"- {'/'.join(str(p) for p in e.path) or '(top)'}: {e.message}" for e in errors[:MAX_ERRORS_SHOWN]]
            return ToolResult.error("The answer does not match the required schema; call again with it fixed:\n"
                                    + "\n".join(lines))
        self.value, self.received = answer, True
        return ToolResult.text("Structured output received.")
