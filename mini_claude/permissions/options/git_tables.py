"""git's option tables: every option of the subcommands the gate knows, with what each does.

The option lists (names, values, which `--no-` forms git refuses) are generated from the real git by
scripts/gen_git_options.py into git_data_0.py / git_data_1.py; this module decodes them and classifies each option
by name. Everything not classified below changes only what git reads or prints (Effect.NONE): the generator lists
any option whose name looks otherwise, so a new one gets reviewed here.

Decisions:
- `--ext-diff` and `--textconv` (and `git grep --textconv`) are NONE: the program they run is named only by git
  configuration (`diff.external`, `diff.<driver>.command`/`textconv`); a repository's `.gitattributes` can pick a
  driver but not define one. `git diff` runs `diff.external` without any option, so flagging the option would not
  close anything; the configuration itself is what must not be written (`git config` writes are CODE below, and
  `.git/config` is a protected path for the write judging).
- `--gpg-sign`, `-e`/`--edit` of commit/tag/merge, `-p` of the top level: they run the user's configured gpg,
  editor and pager, as the command without them may already do. NONE.
- `--strategy`: git runs the program `git-merge-<strategy>`, which a name with a slash can point at a file of the
  repository: CODE.
"""

from __future__ import annotations

from mini_claude.permissions.options.git_data_0 import DATA as _DATA_0
from mini_claude.permissions.options.git_data_1 import DATA as _DATA_1
from mini_claude.permissions.options.spec import Arg, Effect, Opt, ProgramSpec, Style

__all__ = ["DEFAULT_SUBSUB", "MIXED", "NEGATED", "OWN", "REVISION", "SUBSUBS", "WHOLE_NAMES", "table"]

# Long options that run a program, in any subcommand (the why is what the user reads).
_CODE = {
    "--upload-pack": "runs the program it names (as upload-pack)", "--receive-pack": "runs the program it names "
    "(as receive-pack)", "--exec": "runs the program it names", "--extcmd": "runs the program it names",
    "--open-files-in-pager": "runs a program (the pager) on the files found", "--template": "runs programs "
    "later (it copies hooks from the folder it names)", "--config": "runs what the configuration it sets names",
    "--tool": "runs a merge or diff program", "--sendmail-cmd": "runs a program", "--to-cmd": "runs a program",
    "--cc-cmd": "runs a program", "--smtp-server": "runs the program it names", "--strategy": "runs the "
    "program git-merge-<strategy>, which can be a file of the repository",
}
# (subcommand, option): overrides and short-only options.
_BY_SUB: dict[tuple[str, str], tuple[Effect, str]] = {
    ("commit", "--template"): (Effect.READS, "reads the file it names"),
    ("rebase", "--interactive"): (Effect.CODE, "runs the sequence editor, which can run commands"),
    ("rebase", "--edit-todo"): (Effect.CODE, "runs the sequence editor, which can run commands"),
    ("help", "--config"): (Effect.NONE, ""),  # lists configuration variables
    ("revert", "--reference"): (Effect.NONE, ""),  # a flag: how the message names the commit
    ("notes merge", "--strategy"): (Effect.NONE, ""),  # one of five built-in ways, never a program
    ("config", "--edit"): (Effect.CODE, "edits configuration that can run a program"),
    ("clone", "--separate-git-dir"): (Effect.WRITES, "writes the repository into the folder it names"),
    ("init", "--separate-git-dir"): (Effect.WRITES, "writes the repository into the folder it names"),
    ("apply", "--unsafe-paths"): (Effect.WRITES, "lets the patch write files outside the work tree"),
    ("apply", "--build-fake-ancestor"): (Effect.WRITES, "writes the index file it names"),
    ("read-tree", "--index-output"): (Effect.WRITES, "writes the index file it names"),
    ("interpret-trailers", "--in-place"): (Effect.WRITES, "rewrites the files it is given"),
    ("archive", "--output"): (Effect.WRITES, "writes the archive to the file it names"),
    ("archive", "--add-file"): (Effect.READS, "puts the file it names into the archive"),
    ("maintenance register", "--config-file"): (Effect.WRITES, "writes the configuration file it names"),
    ("maintenance unregister", "--config-file"): (Effect.WRITES, "writes the configuration file it names"),
    ("commit-graph write", "--object-dir"): (Effect.WRITES, "writes into the object folder it names"),
    ("grep", "-f"): (Effect.READS, "reads patterns from the file it names"),
    ("blame", "-S"): (Effect.READS, "reads revisions from the file it names"),
    ("annotate", "-S"): (Effect.READS, "reads revisions from the file it names"),
}
# Options that write or read the path they name, in any subcommand of the revision/diff family and elsewhere.
_WRITES = {"--output": "writes the file it names", "--output-directory": "writes patches into the folder it names"}
_READS = {"--file": "reads the file it names", "--pathspec-from-file": "reads pathspecs from the file it names",
          "--contents": "reads the file it names", "--ignore-revs-file": "reads the file it names",
          "--signature-file": "reads the file it names", "--reference": "reads objects from the repository it names",
          "--reference-if-able": "reads objects from the repository it names", "-O": "reads the file it names"}

