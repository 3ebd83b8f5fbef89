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
- A deny (or ask) rule matches the commands a command line names, looked through wrappers, `eval`, `sh -c`, aliases
  and functions. It cannot see what a program runs from its own arguments, files or configuration, so a command with
  a `hidden` risk "may run anything": in bypassPermissions mode, while a Bash deny or ask rule is in force, the gate
  refuses it with the reason. What a deny rule can never promise: that a program not in this table (a compiled
  binary, a script by path, a test suite) does not run the denied program itself, or that a repository's own
  configuration and hooks (`.git/config`, `.git/hooks`, a Makefile) do not; those need a sandbox, not a matcher.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from mini_claude.permissions.script_langs import awk_runs_code, sed_effects

__all__ = ["Risk", "code_risks", "env_risk", "is_wrapper"]

Argv = Sequence[str | None]


@dataclass(frozen=True)
class Risk:
    """One way a command runs code. `index`: the argv word that makes it so (`len(argv)` when the code comes from
    stdin). `hidden`: deny rules cannot see what runs (False: the command it runs is a visible word list, which deny
    rules look through, or it only writes files). `stdin`: the code is read from stdin (shell.py knows whether that
    is a heredoc it can read)."""

    index: int
    why: str
    hidden: bool = True
    stdin: bool = False


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

_GIT_GLOBAL_CONFIG = {"-c": "-c", "--config-env": "--config-env", "-C": "-C", "--exec-path": "--exec-path",
                      "--git-dir": "--git-dir", "--work-tree": "--work-tree"}
_GIT_GLOBAL_WITH_VALUE = frozenset({"-c", "--config-env", "-C", "--git-dir", "--work-tree", "--namespace",
                                    "--super-prefix", "--exec-path", "--list-cmds", "--attr-source"})
