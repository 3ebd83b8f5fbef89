"""A git command line read the way git reads it: what each option of it does (`git_findings`).

git.c reads the global options by whole name (`-c`, `-C`, `--git-dir`, ...: no abbreviations, no clusters), then
the subcommand; an unknown subcommand is an alias, which can run a shell command. The subcommand's options are read
as its own parser does (git_tables.py says which):

- parse-options (most builtins): any unambiguous prefix of a long option (an exact name wins), `--no-X` and its
  prefixes for options git lets be negated (and `--X` for an option named `no-X`), `--opt=v` / `--opt v`, optional
  values attached only, short options clustered with an attached or separate value, options after operands until
  `--` or `--end-of-options`.
- log/show/diff/rev-list/format-patch/... (revision.c and diff.c): whole names only (`git log --outp=F` is refused,
  `--output F` and `--output=F` both write F), though `--no-` prefixes still resolve; an unknown option does not
  stop git from acting on the rest, so every word is read. A separate value that itself reads as an option asks:
  which of those options take a separate value is not in the tables.
- blame, shortlog: their own options abbreviable, then the revision and diff options by whole name.

Every option must resolve to one the tables classify; an unknown option, an ambiguous abbreviation or a word the
gate cannot know (`None`) is Effect.UNKNOWN. A subcommand without a table makes every option UNKNOWN.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import mini_claude.permissions.options.git_tables as t
from mini_claude.permissions.options.spec import Arg, Effect, Found, Opt, ProgramSpec

__all__ = ["GIT_SUBCOMMANDS", "git_findings"]

Argv = Sequence[str | None]

GIT_SUBCOMMANDS = frozenset({
    "add", "am", "annotate", "apply", "archive", "blame", "branch", "bundle", "cat-file", "check-attr",
    "check-ignore", "check-mailmap", "check-ref-format", "checkout", "cherry", "cherry-pick", "clean", "clone",
    "column", "commit", "commit-graph", "commit-tree", "count-objects", "describe", "diff", "diff-files",
    "diff-index", "diff-tree", "fetch", "for-each-ref", "format-patch", "fsck", "gc", "grep", "hash-object",
    "init", "log", "ls-files", "ls-remote", "ls-tree", "merge", "merge-base", "merge-file", "mv", "name-rev",
    "notes", "pull", "push", "range-diff", "read-tree", "rebase", "reflog", "remote", "reset", "restore",
    "rev-list", "rev-parse", "revert", "rm", "shortlog", "show", "show-branch", "show-ref", "sparse-checkout",
    "stash", "status", "switch", "symbolic-ref", "tag", "update-index", "update-ref", "verify-commit",
    "verify-tag", "version", "whatchanged", "worktree", "write-tree", "config", "help", "var", "stripspace",
    "mktree", "mktag", "patch-id", "prune", "repack", "pack-refs", "interpret-trailers", "maintenance",
})
# git.c's own options: (value: "" none / "sep" separate word / "both" `--o=v` or `--o v` / "attached"), effect.
_GLOBAL: dict[str, tuple[str, Effect, str]] = {
    "-c": ("sep", Effect.CODE, "sets configuration that can run a program"),
    "--config-env": ("both", Effect.CODE, "sets configuration that can run a program"),
    "-C": ("sep", Effect.CODE, "runs in another repository, whose configuration can run a program"),
    "--git-dir": ("both", Effect.CODE, "uses another repository, whose configuration can run a program"),
    "--work-tree": ("both", Effect.CODE, "uses another work tree, whose configuration can run a program"),
    "--bare": ("", Effect.CODE, "reads the folder as a repository, whose configuration can run a program"),
    "--exec-path": ("attached", Effect.CODE, "runs git's programs from the folder it names"),
    "--namespace": ("both", Effect.NONE, ""), "--super-prefix": ("both", Effect.NONE, ""),
    "--shallow-file": ("sep", Effect.READS, "reads the file it names"),
    **{o: ("", Effect.NONE, "") for o in (
        "-p", "--paginate", "-P", "--no-pager", "--no-replace-objects", "--literal-pathspecs",
        "--no-literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs",
        "--no-optional-locks", "--html-path", "--man-path", "--info-path", "--version", "-v", "--help", "-h")},
    "--list-cmds": ("attached", Effect.NONE, ""),
}
# Subcommands of subcommands that run programs by themselves.
_SUBSUB_CODE = {("maintenance", "start"): "schedules git to run in the background (cron, systemd, launchd)",
                ("maintenance", "register"): "adds the repository to the background maintenance runs"}


def git_findings(argv: Argv, i: int) -> list[Found]:
    """What the options of the git command at argv[i] do: every word that is not Effect.NONE."""
    found: list[Found] = []
    k = i + 1
    while k < len(argv):
        a = argv[k]
        if a is None:
            return [*found, Found(k, Effect.UNKNOWN, "git gets an option the gate cannot know (it may set "
                                                     "configuration)")]
        if not a.startswith("-"):
            break
        name, eq, value = a.partition("=")
        form, effect, why = _GLOBAL.get(name, ("?", Effect.UNKNOWN, "is not an option git knows"))
        if form == "?" or (eq and form in ("", "sep")) or (form == "attached" and not eq and name != a):
            return [*found, Found(k, Effect.UNKNOWN, f"git {a}: {why or 'an option the gate does not know'}")]
        if name == "--exec-path" and not eq:
            effect = Effect.NONE  # prints the folder and stops
        if name in ("--version", "-v", "--help", "-h", "--html-path", "--man-path", "--info-path") or \
                (name in ("--exec-path", "--list-cmds") and effect is Effect.NONE):
            return found
        if effect is not Effect.NONE:
            path = (value if eq else argv[k + 1] if k + 1 < len(argv) else None) \
                if effect is Effect.READS else None
            found.append(Found(k, effect, f"git {name} {why}", path))
        k += 2 if form == "sep" or (form == "both" and not eq) else 1
    if k >= len(argv):
        return found
    sub = argv[k]
    if sub is None:
        return [*found, Found(k, Effect.UNKNOWN, "git runs a subcommand the gate cannot know")]
    if sub not in GIT_SUBCOMMANDS:
        return [*found, Found(k, Effect.CODE, f"git {sub} is not a git command the gate knows (an alias can run "
                                              "a program)")]
    return found + [_under(f, _chdir(argv, i, k)) for f in _sub_findings(sub, argv, k)]


def _chdir(argv: Argv, i: int, k: int) -> str | None:
    """Where `-C dir` (each one relative to the last) makes git run, relative to here: "" for here; None when a
    folder is a word the gate cannot know."""
    where = ""
    for j in range(i + 1, k - 1):
        if argv[j] == "-C":
            step = argv[j + 1]
            if step is None:
                return None
            where = step if step.startswith("/") else os.path.join(where, step) if step else where
    return where


def _under(f: Found, where: str | None) -> Found:
    """A path git reads or writes under `-C dir` is relative to that folder."""
    if f.path is None or not where or f.path.startswith("/"):
        return f if where is not None or f.path is None else Found(f.index, f.effect, f.why, None)
    return Found(f.index, f.effect, f.why, os.path.join(where, f.path))


def _sub_findings(sub: str, argv: Argv, k: int) -> list[Found]:
    found: list[Found] = []
    key = sub
    spec = t.table(key)
    subsubs = t.SUBSUBS.get(sub, frozenset())
    dispatched = not subsubs
    words: list[tuple[int, str]] = []  # the words after the options are done, for git config
    j = k + 1
    ended = False
    while j < len(argv):
        a = argv[j]
        if ended or (a is not None and (not a.startswith("-") or a == "-") and (dispatched or a not in subsubs)):
            if a is not None and a.startswith("ext::"):
                found.append(Found(j, Effect.CODE, f"git {sub} {a.split(' ')[0]} is a transport that runs a "
                                                   "command"))
            if a is not None:
                words.append((j, a))
            if not dispatched and sub in t.DEFAULT_SUBSUB and not ended:
                dispatched, key = True, f"{sub} {t.DEFAULT_SUBSUB[sub]}"
                spec = t.table(key)
            dispatched = True
            j += 1
            continue
        if not dispatched and a is not None and a in subsubs:
            dispatched, key = True, f"{sub} {a}"
            spec = t.table(key)
            if (sub, a) in _SUBSUB_CODE:
                found.append(Found(j, Effect.CODE, f"git {sub} {a} {_SUBSUB_CODE[(sub, a)]}"))
            j += 1
            continue
        if a is None:
            found += _unknown_word(key, spec, j, dispatched)
            j += 1
            continue
        if a in ("--", "--end-of-options"):
            ended = True
            j += 1
            continue
        if not dispatched and sub in t.DEFAULT_SUBSUB and (spec is None or _resolve(key, spec, a)[0] is None):
            dispatched = True
            key = f"{sub} {t.DEFAULT_SUBSUB[sub]}"
            spec = t.table(key)
        if spec is None:
            found.append(Found(j, Effect.UNKNOWN, f"git {key} {a}: the gate has no table of this command's "
                                                  "options"))
            j += 1
            continue
        step, more = _option(key, spec, argv, j)
        found.extend(more)
        j += step
    if sub == "config":
        found += _config_findings(k, argv, words, found)
    if sub == "branch":
        found += _branch_config_writes(spec, argv, k)
    if sub == "bundle" and key == "bundle create" and words:
        found.append(Found(words[0][0], Effect.WRITES, "git bundle create writes the bundle file it names",
                           words[0][1]))
    return [f for f in found if f.effect is not Effect.NONE]


def _unknown_word(key: str, spec: ProgramSpec | None, j: int, dispatched: bool) -> list[Found]:
    """A word the gate cannot know, where an option may stand: it is an operand, or any option of the table (git
    refuses an unknown one, and a word can only take later words as its value or end the options): at worst the
    table's worst option. Before the subcommand of `git stash` / `git reflog` / ..., it may pick any of them."""
    effects = {o.effect for o in spec.options} if spec is not None and dispatched else {Effect.UNKNOWN}
    for effect in (Effect.UNKNOWN, Effect.CODE, Effect.WRITES):
        if effect in effects:
            why = f"git {key} gets an argument the gate cannot know, and some of its options " + (
                "run programs" if effect is not Effect.WRITES else "write files")
            return [Found(j, Effect.UNKNOWN if effect is Effect.CODE else effect, why)]
    return []