# How each subcommand's options are parsed (git.py): parse-options with abbreviations unless listed here.
REVISION = frozenset({"log", "show", "whatchanged", "rev-list", "format-patch", "diff", "diff-files", "diff-index",
                      "diff-tree", "stash list", "stash show", "reflog show"})  # whole names, `--no-` prefixes
MIXED = frozenset({"blame", "annotate", "shortlog"})  # own options abbreviable, then revision/diff options
WHOLE_NAMES = frozenset({"rev-parse", "check-ref-format", "var"})  # hand-written parsers: whole names only
SUBSUBS: dict[str, frozenset[str]] = {}
for _key in (*_DATA_0, *_DATA_1):
    if " " in _key:
        _sub, _, _ss = _key.partition(" ")
        SUBSUBS[_sub] = SUBSUBS.get(_sub, frozenset()) | {_ss}
# What runs when the first word after the subcommand is not one of its subcommands (`git stash -u`).
DEFAULT_SUBSUB = {"stash": "push", "reflog": "show", "notes": "list"}
# Long options git refuses in their `--no-` form, per table.
NEGATED: dict[str, frozenset[str]] = {}
# How many of a table's options are the subcommand's own (the rest: the diff and revision options).
OWN: dict[str, int] = {}

_CACHE: dict[str, ProgramSpec | None] = {}


def _decode(key: str, data: str) -> tuple[ProgramSpec, frozenset[str]]:
    opts: list[Opt] = []
    noneg: set[str] = set()
    for token in data.split():
        refused = token.endswith("~")
        token = token.rstrip("~")
        arg = Arg.REQUIRED if token.endswith("=") else Arg.OPTIONAL if token.endswith("?") else Arg.NO
        names = tuple(token.rstrip("=?").split("/"))
        if refused:
            noneg.update(n for n in names if n.startswith("--"))
        effect, why = _classify(key, names)
        opts.append(Opt(names, arg, effect, why))
    return ProgramSpec(f"git {key}", Style.GIT, tuple(opts)), frozenset(noneg)


def _classify(key: str, names: tuple[str, ...]) -> tuple[Effect, str]:
    sub = key.split(" ")[0]
    for name in names:
        for k in (key, sub):
            if (k, name) in _BY_SUB:
                return _BY_SUB[(k, name)]
    for effect, by_name in ((Effect.CODE, _CODE), (Effect.WRITES, _WRITES), (Effect.READS, _READS)):
        for name in names:
            if name in by_name:
                return effect, by_name[name]
    return Effect.NONE, ""


def table(key: str) -> ProgramSpec | None:
    """The options of `git <key>` (`grep`, `stash push`), the diff and revision options added for the revision
    family; None for a subcommand without a table."""
    if key in _CACHE:
        return _CACHE[key]
    data = _DATA_0.get(key, _DATA_1.get(key))
    spec: ProgramSpec | None = None
    if data is not None:
        spec, noneg = _decode(key, data)
        OWN[key] = len(spec.options)
        if key in REVISION or key in MIXED:
            extra = [_decode(key, _DATA_1["<diff>"]), _decode(key, _DATA_1["<revision>"])]
            own = {n for o in spec.options for n in o.names}
            opts = [*spec.options, *(o for s, _ in extra for o in s.options if not own & set(o.names))]
            spec = ProgramSpec(spec.name, spec.style, tuple(opts))
        NEGATED[key] = noneg
    _CACHE[key] = spec
    return spec
