"""Option tables of the wrappers (code_runners._WRAPPER_VALUE_OPTIONS): programs that run the command in their
arguments. Each stops reading options at its first operand (the command, or timeout's duration, flock's file), so
`options_after_operands=False`; the wrapped command is read by code_runners as a command of its own.

Measured on Debian 12: timeout, nice, stdbuf, env, xargs (GNU) and ionice, taskset, setsid, flock (util-linux) are
getopt_long programs: `timeout --kill-a=1 5 cmd` is `--kill-after`. sudo, doas, runuser and fakeroot are not
installed here; their tables follow their manuals. bash's own `exec`, `command`, `builtin` and `time` keyword
take only the options listed.
"""

from __future__ import annotations

from mini_claude.permissions.options.notation import CODE, READS, WRITES, program

__all__ = ["TABLES"]

_SHELL = (CODE, "runs a shell")


TABLES = {
    "timeout": program("timeout", "--preserve-status --foreground -k|--kill-after= -s|--signal= -v|--verbose "
                                  "--help --version", options_after_operands=False),
    "nice": program("nice", "-n|--adjustment= --help --version " + " ".join(f"-{d}" for d in range(10)),
                    options_after_operands=False),
    "stdbuf": program("stdbuf", "-i|--input= -o|--output= -e|--error= --help --version",
                      options_after_operands=False),
    "ionice": program("ionice", "-c|--class= -n|--classdata= -p|--pid= -P|--pgid= -t|--ignore -u|--uid= -h|--help "
                                "-V|--version", options_after_operands=False),
    "taskset": program("taskset", "-a|--all-tasks -p|--pid -c|--cpu-list -h|--help -V|--version",
                       options_after_operands=False),
    "setsid": program("setsid", "-c|--ctty -f|--fork -w|--wait -h|--help -V|--version",
                      options_after_operands=False),
    "flock": program("flock", """
-s|--shared -x|--exclusive -u|--unlock -n|--nonblock -w|--timeout= -E|--conflict-exit-code= -o|--close
-c|--command= -F|--no-fork --verbose -h|--help -V|--version
""", {"-c": (CODE, "runs a shell command")}, options_after_operands=False),
    "nohup": program("nohup", "--help --version", options_after_operands=False),
    "env": program("env", """
-i|--ignore-environment -0|--null -u|--unset= -C|--chdir= -S|--split-string= --block-signal? --default-signal?
--ignore-signal? --list-signal-handling -v|--debug --help --version
""", {"-S": (CODE, "splits a string into a command")}, options_after_operands=False),
    "xargs": program("xargs", """
-0|--null -a|--arg-file= -d|--delimiter= -E= -e|--eof? -I= -i|--replace? -L|--max-lines= -l? -n|--max-args=
-o|--open-tty -P|--max-procs= -p|--interactive --process-slot-var= -r|--no-run-if-empty -s|--max-chars=
--show-limits -t|--verbose -x|--exit --help --version
""", {"-a": (READS, "reads the arguments from a file")}, options_after_operands=False),
    "sudo": program("sudo", """
-A|--askpass -b|--background -C|--close-from= -D|--chdir= -E|--preserve-env? -e|--edit -g|--group= -H|--set-home
-h|--help -i|--login -K|--remove-timestamp -k|--reset-timestamp -l|--list -N|--no-update -n|--non-interactive
-P|--preserve-groups -p|--prompt= -R|--chroot= -r|--role= -S|--stdin -s|--shell -t|--type= -T|--command-timeout=
-U|--other-user= -u|--user= -V|--version -v|--validate --host=
""", {"-e": (CODE, "runs an editor"), "-i": _SHELL, "-s": _SHELL}, options_after_operands=False),
    "doas": program("doas", "-u= -C= -n -s -L", {"-s": _SHELL}, options_after_operands=False),
    "runuser": program("runuser", """
-u|--user= -g|--group= -G|--supp-group= -l|--login -m|-p|--preserve-environment -s|--shell= -c|--command=
--session-command= -w|--whitelist-environment= -P|--pty -h|--help -V|--version
""", {"-c": _SHELL, "-s": _SHELL, "--session-command": _SHELL, "-l": _SHELL}, options_after_operands=False),
    "fakeroot": program("fakeroot", "-l|--lib= --faked= -s= -i= -u|--unknown-is-real -b= -h|--help -v|--version",
                        {"-l": (CODE, "loads a library into the command"),
                         "--faked": (CODE, "runs another faked daemon"), "-s": (WRITES, "saves its state to a file"),
                         "-i": (READS, "loads its state from a file")}, options_after_operands=False),
    "time": program("time", "-p -a|--append -f|--format= -o|--output= -q|--quiet -v|--verbose -V|--version "
                            "--portability --help", {"-o": (WRITES, "writes its report to a file")},
                    options_after_operands=False),
    "exec": program("exec", "-a= -c -l", options_after_operands=False),
    "command": program("command", "-p -v -V", options_after_operands=False),
    "builtin": program("builtin", "", options_after_operands=False),
    "nocache": program("nocache", "-n=", options_after_operands=False),
    "unbuffer": program("unbuffer", "-p", options_after_operands=False),
}
