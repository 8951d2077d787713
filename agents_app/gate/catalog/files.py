"""Commands that write files: rm, cp, mv, chmod, tar, zip, patch, tee, mktemp …

Each says which operands it writes (and reads), whether the writes reach whole trees
(``rm -r``, ``chmod -R``) and whether they delete; the paths decide the verdict.
"""

from __future__ import annotations

import re

from agents_app.gate.catalog.families import Facts, Handler
from agents_app.gate.catalog.options import has_short, operands, option_value
from agents_app.gate.shell.commands import SimpleCommand, Word


def _recursive(command: SimpleCommand) -> bool:
    return has_short(command, "rR", "--recursive")


def _all_written(values: str = "", deletes: bool = False) -> Handler:
    def handler(command: SimpleCommand) -> Facts:
        found = tuple(operands(command.words[1:], values))
        target = option_value(command, "-t", "--target-directory") if "t" in values else None
        writes = (*found, *((target,) if target and command.name == "mv" else ()))
        recursive = deletes and _recursive(command)
        if command.name == "mv":  # moving a symlink puts it where a later write may go
            sources = found if target else found[:-1]
            # Moving a tree reads all of it out to where it lands (hidden answers too).
            return Facts(
                "write", reads=sources, writes=writes, links=True, link_sources=sources, tree=True
            )
        return Facts("write", writes=writes, recursive=recursive, deletes=deletes)

    return handler


# cp options that copy symlinks as symlinks (or make them: -s), unless -L dereferences.
_CP_KEEPS_LINKS = ("--archive", "--recursive", "--no-dereference", "--symbolic-link")


def _copy(command: SimpleCommand) -> Facts:
    found = operands(command.words[1:], "tSmog", frozenset({"--target-directory", "--suffix"}))
    target = option_value(command, "-t", "--target-directory")
    if command.name == "ln":
        # A link is written through later: its target counts as written now, so that
        # `ln -s /etc/hosts h && echo x > h` cannot reach /etc.
        return Facts("write", writes=(*found, *((target,) if target else ())), links=True)
    links = command.name == "cp" and _cp_keeps_links(command)
    tree = command.name == "cp" and has_short(command, "rRa", "--recursive", "--archive")
    if target is not None:
        return Facts("write", reads=tuple(found), writes=(target,), links=links, tree=tree)
    if command.name == "install" and has_short(command, "d", "--directory"):
        return Facts("write", writes=tuple(found))
    reads, writes = tuple(found[:-1]), tuple(found[-1:])
    return Facts("write", reads=reads, writes=writes, links=links, tree=tree)


def _cp_keeps_links(command: SimpleCommand) -> bool:
    if has_short(command, "L", "--dereference"):
        return False
    preserve = any(f.startswith("--preserve=") and "links" in f for f in command.flags)
    return preserve or has_short(command, "aRrdPs", *_CP_KEEPS_LINKS)


def _mode_first(command: SimpleCommand) -> Facts:
    """chmod/chown/chgrp: the first operand is a mode or owner unless --reference."""
    words = command.words[1:]
    if command.name == "chmod":  # `chmod -x f`: a mode that looks like an option
        words = tuple(
            Word(w.value.lstrip("-"), w.dynamic) if _MODE.fullmatch(w.value) else w for w in words
        )
    found = operands(words)
    targets = found if has_short(command, "", "--reference") else found[1:]
    facts = Facts("write", writes=tuple(targets), recursive=_recursive(command))
    mode = found[0].value if found else ""
    if command.name == "chmod" and facts.recursive and _world_writable(mode):
        return Facts("write", writes=facts.writes, recursive=True, harness="chmod-world-writable")
    return facts


_MODE = re.compile(r"-[rwxXst]+|-[0-7]{3,4}")


def _world_writable(mode: str) -> bool:
    if re.fullmatch(r"[0-7]{3,4}", mode):
        return int(mode[-1]) & 2 == 2
    return bool(re.search(r"(^|[,ao])[+=][rwxXst]*w", mode))


def _dd(command: SimpleCommand) -> Facts:
    reads = tuple(Word(w.value[3:], w.dynamic) for w in command.words if w.value.startswith("if="))
    writes = tuple(Word(w.value[3:], w.dynamic) for w in command.words if w.value.startswith("of="))
    return Facts("write", reads=reads, writes=writes)