def _option(key: str, spec: ProgramSpec, argv: Argv, j: int) -> tuple[int, list[Found]]:
    """Read the option word argv[j] (and its value): how many words it takes, and what it does."""
    a = argv[j] or ""
    revision = key in t.REVISION
    if a in ("-h", "--help") and _short(spec, a) is None:
        return 1, []  # parse-options' own: print the usage (`--help`: git help) and stop
    if a.startswith("--"):
        opt, unset, why_bad = _resolve(key, spec, a)
        if opt is None:
            return 1, [Found(j, Effect.UNKNOWN, f"git {key} {a.split('=')[0]}: {why_bad}")]
        body = a[2:]
        has_eq = "=" in body
        shown = _long(opt)
        label = f"git {key} {a.split('=')[0]}" + (f" is {shown}" if a.split("=")[0] != shown else "")
        if unset:
            return 1, []  # `--no-X` undoes X (git refuses `--no-X=v`)
        if opt.arg is Arg.NO:
            return 1, [Found(j, Effect.UNKNOWN, f"{label}, which takes no value")] if has_eq else \
                _effect(j, opt, label, None)
        if has_eq or opt.arg is Arg.OPTIONAL:
            return 1, _effect(j, opt, label, body.split("=", 1)[1] if has_eq else None)
        return 2, _effect(j, opt, label, argv[j + 1] if j + 1 < len(argv) else None) + \
            _value_check(key, spec, argv, j + 1, revision)
    # short options, clustered (`-pz`, `-n5`, `-C3`, `-O'cmd'`)
    out: list[Found] = []
    c = 1
    while c < len(a):
        letter = a[c]
        if (letter.isdigit() and _short(spec, "-NUM") is not None) or (letter.isdigit() and revision):
            while c < len(a) and a[c].isdigit():
                c += 1
            continue
        opt = _short(spec, "-" + letter)
        if opt is None:
            return 1, [*out, Found(j, Effect.UNKNOWN, f"git {key} -{letter}: an option the gate does not know")]
        label = f"git {key} -{letter}" + (f" ({_long(opt)})" if _long(opt) != "-" + letter else "")
        rest = a[c + 1:]
        if opt.arg is Arg.NO:
            out += _effect(j, opt, label, None)
            c += 1
            continue
        if rest or opt.arg is Arg.OPTIONAL:
            return 1, out + _effect(j, opt, label, rest or None)
        return 2, out + _effect(j, opt, label, argv[j + 1] if j + 1 < len(argv) else None) + \
            _value_check(key, spec, argv, j + 1, revision)
    return 1, out


