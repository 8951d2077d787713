"""curl, wget and the other network tools: reading from the network, or sending to it.

A request that sends data (``-d``, ``-T``, a method other than GET) is
``network-write``; the local files it uploads, saves or reads (``file://``) are paths.
"""

from __future__ import annotations

import re

from agents_app.gate.catalog.families import Facts, Handler
from agents_app.gate.catalog.options import has_short, names, option_value
from agents_app.gate.shell.commands import SimpleCommand, Word

_CURL_FLAGS = names(
    "--silent --show-error --fail --fail-with-body --location --head --include --insecure "
    "--compressed --verbose --remote-name --remote-name-all --globoff --http1.1 --http2 "
    "--http3 --get --no-buffer --progress-bar --create-dirs --ipv4 --ipv6 --raw --fail-early "
    "--no-progress-meter --location-trusted --retry-all-errors --path-as-is --digest --basic "
    "--list-only --remote-time --remote-header-name --no-keepalive --tcp-nodelay"
)
_CURL_WRITES = frozenset(
    {"-o", "--output", "--output-dir", "-D", "--dump-header", "-c", "--cookie-jar", "--trace"}
) | {"--trace-ascii", "--stderr", "--libcurl", "--etag-save"}
_CURL_SENDS = frozenset({"-d", "-F", "-T", "--json", "--upload-file", "--form", "--form-string"})
# Options whose value may name a file whose content goes out with the request
# (`-H @file`, `--url-query @file`, `--cookie file`): reading one sends it.
_CURL_SENDS_FILE = frozenset({"-H", "--header", "--proxy-header", "--url-query", "-b", "--cookie"})


def _curl(command: SimpleCommand) -> Facts:
    words = command.words
    reads: list[Word] = []
    writes: list[Word] = []
    sends = False
    index = 1
    while index < len(words):
        word = words[index]
        name, _, attached = word.value.partition("=")
        if not word.value.startswith("-") or word.value == "-" or word.dynamic:
            index += 1
            continue
        if word.value.startswith("--") and (name in _CURL_FLAGS or attached):
            value = Word(attached) if attached else None
            index += 1
        elif word.value.startswith("--"):
            value = words[index + 1] if index + 1 < len(words) else Word("")
            index += 2
        else:
            name, value, index = _curl_short(words, index)
        if name in ("-K", "--config"):
            return Facts("unknown", reads=(value,) if value else ())  # it may hold any option
        sends = sends or name in _CURL_SENDS or name.startswith("--data")
        sends = sends or (name in ("-X", "--request") and _unsafe_method(value))
        before = len(reads)
        _curl_paths(name, value, reads, writes)
        sends = sends or (name in _CURL_SENDS_FILE and len(reads) > before)
    family = "network-write" if sends else "network-read"
    return Facts(family, reads=(*reads, *_local_urls(command)), writes=tuple(writes))


def _local_urls(command: SimpleCommand) -> tuple[Word, ...]:
    """file:// URLs read local files, like cat."""
    found = (w for w in command.words[1:] if w.value.lower().startswith("file:"))
    return tuple(Word(re.sub(r"(?i)^file:(//[^/]*)?", "", w.value), w.dynamic) for w in found)


def _curl_short(words: tuple[Word, ...], index: int) -> tuple[str, Word | None, int]:
    """One short option cluster: curl's value letters take the rest or the next word."""
    cluster = words[index].value[1:]
    for position, letter in enumerate(cluster):
        if letter in "AbcCdDeEFHKmoPQrtTuUwxXyYz":
            if position + 1 < len(cluster):
                return "-" + letter, Word(cluster[position + 1 :]), index + 1
            following = words[index + 1] if index + 1 < len(words) else Word("")
            return "-" + letter, following, index + 2
        if letter == "O":
            return "-O", None, index + 1
    return "-" + cluster[-1:], None, index + 1


def _unsafe_method(value: Word | None) -> bool:
    if value is None:
        return False
    return value.dynamic or value.value.upper() not in ("GET", "HEAD", "OPTIONS")


def _curl_paths(name: str, value: Word | None, reads: list[Word], writes: list[Word]) -> None:
    if name in ("-O", "--remote-name", "--remote-name-all"):
        writes.append(Word("."))
    elif value is None or value.value == "-":
        return
    elif name in _CURL_WRITES:
        writes.append(value)
    elif name in ("-T", "--upload-file"):
        reads.append(value)
    elif value.value.startswith("@") or "=@" in value.value or "=<" in value.value:
        reads.append(Word(re.split(r"@|<", value.value, maxsplit=1)[1], value.dynamic))
    elif name in ("-b", "--cookie") and "=" not in value.value:
        reads.append(value)


_WGET_SENDS = ("--post-data", "--post-file", "--method", "--body-data", "--body-file")
# Options whose value is a local file wget reads (and, for the first two, sends).
_WGET_READS = (
    "--post-file",
    "--body-file",
    "--load-cookies",
    "--certificate",
    "--private-key",
    "--ca-certificate",
    "--crl-file",
)
_WGET_WRITES = ("--save-cookies", "--warc-file", "--rejected-log")


def _long_values(command: SimpleCommand) -> list[tuple[str, Word]]:
    """Each long option with its value (``--name=V`` or ``--name V``), up to ``--``."""
    found: list[tuple[str, Word]] = []
    words = command.words
    for index, word in enumerate(words[1:], start=1):
        if word.value == "--":
            break
        if not word.value.startswith("--"):
            continue
        name, equals, value = word.value.partition("=")
        if equals:
            found.append((name, Word(value, word.dynamic)))
        elif index + 1 < len(words):
            found.append((name, words[index + 1]))
    return found


def _wget(command: SimpleCommand) -> Facts:
    if has_short(command, "e", "--execute", "--config", "--use-askpass"):
        return Facts("unknown")  # a startup command, a config file, or a program it runs
    sends = has_short(command, "", *_WGET_SENDS)
    reads = [w for w in (option_value(command, "-i", "--input-file"),) if w]
    writes = [w for w in (option_value(command, "-o", "--output-file"),) if w]
    writes += [w for w in (option_value(command, "-a", "--append-output"),) if w]
    for name, word in _long_values(command):
        if name in _WGET_READS:
            reads.append(word)
        elif name in _WGET_WRITES:
            writes.append(word)
    document = option_value(command, "-O", "--output-document")
    if document is not None and document.value != "-":
        writes.append(document)
    elif document is None and not has_short(command, "", "--spider"):
        writes.append(option_value(command, "-P", "--directory-prefix") or Word("."))
    family = "network-write" if sends else "network-read"
    return Facts(family, reads=(*reads, *_local_urls(command)), writes=tuple(writes))


def _lookup(command: SimpleCommand) -> Facts:
    """dig, host, nslookup, ping …: a name built at run time (`dig $(cat .env).x.example`)
    carries data out in the query itself; `dig -f FILE` reads its names from a file."""
    batch = option_value(command, "-f") if command.name == "dig" else None
    if any(w.dynamic for w in command.words[1:]):
        return Facts("network-write", path_checked=False)
    return Facts("network-read", reads=(batch,) if batch else (), path_checked=False)


HANDLERS: dict[str, Handler] = {
    "curl": _curl,
    "wget": _wget,
    **dict.fromkeys(("ping", "ping6", "dig", "nslookup", "host", "traceroute", "drill"), _lookup),
}