def _tar(command: SimpleCommand) -> Facts:
    runs: tuple[str, ...] = (
        "--to-command",
        "--use-compress-program",
        "--checkpoint-action",
        "--info-script",
    )
    runs += ("--new-volume-script", "--rsh-command", "--rmt-command")
    if has_short(command, "IF", *runs):
        return Facts("inline-code")  # options that run a program
    first = command.args[0] if command.args else ""
    mode = first if not first.startswith("-") else "".join(f[1:] for f in command.flags)
    archive = option_value(command, "-f", "--file")
    into = option_value(command, "-C", "--directory") or Word(".")
    found = tuple(operands(command.words[2:] if mode is first else command.words[1:], "fCbHKNT"))
    if "x" in mode or "--extract" in command.argv or "--get" in command.argv:
        # -P keeps absolute member names (and `..`): the archive says where it writes.
        letters = first if mode is first else "".join(f[1:] for f in command.flags if f[1] != "-")
        anywhere = "P" in letters or "--absolute-names" in command.argv
        writes = (into, *((Word("", dynamic=True),) if anywhere else ()))
        return Facts("write", reads=(archive,) if archive else (), writes=writes, links=True)
    if "c" in mode or "r" in mode or "u" in mode:
        base = option_value(command, "-C", "--directory")  # operands are read from there
        reads = (*found, *((base,) if base else ()))
        return Facts("write", reads=reads, writes=(archive,) if archive else (), tree=True)
    return Facts("read", reads=(archive,) if archive else ())


def _unzip(command: SimpleCommand) -> Facts:
    found = tuple(operands(command.words[1:], "dx"))
    if has_short(command, "pl"):
        return Facts("read", reads=found[:1])
    into = option_value(command, "-d") or Word(".")
    # -: keeps `../` in member names: the archive says where it writes.
    anywhere = (Word("", dynamic=True),) if has_short(command, ":") else ()
    return Facts("write", reads=found[:1], writes=(into, *anywhere), links=True)


def _zip(command: SimpleCommand) -> Facts:
    if has_short(command, "T", "--unzip-command"):
        return Facts("inline-code")
    found = tuple(operands(command.words[1:], "bnt"))
    temp = option_value(command, "-b", "--temp-path")
    writes = (*found[:1], *((temp,) if temp else ()))
    return Facts("write", reads=found[1:], writes=writes, tree=has_short(command, "rR"))


def _compress(command: SimpleCommand) -> Facts:
    found = tuple(operands(command.words[1:], "S"))
    if has_short(command, "cltd", "--stdout", "--list", "--test") and not has_short(command, "k"):
        return Facts("read", reads=found)
    return Facts("write", reads=found, writes=found)


def _patch(command: SimpleCommand) -> Facts:
    into = option_value(command, "-d", "--directory") or Word(".")
    out = option_value(command, "-o", "--output")
    given = option_value(command, "-i", "--input")
    found = operands(command.words[1:], "dopiBrFDVYz")
    side = [option_value(command, "-r", "--reject-file"), option_value(command, "-B", "--prefix")]
    writes = (out or into, *(w for w in side if w))
    reads = tuple(found) + ((given,) if given else ())
    return Facts("write", reads=reads, writes=writes, links=True)  # git-style diffs make links


def _tee(command: SimpleCommand) -> Facts:
    return Facts("write", writes=tuple(operands(command.words[1:])))


def _mktemp(command: SimpleCommand) -> Facts:
    where = option_value(command, "-p", "--tmpdir")
    found = operands(command.words[1:], "p")
    if where is None and found and "/" in found[0].value:
        return Facts("write", writes=(found[0],))
    return Facts("write", writes=(where or Word("/tmp"),))


HANDLERS: dict[str, Handler] = {
    **dict.fromkeys(("rm", "rmdir", "unlink"), _all_written("", deletes=True)),
    "touch": _all_written("dtr"),
    "mkdir": _all_written("m"),
    "truncate": _all_written("sr"),
    **dict.fromkeys(("dos2unix", "unix2dos"), _all_written()),
    "mv": _all_written("tS"),
    **dict.fromkeys(("cp", "ln", "install"), _copy),
    **dict.fromkeys(("chmod", "chown", "chgrp"), _mode_first),
    "dd": _dd,
    "tee": _tee,
    "tar": _tar,
    "unzip": _unzip,
    "zip": _zip,
    **dict.fromkeys(("gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd"), _compress),
    "patch": _patch,
    "mktemp": _mktemp,
}