def _value_check(key: str, spec: ProgramSpec, argv: Argv, v: int, revision: bool) -> list[Found]:
    """revision.c takes some values only attached: a separate value that reads as an option may be one."""
    if not revision or v >= len(argv):
        return []
    word = argv[v]
    if word is None:
        return [Found(v, Effect.UNKNOWN, f"git {key} gets a value the gate cannot know (it may be an option)")]
    if not word.startswith("-") or word == "-":
        return []
    _, more = _option(key, spec, argv, v)
    return [Found(f.index, Effect.UNKNOWN, f"{f.why}, if git reads it as an option (it follows an option that "
                                           "may take it as its value)") for f in more if f.effect is not Effect.NONE]


def _effect(j: int, opt: Opt, label: str, value: str | None) -> list[Found]:
    if opt.effect is Effect.NONE:
        return []
    path = value if opt.effect in (Effect.READS, Effect.WRITES) else None
    return [Found(j, opt.effect, f"{label}, which {opt.why}" if " is " in label else f"{label} {opt.why}", path)]


def _long(opt: Opt) -> str:
    return next((n for n in opt.names if n.startswith("--")), opt.names[0])


def _short(spec: ProgramSpec, name: str) -> Opt | None:
    return next((o for o in spec.options if name in o.names), None)


