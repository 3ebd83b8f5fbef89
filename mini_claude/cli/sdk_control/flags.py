"""The flags the Claude Agent SDK passes when it starts this CLI (its `cli_path`), with Claude Code's meaning:
declared on the parser (`add_sdk_flags`) and checked, or turned into what the session reads (`check_sdk_flags`: one
line naming the option when a value cannot be honoured). Imported with the parser: nothing heavy here."""

from __future__ import annotations

import argparse

__all__ = ["SETTING_SOURCES", "add_sdk_flags", "check_sdk_flags"]

SETTING_SOURCES = ("user", "project", "local")


def add_sdk_flags(parser: argparse.ArgumentParser) -> None:
    """Declare the SDK's flags on `parser`."""
    parser.add_argument("--setting-sources", metavar="SOURCES",
                        help="which settings scopes load, comma-separated from user, project, local (an empty "
                             "value: none of them; their CLAUDE.md, commands, agents, skills and MCP files too)")
    parser.add_argument("--tools", metavar="TOOLS",
                        help="the built-in tools offered: `default` (all), a comma-separated list of names, or empty "
                             "(none)")
    parser.add_argument("--permission-prompt-tool", metavar="TOOL",
                        help="`stdio`: ask each permission question as a can_use_tool control request on stdout "
                             "(stream-json input and output)")
    parser.add_argument("--include-partial-messages", action="store_true",
                        help="stream-json: also write the model's stream as `stream_event` lines")
    parser.add_argument("--include-hook-events", action="store_true",
                        help="stream-json: accepted (hook runs are not written as events)")
    parser.add_argument("--session-id", metavar="UUID", help="the new session's id (a UUID)")
    parser.add_argument("--fork-session", action="store_true",
                        help="with --resume or --continue: go on under a new session id, the old one left as it was")
    parser.add_argument("--json-schema", metavar="SCHEMA",
                        help="a JSON Schema (inline JSON) the final answer must fit: the model gives it through the "
                             "StructuredOutput tool; -p prints it (json/stream-json: the result's structured_output)")
    parser.add_argument("--max-thinking-tokens", type=int, metavar="N",
                        help="extended thinking with a budget of N tokens (0: off)")
    parser.add_argument("--thinking", choices=["adaptive", "enabled", "disabled"],
                        help="extended thinking: adaptive (the model's choice), enabled or disabled")
    parser.add_argument("--debug-to-stderr", dest="debug_to_stderr", action="store_true",
                        help="debug logs on stderr (as --debug)")


def check_sdk_flags(args: argparse.Namespace) -> str | None:
    """The Agent SDK's flags: values this version can honour, else one line naming the option."""
    if args.setting_sources is not None:
        sources = [s.strip() for s in args.setting_sources.split(",") if s.strip()]
        unknown = [s for s in sources if s not in SETTING_SOURCES]
        if unknown:
            return f"--setting-sources: unknown source {unknown[0]!r} (use {', '.join(SETTING_SOURCES)})"
        args.setting_sources = tuple(sources)  # () reads no settings scope at all
    if args.permission_prompt_tool is not None:
        if args.permission_prompt_tool != "stdio":
            return (f"--permission-prompt-tool {args.permission_prompt_tool}: only `stdio` (the control protocol) "
                    "is supported, not an MCP tool")
        if args.input_format != "stream-json" or args.output_format != "stream-json":
            return "--permission-prompt-tool stdio needs --input-format stream-json --output-format stream-json"
    if args.json_schema is not None:
        import json

        try:
            schema = json.loads(args.json_schema)
        except ValueError:
            return "--json-schema: not JSON (give the schema itself, as a JSON object)"
        from mini_claude.errors import ConfigError
        from mini_claude.tools.structured_output import check_schema

        try:
            args.json_schema = check_schema(schema, "--json-schema")
        except ConfigError as exc:
            return str(exc)
    if args.system_prompt_file is not None:
        from pathlib import Path

        try:
            args.system_prompt = Path(args.system_prompt_file).expanduser().read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            return f"--system-prompt-file {args.system_prompt_file}: cannot read it ({exc.__class__.__name__})"
    if args.session_id is not None:
        import uuid

        try:
            args.session_id = str(uuid.UUID(args.session_id))
        except ValueError:
            return f"--session-id {args.session_id}: not a UUID"
    if args.max_thinking_tokens is not None and args.max_thinking_tokens < 0:
        return "--max-thinking-tokens must be 0 or more"
    _thinking_to_env(args)
    if args.tools is not None:
        _tools_offered(args)
    return None


def _thinking_to_env(args: argparse.Namespace) -> None:
    """--thinking / --max-thinking-tokens mean what MAX_THINKING_TOKENS means (models/catalog.py ThinkingPrefs)."""
    import os

    if args.thinking == "disabled":
        os.environ["MAX_THINKING_TOKENS"] = "0"
    elif args.max_thinking_tokens is not None:
        os.environ["MAX_THINKING_TOKENS"] = str(args.max_thinking_tokens)


def _tools_offered(args: argparse.Namespace) -> None:
    """`--tools`: `default` (or absent) offers every built-in; a list offers those named; empty, none."""
    wanted = tuple(t.strip() for t in args.tools.split(",") if t.strip())
    args.tools = None if wanted == ("default",) else wanted
