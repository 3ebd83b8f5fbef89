"""Permissions: Claude Code-syntax allow / ask / deny rules (rules.py; their specifiers in patterns.py and
paths.py, shell command splitting in shell.py), modes (modes.py) and the gate (gate.py, with consent.py and
asking.py), the question's context and typed answer (answers.py)."""

from mini_claude.permissions.answers import AskContext, PermissionAnswer
from mini_claude.permissions.gate import AskAnswer, AskFn, Decision, PermissionGate, PermissionMode
from mini_claude.permissions.paths import MatchEnv
from mini_claude.permissions.rules import (
    Rule,
    RuleSet,
    ToolCall,
    claude_tool_name,
    parse_rule,
    split_rule_list,
)
from mini_claude.permissions.shell import ShellCommand, split_shell_command

__all__ = [
    "AskAnswer",
    "AskContext",
    "AskFn",
    "Decision",
    "MatchEnv",
    "PermissionAnswer",
    "PermissionGate",
    "PermissionMode",
    "Rule",
    "RuleSet",
    "ShellCommand",
    "ToolCall",
    "claude_tool_name",
    "parse_rule",
    "split_rule_list",
    "split_shell_command",
]
