"""Option tables of the archivers: GNU tar 1.34 (argp), zip 3.0 and unzip 6.00 (Info-ZIP's own parsers).

tar's `-f ARCHIVE` is listed as a read; `options.option_writes` makes it a write when the command creates or
changes the archive (`-c`, `-r`, `-u`, `-A`, `--delete`). tar's old style (`tar czf a.tgz dir`: the first word is a
cluster without the dash, its values taken from the next words in order) is rewritten before parsing
(`options.tar_old_style`). zip accepts unambiguous prefixes of its long options (`--unzip-com=CMD` ran CMD) and
multi-letter short options (`-TT CMD`, `-TT=CMD`); unzip has short options only.
"""

from __future__ import annotations

from mini_claude.permissions.options.notation import CODE, READS, WRITES, program

__all__ = ["TABLES"]

_RUNS = "runs a command"

TAR = program("tar", """
-A|--catenate|--concatenate -c|--create --delete -d|--diff|--compare -r|--append --test-label -t|--list
-u|--update -x|--extract|--get --check-device -g|--listed-incremental= -G|--incremental --hole-detection=
--ignore-failed-read --level= --no-check-device --no-seek -n|--seek --occurrence? --sparse-version= -S|--sparse
--add-file= -C|--directory= --exclude= --exclude-backups --exclude-caches --exclude-caches-all
--exclude-caches-under --exclude-ignore= --exclude-ignore-recursive= --exclude-tag= --exclude-tag-all=
--exclude-tag-under= --exclude-vcs --exclude-vcs-ignores --no-null --no-recursion --no-unquote
--no-verbatim-files-from --null --recursion -T|--files-from= --unquote --verbatim-files-from -X|--exclude-from=
--anchored --ignore-case --no-anchored --no-ignore-case --no-wildcards --no-wildcards-match-slash --wildcards
--wildcards-match-slash --keep-directory-symlink --keep-newer-files -k|--keep-old-files --no-overwrite-dir
--one-top-level? --overwrite --overwrite-dir --recursive-unlink --remove-files --skip-old-files
-U|--unlink-first -W|--verify --ignore-command-error --no-ignore-command-error -O|--to-stdout --to-command=
--atime-preserve? --clamp-mtime --delay-directory-restore --group= --group-map= --mode= --mtime= -m|--touch
--no-delay-directory-restore --no-same-owner --no-same-permissions --numeric-owner --owner= --owner-map=
-p|--preserve-permissions|--same-permissions --same-owner --sort= -s|--preserve-order|--same-order --acls
--no-acls --no-selinux --no-xattrs --selinux --xattrs --xattrs-exclude= --xattrs-include= --force-local
-f|--file= -F|--info-script|--new-volume-script= -L|--tape-length= -M|--multi-volume --rmt-command=
--rsh-command= --volno-file= -b|--blocking-factor= -B|--read-full-records -i|--ignore-zeros --record-size=
-H|--format= --old-archive|--portability --pax-option= --posix -V|--label= -a|--auto-compress
-I|--use-compress-program= -j|--bzip2 -J|--xz --lzip --lzma --lzop --no-auto-compress --zstd
-z|--gzip|--gunzip|--ungzip -Z|--compress|--uncompress --backup? --hard-dereference -h|--dereference
-K|--starting-file= --newer-mtime= -N|--newer|--after-date= --one-file-system -P|--absolute-names --suffix=
--strip-components= --transform|--xform= --checkpoint? --checkpoint-action= --full-time --index-file=
-l|--check-links --no-quote-chars= --quote-chars= --quoting-style= -R|--block-number --show-defaults
--show-omitted-dirs --show-snapshot-field-ranges --show-transformed-names|--show-stored-names --totals? --utc
-v|--verbose --warning= -w|--interactive|--confirmation -o -?|--help --restrict --usage --version
""", {
    "--to-command": (CODE, "pipes each extracted file into a command"),
    "--checkpoint-action": (CODE, "can run a command (exec=CMD)"),
    "-I": (CODE, "runs a command as the compressor"),
    "-F": (CODE, "runs a script at the end of each volume"),
    "--rmt-command": (CODE, _RUNS), "--rsh-command": (CODE, _RUNS),
    "-f": (READS, "names the archive"),
    "-T": (READS, "reads the names to archive from a file"), "-X": (READS, "reads patterns from a file"),
    "--exclude-from": (READS, "reads patterns from a file"),
    "-g": (WRITES, "writes the snapshot file"), "--index-file": (WRITES, "writes its listing to a file"),
    "--volno-file": (WRITES, "writes the volume number to a file"),
})

ZIP = program("zip", """
-0|--store -1|--compress-1 -2|--compress-2 -3|--compress-3 -4|--compress-4 -5|--compress-5 -6|--compress-6
-7|--compress-7 -8|--compress-8 -9|--compress-9 -A|--adjust-sfx -b|--temp-path= -c|--entry-comments -d|--delete
-db|--display-bytes -dc|--display-counts -dd|--display-dots -dg|--display-globaldots -ds|--dot-size=
-du|--display-usize -dv|--display-volume -D|--no-dir-entries -DF|--difference-archive -e|--encrypt -F|--fix
-FF|--fixfix -FI|--fifo -FS|--filesync -f|--freshen -fd|--force-descriptors -fz|--force-zip64 -g|--grow
-h|-H|-?|--help -h2|--more-help -i|--include -j|--junk-paths -J|--junk-sfx -k|--DOS-names -l|--to-crlf
-ll|--from-crlf -lf|--logfile-path= -la|--log-append -li|--log-info -L|--license -m|--move -MM|--must-match
-n|--suffixes= -nw|--no-wild -o|--latest-time -O|--output-file|--out= -p|--paths -P|--password= -q|--quiet
-r|--recurse-paths -R|--recurse-patterns -RE|--regex -s|--split-size= -sp|--split-pause -sv|--split-verbose
-sb|--split-bell -sc|--show-command -sd|--show-debug -sf|--show-files -so|--show-options -su|--show-unicode
-sU|--show-just-unicode -t|--from-date= -tt|--before-date= -T|--test -TT|--unzip-command= -u|--update
-U|--copy-entries|--copy -UN|--unicode= -v|--verbose --version -ws|--wild-stop-dirs -x|--exclude
-X|--strip-extra -y|--symlinks -z|--archive-comment -Z|--compression-method= -@|--names-stdin
""", {
    "-TT": (CODE, "runs a command to test the archive"),
    "-lf": (WRITES, "writes a log file"), "-O": (WRITES, "writes the archive to another file"),
    "-b": (WRITES, "writes its temporary archive in a folder"),
})

UNZIP = program("unzip", """
-p -l -f -t -u -z -v -T -x -d= -n -q -qq -o -a -aa -j -U -UU -C -L -X -V -K -M -Z -c -b -B -D -DD -E -F -i
-I= -O= -P= -s -W -: -^ -1 -2 -h -hh -m -N -Y -S -A -J -LL -XX
""", {"-d": (WRITES, "extracts into a folder")})

TABLES = {"tar": TAR, "gtar": TAR, "bsdtar": TAR, "zip": ZIP, "unzip": UNZIP}  # bsdtar: its own options ask
