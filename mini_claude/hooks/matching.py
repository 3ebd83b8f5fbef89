"""A hook group's `matcher`, read as Claude Code 2.1 reads it (measured against its binary, tests/hooks/
test_matcher.py holds the cases):

* empty, missing or `*`: every value;
* only letters, digits, `_`, `|` and spaces: names, exact and case-sensitive, `|` between alternatives, spaces
  around them ignored (`Edit|Write`, `Read | Bash`; `Bas` does not match `Bash`, nor `bash`);
* anything else: a regular expression searched anywhere in the value (`^Ba.h$`, `mcp__github__.*`, `B.` and `as.`
  all match `Bash`); one that does not compile matches nothing.

Claude Code's regular expressions are JavaScript's; Python's `re` reads the ones hook matchers use the same way. The
differences: an inline flag group (`(?i)`) is a syntax error in JavaScript, so it matches nothing here either;
JavaScript's `(?<name>…)` is Python's `(?P<name>…)` and is accepted in both spellings.

What a matcher is matched against depends on the event (`match_value`): the tool name (Claude Code's names: `Bash`,
`Edit`, `mcp__server__tool`) for PreToolUse and PostToolUse, the source for SessionStart (`startup`, `resume`,
`clear`, `compact`), the trigger for PreCompact (`manual`, `auto`), the notification type for Notification. The other
events have no matcher: every group of theirs applies.
"""

from __future__ import annotations

import functools
import re

__all__ = ["MATCHED_EVENTS", "matcher_matches"]

# the events whose matcher means something, and what it is matched against
MATCHED_EVENTS = {"PreToolUse": "tool name", "PostToolUse": "tool name", "SessionStart": "source",
                  "PreCompact": "trigger", "Notification": "notification type", "SubagentStop": "agent type"}
_PLAIN = re.compile(r"[A-Za-z0-9_| ]+")
_INLINE_FLAGS = re.compile(r"\(\?[aiLmsux-]+[):]")
_JS_NAMED_GROUP = re.compile(r"\(\?<(?=[A-Za-z_])")


def matcher_matches(matcher: str, value: str) -> bool:
    """Does `matcher` (as written in settings) select `value`? See the module docstring."""
    if matcher == "" or matcher == "*":
        return True
    if _PLAIN.fullmatch(matcher):
        return value in (name.strip() for name in matcher.split("|"))
    pattern = _compiled(matcher)
    return pattern is not None and pattern.search(value) is not None


@functools.lru_cache(maxsize=256)
def _compiled(matcher: str) -> re.Pattern[str] | None:
    if _INLINE_FLAGS.search(matcher):
        return None
    try:
        return re.compile(_JS_NAMED_GROUP.sub("(?P<", matcher))
    except re.error:
        return None
