"""Option tables of the download tools: curl 7.88 and GNU Wget 1.21 (getopt_long).

curl accepts unambiguous prefixes of its long options (`--versio`; `--outp` is ambiguous) but has no `--opt=v`
form: the table reads one as the option, the careful side. `-K FILE` reads a config file that can hold any
option, and wget's `-e`/`--config` run wgetrc commands (`use_askpass=CMD`): both are code. Output options
(`-o`, `-O`, `--output-dir`, cookie jars, logs, traces) are writes of their paths.
"""

from __future__ import annotations

from mini_claude.permissions.options.notation import CODE, READS, WRITES, program

__all__ = ["TABLES"]

CURL = program("curl", """
--abstract-unix-socket= --alt-svc= --anyauth -a|--append --aws-sigv4= --basic --cacert= --capath= -E|--cert=
--cert-status --cert-type= --ciphers= --compressed --compressed-ssh -K|--config= --connect-timeout=
--connect-to= -C|--continue-at= -b|--cookie= -c|--cookie-jar= --create-dirs --create-file-mode= --crlf
--crlfile= --curves= -d|--data= --data-ascii= --data-binary= --data-raw= --data-urlencode= --delegation=
--digest -q|--disable --disable-eprt --disable-epsv --disallow-username-in-url --dns-interface= --dns-ipv4-addr=
--dns-ipv6-addr= --dns-servers= --doh-cert-status --doh-insecure --doh-url= -D|--dump-header= --egd-file=
--engine= --etag-compare= --etag-save= --expect100-timeout= -f|--fail --fail-early --fail-with-body
--false-start -F|--form= --form-escape --form-string= --ftp-account= --ftp-alternative-to-user=
--ftp-create-dirs --ftp-method= --ftp-pasv -P|--ftp-port= --ftp-pret --ftp-skip-pasv-ip --ftp-ssl-ccc
--ftp-ssl-ccc-mode= --ftp-ssl-control -G|--get -g|--globoff --happy-eyeballs-timeout-ms= --haproxy-protocol
-I|--head -H|--header= -h|--help --hostpubmd5= --hostpubsha256= --hsts= --http0.9 -0|--http1.0 --http1.1
--http2 --http2-prior-knowledge --http3 --http3-only --ignore-content-length -i|--include -k|--insecure
--interface= -4|--ipv4 -6|--ipv6 --json= -j|--junk-session-cookies --keepalive-time= --key= --key-type= --krb=
--libcurl= --limit-rate= -l|--list-only --local-port= -L|--location --location-trusted --login-options=
--mail-auth= --mail-from= --mail-rcpt= --mail-rcpt-allowfails -M|--manual --max-filesize= --max-redirs=
-m|--max-time= --metalink --negotiate -n|--netrc --netrc-file= --netrc-optional --no-alpn -N|--no-buffer
--no-clobber --no-keepalive --no-npn --no-progress-meter --no-sessionid --noproxy= --ntlm --ntlm-wb
--oauth2-bearer= -o|--output= --output-dir= -Z|--parallel --parallel-immediate --parallel-max= --pass=
--path-as-is --pinnedpubkey= --post301 --post302 --post303 --preproxy= -#|--progress-bar --proto=
--proto-default= --proto-redir= -x|--proxy= --proxy-anyauth --proxy-basic --proxy-cacert= --proxy-capath=
--proxy-cert= --proxy-cert-type= --proxy-ciphers= --proxy-crlfile= --proxy-digest --proxy-header=
--proxy-insecure --proxy-key= --proxy-key-type= --proxy-negotiate --proxy-ntlm --proxy-pass=
--proxy-pinnedpubkey= --proxy-service-name= --proxy-ssl-allow-beast --proxy-ssl-auto-client-cert
--proxy-tls13-ciphers= --proxy-tlsauthtype= --proxy-tlspassword= --proxy-tlsuser= --proxy-tlsv1 -U|--proxy-user=
--proxy1.0= -p|--proxytunnel --pubkey= -Q|--quote= --random-file= -r|--range= --rate= --raw -e|--referer=
-J|--remote-header-name -O|--remote-name --remote-name-all -R|--remote-time --remove-on-error -X|--request=
--request-target= --resolve= --retry= --retry-all-errors --retry-connrefused --retry-delay= --retry-max-time=
--sasl-authzid= --sasl-ir --service-name= -S|--show-error -s|--silent --socks4= --socks4a= --socks5=
--socks5-basic --socks5-gssapi --socks5-gssapi-nec --socks5-gssapi-service= --socks5-hostname= -Y|--speed-limit=
-y|--speed-time= --ssl --ssl-allow-beast --ssl-auto-client-cert --ssl-no-revoke --ssl-reqd
--ssl-revoke-best-effort -2|--sslv2 -3|--sslv3 --stderr= --styled-output --suppress-connect-headers
--tcp-fastopen --tcp-nodelay -t|--telnet-option= --tftp-blksize= --tftp-no-options -z|--time-cond= --tls-max=
--tls13-ciphers= --tlsauthtype= --tlspassword= --tlsuser= -1|--tlsv1 --tlsv1.0 --tlsv1.1 --tlsv1.2 --tlsv1.3
--tr-encoding --trace= --trace-ascii= --trace-time --unix-socket= -T|--upload-file= --url= --url-query=
-B|--use-ascii -u|--user= -A|--user-agent= -v|--verbose -V|--version -w|--write-out= --xattr
-:|--next
""", {
    "-K": (CODE, "reads a config file, which can set any option"),
    "--engine": (CODE, "loads an OpenSSL engine, a library it runs"),
    "-o": (WRITES, "writes the download to a file"), "--output-dir": (WRITES, "writes downloads into a folder"),
    "-c": (WRITES, "writes cookies to a file"), "-D": (WRITES, "writes the headers to a file"),
    "--trace": (WRITES, "writes a trace to a file"), "--trace-ascii": (WRITES, "writes a trace to a file"),
    "--stderr": (WRITES, "writes its messages to a file"), "--libcurl": (WRITES, "writes C source to a file"),
    "--etag-save": (WRITES, "writes the ETag to a file"), "--hsts": (WRITES, "writes its HSTS cache to a file"),
    "--alt-svc": (WRITES, "writes its alt-svc cache to a file"),
    "-T": (READS, "uploads a file"), "--netrc-file": (READS, "reads credentials from a file"),
})

