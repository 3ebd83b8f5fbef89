"""`/permissions`: the allow / ask / deny rules in force and where each lives; adding and removing them.

The listing starts from the running gate (every rule it applies, with its source: a settings file, `--settings`,
`--allowedTools` / `--disallowedTools`, or this session's "always" answers), then reads the settings files again
for what the gate does not apply: a repository file's allow rules while the folder is not trusted, a rule written
since the session started, a rule that does not parse.

`add` checks the rule with the gate's own parser, writes it (`settings_rules`) and gives it to the running gate —
unless the file is not in force: an allow rule saved to the repository's files while the folder is not trusted is
written but not applied, so the gate is never more permissive than the files and flags say. `remove` takes the rule
out of one file (or this session's answers) and out of the gate; a rule found in several places needs a scope.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from mini_claude.errors import ConfigError
from mini_claude.permissions import PermissionGate, Rule, RuleSet, parse_rule
from mini_claude.settings import LOCAL_SETTINGS_DISPLAY, PROJECT_SETTINGS_DISPLAY, Settings
from mini_claude.settings_rules import (
    RULE_KINDS,
    SCOPES,
    SettingsFile,
    add_rule,
    kinds_holding,
    remove_rule,
    settings_file,
)

__all__ = ["SESSION_SCOPE", "USAGE", "add_permission", "permission_listing", "remove_permission", "split_scope"]

SESSION_SCOPE = "session"  # the "always" answers of this session: in the gate only, no file
USAGE = ("/permissions · /permissions add allow|ask|deny RULE [user|project|local] (default local) · "
         "/permissions remove RULE [user|project|local|session]")
_PROJECT_FILES = (PROJECT_SETTINGS_DISPLAY, LOCAL_SETTINGS_DISPLAY)
_UNTRUSTED = "ignored: this folder is not trusted (`mini-claude trust`)"


def permission_listing(gate: PermissionGate, *, trusted: bool, on_disk: Settings) -> list[str]:
    """The lines of `/permissions`: each list's rules with where they come from, then what is not applied and why.
    `on_disk`: the settings files as they are now (`load_settings`), unfiltered."""
    lines = [f"permission mode: {gate.mode.value}"]
    applied = {(kind, rule.source, rule.text) for kind in RULE_KINDS for rule in _rules(gate.rules, kind)}
    invalid = [str(err) for err in gate.rules.errors]
    listed: list[tuple[str, list[tuple[str, str]]]] = []
    for kind in RULE_KINDS:
        rows = [(rule.text, _origin(rule)) for rule in _rules(gate.rules, kind)]
        for item in getattr(on_disk, f"permissions_{kind}"):
            text = item.text.strip()
            if (kind, item.file, text) in applied:
                continue
            if (kind, SESSION_SCOPE, text) in applied:  # an "always" answer, saved to the file as it was given
                rows = [(t, f"{origin}, saved to {item.file}" if t == text and origin == _origin_session() else origin)
                        for t, origin in rows]
                continue
            try:
                parse_rule(item.text, source=item.file, key=item.key)
            except ConfigError as exc:
                if str(exc) not in invalid:
                    invalid.append(str(exc))
                continue
            if not trusted and kind == "allow" and item.file in _PROJECT_FILES:
                rows.append((item.text, f"{item.file} — {_UNTRUSTED}"))
            else:
                rows.append((item.text, f"{item.file} — not applied: written after this session started"))
        listed.append((kind, rows))
    width = min(max((len(text) for _, rows in listed for text, _ in rows), default=0), 40)
    for kind, rows in listed:
        lines.append(f"{kind} ({len(rows)}):" if rows else f"{kind}: none")
        lines += [f"  {text:<{width}}  {origin}" for text, origin in rows]
    if invalid:
        lines.append("not applied, malformed:")
        lines += [f"  {error}" for error in invalid]
    if not trusted:
        lines.append(f"this folder is not trusted: allow rules of {PROJECT_SETTINGS_DISPLAY} and "
                     f"{LOCAL_SETTINGS_DISPLAY} are ignored; their ask and deny rules apply")
    lines.append(USAGE)
    return [line.replace("\n", "\\n") for line in lines]  # a repository's rule cannot start a line of its own


def split_scope(text: str, scopes: Iterable[str]) -> tuple[str, str | None]:
    """`Bash(npm run *) project` -> (`Bash(npm run *)`, `project`): a last word that names a scope is the scope. A
    rule quoted whole (`"Bash(npm run *)"`) loses its quotes."""
    words = text.split()
    scope = None
    if len(words) > 1 and words[-1] in scopes:
        scope = words[-1]
        text = text.rstrip()[: -len(scope)]
    text = text.strip()
    if len(text) > 1 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    return text, scope


def add_permission(gate: PermissionGate, *, trusted: bool, kind: str, rule: str, scope: str, home: Path) -> str:
    """Save `rule` to the file of `scope` and apply it to `gate` when that file is in force. Returns what was done,
    in one line; raises ConfigError (malformed rule, unreadable file) with nothing changed."""
    file = _scope_file(scope, gate, home)
    parse_rule(rule, source=file.display)  # the gate's own parser: a typo is refused before the file is touched
    index, added = add_rule(file, kind, rule)
    parsed = parse_rule(rule, source=file.display, key=f"permissions.{kind}[{index}]")
    in_force = trusted or kind != "allow" or file.display not in _PROJECT_FILES
    present = any(r.source == file.display and r.text == parsed.text for r in _rules(gate.rules, kind))
    if in_force and not present:
        gate.rules = _with_rule(gate.rules, kind, parsed)
    saved = f"added {kind} rule {parsed.text} to {file.display}" if added \
        else f"{kind} rule {parsed.text} was already in {file.display}"
    if not in_force:
        return (f"{saved}; not applied: this folder is not trusted, so the allow rules of its settings files are "
                "ignored (trust it with `mini-claude trust`, or add the rule to `user`)")
    return saved + ("" if present else "; applied to this session")


def remove_permission(gate: PermissionGate, *, rule: str, scope: str | None, home: Path) -> str:
    """Remove `rule` from the file of `scope` (or this session's answers) and from `gate`. Without a scope the rule
    must live in exactly one place. Returns what was done; raises ConfigError when it cannot (nothing changed)."""
    text = rule.strip()
    if not text:
        raise ConfigError(f"usage: {USAGE}")
    places = [scope] if scope is not None else _places_holding(gate, text, home)
    if not places:
        flags = sorted({r.source for kind in RULE_KINDS for r in _rules(gate.rules, kind)
                        if r.text == text and r.source.startswith("-")})
        if flags:
            raise ConfigError(f"{text} comes from {', '.join(flags)} on the command line: it lasts for this session")
        raise ConfigError(f"no rule {text} in {', '.join(_display(s, gate, home) for s in SCOPES)} or this "
                          "session's answers")
    if len(places) > 1:
        where = ", ".join(f"{s} ({_display(s, gate, home)})" for s in places)
        raise ConfigError(f"{text} is in {where}: say which, e.g. /permissions remove {text} {places[0]}")
    place = places[0]
    if place == SESSION_SCOPE:
        before = gate.rules
        gate.rules = _without(gate.rules, text, SESSION_SCOPE)
        if gate.rules == before:
            raise ConfigError(f"no rule {text} among this session's answers")
        return f"removed {text} from this session's answers"
    file = _scope_file(place, gate, home)
    kinds = remove_rule(file, text)
    before = gate.rules
    gate.rules = _without(gate.rules, text, file.display)
    session_copy = _without(gate.rules, text, SESSION_SCOPE)  # never more permissive: dropping it only narrows
    also = " (and from this session's answers)" if session_copy != gate.rules else ""
    gate.rules = session_copy
    if not kinds:
        if gate.rules != before:  # edited away by hand since the session started: only the gate still had it
            return f"{text} was no longer in {file.display}; removed from this session"
        raise ConfigError(f"no rule {text} in {file.display}")
    return f"removed {' and '.join(kinds)} rule {text} from {file.display}{also}"


def _places_holding(gate: PermissionGate, text: str, home: Path) -> list[str]:
    places = [scope for scope in _distinct_scopes(gate, home) if _holds(settings_file(scope, cwd=gate.cwd, home=home),
                                                                          text)]
    # an "always" answer is saved to a file too: removing it there removes the session's copy as well
    if not places and any(r.text == text and r.source == SESSION_SCOPE
                          for kind in RULE_KINDS for r in _rules(gate.rules, kind)):
        places.append(SESSION_SCOPE)
    return places


def _holds(file: SettingsFile, text: str) -> bool:
    """Whether `file` holds the rule; a linked repository file (never edited through) counts as not holding it, so
    a rule of the user's own file is still found and removed there."""
    if file.scope != "user" and any(path.is_symlink() for path in (file.path.parent, file.path)):
        return False
    return bool(kinds_holding(file, text))


def _scope_file(scope: str, gate: PermissionGate, home: Path) -> SettingsFile:
    if scope == "project" and "project" not in _distinct_scopes(gate, home):
        scope = "user"  # run from the home folder, the project's file is the user's (and named so in the gate)
    return settings_file(scope, cwd=gate.cwd, home=home)


def _distinct_scopes(gate: PermissionGate, home: Path) -> list[str]:
    """The scopes, without `project` when the session runs from the home folder (its project file is the user's
    own). The folders are compared, never the settings files they hold: a repository's `.claude` (or its
    `settings.json`) linked to `~/.claude` is no home folder, and settings_rules refuses to write through it."""
    same = _same_folder(gate.cwd, home)
    return [scope for scope in SCOPES if not (same and scope == "project")]


def _same_folder(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _display(scope: str, gate: PermissionGate, home: Path) -> str:
    return "this session's answers" if scope == SESSION_SCOPE else settings_file(scope, cwd=gate.cwd,
                                                                                  home=home).display


def _origin_session() -> str:
    return "this session (an \"always\" answer)"


def _origin(rule: Rule) -> str:
    if rule.source == SESSION_SCOPE:
        return _origin_session()
    return f"{rule.source} (command line)" if rule.source.startswith("-") else rule.source


def _rules(rules: RuleSet, kind: str) -> tuple[Rule, ...]:
    return {"allow": rules.allow, "ask": rules.ask, "deny": rules.deny}[kind]


def _with_rule(rules: RuleSet, kind: str, rule: Rule) -> RuleSet:
    lists = {name: _rules(rules, name) for name in RULE_KINDS}
    lists[kind] = (*lists[kind], rule)
    return RuleSet(allow=lists["allow"], deny=lists["deny"], ask=lists["ask"], errors=rules.errors)


def _without(rules: RuleSet, text: str, source: str) -> RuleSet:
    def kept(kind: str) -> tuple[Rule, ...]:
        return tuple(r for r in _rules(rules, kind) if not (r.text == text and r.source == source))

    return RuleSet(allow=kept("allow"), deny=kept("deny"), ask=kept("ask"), errors=rules.errors)
