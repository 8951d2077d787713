"""The options each known program understands, as its own ``--help`` lists them.

One spec per program: first the short options in getopt's notation (``n:`` takes a
value, ``I::`` an optional attached one; ``-`` for none), then the long options, each
with ``:`` when it takes a value and ``::`` when the value is optional (``--color[=WHEN]``).
Read from the programs of Debian 12 (coreutils 9.1, grep 3.8, GNU tar 1.34, curl 7.88,
wget 1.21, GNU make 4.3, GNU patch 2.7, file 5.44, util-linux 2.38) with ``--help``
(curl: ``--help all``); a handful the help text misstates are set right by hand
(``sort -c`` takes no value; curl's ``-x``/``--proxy``, ``--preproxy``, ``--resolve``,
``--connect-to`` and wget's short options do; chmod's modes ``-x``, ``-w`` … are
options to getopt). An option not listed here is one the gate does not model: the
call asks. What each option does (reads or writes a file, runs a program) is in
``grammar.EFFECTS``.
"""

from __future__ import annotations

SPECS: dict[str, str] = {
    "b2sum": (
        "bcl:twz binary check help ignore-missing length: quiet status strict tag text "
        "version warn zero"
    ),
    "base32": "diw: decode help ignore-garbage version wrap:",
    "base64": "diw: decode help ignore-garbage version wrap:",
    "bzip2": "1LVcdfhkqstvz best fast",
    "cat": (
        "AETbenstuv help number number-nonblank show-all show-ends show-nonprinting show-tabs "
        "squeeze-blank version"
    ),
    "chgrp": (
        "HLPRcfhv changes dereference help no-dereference no-preserve-root preserve-root "
        "quiet recursive reference: silent verbose version"
    ),
    "chmod": (
        "rwxXstugoa,+=01234567Rcfv changes help no-preserve-root preserve-root quiet "
        "recursive reference: silent verbose version"
    ),
    "chown": (
        "HLPRcfhv changes dereference from: help no-dereference no-preserve-root "
        "preserve-root quiet recursive reference: silent verbose version"
    ),
    "cksum": (
        "a:cl:wz algorithm: check debug help ignore-missing length: quiet status strict tag "
        "untagged version warn zero"
    ),
    "cmp": "bi:ln:sv bytes: help ignore-initial: print-bytes quiet silent verbose version",
    "column": (
        "E:H:JLN:O:R:T:VW:c:dehi:l:n:o:p:r:s:tx fillrows help json keep-empty-lines "
        "output-separator: output-width: separator: table table-columns: table-columns-limit: "
        "table-header-repeat table-hide: table-name: table-noextreme: table-noheadings "
        "table-order: table-right: table-truncate: table-wrap: tree: tree-id: tree-parent: "
        "version"
    ),
    "comm": "123z check-order help nocheck-order output-delimiter: total version zero-terminated",
    "cp": (
        "HLPRS:TZabdfilnprst:uvx archive attributes-only backup:: context:: copy-contents "
        "dereference force help interactive link no-clobber no-dereference no-preserve: "
        "no-target-directory one-file-system parents preserve:: recursive reflink:: "
        "remove-destination sparse: strip-trailing-slashes suffix: symbolic-link "
        "target-directory: update verbose version"
    ),
    "cut": (
        "Mb:c:d:f:nsz bytes: characters: complement delimiter: fields: help only-delimited "
        "output-delimiter: version zero-terminated"
    ),
    "date": (
        "I::Rd:f:r:s:u date: debug file: help iso-8601:: reference: resolution rfc-3339: "
        "rfc-email set: universal utc version"
    ),
    "diff": (
        "BC:D:EF:I:NS:TU:W:X:Zabc::deilnpqrstu::vwx:y GTYPE-group-format: LTYPE-line-format: "
        "brief color:: context:: ed exclude: exclude-from: expand-tabs from-file: help "
        "horizon-lines: ifdef: ignore-all-space ignore-blank-lines ignore-case "
        "ignore-file-name-case ignore-matching-lines: ignore-space-change "
        "ignore-tab-expansion ignore-trailing-space initial-tab label: left-column "
        "line-format: minimal new-file no-dereference no-ignore-file-name-case normal "
        "paginate palette: rcs recursive report-identical-files show-c-function "
        "show-function-line: side-by-side speed-large-files starting-file: strip-trailing-cr "
        "suppress-blank-empty suppress-common-lines tabsize: text to-file: "
        "unidirectional-new-file unified:: version width:"
    ),
    "dir": (
        "1ABCDF::GHI:LNQRST:UXZabcdfghiklmnop:qrstuvw:x all almost-all author block-size: "
        "classify:: color:: context dereference dereference-command-line "
        "dereference-command-line-symlink-to-dir directory dired escape file-type format: "
        "full-time group-directories-first help hide: hide-control-chars human-readable "
        "hyperlink:: ignore: ignore-backups indicator-style: inode kibibytes literal no-group "
        "numeric-uid-gid quote-name quoting-style: recursive reverse show-control-chars si "
        "size sort: tabsize: time: time-style: version width: zero"
    ),
    "du": (
        "0B:DHLPSX:abcd:hklmst:x all apparent-size block-size: bytes count-links dereference "
        "dereference-args exclude: exclude-from: files0-from: help human-readable inodes "
        "max-depth: no-dereference null one-file-system separate-dirs si summarize threshold: "
        "time: time-style: total version"
    ),
    "expand": "it: help initial tabs: version",
    "file": (
        "0CF:LNPSZbcde:f:hiklm:nprsvz apple brief checking-printout compile debug dereference "
        "exclude: exclude-quiet: extension files-from: help keep-going list magic-file: mime "
        "mime-encoding mime-type no-buffer no-dereference no-pad no-sandbox parameter "
        "preserve-date print0 raw separator: special-files uncompress uncompress-noreport "
        "version"
    ),
    "fmt": (
        "cg:p:stuw: crown-margin goal: help prefix: split-only tagged-paragraph "
        "uniform-spacing version width:"
    ),
    "fold": "bsw: bytes help spaces version width:",
    "grep": (
        "A:B:C:D:EFGHILPRTUVZabcd:e:f:hilm:noqrsvwxz after-context: basic-regexp "
        "before-context: binary binary-files: byte-offset color:: colour:: context: count "
        "dereference-recursive devices: directories: exclude: exclude-dir: exclude-from: "
        "extended-regexp file: files-with-matches files-without-match fixed-strings "
        "group-separator: help ignore-case include: initial-tab invert-match label: "
        "line-buffered line-number line-regexp max-count: no-filename no-group-separator "
        "no-ignore-case no-messages null null-data only-matching perl-regexp quiet recursive "
        "regexp: silent text version with-filename word-regexp"
    ),
    "gunzip": (
        "NS:cfklnqrtv force help keep list name no-name quiet recursive stdout suffix: "
        "synchronous test verbose version"
    ),
    "gzip": (
        "19LNS:Vcdfhklnqrtv best decompress fast force help keep license list name no-name "
        "quiet recursive rsyncable stdout suffix: synchronous test verbose version"
    ),
    "head": "c:n:qvz bytes: help lines: quiet silent verbose version zero-terminated",
    "hexdump": (
        "CL::Vbcde:f:hn:os:vx canonical color:: format: format-file: help length: "
        "no-squeezing one-byte-char one-byte-octal skip: two-bytes-decimal two-bytes-hex "
        "two-bytes-octal version"
    ),
    "install": (
        "CDS:TZbcdg:m:o:pst:v backup:: compare context:: directory group: help mode: "
        "no-target-directory owner: preserve-context preserve-timestamps strip strip-program: "
        "suffix: target-directory: verbose version"
    ),
    "join": (
        "1:2:a:e:ij:o:t:v:z check-order header help ignore-case nocheck-order version "
        "zero-terminated"
    ),
    "ln": (
        "FLPS:Tbdfinrst:v backup:: directory force help interactive logical no-dereference "
        "no-target-directory physical relative suffix: symbolic target-directory: verbose "
        "version"
    ),
    "ls": (
        "1ABCDF::GHI:LNQRST:UXZabcdfghiklmnop:qrstuvw:x all almost-all author block-size: "
        "classify:: color:: context dereference dereference-command-line "
        "dereference-command-line-symlink-to-dir directory dired escape file-type format: "
        "full-time group-directories-first help hide: hide-control-chars human-readable "
        "hyperlink:: ignore: ignore-backups indicator-style: inode kibibytes literal no-group "
        "numeric-uid-gid quote-name quoting-style: recursive reverse show-control-chars si "
        "size sort: tabsize: time: time-style: version width: zero"
    ),
    "md5sum": (
        "bctwz binary check help ignore-missing quiet status strict tag text version warn zero"
    ),
    "mkdir": "Zm:pv context:: help mode: parents verbose version",
    "mktemp": "dp:qtu directory dry-run help quiet suffix: tmpdir:: version",
    "mv": (
        "S:TZbfint:uv backup:: context force help interactive no-clobber no-target-directory "
        "strip-trailing-slashes suffix: target-directory: update verbose version"
    ),
    "nl": (
        "b:d:f:h:i:l:n:ps:v:w: body-numbering: footer-numbering: header-numbering: help "
        "join-blank-lines: line-increment: no-renumber number-format: number-separator: "
        "number-width: section-delimiter: starting-line-number: version"
    ),
    "od": (
        "A:N:S:abcdfij:lost:vw::x address-radix: endian: format: help output-duplicates "
        "read-bytes: skip-bytes: strings:: traditional version width::"
    ),
    "paste": "d:sz delimiters: help serial version zero-terminated",
    "patch": (
        "B:D:EF:NRTV:Y:Zbcd:efg:i:lno:p:r:stuvz: backup backup-if-mismatch basename-prefix: "
        "batch binary context directory: dry-run ed force forward fuzz: get: help ifdef: "
        "ignore-whitespace input: merge no-backup-if-mismatch normal output: posix prefix: "
        "quiet quoting-style: read-only: reject-file: reject-format: remove-empty-files "
        "reverse set-time set-utc silent strip: suffix: unified verbose version "
        "version-control:"
    ),
    "pr": (
        "D:FJN:S::TW:acde::fh:i::l:mn::o:rs::tvw: across columns: date-format: double-space "
        "expand-tabs:: first-line-number: form-feed header: help indent: join-lines length: "
        "merge no-file-warnings number-lines:: omit-header omit-pagination output-tabs:: "
        "page-width: sep-string:: separator:: show-control-chars show-nonprinting version "
        "width:"
    ),
    "readlink": (
        "efmnqsvz canonicalize canonicalize-existing canonicalize-missing help no-newline "
        "quiet silent verbose version zero"
    ),
    "realpath": (
        "LPemqsz canonicalize-existing canonicalize-missing help logical no-symlinks physical "
        "quiet relative-base: relative-to: strip version zero"
    ),
    "rev": "Vh help version",
    "rm": (
        "IRdfirv dir force help interactive:: no-preserve-root one-file-system "
        "preserve-root:: recursive verbose version"
    ),
    "rmdir": "pv help ignore-fail-on-non-empty parents verbose version",
    "sha1sum": (
        "bctwz binary check help ignore-missing quiet status strict tag text version warn zero"
    ),
    "sha224sum": (
        "bctwz binary check help ignore-missing quiet status strict tag text version warn zero"
    ),
    "sha256sum": (
        "bctwz binary check help ignore-missing quiet status strict tag text version warn zero"
    ),
    "sha384sum": (
        "bctwz binary check help ignore-missing quiet status strict tag text version warn zero"
    ),
    "sha512sum": (
        "bctwz binary check help ignore-missing quiet status strict tag text version warn zero"
    ),
    "shred": (
        "fn:s:uvxz exact force help iterations: random-source: remove:: size: verbose version zero"
    ),
    "sort": (
        "CMRS:T:Vbcdfghik:mno:rst:uz batch-size: buffer-size: check:: compress-program: debug "
        "dictionary-order field-separator: files0-from: general-numeric-sort help "
        "human-numeric-sort ignore-case ignore-leading-blanks ignore-nonprinting key: merge "
        "month-sort numeric-sort output: parallel: random-sort random-source: reverse sort: "
        "stable temporary-directory: unique version version-sort zero-terminated"
    ),
    "stat": "Lcft cached: dereference file-system help printf: terse version",
    "strings": "TUadefhn:ostvw bytes: unicode:",
    "tac": "brs: before help regex separator: version",
    "tail": (
        "Fc:f::n:qs:vz bytes: follow:: help lines: max-unchanged-stats: pid: quiet retry "
        "silent sleep-interval: verbose version zero-terminated"
    ),
    "tee": "aip append help ignore-interrupts output-error:: version",
    "touch": "acd:fhmr:t: date: help no-create no-dereference reference: time: version",
    "tr": "Ccdst complement delete help squeeze-repeats truncate-set1 version",
    "truncate": "cor:s: help io-blocks no-create reference: size: version",
    "unexpand": "at: all first-only help tabs: version",
    "uniq": (
        "Dcdf:is:uw:z all-repeated:: check-chars: count group:: help ignore-case repeated "
        "skip-chars: skip-fields: unique version zero-terminated"
    ),
    "unlink": "- help version",
    "unxz": (
        "0HT:Vcdefhklqtvz compress decompress extreme force help keep list long-help quiet "
        "stdout test threads: verbose version"
    ),
    "vdir": (
        "1ABCDF::GHI:LNQRST:UXZabcdfghiklmnop:qrstuvw:x all almost-all author block-size: "
        "classify:: color:: context dereference dereference-command-line "
        "dereference-command-line-symlink-to-dir directory dired escape file-type format: "
        "full-time group-directories-first help hide: hide-control-chars human-readable "
        "hyperlink:: ignore: ignore-backups indicator-style: inode kibibytes literal no-group "
        "numeric-uid-gid quote-name quoting-style: recursive reverse show-control-chars si "
        "size sort: tabsize: time: time-style: version width: zero"
    ),
    "wc": "Lclmw bytes chars files0-from: help lines max-line-length version words",
    "xz": (
        "0HT:Vcdefhklqtvz compress decompress extreme force help keep list long-help quiet "
        "stdout test threads: verbose version"
    ),
    "zstd": (
        "BD:HMSTVbcdefhiklo:qrv adapt auto-threads: decompress dictID: exclude-compressed "
        "fast:: filelist: force format: help keep long:: maxdict: no-dictID output-dir-flat: "
        "output-dir-mirror: patch-from: priority: quiet rm rsyncable single-thread size-hint: "
        "stdout stream-size: target-compressed-block-size: test trace: train train-cover "
        "train-fastcover train-legacy:: ultra verbose version"
    ),
    "curl": (
        "012346A:BC:D:E:F:GH:IJK:LMNOP:Q:RST:U:VX:Y:Zab:c:d:e:fgh:ijklm:no:pqr:st:u:vw:x:y:z: "
        "abstract-unix-socket: alt-svc: anyauth append aws-sigv4: basic cacert: capath: cert: "
        "cert-status cert-type: ciphers: compressed compressed-ssh config: connect-timeout: "
        "connect-to: continue-at: cookie: cookie-jar: create-dirs create-file-mode: crlf "
        "crlfile: curves: data: data-ascii: data-binary: data-raw: data-urlencode: "
        "delegation: digest disable disable-eprt disable-epsv disallow-username-in-url "
        "dns-interface: dns-ipv4-addr: dns-ipv6-addr: dns-servers: doh-cert-status "
        "doh-insecure doh-url: dump-header: egd-file: engine: etag-compare: etag-save: "
        "expect100-timeout: fail fail-early fail-with-body false-start form: form-escape "
        "form-string: ftp-account: ftp-alternative-to-user: ftp-create-dirs ftp-method: "
        "ftp-pasv ftp-port: ftp-pret ftp-skip-pasv-ip ftp-ssl-ccc ftp-ssl-ccc-mode: "
        "ftp-ssl-control get globoff happy-eyeballs-timeout-ms: haproxy-protocol head header: "
        "help: hostpubmd5: hostpubsha256: hsts: http0.9 http1.0 http1.1 http2 "
        "http2-prior-knowledge http3 http3-only ignore-content-length include insecure "
        "interface: ipv4 ipv6 json: junk-session-cookies keepalive-time: key: key-type: krb: "
        "libcurl: limit-rate: list-only local-port: location location-trusted login-options: "
        "mail-auth: mail-from: mail-rcpt: mail-rcpt-allowfails manual max-filesize: "
        "max-redirs: max-time: metalink negotiate netrc netrc-file: netrc-optional next "
        "no-alpn no-buffer no-clobber no-keepalive no-npn no-progress-meter no-sessionid "
        "noproxy: ntlm ntlm-wb oauth2-bearer: output: output-dir: parallel parallel-immediate "
        "parallel-max: pass: path-as-is pinnedpubkey: post301 post302 post303 preproxy: "
        "progress-bar proto: proto-default: proto-redir: proxy: proxy-anyauth proxy-basic "
        "proxy-cacert: proxy-capath: proxy-cert: proxy-cert-type: proxy-ciphers: "
        "proxy-crlfile: proxy-digest proxy-header: proxy-insecure proxy-key: proxy-key-type: "
        "proxy-negotiate proxy-ntlm proxy-pass: proxy-pinnedpubkey: proxy-service-name: "
        "proxy-ssl-allow-beast proxy-ssl-auto-client-cert proxy-tls13-ciphers: "
        "proxy-tlsauthtype: proxy-tlspassword: proxy-tlsuser: proxy-tlsv1 proxy-user: "
        "proxy1.0: proxytunnel pubkey: quote: random-file: range: rate: raw referer: "
        "remote-header-name remote-name remote-name-all remote-time remove-on-error request: "
        "request-target: resolve: retry: retry-all-errors retry-connrefused retry-delay: "
        "retry-max-time: sasl-authzid: sasl-ir service-name: show-error silent socks4: "
        "socks4a: socks5: socks5-basic socks5-gssapi socks5-gssapi-nec socks5-gssapi-service: "
        "socks5-hostname: speed-limit: speed-time: ssl ssl-allow-beast ssl-auto-client-cert "
        "ssl-no-revoke ssl-reqd ssl-revoke-best-effort sslv2 sslv3 stderr: styled-output "
        "suppress-connect-headers tcp-fastopen tcp-nodelay telnet-option: tftp-blksize: "
        "tftp-no-options time-cond: tls-max: tls13-ciphers: tlsauthtype: tlspassword: "
        "tlsuser: tlsv1 tlsv1.0 tlsv1.1 tlsv1.2 tlsv1.3 tr-encoding trace: trace-ascii: "
        "trace-time unix-socket: upload-file: url: url-query: use-ascii user: user-agent: "
        "verbose version write-out: xattr"
    ),
    "wget": (
        "46A:B:D:EFHI:KLNO:P:Q:R:ST:U:VX:a:bcde:hi:kl:mo:pqrt:vw:x accept-regex: ask-password "
        "auth-no-challenge "
        "backups: bind-address: body-data: body-file: ca-certificate: ca-directory: "
        "certificate: certificate-type: ciphers: compression: config: connect-timeout: "
        "content-disposition content-on-error convert-file-only crl-file: cut-dirs: "
        "default-page: delete-after dns-timeout: exclude-domains: follow-ftp follow-tags: "
        "ftp-password: ftp-user: ftps-clear-data-connection ftps-fallback-to-ftp "
        "ftps-implicit ftps-resume-ssl header: hsts-file http-password: http-user: https-only "
        "ignore-case ignore-length ignore-tags: keep-session-cookies limit-rate: "
        "load-cookies: local-encoding: max-redirect method: no-cache no-check-certificate "
        "no-clobber no-config no-cookies no-directories no-dns-cache no-glob "
        "no-host-directories no-hsts no-http-keep-alive no-if-modified-since no-iri no-netrc "
        "no-parent no-passive-ftp no-proxy no-remove-listing no-use-server-timestamps "
        "no-verbose no-warc-compression no-warc-digests no-warc-keep-log password: "
        "pinnedpubkey: post-data: post-file: prefer-family: preserve-permissions private-key: "
        "private-key-type: progress: protocol-directories proxy-password: proxy-user: "
        "random-wait read-timeout: referer: regex-type: reject-regex: rejected-log: "
        "remote-encoding: report-speed: restrict-file-names: retr-symlinks retry-connrefused "
        "retry-on-http-error: save-cookies: save-headers secure-protocol: show-progress "
        "spider start-pos: strict-comments trust-server-names unlink use-askpass: user: "
        "waitretry: warc-cdx warc-dedup: warc-file: warc-header: warc-max-size: warc-tempdir: "
        "xattr"
    ),
    "tar": (
        "ABC:F:GH:I:JK:L:MN:OPRST:UV:WX:Zab:cdf:g:hijklmnoprstuvwxz absolute-names acls "
        "add-file: after-date: anchored append atime-preserve:: auto-compress backup:: "
        "block-number blocking-factor: bzip2 catenate check-device check-links checkpoint:: "
        "checkpoint-action: clamp-mtime compare compress concatenate confirmation create "
        "delay-directory-restore delete dereference diff directory: exclude: exclude-backups "
        "exclude-caches exclude-caches-all exclude-caches-under exclude-from: exclude-ignore: "
        "exclude-ignore-recursive: exclude-tag: exclude-tag-all: exclude-tag-under: "
        "exclude-vcs exclude-vcs-ignores extract file: files-from: force-local format: "
        "full-time get group: group-map: gunzip gzip hard-dereference help hole-detection: "
        "ignore-case ignore-command-error ignore-failed-read ignore-zeros incremental "
        "index-file: info-script: interactive keep-directory-symlink keep-newer-files "
        "keep-old-files label: level: list listed-incremental: lzip lzma lzop mode: mtime: "
        "multi-volume new-volume-script: newer: newer-mtime: no-acls no-anchored "
        "no-auto-compress no-check-device no-delay-directory-restore no-ignore-case "
        "no-ignore-command-error no-null no-overwrite-dir no-quote-chars: no-recursion "
        "no-same-owner no-same-permissions no-seek no-selinux no-unquote "
        "no-verbatim-files-from no-wildcards no-wildcards-match-slash no-xattrs null "
        "numeric-owner occurrence:: old-archive one-file-system one-top-level:: overwrite "
        "overwrite-dir owner: owner-map: pax-option: portability posix preserve-order "
        "preserve-permissions quote-chars: quoting-style: read-full-records record-size: "
        "recursion recursive-unlink remove-files restrict rmt-command: rsh-command: "
        "same-order same-owner same-permissions seek selinux show-defaults show-omitted-dirs "
        "show-snapshot-field-ranges show-stored-names show-transformed-names skip-old-files "
        "sort: sparse sparse-version: starting-file: strip-components: suffix: tape-length: "
        "test-label to-command: to-stdout totals:: touch transform: uncompress ungzip "
        "unlink-first unquote update usage use-compress-program: utc verbatim-files-from "
        "verbose verify version volno-file: warning: wildcards wildcards-match-slash xattrs "
        "xattrs-exclude: xattrs-include: xform: xz zstd"
    ),
    "make": (
        "BC:E:I:LO::RSW:bdef:hij::kl::mno:pqrstvw always-make assume-new: assume-old: "
        "check-symlink-times debug:: directory: dry-run environment-overrides eval: file: "
        "help ignore-errors include-dir: jobs:: just-print keep-going load-average:: "
        "makefile: max-load:: new-file: no-builtin-rules no-builtin-variables no-keep-going "
        "no-print-directory no-silent old-file: output-sync:: print-data-base print-directory "
        "question quiet recon silent stop touch trace version warn-undefined-variables "
        "what-if:"
    ),
}
