"""Programs that run code from their arguments, and what that means for Bash rules.

`code_risks(argv)` lists the ways one simple command (its argv, `None` for a word whose value the gate cannot know)
may run code that its words do not show as a command: an interpreter given a script, `git -c`, `awk` with
`system()`, `sed` with `e`, `find -exec`, `tar --checkpoint-action`, `ssh -o ProxyCommand`, `xargs`, `env -S`,
a build tool running the project's recipes, a wrapper (`sudo`, `timeout`, `nice`...) around any of those. Each
`Risk` names the argv word that makes the command run code (`index`) and says why.

What this means for rules (docs/SECURITY.md, "Shell commands: what a rule promises"):

- An allow rule with a wildcard (`Bash(git:*)`, `Bash(python *)`) is blind to the arguments it lets through, so it
  covers a risky word only when its literal text (before the wildcard) already spells that word: `Bash(git:*)`
  allows `git log` but not `git -c alias.x='!sh' x`; `Bash(python -m pytest:*)` allows `python -m pytest -q`;
  `Bash(python:*)` allows only `python --version`. An exact rule covers exactly its text.
- For a program with an option table (options/: rg, grep, find, sort, split, tar, zip, curl, wget, sed, awk, the
  wrappers, the everyday file and text tools), a wildcard rule covers it only when every option is one the table
  knows and none runs code: an option it does not know, an abbreviation it cannot resolve, or a word it cannot know
  where an option may stand is a hidden risk like a code-running one. Other programs keep Claude Code's meaning.
- A deny (or ask) rule matches the commands a command line names, looked through wrappers, `eval`, `sh -c`, aliases
  and functions. It cannot see what a program runs from its own arguments, files or configuration, so a command with
  a `hidden` risk "may run anything": in bypassPermissions mode, while a Bash deny or ask rule is in force, the gate
  refuses it with the reason. What a deny rule can never promise: that a program not in this table (a compiled
  binary, a script by path, a test suite) does not run the denied program itself, or that a repository's own
  configuration and hooks (`.git/config`, `.git/hooks`, a Makefile) do not; those need a sandbox, not a matcher.
"""

from __future__ import annotations

import itertools
import os
import re

from mini_claude.permissions.options import canonical, findings
from mini_claude.permissions.options.spec import Effect
from mini_claude.permissions.program_args import (
    Argv,
    Risk,
    awk_risks,
    builtin_risks,
    env_risk,
    find_risks,
    git_risks,
    name_arg_risks,
    opt,
    sed_risks,
    ssh_risks,
)

__all__ = ["Risk", "code_risks", "env_risk", "is_wrapper"]


# ------------------------------------------------------------------------------------------------ the table

_SAFE_FORMS = frozenset({"--version", "-V", "--help", "-h", "-version", "-help"})
_INTERPRETER_RE = re.compile(
    r"^(?:python[0-9.]*|pypy[0-9.]*|node(?:js)?|deno|bun|perl[0-9.]*|ruby[0-9.]*|php[0-9.]*|lua(?:jit)?[0-9.]*"
    r"|tclsh[0-9.]*|wish|expect|Rscript|R|julia|osascript|pwsh|powershell|groovy|java|jshell|scala|kotlinc?|swift"
    r"|erl|escript|elixir|iex|runghc|runhaskell|ghci|ocaml|guile|racket|sbcl|clisp|gdb|lldb|sqlite3|psql|mysql"
    r"|dc|m4|vim?|nvim|ex|view|vimdiff|emacs|emacsclient|ed|red|nano|screen|tmux|at|batch|crontab|entr"
    r"|pytest|py\.test|tox|nox|ipython|jupyter)$")
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "rbash", "csh", "tcsh"})
# Build and task runners: running them runs the project's recipes (index 0: a rule naming the program covers it).
_RECIPE_RUNNERS = frozenset({"make", "gmake", "bmake", "just", "rake", "ninja", "meson", "cmake", "gradle", "gradlew",
                             "mvn", "mvnw", "ant", "sbt", "bazel", "bazelisk", "buck", "buck2", "task", "invoke",
                             "scons", "waf", "xmake"})
