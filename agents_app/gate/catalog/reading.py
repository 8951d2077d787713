"""Commands that read: cat and its kin, grep/rg, sort, find, awk, jq, cd.

Within a reading command, the options that write or run something (``sort -o``,
``rg --pre``, ``find -delete``, awk's ``system``) move it to a riskier family.
"""

from __future__ import annotations

import re

from agents_app.gate.catalog.families import Facts, Handler
from agents_app.gate.catalog.options import has_short, names, operands, option_value, simple
from agents_app.gate.shell.commands import SimpleCommand, Word
from agents_app.gate.shell.wrappers import find_roots

_READ_PLAIN = (
    "cat tac head tail wc nl rev column fold paste join cmp comm diff stat file du "
    "realpath readlink md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum "
    "base64 base32 od hexdump strings ls dir vdir cut tr expand unexpand fmt pr"
)
# Short options that take a value, so that `head -n 5` does not read a file called 5.
# Only letters known to take one: a wrong letter would hide the path after it.
_READ_VALUES = {
    "head": "nc",
    "tail": "ncs",
    "cut": "dfcb",
    "du": "dBtX",
    "ls": "IwT",
    "diff": "CUIFLSxX",
    "column": "csoNRlHWE",
    "fold": "w",
    "paste": "d",
    "join": "12jteoav",
    "cmp": "in",
    "nl": "bdfhilnsvw",
    "od": "AjNtwS",
    "strings": "nte",
    "fmt": "wpg",
    "pr": "hlwoWN",
    "base64": "w",
    "stat": "c",
    "hexdump": "efns",
}
_NO_PATHS = (
    "echo printf true false : test [ [[ sleep seq expr basename dirname which type hash whoami "
    "id uname nproc locale tty uptime free ps pgrep getconf printenv env pwd dirs help read wait "
    "exit return break continue shift let set unset export declare typeset local readonly "
    "getopts logname groups arch trap alias unalias command"
)


def _pattern_first(values: str, long: frozenset[str]) -> Handler:
    """grep-like: the first operand is a pattern unless -e/-f gave one."""

    def handler(command: SimpleCommand) -> Facts:
        if command.name == "rg" and has_short(command, "", "--pre", "--hostname-bin"):
            return Facts("inline-code")  # a preprocessor, or a program that names the host
        found = operands(command.words[1:], values, long)
        given = option_value(command, "-e", "--regexp") or option_value(command, "-f", "--file")
        pattern_file = option_value(command, "-f", "--file")
        reads = found if given else found[1:]
        # rg always, grep -r: every file under each directory (with none, under `.`).
        tree = command.name == "rg" or _recursive_grep(command)
        reads = reads or ([Word(".")] if tree else [])
        pattern = [pattern_file] if pattern_file else []
        ignore = option_value(command, "", "--ignore-file") if command.name == "rg" else None
        pattern += [ignore] if ignore else []
        return Facts("read", reads=(*reads, *pattern), tree=tree)

    return handler


def _recursive_grep(command: SimpleCommand) -> bool:
    if has_short(command, "rR", "--recursive", "--dereference-recursive"):
        return True
    directories = option_value(command, "-d", "--directories")
    return directories is not None and directories.value == "recurse"


def _sort(command: SimpleCommand) -> Facts:
    if has_short(command, "", "--compress-program"):
        return Facts("inline-code")
    long = frozenset({"--key", "--field-separator", "--output", "--buffer-size"})
    reads = operands(command.words[1:], "ktoST", long | {"--temporary-directory"})
    writes = [w for w in (option_value(command, "-o", "--output"),) if w]
    writes += [w for w in (option_value(command, "-T", "--temporary-directory"),) if w]
    return Facts("write" if writes else "read", reads=tuple(reads), writes=tuple(writes))


def _in_out(values: str) -> Handler:
    """uniq/xxd: ``cmd [INPUT [OUTPUT]]`` — a second operand is written."""

    def handler(command: SimpleCommand) -> Facts:
        found = operands(command.words[1:], values)
        if len(found) > 1:
            return Facts("write", reads=tuple(found[:1]), writes=tuple(found[1:]))
        return Facts("read", reads=tuple(found))

    return handler


def _tree(command: SimpleCommand) -> Facts:
    out = option_value(command, "-o")
    reads = tuple(operands(command.words[1:], "LIPoHT"))
    return Facts("write" if out else "read", reads=reads, writes=(out,) if out else ())


_FIND_NOT_TESTS = names("-delete -depth -mindepth -maxdepth -xdev -mount -L -H -P -print")


def _find(command: SimpleCommand) -> Facts:
    roots = find_roots(command.words)
    writes: list[Word] = []
    words = command.words
    for index, word in enumerate(words):
        if word.value in ("-fprint", "-fprint0", "-fprintf", "-fls") and index + 1 < len(words):
            writes.append(words[index + 1])
    if any(w.value == "-delete" for w in words):
        # Without a test (-name, -type …) find -delete removes everything under the roots.
        tests = [w for w in words[len(roots) + 1 :] if w.value not in _FIND_NOT_TESTS]
        everything = not any(w.value.startswith("-") for w in tests)
        return Facts(
            "write", reads=roots, writes=(*roots, *writes), recursive=everything, deletes=True
        )
    return Facts("write" if writes else "read", reads=roots, writes=tuple(writes))


