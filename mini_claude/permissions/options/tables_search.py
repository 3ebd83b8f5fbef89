"""Option tables of the searching and filtering programs: ripgrep, grep, sed, awk, jq and find.

ripgrep 13 (clap) and jq 1.6 take whole long names only (`rg --pr=sh` is an error): Style.EXACT. grep, sed and
gawk are getopt_long programs (prefixes). awk's options end at its program text; the program itself, and sed's
scripts, are read by script_langs.py (program_args.awk_risks / sed_risks), which get the command with every
abbreviation spelled out first (`sed --expr='1e id'` is `--expression`). find's primaries are single-dash whole
words (`-newer F`); the commands of `-exec ... ;` are skipped here (program_args.find_risks reads them).
"""

from __future__ import annotations

from mini_claude.permissions.options.notation import CODE, READS, WRITES, program
from mini_claude.permissions.options.spec import Style

__all__ = ["TABLES"]

RG = program("rg", """
-A|--after-context= --auto-hybrid-regex -B|--before-context= --binary --block-buffered -b|--byte-offset
-s|--case-sensitive --color= --colors= --column -C|--context= --context-separator= --no-context-separator
-c|--count --count-matches --crlf --debug --dfa-size-limit= --max-filesize= -E|--encoding= --engine=
--field-context-separator= --field-match-separator= -f|--file= --files -l|--files-with-matches
--files-without-match -F|--fixed-strings -L|--follow -g|--glob= --glob-case-insensitive -h|--help --heading
--hidden --iglob= -i|--ignore-case --ignore-file= --ignore-file-case-insensitive --include-zero -v|--invert-match
--json --line-buffered -n|--line-number -x|--line-regexp -M|--max-columns= --max-columns-preview -m|--max-count=
--max-depth= --mmap -U|--multiline --multiline-dotall --no-config -I|--no-filename --no-heading --no-ignore
--no-ignore-dot --no-ignore-exclude --no-ignore-files --no-ignore-global --no-ignore-messages --no-ignore-parent
--no-ignore-vcs -N|--no-line-number --no-messages --no-mmap --no-pcre2-unicode --no-require-git --no-unicode
--unicode -0|--null --null-data --one-file-system -o|--only-matching --passthru|--passthrough --path-separator=
-P|--pcre2 --pcre2-version --pre= --pre-glob= -p|--pretty -q|--quiet --regex-size-limit= -e|--regexp=
-r|--replace= -z|--search-zip -S|--smart-case --sort= --sortr= --sort-files --stats -a|--text -j|--threads=
--trim -t|--type= --type-list --type-add= --type-clear= -T|--type-not= -u|--unrestricted -V|--version --vimgrep
-H|--with-filename -w|--word-regexp --no-auto-hybrid-regex --no-binary --no-block-buffered --no-column
--no-crlf --no-encoding --no-fixed-strings --no-follow --no-glob-case-insensitive --no-hidden
--no-ignore-file-case-insensitive --no-include-zero --no-invert-match --no-json --no-line-buffered
--no-max-columns-preview --no-multiline --no-multiline-dotall --no-one-file-system --no-pcre2 --no-pre
--no-search-zip --no-sort-files --no-text --no-trim --hostname-bin= --hyperlink-format=
--pcre2-unicode
""", {
    "--pre": (CODE, "runs each searched file through a command"),
    "--hostname-bin": (CODE, "runs a program to learn the host name"),
    "-f": (READS, "reads patterns from a file"), "--ignore-file": (READS, "reads ignore rules from a file"),
}, style=Style.EXACT)

_GREP_DIGITS = " ".join(f"-{d}" for d in range(10))
GREP = program("grep", f"""
-E|--extended-regexp -F|--fixed-strings -G|--basic-regexp -P|--perl-regexp -e|--regexp= -f|--file=
-i|-y|--ignore-case --no-ignore-case -w|--word-regexp -x|--line-regexp -z|--null-data -s|--no-messages
-v|--invert-match -V|--version --help -m|--max-count= -b|--byte-offset -n|--line-number --line-buffered
-H|--with-filename -h|--no-filename --label= -o|--only-matching -q|--quiet|--silent --binary-files= -a|--text -I
-d|--directories= -D|--devices= -r|--recursive -R|--dereference-recursive --include= --exclude= --exclude-from=
--exclude-dir= -L|--files-without-match -l|--files-with-matches -c|--count -T|--initial-tab -Z|--null
-B|--before-context= -A|--after-context= -C|--context= --group-separator= --no-group-separator --color|--colour?
-U|--binary {_GREP_DIGITS}
""", {"-f": (READS, "reads patterns from a file"), "--exclude-from": (READS, "reads patterns from a file")})