# Package managers: these subcommands run the project's or a package's scripts.
_SCRIPT_SUBCOMMANDS: dict[str, frozenset[str] | None] = {
    "npm": frozenset({"run", "run-script", "rum", "urn", "exec", "x", "test", "t", "tst", "start", "stop", "restart",
                      "install", "i", "in", "ins", "inst", "insta", "instal", "isnt", "isntal", "add", "ci",
                      "install-test", "it", "install-ci-test", "cit", "rebuild", "rb", "pack", "publish", "explore",
                      "update", "up", "upgrade", "link", "ln", "prune", "dedupe", "init", "create", "innit"}),
    "pnpm": None, "yarn": None, "bun": None,  # None: every subcommand but the listed safe ones
    "npx": None, "pnpx": None, "bunx": None, "uvx": None, "pipx": None,
    "cargo": None, "go": None, "dotnet": None, "uv": None, "poetry": None, "hatch": None, "pdm": None, "rye": None,
    "conda": None, "mamba": None, "pip": None, "pip3": None, "docker": None, "podman": None, "nerdctl": None,
    "kubectl": None, "systemd-run": None, "flatpak": None, "snap": None, "nix": None, "nix-shell": None,
}
# For the `None` entries above: subcommands that run no project or package code.
_SAFE_SUBCOMMANDS = frozenset({
    "--version", "-v", "-V", "version", "help", "--help", "-h", "list", "ls", "ll", "la", "view", "info", "show",
    "search", "outdated", "why", "config", "get", "root", "bin", "prefix", "whoami", "audit", "fmt", "env", "doc",
    "images", "ps", "logs", "inspect", "tree", "metadata", "freeze", "check", "vet",
})
_SAFE_SUBCOMMANDS_BY_TOOL = {
    "cargo": frozenset({"--version", "-V", "version", "help", "fmt", "tree", "metadata", "search", "locate-project"}),
    "go": frozenset({"version", "env", "fmt", "list", "doc", "help", "mod"}),
    "pip": frozenset({"--version", "-V", "list", "show", "freeze", "check", "help", "config", "cache", "inspect"}),
}
_SAFE_SUBCOMMANDS_BY_TOOL["pip3"] = _SAFE_SUBCOMMANDS_BY_TOOL["pip"]

_COMPILERS = frozenset({"gcc", "g++", "cc", "c++", "clang", "clang++", "tcc"})

# Wrappers: run (a tail of) their arguments as a command. Looked through; their options may take values.
_WRAPPERS = frozenset({
    "sudo", "doas", "pkexec", "run0", "runuser", "env", "command", "exec", "builtin", "nohup", "time", "nice",
    "ionice", "chrt", "taskset", "timeout", "stdbuf", "setsid", "coproc", "flock", "chroot", "unshare", "nsenter",
    "strace", "ltrace", "unbuffer", "firejail", "busybox", "caffeinate", "xargs", "su", "script", "watch",
    "parallel", "proxychains", "torsocks", "faketime", "valgrind", "nocache", "catchsegv", "fakeroot",
    "ssh-agent", "prlimit", "setpriv", "numactl", "sg", "dbus-launch", "dbus-run-session", "xvfb-run", "rlwrap",
    "bwrap", "proot", "schroot", "runcon", "cgexec", "systemd-inhibit", "chpst", "daemonize", "perf", "mpirun",
    "srun", "sem", "retry", "direnv", "dotenv", "with-contenv", "s6-setuidgid", "gtimeout", "pv",
})
# Wrappers whose options can name a command to run (`strace -o '|cmd'`): any word starting with one of these.
_WRAPPER_PIPE_PREFIXES = {"strace": ("|", "!"), "ltrace": ("|", "!"), "perf": ("--", )}
# Wrapper options that run a shell string.
_WRAPPER_SHELL_OPTIONS = {"su": ("-c", "--command", "-s", "--shell"), "runuser": ("-c", "--command", "-s"),
                          "flock": ("-c", "--command"), "script": ("-c", "--command"),
                          "sudo": ("-s", "--shell", "-i", "--login", "-e", "--edit"), "doas": ("-s",),
                          "nsenter": (), "unshare": ()}

_NAME_ARG_BUILTINS = frozenset({"read", "unset", "printf", "getopts", "wait", "test", "[", "declare", "typeset",
                                "local", "readonly", "export", "mapfile", "readarray"})


def is_wrapper(name: str) -> bool:
    return os.path.basename(name) in _WRAPPERS


