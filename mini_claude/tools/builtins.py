"""The built-in tools, freshly instantiated: what a session offers the model besides MCP tools."""

from __future__ import annotations

from mini_claude.tools.agent_tool import AgentTool, SubagentRunner
from mini_claude.tools.base import Tool
from mini_claude.tools.exit_plan_mode import ExitPlanModeTool
from mini_claude.tools.files import EditFileTool, WriteFileTool
from mini_claude.tools.glob import GlobTool
from mini_claude.tools.grep import GrepTool
from mini_claude.tools.notebook import NotebookEditTool
from mini_claude.tools.read import ReadFileTool
from mini_claude.tools.shell import BashTool
from mini_claude.tools.task_tools import TaskOutputTool, TaskStopTool
from mini_claude.tools.todo import TodoWriteTool
from mini_claude.tools.web_fetch import WebFetchTool
from mini_claude.tools.web_search import WebSearchTool

__all__ = ["builtin_tools"]


def builtin_tools(subagents: SubagentRunner | None = None) -> list[Tool]:
    """New instances of Read, Write, Edit, NotebookEdit, Glob, Grep, Bash, TaskOutput, TaskStop, WebFetch,
    WebSearch, TodoWrite and ExitPlanMode (in that order), then the Agent tool when a sub-agent runner is given (a
    sub-agent's own tools never include it). ExitPlanMode is offered in every mode, as in Claude Code: the gate
    refuses it outside plan mode."""
    tools: list[Tool] = [ReadFileTool(), WriteFileTool(), EditFileTool(), NotebookEditTool(), GlobTool(), GrepTool(),
                         BashTool(), TaskOutputTool(), TaskStopTool(), WebFetchTool(), WebSearchTool(),
                         TodoWriteTool(), ExitPlanModeTool()]
    return [*tools, AgentTool(subagents)] if subagents is not None else tools