_GIT_PLAIN = frozenset({
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
# Subcommand options that name a program to run (prefix match, `--opt=value` included).
_GIT_CODE_OPTIONS = ("--upload-pack", "--receive-pack", "--exec", "--extcmd", "--open-files-in-pager", "--template",
                     "--config", "--tool", "--sendmail-cmd", "--to-cmd", "--cc-cmd", "--smtp-server")
_GIT_SHORT_CODE = {"clone": ("-u", "-c"), "ls-remote": ("-u",), "archive": ("-u",), "grep": ("-O",),
                   "rebase": ("-x", "-i"), "fetch": ("-u",)}
_GIT_CONFIG_READS = frozenset({"--get", "--get-all", "--get-regexp", "--list", "-l", "--get-urlmatch", "get",
                               "list", "--show-origin", "--show-scope", "--name-only", "-z", "--null",
                               "--global", "--local", "--system", "--worktree", "--type", "--bool", "--int",
                               "--path", "--default", "--includes", "--no-includes", "--file", "-f", "--blob"})

_TAR_CODE = ("--checkpoint-action", "--to-command", "--use-compress-program", "--info-script", "--new-volume-script",
             "--rsh-command", "--rmt-command", "-I", "-F")
_SSH_CODE_OPTIONS = re.compile(r"^(?:proxycommand|localcommand|permitlocalcommand|knownhostscommand|match"
                               r"|remotecommand|include|pkcs11provider|securitykeyprovider|sshaskpass)", re.I)
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_FIND_WRITES = frozenset({"-delete", "-fprint", "-fprint0", "-fprintf", "-fls"})
_COMPILERS = frozenset({"gcc", "g++", "cc", "c++", "clang", "clang++", "tcc"})

# Wrappers: run (a tail of) their arguments as a command. Looked through; their options may take values.
_WRAPPERS = frozenset({
    "sudo", "doas", "pkexec", "run0", "runuser", "env", "command", "exec", "builtin", "nohup", "time", "nice",
    "ionice", "chrt", "taskset", "timeout", "stdbuf", "setsid", "coproc", "flock", "chroot", "unshare", "nsenter",
    "strace", "ltrace", "unbuffer", "firejail", "busybox", "caffeinate", "xargs", "su", "script", "watch",
    "parallel", "proxychains", "torsocks", "faketime", "valgrind", "nocache", "catchsegv", "fakeroot",
})
# Wrapper options that run a shell string.
_WRAPPER_SHELL_OPTIONS = {"su": ("-c", "--command", "-s", "--shell"), "runuser": ("-c", "--command", "-s"),
                          "flock": ("-c", "--command"), "script": ("-c", "--command"),
                          "sudo": ("-s", "--shell", "-i", "--login", "-e", "--edit"), "doas": ("-s",),
                          "nsenter": (), "unshare": ()}

# Variables whose value is code (or names the program that runs): assigning them changes what runs.
_CODE_VARS = frozenset({
    "PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND", "BASH_ENV", "ENV", "PATH", "SHELLOPTS", "BASHOPTS",
    "BASH_LOADABLES_PATH", "EXECIGNORE", "HOME", "XDG_CONFIG_HOME", "PAGER", "MANPAGER", "EDITOR", "VISUAL",
    "BROWSER", "SHELL", "LESSOPEN", "LESSCLOSE", "LESSKEY", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME",
    "NODE_OPTIONS", "NODE_PATH", "PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB", "TAR_OPTIONS",
    "SSH_ASKPASS", "SUDO_ASKPASS", "CC", "CXX", "LDFLAGS", "CFLAGS", "MAKEFLAGS", "MAKEFILES", "TERMINFO",
    "TMPDIR", "IFS", "GLOBIGNORE", "CDPATH", "BASH_XTRACEFD", "FUNCNEST", "PROMPT_DIRTRIM", "INPUTRC",
    "HISTFILE", "HOSTALIASES", "GCONV_PATH", "LOCPATH", "NLSPATH", "RESOLV_HOST_CONF", "MANOPT", "GROFF_COMMAND",
    "PIP_CONFIG_FILE", "NPM_CONFIG_SCRIPT_SHELL", "npm_config_script_shell", "COMP_WORDBREAKS",
})
_CODE_VAR_PREFIXES = ("GIT_", "LD_", "DYLD_", "BASH_FUNC_", "PS", "NPM_CONFIG_", "npm_config_", "PIP_", "CARGO_",
                      "RUSTC", "GOFLAGS", "PYTHON", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS")
_NAME_ARG_BUILTINS = frozenset({"read", "unset", "printf", "getopts", "wait", "test", "[", "declare", "typeset",
                                "local", "readonly", "export"})


def env_risk(name: str) -> str | None:
    """Why assigning the variable `name` (for a command, or exported) may change what runs, else None."""
    if name in _CODE_VARS or name.startswith(_CODE_VAR_PREFIXES):
        return f"an assignment to {name} can make bash or a program run code from it"
    return None


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
        while i < len(argv) and argv[i] is not None and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", argv[i] or ""):
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
    """The risks of the program `name` at argv[i], and the argv positions where a command it runs may start."""
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
        return _builtin_risks(name, argv, i), []
    if name in _NAME_ARG_BUILTINS:
        return _name_arg_risks(name, argv, i), []
    if name == "git":
        return _git_risks(argv, i), []
    if name in ("awk", "gawk", "mawk", "nawk", "busybox-awk"):
        return _awk_risks(name, argv, i), []
    if name in ("sed", "gsed"):
        return _sed_risks(name, argv, i), []
    if name == "find":
        return _find_risks(argv, i)
    if name in ("tar", "gtar", "bsdtar"):
        return [Risk(at(k), f"tar {_opt(a)} runs a command") for k, a in enumerate(args)
                if a is None or a.startswith(_TAR_CODE) or (k == 0 and not a.startswith("-") and "I" in a)], []
    if name in ("ssh", "scp", "sftp", "slogin"):
        return _ssh_risks(name, argv, i), []
    if name == "rsync":
        return [Risk(at(k), f"rsync {_opt(a)} runs a command") for k, a in enumerate(args)
                if a is None or a.startswith(("-e", "--rsh", "--rsync-path", "-M", "--remote-option"))
                or (a.startswith("-") and not a.startswith("--") and "e" in a[1:])], []
    if name == "zip":
        return [Risk(at(k), f"zip {_opt(a)} runs a command") for k, a in enumerate(args)
                if a is None or a.startswith(("-TT", "--unzip-command"))], []
    if name in ("less", "more", "most"):
        return [Risk(at(k), f"{name} {_opt(a)} runs a pager command") for k, a in enumerate(args)
                if a is None or a.startswith("+") or a.startswith(("-k", "--lesskey"))], []
    if name == "man":
        return [Risk(at(k), f"man {_opt(a)} runs a program") for k, a in enumerate(args)
                if a is None or a.startswith(("-P", "--pager", "-H", "--html", "-p", "--preprocessor", "-M"))], []
    if name in ("wget", "curl"):
        return [Risk(at(k), f"{name} {_opt(a)} runs a program") for k, a in enumerate(args)
                if a is None or a.startswith(("--use-askpass", "--config", "-K", "--execute", "-e"))], []
    if name in _COMPILERS:
        return [Risk(at(k), f"{name} {_opt(a)} runs a program") for k, a in enumerate(args)
                if a is None or a.startswith(("-wrapper", "-fplugin", "-B", "--plugin", "-specs", "--specs"))], []
    return [], []


def _opt(word: str | None) -> str:
    return "<unknown>" if word is None else word.split("=", 1)[0]


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
    risks += [Risk(i + 1 + j, f"{name} {_opt(a)} runs a program") for j, a in enumerate(args)
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
        if any(a is not None and re.match(r"^-[a-zA-Z]*[vV]", a) for a in args[:2]):
            return risks, []  # command -v / -V only look the name up
        risks += [Risk(i + 1 + k, "command -p looks the program up on another PATH") for k, a in enumerate(args)
                  if a is not None and re.match(r"^-[a-zA-Z]*p", a)]
    elif name in _WRAPPER_WHY:
        risks.append(Risk(i, _WRAPPER_WHY[name]))
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


def _find_risks(argv: Argv, i: int) -> tuple[list[Risk], list[int]]:
    risks: list[Risk] = []
    tails: list[int] = []
    for k in range(i + 1, len(argv)):
        a = argv[k]
        if a is None:
            risks.append(Risk(k, "find gets an argument the gate cannot know (it may be -exec)"))
        elif a in _FIND_EXEC:
            nxt = argv[k + 1] if k + 1 < len(argv) else None
            hidden = nxt is None or "{}" in nxt
            why = "find -exec runs a command named by a file it found" if hidden and nxt is not None \
                else f"find {a} runs a command"
            risks.append(Risk(k, why, hidden=hidden))
            tails.append(k + 1)
        elif a in _FIND_WRITES:
            risks.append(Risk(k, f"find {a} writes or deletes files", hidden=False))
    return risks, tails


def _git_risks(argv: Argv, i: int) -> list[Risk]:
    risks: list[Risk] = []
    k = i + 1
    while k < len(argv):
        a = argv[k]
        if a is None:
            return [*risks, Risk(k, "git gets an option the gate cannot know (it may set configuration)")]
        if not a.startswith("-"):
            break
        opt = a[:2] if re.match(r"^-[cC]", a) else a.split("=", 1)[0]
        if opt in _GIT_GLOBAL_CONFIG:
            risks.append(Risk(k, f"git {opt} sets configuration that can run a program"))
        k += 2 if a in _GIT_GLOBAL_WITH_VALUE else 1
    if k >= len(argv):
        return risks
    sub = argv[k] or ""
    if sub not in _GIT_PLAIN:
        return [*risks, Risk(k, f"git {sub} is not a git command the gate knows (an alias can run a program)")]
    rest = argv[k + 1:]
    letters = "".join(s[1] for s in _GIT_SHORT_CODE.get(sub, ()))
    for j, a in enumerate(rest, start=k + 1):
        if a is None:
            if sub == "config":
                risks.append(Risk(j, "git config gets an argument the gate cannot know"))
            continue
        short = a.startswith("-") and not a.startswith("--") and any(c in letters for c in a[1:2])
        if a.startswith(_GIT_CODE_OPTIONS) or a.startswith("ext::") or short:
            risks.append(Risk(j, f"git {sub} {_opt(a)[:2] if short else _opt(a)} runs a program"))
    if sub == "config":
        words = [a for a in rest if a is not None]
        reads = any(a in ("--get", "--get-all", "--get-regexp", "--list", "-l", "--get-urlmatch", "get", "list",
                          "--unset", "--unset-all", "unset") for a in words)
        edits = any(a in ("-e", "--edit", "edit") for a in words)
        positional = [a for a in words if not a.startswith("-") and a not in ("set", "get", "list", "unset")]
        if edits or (not reads and len(positional) >= 2):
            risks.append(Risk(k, "git config writes configuration that can run a program"))
    return risks


def _awk_risks(name: str, argv: Argv, i: int) -> list[Risk]:
    args = argv[i + 1:]
    program: str | None = None
    k = 0
    while k < len(args):
        a = args[k]
        if a is None:
            return [Risk(i + 1 + k, f"{name} gets an argument the gate cannot know (it may be the program)")]
        if a in ("-f", "--file", "-E", "--exec", "-i", "--include", "-l", "--load") or \
                a.startswith(("-f", "--file=", "-E", "--exec=", "-i", "--include=", "-l", "--load=")):
            return [Risk(i + 1 + k, f"{name} {_opt(a)} runs a program from a file")]
        if a in ("-e", "--source"):
            program = (program or "") + "\n" + (args[k + 1] or "") if k + 1 < len(args) and args[k + 1] else None
            if program is None:
                return [Risk(i + 1 + k, f"{name} gets a program the gate cannot know")]
            k += 2
            continue
        if a in ("-v", "-F", "--assign", "--field-separator"):
            k += 2
            continue
        if a == "--":
            k += 1
            if program is None and k < len(args):
                program = args[k]
            break
        if a.startswith("-"):
            k += 1
            continue
        if program is None:
            program = a
        break
    if program is not None and awk_runs_code(program):
        return [Risk(i + 1 + min(k, len(args) - 1), f"{name} runs a program that can start commands "
                                                    "(system, pipes, getline)")]
    return []


def _sed_risks(name: str, argv: Argv, i: int) -> list[Risk]:
    args = argv[i + 1:]
    scripts: list[tuple[int, str]] = []
    risks: list[Risk] = []
    k = 0
    sandbox = "--sandbox" in args
    while k < len(args):
        a = args[k]
        if a is None:
            return [*risks, Risk(i + 1 + k, f"{name} gets an argument the gate cannot know (it may be a script)")]
        if a in ("-e", "--expression") and k + 1 < len(args):
            nxt = args[k + 1]
            if nxt is None:
                return [*risks, Risk(i + 2 + k, f"{name} gets a script the gate cannot know")]
            scripts.append((i + 2 + k, nxt))
            k += 2
            continue
        if a.startswith("--expression="):
            scripts.append((i + 1 + k, a.split("=", 1)[1]))
        elif a in ("-f", "--file") or a.startswith(("--file=", "-f")):
            risks.append(Risk(i + 1 + k, f"{name} {_opt(a)} runs a script from a file"))
        elif a.startswith(("-i", "--in-place")) or (a.startswith("-") and not a.startswith("--") and "i" in a):
            risks.append(Risk(i + 1 + k, f"{name} {a} edits files in place", hidden=False))
        elif a == "-l":
            k += 1
        elif not a.startswith("-") and not scripts:
            scripts.append((i + 1 + k, a))
        k += 1
    for index, script in scripts:
        effects = sed_effects(script)
        if effects is None or "code" in effects:
            if not sandbox:
                risks.append(Risk(index, f"{name} runs a script that can start commands (the e command or flag)"))
        elif "write" in effects and not sandbox:
            risks.append(Risk(index, f"{name} runs a script that writes files (the w command or flag)",
                              hidden=False))
    return risks


def _ssh_risks(name: str, argv: Argv, i: int) -> list[Risk]:
    args = argv[i + 1:]
    risks: list[Risk] = []
    k = 0
    while k < len(args):
        a = args[k]
        j = i + 1 + k
        if a is None:
            return [*risks, Risk(j, f"{name} gets an argument the gate cannot know")]
        if a in ("-o", "-F", "-S", "-D", "-L", "-R", "-W", "-J", "-i", "-l", "-p", "-P", "-b", "-c", "-E", "-e",
                 "-I", "-m", "-O", "-Q", "-w", "-B") and k + 1 < len(args):
            value = args[k + 1]
            if a == "-o" and (value is None or _SSH_CODE_OPTIONS.match(value)):
                risks.append(Risk(j, f"{name} -o can set a command to run (ProxyCommand, ...)"))
            elif a in ("-F", "-S") or (a == "-b" and name == "sftp"):
                risks.append(Risk(j, f"{name} {a} names a file or program that can run commands"))
            k += 2
            continue
        if a.startswith("-o") and _SSH_CODE_OPTIONS.match(a[2:]):
            risks.append(Risk(j, f"{name} -o can set a command to run (ProxyCommand, ...)"))
        elif a.startswith(("-F", "-S")) and len(a) > 2:
            risks.append(Risk(j, f"{name} {a[:2]} names a file or program that can run commands"))
        elif not a.startswith("-"):
            if name in ("ssh", "slogin") and k + 1 < len(args):
                risks.append(Risk(j + 1, f"{name} runs a command on {a}"))
            break
        k += 1
    return risks


def _builtin_risks(name: str, argv: Argv, i: int) -> list[Risk]:
    args = argv[i + 1:]
    if name == "let":
        return [Risk(i + 1, "let evaluates arithmetic: a variable's value can run code")] if args else []
    if name == "enable":
        return [Risk(i + 1, "enable loads or hides builtins")] if any(a is None or a not in ("-a", "-p", "-s")
                                                                      for a in args) else []
    if name == "fc":
        return [Risk(i, "fc re-runs history or runs an editor")]
    flags = {"bind": "x", "complete": "C", "compgen": "C", "mapfile": "C", "readarray": "C"}[name]
    risks = [Risk(i + 1 + k, f"{name} -{flags} runs a command") for k, a in enumerate(args)
             if a is None or (a.startswith("-") and not a.startswith("--") and flags in a[1:])]
    if name in ("mapfile", "readarray"):
        risks += _name_arg_risks(name, argv, i)
    return risks


_NAME_OPTION_VALUES = {"read": "adinNptu", "mapfile": "dnOsuCc", "readarray": "dnOsuCc", "wait": "p",
                       "printf": "v"}


def _name_arg_risks(name: str, argv: Argv, i: int) -> list[Risk]:
    """Builtins that take variable names: a name with a subscript (`a[$(cmd)]`) is arithmetic that runs the
    substitution; so does `declare -i`/`-n` with a value from data, and `test -v`."""
    risks: list[Risk] = []
    args = list(argv[i + 1:])
    names: list[tuple[int, str | None]] = []
    if name in ("test", "["):
        names = [(k + 1, args[k + 1] if k + 1 < len(args) else None) for k, a in enumerate(args) if a == "-v"]
    elif name in ("printf", "wait"):
        names = [(k + 1, args[k + 1] if k + 1 < len(args) else None) for k, a in enumerate(args)
                 if a == f"-{_NAME_OPTION_VALUES[name]}"]
    elif name == "getopts":
        names = [(k, a) for k, a in enumerate(args) if k == 1]
    else:
        takes = _NAME_OPTION_VALUES.get(name, "")
        k = 0
        while k < len(args):
            a = args[k]
            if a is not None and a.startswith(("-", "+")) and len(a) > 1 and a != "--":
                if name in ("declare", "typeset", "local") and re.search(r"[ni]", a[1:]):
                    risks.append(Risk(i + 1 + k, f"{name} {a} evaluates values as names or arithmetic"))
                if a[-1] in takes and len(a) == 2:
                    if a in ("-a",) and name == "read":
                        names.append((k + 1, args[k + 1] if k + 1 < len(args) else None))
                    k += 2
                    continue
            elif a != "--":
                names.append((k, a))
            k += 1
    for k, word in names:
        target = word.split("=", 1)[0] if word is not None else None
        if target is None or "[" in target:
            risks.append(Risk(i + 1 + k, f"{name} gets a variable name with a subscript, or one the gate cannot "
                                         "know: a subscript is arithmetic that can run code"))
        elif name in ("declare", "typeset", "local", "readonly", "export"):
            why = env_risk(target)
            if why and (name == "export" or "=" in (word or "")):
                risks.append(Risk(i + 1 + k, why))
    return risks