def code_risks(argv: Argv) -> list[Risk]:
    """Every way the simple command `argv` runs code it does not show as a command (see the module docstring).
    Leading `NAME=value` words are assignments. Wrappers are looked through: each tail after one is a command."""
    risks: list[Risk] = []
    reachable = [0]
    seen: set[int] = set()
    while reachable:
        start = reachable.pop()
        if start in seen or start >= len(argv):
            continue
        seen.add(start)
        i = start
        # `NAME=value` (after env, any NAME: `env 'BASH_FUNC_git%%=() { ...; }' bash` defines a function)
        while i < len(argv) and argv[i] is not None and re.match(r"^[^-=/][^=/]*=", argv[i] or ""):
            why = env_risk((argv[i] or "").split("=", 1)[0])
            if why:
                risks.append(Risk(i, why))
            i += 1
        if i >= len(argv):
            continue
        head = argv[i]
        if head is None:
            if i > start or start > 0:
                risks.append(Risk(i, "it runs a command whose name the gate cannot know"))
            continue
        name = os.path.basename(head)
        found, tails = _program_risks(name, argv, i)
        risks.extend(found)
        reachable.extend(tails)
    return sorted(set(risks), key=lambda r: r.index)


def _program_risks(name: str, argv: Argv, i: int) -> tuple[list[Risk], list[int]]:
    """The risks of the program `name` at argv[i], and the argv positions where a command it runs may start.
    A program with an option table (options/): every option that runs code, and every option the table does not
    know or cannot resolve, is a risk; the rest of its reading gets the options spelled out (`--expr` is
    `--expression`). git keeps its own reading (program_args.git_risks)."""
    found = findings(argv, i) if name != "git" else None
    if found is None:
        return _risks_by_name(name, argv, i)
    more, tails = _risks_by_name(name, canonical(argv, i), i)
    said = {r.index for r in more if r.hidden}  # a word its own reading already found hidden keeps that reason
    return [Risk(f.index, f.why) for f in found
            if f.effect in (Effect.CODE, Effect.UNKNOWN) and f.index not in said] + more, tails


def _risks_by_name(name: str, argv: Argv, i: int) -> tuple[list[Risk], list[int]]:
    args = argv[i + 1:]
    end = len(argv)

    def at(k: int) -> int:
        return i + 1 + k

    if "/" in (argv[i] or "") and not (argv[i] or "").startswith(("/bin/", "/usr/bin/", "/sbin/", "/usr/sbin/")):
        return [Risk(i, f"{argv[i]} is a program by path, which may be a script written in this session")], []
    if name in _WRAPPERS:
        return _wrapper_risks(name, argv, i)
    if name in _SHELLS or _INTERPRETER_RE.match(name):
        return _interpreter_risks(name, argv, i), []
    if name in _RECIPE_RUNNERS:
        risks = [Risk(i, f"{name} runs the project's recipes, which can run any program")]
        if name in ("make", "gmake", "bmake"):
            risks += [Risk(at(k), f"{name} {a} changes which recipes or shell run")
                      for k, a in enumerate(args) if a is None or "=" in a
                      or a.startswith(("-f", "--file", "--makefile", "--eval", "-E", "-C", "--directory", "-I",
                                       "--include-dir"))]
        return risks, []
    if name in _SCRIPT_SUBCOMMANDS:
        return _subcommand_risks(name, argv, i), []
    if name == "eval":
        return [Risk(min(i + 1, end), "eval runs its arguments as shell code", hidden=None in args)], []
    if name in ("source", "."):
        return [Risk(min(i + 1, end), f"{name} runs a file's code", stdin=_reads_stdin_file(args))], []
    if name == "trap":
        code = [a for a in args if a is None or not a.startswith("-")]
        return ([Risk(i + 1, "trap runs its argument as shell code later", hidden=code[0] is None)] if code
                else []), []
    if name == "alias":
        return ([Risk(i + 1, "alias defines code that runs later", hidden=None in args)]
                if any(a is None or "=" in a for a in args) else []), []
    if name == "hash":
        return [Risk(at(k), "hash -p makes a name run another program") for k, a in enumerate(args)
                if a is None or (a.startswith("-") and "p" in a)], []
    if name in ("enable", "bind", "fc", "complete", "compgen", "mapfile", "readarray", "let"):
        return builtin_risks(name, argv, i), []
    if name in _NAME_ARG_BUILTINS:
        return name_arg_risks(name, argv, i), []
    if name == "git":
        return git_risks(argv, i), []
    if name in ("awk", "gawk", "mawk", "nawk", "busybox-awk"):
        return awk_risks(name, argv, i), []
    if name in ("sed", "gsed"):
        return sed_risks(name, argv, i), []
    if name == "find":
        risks, starts = find_risks(argv, i)
        for start in starts:
            # a found file's name replaces `{}`: the command gets a word the gate cannot know
            end = next((j for j in range(start, len(argv)) if argv[j] in (";", "+")), len(argv))
            tail = [None if w is None or "{}" in w else w for w in argv[start:end]]
            risks += [Risk(start + r.index, r.why, r.hidden, r.stdin) for r in code_risks(tail)]
        return risks, []
    if name in ("ssh", "scp", "sftp", "slogin"):
        return ssh_risks(name, argv, i), []
    if name == "rsync":
        return [Risk(at(k), f"rsync {opt(a)} runs a command") for k, a in enumerate(args)
                if a is None or a.startswith(("-e", "--rsh", "--rsync-path", "-M", "--remote-option"))
                or (a.startswith("-") and not a.startswith("--") and "e" in a[1:])], []
    if name in ("less", "more", "most"):
        return [Risk(at(k), f"{name} {opt(a)} runs a pager command") for k, a in enumerate(args)
                if a is None or a.startswith("+") or a.startswith(("-k", "--lesskey"))], []
    if name == "man":
        return [Risk(at(k), f"man {opt(a)} runs a program") for k, a in enumerate(args)
                if a is None or a.startswith(("-P", "--pager", "-H", "--html", "-p", "--preprocessor", "-M"))], []
    if name in _COMPILERS:
        return [Risk(at(k), f"{name} {opt(a)} runs a program") for k, a in enumerate(args)
                if a is None or a.startswith(("-wrapper", "-fplugin", "-B", "--plugin", "-specs", "--specs"))], []
    return [], []


