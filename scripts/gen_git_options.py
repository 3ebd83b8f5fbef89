"""Generate mini_claude/permissions/options/git_data_*.py: every option of the git subcommands the gate knows,
read from the real git installed here (run by hand: `python scripts/gen_git_options.py`; the output is committed).

- Subcommands parsed by git's parse-options: the option list `git <sub> --help-all` prints (names, whether a value
  is REQUIRED or OPTIONAL; unlike `-h` it includes the hidden options, such as `git ls-remote --exec`), and for each
  long option whether git accepts its `--no-` form (probed: `git <sub> --no-X --help-all` says "unknown option"
  when X is PARSE_OPT_NONEG).
- The diff options (diff.c, parse-options without abbreviations when log/diff/show parse them) come from
  `git range-diff -h`, whose list includes them; the revision options (revision.c, whole names only) from the
  manual pages of git-log and git-rev-list.

What each option does (Effect) is not generated: git_tables.py classifies the options by name, and this script
lists every generated option whose name looks like it could run, write or read something but has no class, so a
new git version cannot slip one in unreviewed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "mini_claude" / "permissions" / "options"
sys.path.insert(0, str(ROOT))
from mini_claude.permissions.options.git import GIT_SUBCOMMANDS  # noqa: E402

# The subcommands whose options get a table (the ones options/git.py knows).
SUBS = sorted(GIT_SUBCOMMANDS)
# Subcommands with their own subcommands: `git stash push -h` lists push's options.
SUBSUBS = {
    "stash": ["push", "drop", "pop", "apply", "branch", "clear", "create", "store"],
    "remote": ["add", "rename", "remove", "rm", "set-head", "show", "prune", "update", "set-branches", "get-url",
               "set-url"],
    "worktree": ["add", "list", "lock", "move", "prune", "remove", "repair", "unlock"],
    "notes": ["add", "append", "copy", "edit", "show", "list", "merge", "remove", "prune", "get-ref"],
    "bundle": ["create", "verify", "list-heads", "unbundle"],
    "reflog": ["expire", "delete", "exists"],
    "commit-graph": ["verify", "write"],
    "sparse-checkout": ["list", "init", "set", "add", "reapply", "disable"],
    "maintenance": ["run", "start", "stop", "register", "unregister"],
}
# Parsed by revision.c + diff.c (whole names; `--no-X` abbreviations only), with the builtin's own options parsed
# the same way (PARSE_OPT_KEEP_UNKNOWN_OPT turns abbreviations off).
REVISION_SUBS = ["log", "show", "whatchanged", "rev-list", "format-patch", "diff", "diff-files", "diff-index",
                 "diff-tree", "stash list", "stash show", "reflog show"]
# Own options parsed with abbreviations, then the rest by revision.c + diff.c.
MIXED_SUBS = ["blame", "annotate", "shortlog"]
# Where `git X -h` does not list the options (the usage comes from elsewhere).
# Hand-parsed options (whole names only): their tables come from the manual page.
MAN_EXACT = {"rev-parse": "git-rev-parse", "check-ref-format": "git-check-ref-format", "var": "git-var"}
# Options a builtin reads by hand, listed in neither its usage nor a manual page's option lines.
EXTRA = {"diff": [(["--cached"], ""), (["--staged"], ""), (["--merge-base"], ""), (["--no-index"], ""),
                  (["--base"], ""), (["--ours"], ""), (["--theirs"], ""), (["-q"], "")]}
HELP_ALIAS = {"stash list": "log", "reflog show": "log", "whatchanged": "log", "show": "log"}

_OPT_LINE = re.compile(r"^ {4}(-.*?)(?: {2,}.*)?$")


def git(args: list[str], cwd: str) -> tuple[int, str]:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": cwd, "LC_ALL": "C", "GIT_PAGER": "cat",
           "PAGER": "cat"}
    p = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=30,
                       stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout + p.stderr


def parse_help(text: str) -> list[tuple[list[str], str]]:
    """(names, arg) for each option line of parse-options' usage: arg is '' / '=' (required) / '?' (optional)."""
    found: list[tuple[list[str], str]] = []
    for line in text.splitlines():
        m = _OPT_LINE.match(line)
        if not m:
            continue
        spec = m.group(1).strip()
        names: list[str] = []
        arg = ""
        for part in re.split(r",\s+", spec):
            word = re.match(r"^(--?[A-Za-z0-9][A-Za-z0-9-]*|-.)(.*)$", part)
            if not word:
                continue
            name, rest = word.group(1), word.group(2).strip()
            if name.startswith("--[no-]"):
                name = "--" + name[7:]
            names.append(name)
            if rest.startswith("[") or (rest.startswith("(") and "[" in rest):
                arg = "?"
            elif rest:
                arg = "="
        if names:
            found.append((names, arg))
    return found