def _resolve(key: str, spec: ProgramSpec, a: str) -> tuple[Opt | None, bool, str]:
    """The option a long word names, as git's parse_long_opt finds it: (option, negated, why not found)."""
    if not a.startswith("--"):
        opt = _short(spec, a[:2])
        return opt, False, "an option the gate does not know"
    arg = a[2:]
    if key in t.MIXED:
        own = ProgramSpec(spec.name, spec.style, spec.options[:t.OWN.get(key, 0)])
        opt, unset, why = _parse_long(own, arg, True, t.NEGATED.get(key, frozenset()))
        if opt is not None or why.startswith("ambiguous"):
            return opt, unset, why
        return _parse_long(spec, arg, False, frozenset())
    abbrev = key not in t.REVISION and key not in t.WHOLE_NAMES
    return _parse_long(spec, arg, abbrev, t.NEGATED.get(key, frozenset()))


def _parse_long(spec: ProgramSpec, arg: str, abbrev: bool, noneg: frozenset[str]) -> tuple[Opt | None, bool, str]:
    """parse-options.c's parse_long_opt (git 2.39): an exact name wins; else one abbreviation (a prefix, or a
    prefix after `no-`), else ambiguous or unknown. Without `abbrev` (PARSE_OPT_KEEP_UNKNOWN_OPT) only the
    negated forms may be abbreviated."""
    name = arg.split("=", 1)[0]
    abbrev_opt: tuple[Opt, bool] | None = None
    ambiguous: str = ""
    for opt in spec.options:
        for long in (n[2:] for n in opt.names if n.startswith("--")):
            negatable = f"--{long}" not in noneg
            flags = opt_flags = False
            cur = long
            while True:
                rest = arg[len(cur):] if arg.startswith(cur) else None
                hit = False
                if rest is None:
                    if abbrev and cur.startswith(name):
                        hit = True
                    elif not negatable:
                        break
                    elif "no-".startswith(arg):
                        flags, hit = True, True
                    elif not arg.startswith("no-"):
                        if cur.startswith("no-"):
                            cur, opt_flags = cur[3:], True
                            continue
                        break
                    else:
                        flags = True
                        tail = arg[3:]
                        if tail.startswith(cur) and (tail[len(cur):] == "" or tail[len(cur)] == "="):
                            return opt, flags != opt_flags, ""
                        if cur.startswith(tail):
                            hit = True
                        else:
                            break
                    if hit:
                        if abbrev_opt is not None and abbrev_opt[0] is not opt:
                            ambiguous = f"ambiguous: it could be {_long(abbrev_opt[0])} or --{long}"
                        abbrev_opt = (opt, flags != opt_flags)
                    break
                if rest and rest[0] != "=":
                    break
                return opt, flags != opt_flags, ""
    if ambiguous:
        return None, False, ambiguous + " (git refuses it)"
    if abbrev_opt is not None:
        return abbrev_opt[0], abbrev_opt[1], ""
    return None, False, "an option the gate does not know"