def _reads_stdin_file(args: Argv) -> bool:
    return bool(args) and args[0] in ("/dev/stdin", "-", "/proc/self/fd/0")


def _interpreter_risks(name: str, argv: Argv, i: int) -> list[Risk]:
    args = argv[i + 1:]
    if args and all(a in _SAFE_FORMS for a in args):
        return []
    if name in _SHELLS:
        for k, a in enumerate(args):
            if a is None:
                break
            if a in ("-i", "-l", "--login", "--rcfile", "--init-file", "--interactive") or (
                    a.startswith("-") and not a.startswith("--") and ("i" in a[1:] or "l" in a[1:])):
                return [Risk(i + 1 + k, f"{name} {a} runs its start-up files")]
            if a == "-c" or (a.startswith("-") and not a.startswith("--") and "c" in a[1:]):
                code = args[k + 1] if k + 1 < len(args) else None
                return [Risk(i + 1 + k, f"{name} -c runs its argument as shell code", hidden=code is None)]
            if not a.startswith(("-", "+")):
                return [Risk(i + 1 + k, f"{name} runs the script {a}")]
            if a == "-s":
                break
        return [Risk(len(argv), f"{name} reads the code it runs from stdin", stdin=True)]
    return [Risk(i + 1, f"{name} runs code from its arguments, a file or stdin")]


def _subcommand_risks(name: str, argv: Argv, i: int) -> list[Risk]:
    args = argv[i + 1:]
    k = 0
    while k < len(args) and args[k] is not None and (args[k] or "").startswith("-") \
            and args[k] not in _SAFE_SUBCOMMANDS:
        k += 1
    sub = args[k] if k < len(args) else None
    listed = _SCRIPT_SUBCOMMANDS[name]
    safe = _SAFE_SUBCOMMANDS_BY_TOOL.get(name, _SAFE_SUBCOMMANDS)
    if k == len(args) and name not in ("npx", "pnpx", "bunx", "uvx"):
        return []
    runs = sub is None or (sub in listed if listed is not None else sub not in safe)
    if name in ("npx", "pnpx", "bunx", "uvx"):
        runs = not (sub in _SAFE_FORMS and k == len(args) - 1)
    risks = [Risk(i + 1 + k, f"{name} {sub or '<unknown>'} runs the project's or a package's code")] if runs else []
    risks += [Risk(i + 1 + j, f"{name} {opt(a)} runs a program") for j, a in enumerate(args)
              if a is not None and a.startswith(("--script-shell", "--node-options", "-toolexec", "--toolexec",
                                                 "-vettool", "--vettool", "-exec"))]
    return risks


