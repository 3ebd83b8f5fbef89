"""The text of the question "start this project MCP server?": everything the approval covers, as written.

A project server comes from a file of the repository, so the user must see all that will run or receive data
before saying yes: the command line, its working directory, env names, the URL, header names, the
`headersHelper` command (it runs too), the oauth settings, the file it came from, and what changed since an
earlier decision. Fields are shown as written: a `${VAR}` reference stays `${VAR}` (never its value), and a
line names every variable of the user's environment the config asks for ("from your env"), so the user sees
which of their secrets "yes" hands over. Literal values of env variables, headers and oauth secrets are masked;
a URL's password and query values too (the `${VAR}`s among them still shown). Every piece of repository text goes
through `render.clean` (controls shown as escapes) and is kept on one line.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from mini_claude.cli.terminal.render import clean
from mini_claude.mcp.approval import ApprovalStore, PriorDecision
from mini_claude.mcp.config import AGENT_CREDENTIAL_VARS, ServerConfig
from mini_claude.mcp.config_edit import MASK, mask_secrets

__all__ = ["approval_prompt_lines", "referenced_vars", "server_approval_prompt"]

_LABEL_WIDTH = 15  # "headersHelper: " and the values aligned after it
# what `${VAR}` / `${VAR:-default}` expansion reads (mini_claude.mcp.config_entry.expand_vars); `$VAR` is not expanded
_VAR_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
# literal text between references that is shown: an auth scheme word, separators (`Bearer ${TOKEN}`, `${U}:${P}`)
_PLAIN_LITERAL = re.compile(r"(?:(?:Bearer|Basic|Token|token|Bot|DPoP)\s+)?[\s:;,./=+@-]*")


def _one_line(text: str) -> str:
    # controls made visible; clean() keeps newlines and tabs, here they would let a repository forge prompt lines
    return clean(text, visible=True).replace("\n", "\\n").replace("\t", "\\t")


def _masked(value: str) -> str:
    """A secret value as shown: every `${VAR}` reference as written (a default's text masked), the literal text
    between them "***" unless it is only an auth scheme word or separators. Without a reference: "***"."""
    if _VAR_RE.search(value) is None:
        return MASK
    shown, at = [], 0
    for match in _VAR_RE.finditer(value):
        shown.append(_literal(value[at:match.start()]))
        default = match.group(2)
        shown.append(match.group(0) if not default else f"${{{match.group(1)}:-{MASK}}}")
        at = match.end()
    shown.append(_literal(value[at:]))
    return "".join(shown)


def _literal(text: str) -> str:
    return text if _PLAIN_LITERAL.fullmatch(text) else MASK


def _masked_url(url: str) -> str:
    """`url` as written, its password and query values masked but for their `${VAR}` references."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return _masked(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        user, colon, password = userinfo.partition(":")
        netloc = f"{user}:{_masked(password)}@{host}" if colon else f"{_masked(userinfo)}@{host}"
    query = "&".join(f"{key}={_masked(value)}" if sep else key
                     for key, sep, value in (pair.partition("=") for pair in parts.query.split("&")))
    return urlunsplit((parts.scheme, netloc, parts.path, query if parts.query else "", parts.fragment))


def _masked_oauth(raw: Any, masked: Any) -> Any:
    """`mask_secrets`' oauth object with the `${VAR}` references of each masked secret shown."""
    if isinstance(raw, dict) and isinstance(masked, dict):
        return {k: _masked_oauth(raw.get(k), v) for k, v in masked.items()}
    if isinstance(raw, list) and isinstance(masked, list) and len(raw) == len(masked):
        return [_masked_oauth(r, m) for r, m in zip(raw, masked, strict=True)]
    return _masked(raw) if masked == MASK and isinstance(raw, str) else masked


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def referenced_vars(cfg: ServerConfig) -> list[str]:
    """The names of the environment variables the server's config expands (`${VAR}` in command, args, cwd, env,
    url, headers, oauth), in the order written."""
    fields = [cfg.raw.get(key) for key in ("command", "args", "cwd", "env", "url", "headers", "oauth")]
    return list(dict.fromkeys(m.group(1) for text in _strings(fields) for m in _VAR_RE.finditer(text)))


def _env_line(cfg: ServerConfig, env: Mapping[str, str]) -> str | None:
    names = referenced_vars(cfg)
    if not names:
        return None
    shown = [f"{name} (the agent's own key: sent empty)" if name in AGENT_CREDENTIAL_VARS
             else name if name in env else f"{name} (not set)" for name in names]
    where = "this server's command line and environment" if cfg.type == "stdio" else "this server"
    return _row("from your env", f"{', '.join(shown)} — their values go to {where}")


def _row(label: str, value: str) -> str:
    return f"  {label + ':':<{_LABEL_WIDTH}}{_one_line(value)}"


def _written(cfg: ServerConfig, key: str, fallback: Any) -> Any:
    """The value of `key` as the file wrote it (unexpanded), else the parsed one."""
    value = cfg.raw.get(key)
    return fallback if value is None else value


def _names(written: Any, parsed: Mapping[str, Any], separator: str) -> str:
    values = written if isinstance(written, dict) else {}
    return ", ".join(f"{name}{separator}{_masked(values[name]) if isinstance(values.get(name), str) else MASK}"
                     for name in parsed)


def approval_prompt_lines(cfg: ServerConfig, prior: PriorDecision | None = None,
                          env: Mapping[str, str] | None = None) -> list[str]:
    """The lines shown before asking whether project server `cfg` may start; `prior` is the earlier decision
    that no longer covers it (from `ApprovalStore.prior`), if any; `env` (default: the process environment) says
    which of the variables the config names are set — their names only are shown, never a value."""
    env = os.environ if env is None else env
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
        lines.append(_row("env", _names(cfg.raw.get("env"), cfg.env, "=")))
    if cfg.url is not None:
        lines.append(_row("url", _masked_url(str(_written(cfg, "url", cfg.url)))))
    if cfg.headers:
        lines.append(_row("headers", _names(cfg.raw.get("headers"), cfg.headers, ": ")))
    if cfg.headers_helper is not None:
        lines.append(_row("headersHelper", cfg.headers_helper))
        lines.append(f"  {'':<{_LABEL_WIDTH}}(a shell command: it runs whenever mini-claude connects to this server)")
    if cfg.oauth:
        oauth = _masked_oauth(cfg.raw.get("oauth"), masked.get("oauth", mask_secrets({"oauth": cfg.oauth})["oauth"]))
        lines.append(_row("oauth", json.dumps(oauth, sort_keys=True, ensure_ascii=False)))
    env_line = _env_line(cfg, env)
    if env_line is not None:
        lines.append(env_line)
    return lines


def server_approval_prompt(cfg: ServerConfig, cwd: Path, env: Mapping[str, str] | None = None) -> list[str]:
    """`approval_prompt_lines` with the earlier decision read from the user's approval store."""
    return approval_prompt_lines(cfg, ApprovalStore.default(env).prior(cwd, cfg), env)
