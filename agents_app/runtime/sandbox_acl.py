"""POSIX ACL entries for the sandbox's host user (``sandbox_user``), written as the
kernel's ``system.posix_acl_access``/``system.posix_acl_default`` attributes (no
``setfacl`` program: one ``fsetxattr`` per file, on a descriptor opened without
following links).

Why ACLs, and not a chown of the worktree or a shared group: the worktree and the git
directories stay root's (SF's git, which runs as root and names ``GIT_DIR`` itself,
never sees a repository owned by someone else), and a file that SF's own git or tools
create there later gets the sandbox user's entry from the directory's *default* ACL,
whatever SF's umask: git creates files with mode 0666/0777 and the default ACL's mask
keeps ``rw`` for the named user. A chown would have to be done again after every file
SF writes; a group needs a umask of 002 in every process that writes there.
"""

from __future__ import annotations

import errno
import os
import stat
import struct
from collections.abc import Iterator
from pathlib import Path

ACCESS = "system.posix_acl_access"
DEFAULT = "system.posix_acl_default"
VERSION = 2
USER_OBJ, USER, GROUP_OBJ, GROUP, MASK, OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
UNDEFINED_ID = 0xFFFFFFFF
RWX, RW, RX, X = 7, 6, 5, 1
OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC

Entries = dict[tuple[int, int], int]  # (tag, id) -> permission bits


def encode(entries: Entries) -> bytes:
    body = b"".join(
        struct.pack("<HHI", tag, perm, ident) for (tag, ident), perm in sorted(entries.items())
    )
    return struct.pack("<I", VERSION) + body


def decode(raw: bytes) -> Entries:
    (version,) = struct.unpack_from("<I", raw)
    if version != VERSION:
        raise OSError(errno.EINVAL, f"POSIX ACL version {version}, not {VERSION}")
    entries: Entries = {}
    for offset in range(4, len(raw) - 7, 8):
        tag, perm, ident = struct.unpack_from("<HHI", raw, offset)
        entries[(tag, ident)] = perm
    return entries


def _read(fd: int, name: str) -> Entries | None:
    try:
        return decode(os.getxattr(fd, name))
    except OSError as exc:
        if exc.errno == errno.ENODATA:
            return None
        raise


def _with_user(base: Entries, uid: int, perm: int) -> Entries:
    """``base`` with the named user ``uid`` at ``perm`` and the mask widened to let
    every group-class entry have what it names (as ``setfacl -m`` does)."""
    entries = {key: value for key, value in base.items() if key[0] != MASK}
    entries[(USER, uid)] = perm
    mask = 0
    for (tag, _ident), value in entries.items():
        if tag in (USER, GROUP_OBJ, GROUP):
            mask |= value
    entries[(MASK, UNDEFINED_ID)] = mask
    return entries


def _from_mode(mode: int) -> Entries:
    return {
        (USER_OBJ, UNDEFINED_ID): (mode >> 6) & 7,
        (GROUP_OBJ, UNDEFINED_ID): (mode >> 3) & 7,
        (OTHER, UNDEFINED_ID): mode & 7,
    }


def grant_fd(fd: int, uid: int, perm: int, *, default: bool = False) -> None:
    """Add ``uid`` with ``perm`` to the file's access ACL (and, for a directory with
    ``default``, to its default ACL at ``rwx``, which what is made in it inherits)."""
    mode = os.fstat(fd).st_mode
    current = _read(fd, ACCESS) or _from_mode(mode)
    wanted = _with_user(current, uid, perm)
    if wanted != current:  # the mask too: a chmod since sets it from the group bits
        os.setxattr(fd, ACCESS, encode(wanted))
    if default and stat.S_ISDIR(mode):
        inherited = _read(fd, DEFAULT) or _from_mode(stat.S_IMODE(mode) | 0o700)
        wanted = _with_user(inherited, uid, RWX)
        if wanted != inherited:
            os.setxattr(fd, DEFAULT, encode(wanted))


def has_default(path: Path, uid: int) -> bool:
    """Whether the directory's default ACL already gives ``uid`` everything (the mark
    that a tree was granted: its files made since inherit the entry)."""
    try:
        fd = os.open(path, OPEN_DIR)
    except OSError:
        return False
    try:
        return (_read(fd, DEFAULT) or {}).get((USER, uid)) == RWX
    finally:
        os.close(fd)


def grant_tree(top: Path, uid: int) -> None:
    """``uid`` may do to everything under ``top`` what its owner may (a read-only file
    stays read-only), and to what is made there later. Walked by descriptors, never through
    a link (a process of the sandbox may be changing the tree: a link it swapped in is
    skipped, not followed); the top's default ACL last, the mark of a finished grant."""
    top_fd = os.open(top, OPEN_DIR)
    try:
        for fd, mode in _tree(top_fd):
            if fd == top_fd:
                continue
            try:
                grant_fd(fd, uid, (mode >> 6) & 7, default=True)
            finally:
                os.close(fd)
        grant_fd(top_fd, uid, RWX, default=True)
    finally:
        os.close(top_fd)


def _tree(top_fd: int) -> Iterator[tuple[int, int]]:
    """Open descriptors (the caller closes them) of every directory and regular file
    under ``top_fd``, children first; links, devices, FIFOs and sockets skipped."""
    for name in os.listdir(top_fd):
        try:
            found = os.stat(name, dir_fd=top_fd, follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(found.st_mode):
            try:
                fd = os.open(name, OPEN_DIR, dir_fd=top_fd)
            except OSError:
                continue
            try:
                yield from _tree(fd)
            except BaseException:
                os.close(fd)
                raise
            yield fd, found.st_mode
        elif stat.S_ISREG(found.st_mode):
            try:
                fd = os.open(name, OPEN_FILE, dir_fd=top_fd)
            except OSError:
                continue
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                os.close(fd)
                continue
            yield fd, found.st_mode


def grant_path(path: Path, uid: int, perm: int, *, default: bool = False) -> None:
    """``grant_fd`` on one directory, opened without following a link."""
    fd = os.open(path, OPEN_DIR)
    try:
        grant_fd(fd, uid, perm, default=default)
    finally:
        os.close(fd)