WGET = program("wget", """
-V|--version -h|--help -b|--background -e|--execute= -o|--output-file= -a|--append-output= -d|--debug -q|--quiet
-v|--verbose -nv|--no-verbose --report-speed= -i|--input-file= -F|--force-html -B|--base= --config= --no-config
--rejected-log= -t|--tries= --retry-connrefused --retry-on-http-error= -O|--output-document= -nc|--no-clobber
--no-netrc -c|--continue --start-pos= --progress= --show-progress -N|--timestamping --no-if-modified-since
--no-use-server-timestamps -S|--server-response --spider -T|--timeout= --dns-timeout= --connect-timeout=
--read-timeout= -w|--wait= --waitretry= --random-wait --no-proxy -Q|--quota= --bind-address= --limit-rate=
--no-dns-cache --restrict-file-names= --ignore-case -4|--inet4-only -6|--inet6-only --prefer-family= --user=
--password= --ask-password --use-askpass= --no-iri --local-encoding= --remote-encoding= --unlink --xattr
-nd|--no-directories -x|--force-directories -nH|--no-host-directories --protocol-directories
-P|--directory-prefix= --cut-dirs= --http-user= --http-password= --no-cache --default-page=
-E|--adjust-extension --ignore-length --header= --compression= --max-redirect= --proxy-user= --proxy-password=
--referer= --save-headers -U|--user-agent= --no-http-keep-alive --no-cookies --load-cookies= --save-cookies=
--keep-session-cookies --post-data= --post-file= --method= --body-data= --body-file= --content-disposition
--content-on-error --auth-no-challenge --secure-protocol= --https-only --no-check-certificate --certificate=
--certificate-type= --private-key= --private-key-type= --ca-certificate= --ca-directory= --crl-file=
--pinnedpubkey= --ciphers= --no-hsts --hsts-file= --ftp-user= --ftp-password= --no-remove-listing --no-glob
--no-passive-ftp --preserve-permissions --retr-symlinks --ftps-implicit --ftps-resume-ssl
--ftps-clear-data-connection --ftps-fallback-to-ftp --warc-file= --warc-header= --warc-max-size= --warc-cdx
--warc-dedup= --no-warc-compression --no-warc-digests --no-warc-keep-log --warc-tempdir= -r|--recursive
-l|--level= --delete-after -k|--convert-links --convert-file-only --backups= -K|--backup-converted -m|--mirror
-p|--page-requisites --strict-comments -A|--accept= -R|--reject= --accept-regex= --reject-regex= --regex-type=
-D|--domains= --exclude-domains= --follow-ftp --follow-tags= --ignore-tags= -H|--span-hosts -L|--relative
-I|--include-directories= --trust-server-names -X|--exclude-directories= -np|--no-parent
""", {
    "-e": (CODE, "runs a wgetrc command (use_askpass=CMD runs a program)"),
    "--config": (CODE, "reads a wgetrc file, which can make it run a program"),
    "--use-askpass": (CODE, "runs a program to ask for the password"),
    "-o": (WRITES, "writes its log to a file"), "-a": (WRITES, "appends its log to a file"),
    "-O": (WRITES, "writes the download to a file"), "-P": (WRITES, "writes downloads into a folder"),
    "--save-cookies": (WRITES, "writes cookies to a file"), "--rejected-log": (WRITES, "writes a log to a file"),
    "--warc-file": (WRITES, "writes a WARC file"), "--hsts-file": (WRITES, "writes its HSTS database to a file"),
    "-i": (READS, "reads URLs from a file"), "--load-cookies": (READS, "reads cookies from a file"),
    "--post-file": (READS, "uploads a file"), "--body-file": (READS, "uploads a file"),
})

TABLES = {"curl": CURL, "wget": WGET}
