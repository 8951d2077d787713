"""What is neither a plain file nor a directory under a git directory (``planted_links``
in ``sf_core.git``), found without reading every directory again each time.

The walk runs before each point where SF's git acts on a worktree (three times a unit),
over ``refs``, ``logs``, the admin directory and ``objects`` two levels down: 258
directories and every loose object of the repository, a cost that grew with the
repository (7 ms at 5,000 loose objects on an idle 2-core machine, 17 ms loaded).

What makes it cheap without trusting a command: a directory's entries (names, and the
inode each name leads to) cannot change without the kernel setting the directory's
``ctime``, and no process but one with the power to set the clock can set a ``ctime``
(``utimensat`` sets ``atime``/``mtime`` only, and sets ``ctime`` to now doing so). So a
directory read and found clean is remembered with its device, inode, ``ctime`` and
``mtime``; while ``lstat`` still gives the same four, its entries are the ones read, and
only its subdirectories are looked at again (each remembered on its own). A directory
changed since — a link planted in it, a file renamed over, an entry removed — has a new
``ctime`` and is read again.

The one way a change keeps the ``ctime``: the kernel stamps times from a coarse clock
(one tick, 1 to 10 ms; a second on some file systems), so a change in the same tick as the
one before the ``lstat`` looks like none. As git does for its index ("racily clean"
entries), a directory whose ``ctime`` is less than ``RACY_NS`` before the walk began is
read every time and never remembered: a change made after the ``lstat`` is stamped
later than that. Assumed: a local file system (an NFS client's attribute cache may show
an old ``ctime``) and a clock not stepped back by more than ``RACY_NS`` (only root can).
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

# Longer than any file system's timestamp granularity that SF supports (ext4, xfs,
# btrfs, tmpfs stamp with a tick of the kernel's coarse clock; ext3 by the second).
RACY_NS = 2_000_000_000
MAX_REMEMBERED = 200_000  # directories; forgotten all at once past it (a few MB)

Key = tuple[int, int, int, int]  # st_dev, st_ino, st_ctime_ns, st_mtime_ns
_clean: dict[str, tuple[Key, tuple[str, ...]]] = {}


def odd_entries(root: Path, depth: int) -> list[Path]:
    """Entries under ``root``, ``depth`` levels down at most, that are not plain files or
    directories (links, FIFOs, sockets, devices); links are not followed (``root``
    itself is, as ``os.scandir`` does)."""
    return _odd(str(root), depth, time.time_ns() - RACY_NS, top=True)


def _odd(path: str, depth: int, settled: int, *, top: bool = False) -> list[Path]:
    try:
        seen = os.stat(path) if top else os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return []
    if not stat.S_ISDIR(seen.st_mode):
        # A directory swapped for something else after its parent was read: odd, unless
        # it is the root (a root that is not a directory holds nothing, as before).
        return [] if top else [Path(path)]
    key = (seen.st_dev, seen.st_ino, seen.st_ctime_ns, seen.st_mtime_ns)
    remembered = _clean.get(path)
    if remembered is not None and remembered[0] == key:
        odd: list[Path] = []
        subdirs = remembered[1]
    else:
        odd, subdirs = read_dir(path)
        if not odd and seen.st_ctime_ns < settled:
            _remember(path, key, subdirs)
    if depth > 1:
        for name in subdirs:
            odd += _odd(os.path.join(path, name), depth - 1, settled)
    return odd


def read_dir(path: str) -> tuple[list[Path], tuple[str, ...]]:
    """The odd entries of one directory and the names of its subdirectories."""
    odd: list[Path] = []
    subdirs: list[str] = []
    try:
        entries = list(os.scandir(path))
    except (FileNotFoundError, NotADirectoryError):
        return odd, ()
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            subdirs.append(entry.name)
        elif not entry.is_file(follow_symlinks=False):
            odd.append(Path(entry.path))
    return odd, tuple(subdirs)


def _remember(path: str, key: Key, subdirs: tuple[str, ...]) -> None:
    if len(_clean) >= MAX_REMEMBERED:
        _clean.clear()
    _clean[path] = (key, subdirs)


def forget() -> None:
    """Forget every directory read (tests; nothing else needs it)."""
    _clean.clear()