# Wrapper options that take a value (the command starts after them); any other option is a flag.
_WRAPPER_VALUE_OPTIONS: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-T", "-U", "--user", "--group", "--host",
                       "--prompt", "--close-from", "--chdir", "--role", "--type", "--command-timeout",
                       "--other-user"}),
    "doas": frozenset({"-u", "-C"}), "env": frozenset({"-u", "--unset", "-C", "--chdir"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}), "nice": frozenset({"-n", "--adjustment"}),
    "exec": frozenset({"-a"}), "stdbuf": frozenset({"-i", "-o", "-e"}), "ionice": frozenset({"-c", "-n", "-p"}),
    "xargs": frozenset({"-a", "-d", "-E", "-e", "-I", "-L", "-l", "-n", "-P", "-s", "--arg-file", "--delimiter",
                        "--max-lines", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"}),
    "runuser": frozenset({"-u", "-g", "-G", "--user", "--group"}), "taskset": frozenset({"-c", "--cpu-list"}),
    "unbuffer": frozenset(), "nohup": frozenset(), "time": frozenset(), "setsid": frozenset(),
    "builtin": frozenset(), "caffeinate": frozenset({"-t", "-w"}), "flock": frozenset({"-w", "-E", "--timeout",
                                                                                     "--conflict-exit-code"}),
    "command": frozenset(), "coproc": frozenset(), "nocache": frozenset(), "catchsegv": frozenset(),
    "fakeroot": frozenset({"-l", "-s", "-i", "--lib", "--faked"}),
}
# Wrappers whose first operand(s) before the command are not options (`timeout 5 cmd`, `flock FILE cmd`).
_WRAPPER_OPERANDS = {"timeout": 1, "flock": 1, "chroot": 1, "taskset": 1}
_WRAPPER_WHY = {"xargs": "xargs builds its command from stdin", "parallel": "parallel builds commands from its input",
                "watch": "watch runs its arguments as shell code", "su": "su runs a shell",
                "script": "script runs a shell"}


def _wrapper_risks(name: str, argv: Argv, i: int) -> tuple[list[Risk], list[int]]:
    args = argv[i + 1:]
    risks: list[Risk] = []
    shell_opts = _WRAPPER_SHELL_OPTIONS.get(name, ())
    for k, a in enumerate(args):
        if a is not None and a.startswith("-") and any(a == o or a.startswith(o + "=") for o in shell_opts):
            risks.append(Risk(i + 1 + k, f"{name} {a} runs a shell"))
    if name == "env":
        risks += [Risk(i + 1 + k, "env -S splits a string into a command") for k, a in enumerate(args)
                  if a is not None and (a.startswith("--split-string") or re.match(r"^-[a-zA-Z0-9]*S", a))]
    elif name == "command":
        options = list(itertools.takewhile(lambda a: a is not None and a.startswith("-") and a != "--", args))
        if any(re.match(r"^-[a-zA-Z]*[vV]", a or "") for a in options):
            return risks, []  # command -v / -V only look the name up
        risks += [Risk(i + 1 + k, "command -p looks the program up on another PATH") for k, a in enumerate(options)
                  if re.match(r"^-[a-zA-Z]*p", a or "")]
    elif name in _WRAPPER_WHY:
        risks.append(Risk(i, _WRAPPER_WHY[name]))
    elif name in _WRAPPER_PIPE_PREFIXES:
        risks += [Risk(i + 1 + k, f"{name} {a} runs a command") for k, a in enumerate(args)
                  if a is None or a.startswith(_WRAPPER_PIPE_PREFIXES[name])]
    start = _wrapped_start(name, argv, i)
    return risks, [start] if start is not None else list(range(i + 1, len(argv)))


def _wrapped_start(name: str, argv: Argv, i: int) -> int | None:
    """Where the wrapped command starts, when the wrapper's options are all known; else None (every tail)."""
    values = _WRAPPER_VALUE_OPTIONS.get(name)
    if values is None:
        return None
    k = i + 1
    while k < len(argv):
        a = argv[k]
        if a is None:
            return None
        if a == "--":
            k += 1
            break
        if name == "env" and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", a):
            break  # the assignments are read as the command's own (code_risks checks them)
        if not a.startswith("-") or a == "-":
            break
        if name == "nice" and re.match(r"^-\d+$", a):
            k += 1
            continue
        opt = a.split("=", 1)[0]
        if opt in values and "=" not in a:
            k += 2
        elif a.startswith("--") or len(a) == 2 or any(a.startswith(v) for v in values if len(v) == 2):
            k += 1  # a flag, `--opt=value`, or a short option with its value attached (`-n5`)
        else:
            return None  # a cluster of short options (`-Eu`): where a value starts is unclear
    k += _WRAPPER_OPERANDS.get(name, 0)
    return k