_CONFIG_READS = frozenset({"--get", "--get-all", "--get-regexp", "--list", "--get-urlmatch", "--get-color",
                           "--get-colorbool"})
_CONFIG_REMOVES = frozenset({"--unset", "--unset-all", "--remove-section"})
_CONFIG_WRITES = frozenset({"--add", "--replace-all", "--rename-section"})


def _config_findings(k: int, argv: Argv, words: list[tuple[int, str]], found: list[Found]) -> list[Found]:
    """git config writes configuration (CODE: it can name programs git runs) unless an action only reads; with no
    action, two operands (`name value`) set a value. A write (removals too) is also WRITES of the file it changes
    (`--file F`, `--global`: ~/.gitconfig, `--system`, `--worktree`, else the repository's .git/config), so the
    gate's judging of writes asks about a protected one whatever rule allows `git config`."""
    spec = t.table("config")
    actions: set[str] = set()
    target = ".git/config"
    for j in range(k + 1, len(argv)):
        a = argv[j]
        if a is None:
            return [Found(j, Effect.CODE, "git config gets an argument the gate cannot know")]
        if a.startswith("--") and spec is not None:
            opt = _resolve("config", spec, a)[0]
            if opt is not None:
                actions.add(_long(opt))
                target = _config_file(_long(opt), a, argv, j) or target
        elif a in ("-l", "-e", "-f"):
            actions.add({"-l": "--list", "-e": "--edit", "-f": "--file"}[a])
            target = _config_file("--file", a, argv, j) or target if a == "-f" else target
        elif a.startswith("-f") and len(a) > 2:
            target = a[2:]
    if "--edit" in actions:
        return []  # already CODE through the table
    reads = bool(actions & _CONFIG_READS) and not actions & _CONFIG_WRITES
    removes = bool(actions & _CONFIG_REMOVES)
    if actions & _CONFIG_WRITES or removes or (not reads and len(words) >= 2):
        why = "git config writes configuration that can run a program"
        return [Found(k, Effect.CODE, why), Found(k, Effect.WRITES, f"{why} ({target})", target)]
    return []


def _config_file(name: str, word: str, argv: Argv, j: int) -> str | None:
    """The file a `git config` option makes it change, or None when this option names none."""
    if name == "--file":
        value = word.partition("=")[2] if "=" in word else argv[j + 1] if j + 1 < len(argv) else None
        return value if value else None
    return {"--global": "~/.gitconfig", "--system": "/etc/gitconfig", "--worktree": ".git/config.worktree"}.get(name)


_BRANCH_CONFIG = frozenset({"--set-upstream-to", "--unset-upstream", "--track", "--set-upstream"})


def _branch_config_writes(spec: ProgramSpec | None, argv: Argv, k: int) -> list[Found]:
    """git branch's upstream options write the repository's configuration (.git/config): judged as that write."""
    found = []
    for j in range(k + 1, len(argv)):
        a = argv[j]
        if a is None or a == "--":
            break
        opt = _resolve("branch", spec, a)[0] if a.startswith("--") and spec is not None else None
        short = not a.startswith("--") and a.startswith("-") and ("u" in a[1:] or "t" in a[1:])
        if short or (opt is not None and _long(opt) in _BRANCH_CONFIG):
            found.append(Found(j, Effect.WRITES, f"git branch {a} writes the branch's upstream into the "
                                                 "repository's configuration", ".git/config"))
    return found