# Runs a command, reads or writes other files, or loads code: system(), getline, pipes
# and redirects, close(), @include/@load/@namespace and gawk's indirect calls @f(),
# and ARGV/ARGC, which name the files awk reads next.
_AWK_DANGER = re.compile(r"system|getline|[|>]|\bclose\b|@|\bARG[VC]\b")
_AWK_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def _awk(command: SimpleCommand) -> Facts:
    # Only -F and -v are allowed: gawk's -e, -f, -i and -l add code or extensions.
    found: list[Word] = []
    rest = iter(command.words[1:])
    for word in rest:
        value = word.value
        if value in ("-F", "-v", "--field-separator", "--assign"):
            next(rest, None)
        elif value.startswith(("-F", "-v", "--field-separator=", "--assign=")):
            continue
        elif value.startswith("-") and value != "-" and not word.dynamic:
            if value == "--":
                found.extend(rest)
                break
            return Facts("inline-code")
        else:
            found.append(word)
    if not found or found[0].dynamic or _AWK_DANGER.search(found[0].value):
        return Facts("inline-code")  # awk can run commands and write files
    files = (w for w in found[1:] if w.dynamic or not _AWK_ASSIGNMENT.match(w.value))
    return Facts("read", reads=tuple(files))


# jq 1.6's options (it matches long ones exactly); `--argfile` and `--run-tests` read
# files the gate does not follow, so they are not here.
_JQ_FLAGS = names(
    "--tab --seq --stream --ascii-output --sort-keys --color-output --monochrome-output "
    "--raw-output --join-output --null-input --slurp --compact-output --exit-status "
    "--raw-input --unbuffered --help --version --arg --argjson --slurpfile --rawfile "
    "--from-file --indent --library-path"
)


def _jq_unknown(value: str) -> bool:
    if not value.startswith("-") or value == "-":
        return False
    if value.startswith("--"):
        return value not in _JQ_FLAGS
    return not (value.startswith("-L") or all(c in "cnesrRCMSajhf" for c in value[1:]))


_JQ_MODULES = re.compile(r"\b(import|include)\b|\bmodulemeta\b|\bget_search_list\b")


def _jq(command: SimpleCommand) -> Facts:
    words = command.words
    reads: list[Word] = []
    found: list[Word] = []
    index = 1
    while index < len(words):
        value = words[index].value
        if value in ("--args", "--jsonargs"):
            break
        if _jq_unknown(value) and not words[index].dynamic:
            return Facts("unknown-option", path_checked=False)  # yq -i writes in place
        if value in ("-L", "--library-path") or value.startswith("-L"):
            # a directory modules are read from (`import "m" as m;` looks there)
            attached = value[2:] if value.startswith("-L") and len(value) > 2 else ""
            taken = Word(attached) if attached else words[min(index + 1, len(words) - 1)]
            reads.append(taken)
            index += 1 if attached else 2
            continue
        if value in ("--arg", "--argjson", "--slurpfile", "--rawfile"):
            if value in ("--slurpfile", "--rawfile") and index + 2 < len(words):
                reads.append(words[index + 2])
            index += 3
            continue
        if value in ("-f", "--from-file", "--indent") and index + 1 < len(words):
            reads.extend(words[index + 1 : index + 2] if value != "--indent" else ())
            index += 2
            continue
        if not value.startswith("-") or value == "-":
            found.append(words[index])
        index += 1
    given = any(w.value in ("-f", "--from-file") for w in words)
    program = found[0] if found and not given else Word("")
    if program.dynamic or _JQ_MODULES.search(program.value):
        # import/include read modules from ~/.jq, -L directories or beside the program:
        # where they land is not known here.
        reads.append(Word("", dynamic=True))
    return Facts("read", reads=(*reads, *(found if given else found[1:])))


def _diff(command: SimpleCommand) -> Facts:
    found = tuple(operands(command.words[1:], _READ_VALUES["diff"]))
    return Facts("read", reads=found, tree=has_short(command, "r", "--recursive"))


def _date(command: SimpleCommand) -> Facts:
    # `-s`/`--set` (the host) and `-f`/`-r` (files) come from its option table, which
    # reads clusters right: `date -Iseconds` is -I with a value, not -s.
    return Facts("read")


def _hostname(command: SimpleCommand) -> Facts:
    return Facts("host" if operands(command.words[1:]) else "read")


HANDLERS: dict[str, Handler] = {
    **{name: simple("read", _READ_VALUES.get(name, "")) for name in _READ_PLAIN.split()},
    **{name: simple("read", paths=False) for name in _NO_PATHS.split()},
    **dict.fromkeys(("grep", "egrep", "fgrep", "zgrep"), _pattern_first("efmABCdDX", frozenset())),
    "rg": _pattern_first(
        "efgtTmABCjMrd",
        frozenset({"--glob", "--type", "--iglob", "--max-depth", "--ignore-file"}),
    ),
    "diff": _diff,
    "sort": _sort,
    "uniq": _in_out("fsw"),
    "xxd": _in_out("cglso"),
    "tree": _tree,
    "find": _find,
    **dict.fromkeys(("awk", "gawk", "mawk", "nawk"), _awk),
    **dict.fromkeys(("jq", "yq"), _jq),
    "date": _date,
    "hostname": _hostname,
    **dict.fromkeys(("cd", "pushd", "popd"), simple("cwd", paths=False)),
}
