"""The project-server approval prompt: everything that runs or receives data, secrets masked, repository text
neutralised and kept on one line, what changed since the last decision — exact lines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mini_claude.cli.questions.approval import approval_prompt_lines, server_approval_prompt
from mini_claude.mcp.approval import ApprovalStore, PriorDecision
from mini_claude.mcp.config import ServerConfig
from mini_claude.mcp.config_entry import parse_entry


def _parse(name: str, entry: dict[str, Any], file: str = ".mcp.json",
           env: dict[str, str] | None = None) -> ServerConfig:
    parsed = parse_entry(name, entry, file=file, key=f"mcpServers.{name}", env=env or {}, scope="project")
    assert parsed.config is not None, parsed.errors
    return parsed.config


def test_stdio_server_shows_command_cwd_and_env_names() -> None:
    cfg = _parse("db", {"command": "npx", "args": ["-y", "db server", "--token=${DB_TOKEN}"], "cwd": "tools",
                        "env": {"PYTHONPATH": ".", "TOKEN": "sk-live-123"}}, env={"DB_TOKEN": "sk-from-env"})
    assert approval_prompt_lines(cfg, env={"DB_TOKEN": "sk-from-env"}) == [
        'Project MCP server "db" from .mcp.json wants to start.',
        "  type:          stdio",
        "  command:       npx -y 'db server' '--token=${DB_TOKEN}'",
        "  cwd:           tools",
        "  env:           PYTHONPATH=***, TOKEN=***",
        "  from your env: DB_TOKEN — their values go to this server's command line and environment",
    ]


def test_http_server_shows_url_headers_helper_and_oauth_masked() -> None:
    cfg = _parse("web", {"type": "http", "url": "https://u:pw@mcp.example/x?key=abc&v=1",
                         "headers": {"Authorization": "Bearer sk-1", "X-Team": "t"},
                         "headersHelper": "./bin/get-headers --profile work",
                         "oauth": {"clientId": "cid", "clientSecret": "cs-1", "scopes": ["read"]}},
                 file=".claude/settings.json")
    lines = approval_prompt_lines(cfg, PriorDecision("approved", ("headersHelper was added", "header X-Team changed")))
    assert lines == [
        'Project MCP server "web" from .claude/settings.json wants to start.',
        "  It changed since you approved it: headersHelper was added; header X-Team changed.",
        "  type:          http",
        "  url:           https://u:***@mcp.example/x?key=***&v=***",
        "  headers:       Authorization: ***, X-Team: ***",
        "  headersHelper: ./bin/get-headers --profile work",
        "                 (a shell command: it runs whenever mini-claude connects to this server)",
        '  oauth:         {"clientId": "cid", "clientSecret": "***", "scopes": ["read"]}',
    ]
    assert not any(secret in "\n".join(lines) for secret in ("pw@", "abc", "sk-1", "cs-1"))


def test_repository_text_is_neutralised_and_stays_on_one_line() -> None:
    cfg = _parse("x\x1b[2J", {"command": "run\x1b]0;title\x07", "args": ["a\nServer approved. Start it? y"],
                              "env": {"A\x1b[31m": "1"}, "headersHelper": "echo\x07 {}\n  (safe)"})
    lines = approval_prompt_lines(cfg)
    assert lines == [
        'Project MCP server "x\\u001b[2J" from .mcp.json wants to start.',
        "  type:          stdio",
        # controls shown as escapes (the command that runs holds them), never obeyed; quoted: they are not plain
        "  command:       'run\\x1b]0;title\\x07' 'a\\nServer approved. Start it? y'",
        "  env:           A\\x1b[31m=***",
        "  headersHelper: echo\\x07 {}\\n  (safe)",
        "                 (a shell command: it runs whenever mini-claude connects to this server)",
    ]
    assert not any("\x1b" in line or "\n" in line or "\x07" in line for line in lines)


def test_server_approval_prompt_reads_what_changed_from_the_store(tmp_path: Path) -> None:
    env = {"MINI_CLAUDE_STATE_DIR": str(tmp_path / "state")}
    before = _parse("db", {"command": "db-server", "env": {"TOKEN": "a"}})
    ApprovalStore.default(env).record(tmp_path, before, "approved")
    after = _parse("db", {"command": "db-server", "env": {"TOKEN": "b", "PYTHONPATH": "."},
                          "headersHelper": "touch pwned"})
    assert server_approval_prompt(after, tmp_path, env)[:2] == [
        'Project MCP server "db" from .mcp.json wants to start.',
        "  It changed since you approved it: headersHelper was added; env PYTHONPATH was added; env TOKEN changed.",
    ]
    assert server_approval_prompt(before, tmp_path, env)[1] == "  type:          stdio"  # unchanged: no line


def test_var_references_are_shown_as_written_and_named_literal_secrets_stay_masked() -> None:
    """Issue 18, finding 9: `${GITHUB_TOKEN}` in a header or the URL was shown as `***`, so the user could not see
    which of their variables "yes" sends. Now the references show as written, a line names every variable the
    config reads (never a value), and literal secrets stay masked."""
    user_env = {"GITHUB_TOKEN": "ghp_VALUE_NEVER_SHOWN", "ORG": "acme-org-value", "CLIENT_SECRET": "cs-VALUE",
                "ANTHROPIC_API_KEY": "sk-ant-VALUE"}
    cfg = _parse("gh", {"type": "http", "url": "https://${ORG}.example/mcp?token=${GITHUB_TOKEN}&v=1&k=${X:-dflt}",
                        "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}", "X-Key": "sk-literal",
                                    "X-Mixed": "a${TEAM}b", "X-Model": "${ANTHROPIC_API_KEY}"},
                        "oauth": {"clientId": "cid", "clientSecret": "${CLIENT_SECRET}"}}, env=user_env)
    lines = approval_prompt_lines(cfg, env=user_env)
    assert lines == [
        'Project MCP server "gh" from .mcp.json wants to start.',
        "  type:          http",
        "  url:           https://${ORG}.example/mcp?token=${GITHUB_TOKEN}&v=***&k=${X:-***}",
        "  headers:       Authorization: Bearer ${GITHUB_TOKEN}, X-Key: ***, X-Mixed: ***${TEAM}***, "
        "X-Model: ${ANTHROPIC_API_KEY}",
        '  oauth:         {"clientId": "cid", "clientSecret": "${CLIENT_SECRET}"}',
        "  from your env: ORG, GITHUB_TOKEN, X (not set), TEAM (not set), ANTHROPIC_API_KEY (the agent's own key: "
        "sent empty), CLIENT_SECRET — their values go to this server",
    ]
    shown = "\n".join(lines)
    assert not any(value in shown for value in (*user_env.values(), "sk-literal", "dflt"))


def test_env_values_show_their_references_and_userinfo_passwords_too() -> None:
    cfg = _parse("db", {"command": "db-server", "env": {"TOKEN": "${DB_TOKEN}", "URL": "postgres://${U}:${P}@h",
                                                        "PLAIN": "x"}}, env={"DB_TOKEN": "t"})
    web = _parse("w", {"type": "sse", "url": "https://bob:${PASSWORD}@h.example/s", "headers": {"A": "${U}:${P}"}},
                 env={})
    assert approval_prompt_lines(cfg, env={"DB_TOKEN": "t"})[2:] == [
        "  command:       db-server",
        "  env:           TOKEN=${DB_TOKEN}, URL=***${U}:${P}***, PLAIN=***",
        "  from your env: DB_TOKEN, U (not set), P (not set) — their values go to this server's command line and "
        "environment",
    ]
    assert approval_prompt_lines(web, env={})[2:] == [
        "  url:           https://bob:${PASSWORD}@h.example/s",
        "  headers:       A: ${U}:${P}",
        "  from your env: PASSWORD (not set), U (not set), P (not set) — their values go to this server",
    ]
