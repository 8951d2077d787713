"""Reading a command's options the way the program itself reads them (GNU getopt_long).

``normalize`` parses a command against its table in ``option_tables``: a long option
may be any unique prefix of its name (``--files0=F`` is ``--files0-from=F``, ``curl
--etag-comp F`` is ``--etag-compare F``), short options cluster (``-abn5``), a value
is attached or the next word, options may follow operands. It gives back the words
with every long option spelled in full, so that the family handlers, which match full
names, see what the program sees; and each option with its value. An option the table
does not have, or a prefix that fits several, is one the gate cannot model: the caller
asks. ``EFFECTS`` says what an option's value is to the program: a file it reads
(``read``), a file it writes (``write``), a program or code it runs (``exec``), or a
file whose content it sends over the network (``send``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from agents_app.gate.catalog.option_tables import SPECS
from agents_app.gate.shell.commands import SimpleCommand, Word

# Programs that also take -NUM as an option (head -20, diff -5, grep -3, gzip -6).
_NUMBERS = frozenset(
    str.split("head tail pr fmt fold diff grep egrep fgrep gzip gunzip bzip2 xz unxz zstd")
)
_ALIASES = {"egrep": "grep", "fgrep": "grep", "zgrep": "grep", "gunzip": "gzip", "unxz": "xz"}
_ALIASES |= {"chgrp": "chown"}


def _effects(text: str) -> dict[str, str]:
    """``"read: -f --file; write: -o"`` as {"-f": "read", "--file": "read", "-o": "write"}."""
    found: dict[str, str] = {}
    for part in text.split(";"):
        effect, _, options = part.partition(":")
        found |= dict.fromkeys(options.split(), effect.strip())
    return found


_FILES0 = "read: --files0-from"
EFFECTS: dict[str, dict[str, str]] = {
    "wc": _effects(_FILES0),
    "du": _effects(f"{_FILES0} -X --exclude-from"),
    "sort": _effects(
        f"{_FILES0} --random-source; write: -o --output -T --temporary-directory; "
        "exec: --compress-program"
    ),
    "date": _effects("read: -f --file -r --reference; host: -s --set"),
    "diff": _effects("read: --from-file --to-file -X --exclude-from"),
    "grep": _effects("read: -f --file --exclude-from"),
    "touch": _effects("read: -r --reference"),
    "truncate": _effects("read: -r --reference"),
    "chmod": _effects("read: --reference"),
    "chown": _effects("read: --reference"),
    "shred": _effects("read: --random-source"),
    "file": _effects("read: -m --magic-file -f --files-from"),
    "patch": _effects(
        "read: -i --input; write: -o --output -r --reject-file -B --prefix -d --directory"
    ),
    "hexdump": _effects("read: -f --format-file"),
    "xz": _effects("read: --files --files0"),
    "tar": _effects(
        "read: -T --files-from -X --exclude-from; "
        "write: -g --listed-incremental --index-file --volno-file; "
        "exec: -F --info-script --new-volume-script -I --use-compress-program --to-command "
        "--checkpoint-action --rsh-command --rmt-command"
    ),
    "make": _effects("read: -f --file --makefile -I --include-dir -C --directory; exec: -E --eval"),
    "wget": _effects(
        "read: -i --input-file --load-cookies --certificate --private-key --ca-certificate "
        "--crl-file --ca-directory --input-metalink --warc-dedup; "
        "send: --post-file --body-file; "
        "write: -O --output-document -o --output-file -a --append-output --save-cookies "
        "--warc-file --rejected-log --hsts-file -P --directory-prefix; "
        "exec: -e --execute --config --use-askpass"
    ),
    "curl": _effects(
        "read: --etag-compare --netrc-file -E --cert --key --cacert --capath --crlfile "
        "--pinnedpubkey --proxy-cacert --proxy-capath --proxy-cert --proxy-key --proxy-crlfile "
        "--unix-socket --abstract-unix-socket --egd-file --random-file --hsts --alt-svc; "
        "write: -o --output --output-dir -D --dump-header -c --cookie-jar --trace --trace-ascii "
        "--stderr --libcurl --etag-save --hsts --alt-svc; exec: -K --config"
    ),
}


@dataclass(frozen=True, slots=True)
class Table:
    short: dict[str, int]  # letter -> 0 no value, 1 a value, 2 an optional attached value
    long: dict[str, int]  # "--name" -> the same
    numbers: bool  # -NUM is an option


@cache
def table(name: str) -> Table | None:
    """The option table of program ``name``, or None when the gate has none."""
    spec = SPECS.get(_ALIASES.get(name, name))
    if spec is None:
        return None
    short_spec, *longs = spec.split()
    short: dict[str, int] = {}
    index = 0
    while index < len(short_spec) and short_spec != "-":
        letter, index = short_spec[index], index + 1
        colons = len(short_spec[index:]) - len(short_spec[index:].lstrip(":"))
        short[letter], index = min(colons, 2), index + colons
    long = {"--" + n.rstrip(":"): min(len(n) - len(n.rstrip(":")), 2) for n in longs}
    return Table(short, long, name in _NUMBERS)


def effects(name: str) -> dict[str, str]:
    return EFFECTS.get(_ALIASES.get(name, name), {})


def long_name(table: Table, name: str) -> str:
    """The option ``name`` (``--etag-comp``) stands for, or "" (unknown or ambiguous)."""
    if name in table.long:
        return name
    found = [option for option in table.long if option.startswith(name)]
    return found[0] if len(found) == 1 else ""


@dataclass(frozen=True, slots=True)
class Parsed:
    words: tuple[Word, ...]  # the command's words, long options spelled in full
    options: tuple[tuple[str, Word | None], ...]  # each option given, with its value
    unknown: str = ""  # the first option the table does not have ("" when none)


def normalize(command: SimpleCommand, spec: Table) -> Parsed:
    """``command`` read against ``spec`` (see the module's docstring)."""
    words = list(command.words)
    options: list[tuple[str, Word | None]] = []
    index = 1
    while index < len(words):
        word = words[index]
        value = word.value
        index += 1
        if value == "--":
            break
        if not value.startswith("-") or value == "-":
            continue
        if word.dynamic and not _static_option(spec, value):
            return Parsed(tuple(words), tuple(options), value)
        if value.startswith("--"):
            name, equals, attached = value.partition("=")
            full = long_name(spec, name)
            kind = spec.long.get(full, -1)
            if not full or (equals and kind == 0):
                several = not full and sum(o.startswith(name) for o in spec.long) > 1
                return Parsed(tuple(words), tuple(options), name + (" is ambiguous" * several))
            words[index - 1] = Word(full + equals + attached)
            if equals or kind != 1:
                options.append((full, Word(attached) if equals else None))
            else:
                options.append((full, words[index] if index < len(words) else Word("")))
                index += 1
            continue
        index, unknown = _cluster(spec, words, index, options)
        if unknown:
            return Parsed(tuple(words), tuple(options), unknown)
    return Parsed(tuple(words), tuple(options))


def _static_option(spec: Table, value: str) -> bool:
    """`-j$(nproc)`, `--jobs=$N`: only an option's value is known at run time."""
    cut = min((i for i in (value.find("$"), value.find("`")) if i >= 0), default=-1)
    static = value[:cut]
    if static.startswith("--"):
        name, equals, _ = static.partition("=")
        return bool(equals) and spec.long.get(long_name(spec, name), 0) > 0
    letters = static[1:]
    return (
        bool(letters)
        and all(spec.short.get(c, -1) == 0 for c in letters[:-1])
        and (spec.short.get(letters[-1], 0) > 0)
    )


def _cluster(
    spec: Table, words: list[Word], index: int, options: list[tuple[str, Word | None]]
) -> tuple[int, str]:
    """One short option cluster (``words[index - 1]``); the index after it, or the
    option that is not in the table."""
    value = words[index - 1].value
    if spec.numbers and value[1:].isdigit():
        options.append((value, None))
        return index, ""
    for position, letter in enumerate(value[1:], start=1):
        kind = spec.short.get(letter, -1)
        if kind < 0:
            return index, "-" + letter
        rest = value[position + 1 :]
        if kind == 0:
            options.append(("-" + letter, None))
            continue
        if rest or kind == 2:
            options.append(("-" + letter, Word(rest) if rest else None))
        else:
            options.append(("-" + letter, words[index] if index < len(words) else Word("")))
            index += 1
        break
    return index, ""