def probe_noneg(sub: list[str], names: list[str], cwd: str) -> bool:
    """True when git refuses `--no-X` for the long option X (PARSE_OPT_NONEG)."""
    long = [n for n in names if n.startswith("--")]
    if not long:
        return True
    _, out = git([*sub, "--no-" + long[0][2:], "--help-all"], cwd)
    return "unknown option" in out or "unrecognized argument" in out


def man_options(page: str) -> list[tuple[list[str], str]]:
    env = {**os.environ, "MANWIDTH": "200", "LC_ALL": "C"}
    text = subprocess.run(["man", "-P", "cat", page], capture_output=True, text=True, env=env,
                          timeout=60).stdout
    text = re.sub(r".\x08", "", text)
    found: list[tuple[list[str], str]] = []
    for line in text.splitlines():
        if not re.match(r"^ {7}-", line):
            continue
        for part in re.split(r",\s+", line.strip()):
            m = re.match(r"^(--\[no-\])?(--?[A-Za-z][A-Za-z0-9-]*)(.*)$", part)
            if not m:
                continue
            name, rest = m.group(2), m.group(3)
            arg = "?" if rest.startswith("[") else "=" if rest else ""
            if len(name) == 2 and rest and not rest.startswith((" ", "[")):
                arg = "="  # -S<string>, -L<range>: a short option with its value
            found.append(([name], arg))
    merged: dict[str, str] = {}
    for names, arg in found:  # `--from, --from=<ident>`: the value is optional
        old = merged.get(names[0])
        merged[names[0]] = arg if old is None or old == arg else "?"
    return [([name], arg) for name, arg in merged.items()]


def encode(opts: list[tuple[list[str], str, bool]]) -> str:
    """One token per option: names joined by '/', then '=' or '?' for a value, '~' when --no- is refused."""
    return " ".join("/".join(n) + a + ("~" if noneg else "") for n, a, noneg in opts)


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        git(["init", "-q", "."], tmp)
        tables: dict[str, str] = {}
        keys = [*SUBS, *(f"{s} {ss}" for s, subs in SUBSUBS.items() for ss in subs), "stash list", "stash show",
                "reflog show"]
        for key in keys:
            if key in ("help", "version"):
                pass
            argv = HELP_ALIAS.get(key, key).split()
            _, out = git([*argv, "--help-all"], tmp)  # -h leaves out the hidden options (PARSE_OPT_HIDDEN)
            if not parse_help(out):
                _, out = git([*argv, "-h"], tmp)
            opts = man_options(MAN_EXACT[key]) if key in MAN_EXACT else parse_help(out)
            opts += EXTRA.get(key, [])
            rows: list[tuple[list[str], str, bool]] = []
            seen: set[str] = set()
            for names, arg in opts:
                if any(n in seen for n in names):
                    continue
                seen.update(names)
                noneg = key in REVISION_SUBS or key in MAN_EXACT or probe_noneg(argv, names, tmp)
                rows.append((names, arg, noneg))
            tables[key] = encode(rows)
            print(f"{key}: {len(rows)} options", file=sys.stderr)
        _, out = git(["range-diff", "--help-all"], tmp)
        diff_part = out.split("Diff output format options", 1)[1]
        diff_rows = [(n, a, False) for n, a in parse_help(diff_part)]
        diff_names = {n for names, _, _ in diff_rows for n in names}
        rev_rows: list[tuple[list[str], str, bool]] = []
        for page in ("git-log", "git-rev-list", "git-show", "git-diff", "git-format-patch", "git-diff-tree",
                     "git-diff-index", "git-diff-files", "git-whatchanged"):
            for names, arg in man_options(page):
                if names[0] not in diff_names and names[0] not in {n for r in rev_rows for n in r[0]}:
                    rev_rows.append((names, arg, False))
        tables["<diff>"] = encode(diff_rows)
        tables["<revision>"] = encode(rev_rows)
    version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    write_parts(tables, version)
    review()
    return 0


