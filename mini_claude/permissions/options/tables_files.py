"""Option tables of the file tools and small commands users commonly allow (GNU coreutils 9.1 on Debian 12,
getopt_long), man 2.11 (argp: `man --pag=CMD` is `--pager`), and of printf and pwd as bash runs them.

A folder option of cp, mv and ln (`-t DIR`) is a write of that folder; their operands are judged by the write
rules, not here. `echo` prints any word it does not take as an option, so it has no table of unknowns
(`options.findings` returns nothing for it); dd takes only `key=value` operands.
"""

from __future__ import annotations

from mini_claude.permissions.options.notation import CODE, READS, WRITES, program

__all__ = ["TABLES"]

_INTO = (WRITES, "writes into a folder")
_REFERENCE = (READS, "reads another file's attributes")

LS = program("ls", """
-a|--all -A|--almost-all --author -b|--escape --block-size= -B|--ignore-backups -c -C --color? -d|--directory
-D|--dired -f -F|--classify? --file-type --format= --full-time -g --group-directories-first -G|--no-group
-h|--human-readable --si -H|--dereference-command-line --dereference-command-line-symlink-to-dir --hide=
--hyperlink? --indicator-style= -i|--inode -I|--ignore= -k|--kibibytes -l -L|--dereference -m
-n|--numeric-uid-gid -N|--literal -o -p -q|--hide-control-chars --show-control-chars
-Q|--quote-name --quoting-style= -r|--reverse -R|--recursive -s|--size -S --sort= --time= --time-style= -t
-T|--tabsize= -u -U -v -w|--width= -x -X -Z|--context --zero -1 --help --version
""")
STAT = program("stat", """
-L|--dereference -f|--file-system --cached= -c|--format= --printf= -t|--terse --help --version
""")
DU = program("du", """
-0|--null -a|--all --apparent-size -B|--block-size= -b|--bytes -c|--total -D|--dereference-args -d|--max-depth=
--files0-from= -H -h|--human-readable --inodes -k -L|--dereference -l|--count-links -m -P|--no-dereference
-S|--separate-dirs --si -s|--summarize -t|--threshold= --time? --time-style= -X|--exclude-from= --exclude=
-x|--one-file-system --help --version
""", {"--files0-from": (READS, "reads the names of its files from a file"),
      "-X": (READS, "reads patterns from a file")})
DF = program("df", """
-a|--all -B|--block-size= -h|--human-readable -H|--si -i|--inodes -k -l|--local --no-sync --output?
-P|--portability --sync --total -t|--type= -T|--print-type -x|--exclude-type= -v --help --version
""")
DATE = program("date", """
-d|--date= --debug -f|--file= -I|--iso-8601? --resolution -R|--rfc-email --rfc-3339= -r|--reference= -s|--set=
-u|--utc|--universal --help --version
""", {"-f": (READS, "reads dates from a file"), "-r": _REFERENCE})
PWD = program("pwd", "-L|--logical -P|--physical --help --version")
BASENAME = program("basename", "-a|--multiple -s|--suffix= -z|--zero --help --version")
DIRNAME = program("dirname", "-z|--zero --help --version")
REALPATH = program("realpath", """
-e|--canonicalize-existing -m|--canonicalize-missing -L|--logical -P|--physical -q|--quiet --relative-to=
--relative-base= -s|--strip|--no-symlinks -z|--zero --help --version
""")
READLINK = program("readlink", """
-f|--canonicalize -e|--canonicalize-existing -m|--canonicalize-missing -n|--no-newline -q|--quiet -s|--silent
-v|--verbose -z|--zero --help --version
""")
MKDIR = program("mkdir", "-m|--mode= -p|--parents -v|--verbose -Z --context? --help --version")
TOUCH = program("touch", """
-a -c|--no-create -d|--date= -f -h|--no-dereference -m -r|--reference= -t= --time= --help --version
""", {"-r": _REFERENCE})
RM = program("rm", """
-f|--force -i -I --interactive? --one-file-system --no-preserve-root --preserve-root? -r|-R|--recursive -d|--dir
-v|--verbose --help --version
""")
CP = program("cp", """
-a|--archive --attributes-only --backup? -b --copy-contents -d -f|--force -i|--interactive -H -l|--link
-L|--dereference -n|--no-clobber -P|--no-dereference -p --preserve? --no-preserve= --parents -R|-r|--recursive
--reflink? --remove-destination --sparse= --strip-trailing-slashes -s|--symbolic-link -S|--suffix=
-t|--target-directory= -T|--no-target-directory -u|--update? -v|--verbose -x|--one-file-system -Z --context?
--help --version
""", {"-t": _INTO})
MV = program("mv", """
--backup? -b -f|--force -i|--interactive -n|--no-clobber --strip-trailing-slashes -S|--suffix=
-t|--target-directory= -T|--no-target-directory -u|--update? -v|--verbose -Z|--context --help --version
""", {"-t": _INTO})
LN = program("ln", """
--backup? -b -d|-F|--directory -f|--force -i|--interactive -L|--logical -n|--no-dereference -P|--physical
-r|--relative -s|--symbolic -S|--suffix= -t|--target-directory= -T|--no-target-directory -v|--verbose --help
--version
""", {"-t": _INTO})
# chmod takes a mode that starts with a dash as its options (`chmod -x f`, `chmod -w,o+r f`): coreutils lists the
# mode letters and digits in its option string, each with an optional value (the rest of the mode)
_MODES = " ".join(f"-{c}?" for c in "rwxXstugoa,+=01234567")
CHMOD = program("chmod", f"""
-c|--changes -f|--silent|--quiet -v|--verbose --no-preserve-root --preserve-root --reference= -R|--recursive
--help --version {_MODES}
""", {"--reference": _REFERENCE})
TEE = program("tee", "-a|--append -i|--ignore-interrupts -p --output-error? --help --version")
DD = program("dd", "--help --version")
MAN = program("man", """
-C|--config-file= -d|--debug -D|--default --warnings? -f|--whatis -k|--apropos -K|--global-apropos
-l|--local-file -w|--where|--path|--location -W|--where-cat|--location-cat -c|--catman -R|--recode= -L|--locale=
-m|--systems= -M|--manpath= -S|-s|--sections= -e|--extension= -i|--ignore-case -I|--match-case --regex
--wildcard --names-only -a|--all -u|--update --no-subpages -P|--pager= -r|--prompt= -7|--ascii -E|--encoding=
--no-hyphenation|--nh --no-justification -p|--preprocessor= -t|--troff -T|--troff-device? -H|--html?
-X|--gxditview? -Z|--ditroff -?|--help --usage -V|--version
""", {"-C": (CODE, "reads a configuration file, which names the programs it runs"), "-P": (CODE, "runs a pager"),
      "-H": (CODE, "runs a web browser"), "-X": (CODE, "runs gxditview")})  # -M, -p: code_runners' man reading
WHICH = program("which", "-a -s")
PRINTF = program("printf", "-v=", options_after_operands=False)  # a builtin: stops at the format

TABLES = {"ls": LS, "stat": STAT, "du": DU, "df": DF, "date": DATE, "pwd": PWD, "basename": BASENAME,
          "dirname": DIRNAME, "realpath": REALPATH, "readlink": READLINK, "mkdir": MKDIR, "touch": TOUCH, "rm": RM,
          "cp": CP, "mv": MV, "ln": LN, "chmod": CHMOD, "tee": TEE, "dd": DD, "man": MAN, "which": WHICH, "printf": PRINTF}
