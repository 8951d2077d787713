"""Reading and writing a file inside a worktree without following a link on the way.

SF's tools resolve a path (links included) and check that it is inside the worktree,
then open it. A sandboxed process running at the same time — an MCP server started
from the worktree runs code the agent wrote — can swap a directory on that path for a
link between the check and the open: SF would then read or write, with its own rights
(root, as ``scripts/run.sh`` runs it), wherever the link points. These helpers open
the already resolved path one directory at a time from the worktree's root, none of
them a link (``O_NOFOLLOW``), the file itself not a link either: a path changed since
it was resolved fails with ``OSError`` instead of leading out.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a FIFO a command made at the name opens at once (or fails, ENXIO, for a
# writer without a reader) instead of holding SF's worker until someone opens the
# other end; ``_regular`` then refuses it. On a regular file it changes nothing.
_FILE = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


def _regular(fd: int, target: Path) -> None:
    """Close ``fd`` and fail unless it is a regular file (a FIFO, a socket)."""
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(target))


def directory_beneath(dir_fd: int, parts: Sequence[str], *, make: bool = False) -> int:
    """A new descriptor of the directory ``parts`` below the open directory ``dir_fd``
    (left open), each component opened without following a link (a linked directory
    fails with ELOOP) and made where missing when ``make``."""
    fd = os.dup(dir_fd)
    try:
        for part in parts:
            if make:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, dir_fd=fd)
            inner = os.open(part, _DIR, dir_fd=fd)
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


def _parent_fd(root: Path, target: Path, *, make: bool) -> tuple[int, str]:
    """A descriptor of ``target``'s directory, reached from ``root`` without a link
    (made where missing when ``make``), and ``target``'s name in it."""
    parts = target.relative_to(root).parts
    if not parts:
        raise IsADirectoryError(f"{target} is the worktree itself")
    root_fd = os.open(root, _DIR)
    try:
        return directory_beneath(root_fd, parts[:-1], make=make), parts[-1]
    finally:
        os.close(root_fd)


def read_beneath(root: Path, target: Path, limit: int) -> bytes:
    """Up to ``limit`` bytes of ``target`` (inside ``root``, already resolved)."""
    fd, name = _parent_fd(root, target, make=False)
    try:
        file_fd = os.open(name, os.O_RDONLY | _FILE, dir_fd=fd)
    finally:
        os.close(fd)
    _regular(file_fd, target)
    with os.fdopen(file_fd, "rb") as handle:
        return handle.read(limit)


def write_beneath(
    root: Path,
    target: Path,
    data: bytes,
    mode: int = 0o666,
    *,
    set_mode: bool = False,
    opened: Callable[[int], None] | None = None,
) -> None:
    """Write ``data`` to ``target`` (inside ``root``, already resolved), making its
    missing directories; ``mode`` for a new file (less the umask, or the directory's
    default ACL), and for an existing one with ``set_mode``; ``opened`` is called with
    the file's descriptor once its mode is set (to add an ACL entry)."""
    fd, name = _parent_fd(root, target, make=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _FILE
    try:
        file_fd = os.open(name, flags, mode, dir_fd=fd)
    finally:
        os.close(fd)
    _regular(file_fd, target)
    with os.fdopen(file_fd, "wb") as handle:
        if set_mode:
            os.fchmod(handle.fileno(), mode)
        if opened is not None:
            opened(handle.fileno())
        handle.write(data)


@contextlib.contextmanager
def walk_root(root: Path, target: Path) -> Iterator[str]:
    """A path of the directory ``target`` (inside ``root``, already resolved) as opened
    without a link on the way, for a walker that takes a path (``sf_native``'s grep and
    glob): ``/proc/self/fd/N``, valid inside the ``with``. The walker starts in that
    very directory, whatever replaces a directory of ``target``'s path meanwhile (it
    follows a link given as its root)."""
    root_fd = os.open(root, _DIR)
    try:
        fd = directory_beneath(root_fd, target.relative_to(root).parts)
    finally:
        os.close(root_fd)
    try:
        yield f"/proc/self/fd/{fd}"
    finally:
        os.close(fd)


def entries_beneath(root: Path, target: Path) -> list[tuple[str, bool]]:
    """The names in the directory ``target`` (inside ``root``, already resolved), each
    with whether it is a directory (a link to one counts, as ``ls -F`` shows it)."""
    with walk_root(root, target) as path, os.scandir(path) as entries:
        return [(entry.name, entry.is_dir()) for entry in entries]


def is_file_beneath(root: Path, target: Path) -> bool:
    """Whether ``target`` (inside ``root``) is a regular file reached without a link:
    a walk's result confirmed after the walk, which a swapped link could have led."""
    try:
        fd, name = _parent_fd(root, target, make=False)
    except OSError:
        return False
    try:
        return stat.S_ISREG(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
    except OSError:
        return False
    finally:
        os.close(fd)