SED = program("sed", """
-n|--quiet|--silent --debug -e|--expression= -f|--file= --follow-symlinks -i|--in-place? -l|--line-length=
--posix -E|-r|--regexp-extended -s|--separate --sandbox -u|--unbuffered -z|--null-data --help --version
""", {"-f": (CODE, "runs a sed script from a file")})

_AWK_FILE = (CODE, "runs an awk program from a file")
AWK = program("awk", """
-f|--file= -v|--assign= -F|--field-separator= -W= -e|--source= -E|--exec= -i|--include= -l|--load=
-b|--characters-as-bytes -c|--traditional -C|--copyright -d|--dump-variables? -D|--debug? -g|--gen-pot -h|--help
-L|--lint? -M|--bignum -N|--use-lc-numeric -n|--non-decimal-data -o|--pretty-print? -O|--optimize
-p|--profile? -P|--posix -r|--re-interval -s|--no-optimize -S|--sandbox -t|--lint-old -V|--version -k|--csv
""", {"-f": _AWK_FILE, "-E": _AWK_FILE, "-i": _AWK_FILE, "-l": (CODE, "loads a shared library, which it runs"),
      "-W": (CODE, "sets an implementation option (mawk's -W exec runs a program file)"),
      "-d": (WRITES, "writes its variables to a file"), "-p": (WRITES, "writes a profile to a file"),
      "-o": (WRITES, "writes the pretty-printed program to a file")}, options_after_operands=False)

JQ = program("jq", """
-c|--compact-output -n|--null-input -e|--exit-status -s|--slurp -r|--raw-output -j|--join-output -a|--ascii-output
-R|--raw-input -C|--color-output -M|--monochrome-output -S|--sort-keys --tab --indent= --arg= --argjson=
--slurpfile= --rawfile= --args --jsonargs -f|--from-file= -L= --seq --stream --stream-errors --unbuffered -h|--help
--version --raw-output0 -0
""", {"-f": (READS, "reads its filter from a file"), "--slurpfile": (READS, "reads a file"),
      "--rawfile": (READS, "reads a file")}, style=Style.EXACT)

_NEWER = " ".join(f"-newer{x}{y}=" for x in "aBcm" for y in "aBcmt")
FIND = program("find", f"""
-H -L -P -D= -O0 -O1 -O2 -O3 -amin= -anewer= -atime= -cmin= -cnewer= -ctime= -fstype= -gid= -group= -ilname=
-iname= -inum= -ipath= -iregex= -iwholename= -links= -lname= -mmin= -mtime= -name= -newer= -path= -perm= -regex=
-samefile= -size= -type= -uid= -used= -user= -wholename= -xtype= -context= -maxdepth= -mindepth= -regextype=
-files0-from= -fprint= -fprint0= -fls= -fprintf= -printf= -daystart -depth -d -follow -ignore_readdir_race -mount
-noignore_readdir_race -noleaf -nowarn -warn -xdev -empty -executable -false -nogroup -nouser -readable -true
-writable -delete -ls -print -print0 -prune -quit -a -and -o -or -not -help --help -version --version
-exec -execdir -ok -okdir {_NEWER}
""", {"-files0-from": (READS, "reads the starting points from a file"),
      "-fprint": (WRITES, "writes the names found to a file"), "-fprint0": (WRITES, "writes the names found to a file"),
      "-fls": (WRITES, "writes a listing to a file"), "-fprintf": (WRITES, "writes to a file")},
    style=Style.EXACT, long_single_dash=True)  # -exec and its kin: program_args.find_risks

TABLES = {"rg": RG, "grep": GREP, "egrep": GREP, "fgrep": GREP, "sed": SED, "gsed": SED, "awk": AWK, "gawk": AWK,
          "mawk": AWK, "nawk": AWK, "jq": JQ, "find": FIND}
