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
import os
from collections.abc import Callable, Sequence
from pathlib import Path

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


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
        file_fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
    finally:
        os.close(fd)
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
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        file_fd = os.open(name, flags, mode, dir_fd=fd)
    finally:
        os.close(fd)
    with os.fdopen(file_fd, "wb") as handle:
        if set_mode:
            os.fchmod(handle.fileno(), mode)
        if opened is not None:
            opened(handle.fileno())
        handle.write(data)
