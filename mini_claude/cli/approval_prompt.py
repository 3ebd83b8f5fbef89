"""The text of the question "start this project MCP server?": everything the approval covers, as written.

A project server comes from a file of the repository, so the user must see all that will run or receive data
before saying yes: the command line, its working directory, env names, the URL, header names, the
`headersHelper` command (it runs too), the oauth settings, the file it came from, and what changed since an
earlier decision. Values of env variables and headers and oauth secrets are masked; a URL's password and query
values too. Fields are shown as written (`${VAR}` unexpanded), so nothing the user's environment holds is
printed. Every piece of repository text goes through `render.clean` and is kept on one line.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mini_claude.cli.render import clean
from mini_claude.mcp.approval import ApprovalStore, PriorDecision
from mini_claude.mcp.config import ServerConfig
from mini_claude.mcp.config_edit import MASK, mask_secrets

__all__ = ["approval_prompt_lines", "server_approval_prompt"]

_LABEL_WIDTH = 15  # "headersHelper: " and the values aligned after it


def _one_line(text: str) -> str:
    # clean() keeps newlines and tabs; here they would let a repository forge extra prompt lines
    return clean(text).replace("\n", "\\n").replace("\t", "\\t")


def _row(label: str, value: str) -> str:
    return f"  {label + ':':<{_LABEL_WIDTH}}{_one_line(value)}"


def _written(cfg: ServerConfig, key: str, fallback: Any) -> Any:
    """The value of `key` as the file wrote it (unexpanded), else the parsed one."""
    value = cfg.raw.get(key)
    return fallback if value is None else value


def _names(names: Mapping[str, Any], separator: str) -> str:
    return ", ".join(f"{name}{separator}{MASK}" for name in names)


def approval_prompt_lines(cfg: ServerConfig, prior: PriorDecision | None = None) -> list[str]:
    """The lines shown before asking whether project server `cfg` may start; `prior` is the earlier decision
    that no longer covers it (from `ApprovalStore.prior`), if any."""
    masked = mask_secrets(cfg.raw)
    lines = [_one_line(f"Project MCP server {json.dumps(cfg.name, ensure_ascii=False)} from {cfg.source} "
                       f"wants to start.")]
    if prior is not None and prior.changes:
        lines.append(_one_line(f"  It changed since you {prior.decision} it: {'; '.join(prior.changes)}."))
    lines.append(_row("type", cfg.type))
    if cfg.command is not None:
        command = str(_written(cfg, "command", cfg.command))
        args = [str(a) for a in _written(cfg, "args", list(cfg.args))]
        lines.append(_row("command", shlex.join([command, *args])))
    if cfg.cwd is not None:
        lines.append(_row("cwd", str(_written(cfg, "cwd", cfg.cwd))))
    if cfg.env:
        lines.append(_row("env", _names(cfg.env, "=")))
    if cfg.url is not None:
        lines.append(_row("url", str(masked.get("url", mask_secrets({"url": cfg.url})["url"]))))
    if cfg.headers:
        lines.append(_row("headers", _names(cfg.headers, ": ")))
    if cfg.headers_helper is not None:
        lines.append(_row("headersHelper", cfg.headers_helper))
        lines.append(f"  {'':<{_LABEL_WIDTH}}(a shell command: it runs whenever mini-claude connects to this server)")
    if cfg.oauth:
        oauth = masked.get("oauth", mask_secrets({"oauth": cfg.oauth})["oauth"])
        lines.append(_row("oauth", json.dumps(oauth, sort_keys=True, ensure_ascii=False)))
    return lines


def server_approval_prompt(cfg: ServerConfig, cwd: Path, env: Mapping[str, str] | None = None) -> list[str]:
    """`approval_prompt_lines` with the earlier decision read from the user's approval store."""
    return approval_prompt_lines(cfg, ApprovalStore.default(env).prior(cwd, cfg))