_SUSPICIOUS = re.compile(r"exec|cmd|command|program|tool|editor|pager|output|file|template|config|hook|upload"
                         r"|receive|script|shell|server|helper|strategy|in-place|write|dest|target|ssh")

# Looked at (git 2.39.5) and left NONE: they only shape output, name built-in strategies or pass strings to a server.
_REVIEWED = frozenset({
    'add --pathspec-file-nul', 'archive --add-virtual-file', 'branch --edit-description',
    'cat-file --batch-command', 'checkout --overwrite-ignore', 'checkout --pathspec-file-nul',
    'cherry-pick -X/--strategy-option', 'clone --server-option', 'column --command', 'commit --no-post-rewrite',
    'commit -u/--untracked-files', 'commit --pathspec-file-nul', 'fetch --write-fetch-head',
    'fetch -o/--server-option', 'fetch --write-commit-graph', 'for-each-ref -s/--shell',
    'format-patch --numbered-files', 'format-patch --filename-max-length', 'format-patch --cover-from-description',
    'grep -l/--files-with-matches', 'grep -L/--files-without-match', 'ls-remote -o/--server-option',
    'merge -X/--strategy-option', 'merge --overwrite-ignore', 'pull -X/--strategy-option',
    'pull -o/--server-option', 'range-diff --dirstat-by-file', 'range-diff --output-indicator-new',
    'range-diff --output-indicator-old', 'range-diff --output-indicator-context', 'range-diff -B/--break-rewrites',
    'rebase -X/--strategy-option', 'rebase --reschedule-failed-exec', 'reset --pathspec-file-nul',
    'restore --pathspec-file-nul', 'revert -X/--strategy-option', 'rm --pathspec-file-nul',
    'status -u/--untracked-files', 'switch --overwrite-ignore', 'update-index --force-write-index',
    'help --external-commands', 'help -c/--config', 'help --config-for-completion',
    'help --config-sections-for-completion', 'repack -b/--write-bitmap-index', 'repack -m/--write-midx',
    'stash push --pathspec-file-nul', 'notes copy --for-rewrite', 'notes merge -s/--strategy',
    'reflog expire --rewrite', 'reflog delete --rewrite',
})


def review() -> None:
    """List the options still classified NONE whose name looks like they could run, write or read something."""
    from mini_claude.permissions.options import git_data_0, git_data_1, git_tables
    from mini_claude.permissions.options.spec import Effect
    for key in (*git_data_0.DATA, *git_data_1.DATA):
        spec = None if key.startswith("<") else git_tables.table(key)
        for opt in spec.options[:git_tables.OWN.get(key, 0)] if spec else ():
            if opt.effect is Effect.NONE and any(_SUSPICIOUS.search(n) for n in opt.names) \
                    and f"{key} {'/'.join(opt.names)}" not in _REVIEWED:
                print(f"review: git {key} {'/'.join(opt.names)} is NONE", file=sys.stderr)


def write_parts(tables: dict[str, str], version: str) -> None:
    chunks: list[list[str]] = [[]]
    size = 0
    for key, data in tables.items():
        lines = [f"    {key!r}: ("]
        words = data.split(" ")
        line = ""
        for w in words:
            if len(line) + len(w) + 1 > 100:
                lines.append(f"        {line!r}")
                line = ""
            line = f"{line}{w} "
        lines.append(f"        {line.rstrip()!r}),")
        if size + len(lines) > 330:
            chunks.append([])
            size = 0
        chunks[-1].extend(lines)
        size += len(lines)
    for n, chunk in enumerate(chunks):
        path = OUT / f"git_data_{n}.py"
        path.write_text(
            f'"""git\'s options, part {n + 1} of {len(chunks)}: generated by scripts/gen_git_options.py from {version}\n'
            "(`git <sub> -h`, probed `--no-` forms, the manual pages). Do not edit by hand: rerun the script.\n\n"
            "Each token: the option's names joined by '/', then '=' (takes a value) or '?' (an optional value,\n"
            "attached only), then '~' when git refuses its `--no-` form.\n"
            '"""\n\nDATA: dict[str, str] = {\n' + "\n".join(chunk) + "\n}\n")
    print(f"wrote {len(chunks)} files", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
