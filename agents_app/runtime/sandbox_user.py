"""The host user bwrap runs as when SF runs as root (``SF_SANDBOX_USER``, by default
``sf-sandbox``, a system user scripts/setup.sh creates).

bwrap maps the sandbox's uid to the uid that started it. Started by root, a command's
files and processes were the host's root's to the kernel's permission checks, without
any capability: it could ``chmod 0 /dev/null`` (the host's device node, bound into its
``/dev``), write any root-owned file bound writable, and rewrite root's sysctls. Started
as this user, the command is that unprivileged user on the host: a file it may change is
one the user may change. SF stays root; only bwrap and what runs in it change user
(``setpriv``, util-linux, after the wrapper has moved the process into the command's
cgroups, which needs root; supplementary groups cleared).

What the user needs, granted with POSIX ACLs (``sandbox_acl``) when a command's binds
are made, and nothing more:

- write: the worktree (once per worktree, then inherited by what is made in it), the
  worktree's admin directory and its branch's ref and reflog directories; in
  ``objects`` each fan-out directory (``00``..``ff``, ``pack``, ``info``, all made
  beforehand; sticky, so that the repository's own objects cannot be removed) but not
  ``objects`` itself, so no command can plant an entry there that
  SF's git would write through (it writes loose objects by creating a new file in the
  fan-out directory, never through an existing one);
- search (``x``, not read) on the directories above every bound path that others may
  not search (``/root`` above a repository under root's home): bwrap resolves the
  sources as this user. Only bwraps SF starts run as this user, and what runs in them
  sees nothing of the host but the binds.

A directory whose ACL SF set is not set again while its ``ctime`` stays what it was
right after: a ``chmod`` (which resets the mask) or any ACL change moves it. This cache
can only withhold a grant, never give one: at worst (a change in the same tick of the
kernel's clock as SF's grant) a command lacks access and fails, closed. Sparing the
``open``/``getxattr`` of every bound path's directories, every command (~1 ms).

When SF is not root nothing changes: bwrap runs as SF's own user. When the user is
missing (no ``useradd`` at set-up), ``sf.W015`` says so and bwrap runs as root as
before, with a warning in the log; so does a file system without ACLs.
"""

from __future__ import annotations

import logging
import os
import pwd
import stat
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from django.conf import settings

from agents_app.runtime import sandbox_acl as acl

logger = logging.getLogger("sf.sandbox")

SETPRIV = "/usr/bin/setpriv"
FANOUT = (*(f"{n:02x}" for n in range(256)), "pack", "info")
_lock = threading.Lock()
_searchable: set[str] = set()
_granted: dict[str, tuple[int, int, int]] = {}  # path -> (st_dev, st_ino, st_ctime_ns)


@dataclass(frozen=True)
class HostUser:
    name: str
    uid: int
    gid: int


def host_user() -> HostUser | None:
    """Who bwrap runs as: None when SF is not root (SF's own user) or the dedicated
    user cannot be used (``host_user_problem`` says why)."""
    if os.geteuid() != 0:
        return None
    user, problem = _lookup(str(settings.SF_SANDBOX_USER))
    if problem:
        _warn(problem)
    return user


def host_user_problem() -> str:
    """Why commands run as root although SF is root ('' when they do not)."""
    if os.geteuid() != 0:
        return ""
    return _lookup(str(settings.SF_SANDBOX_USER))[1]


@cache
def _lookup(name: str) -> tuple[HostUser | None, str]:
    if not name:
        return None, "SF_SANDBOX_USER is empty"
    try:
        entry = pwd.getpwuid(int(name)) if name.isdigit() else pwd.getpwnam(name)
    except (KeyError, ValueError):
        return None, (
            f"there is no user {name!r} (SF_SANDBOX_USER) for the sandbox to run as; "
            "scripts/setup.sh creates it when run as root (useradd)"
        )
    if entry.pw_uid == 0 or entry.pw_gid == 0:
        return None, f"SF_SANDBOX_USER {name!r} is root (uid or gid 0)"
    if not os.access(SETPRIV, os.X_OK):
        return None, f"{SETPRIV} (util-linux) is missing"
    return HostUser(entry.pw_name, entry.pw_uid, entry.pw_gid), ""


@cache
def _warn(problem: str) -> None:
    logger.warning("sandboxed commands run as root on the host (sf.W015): %s", problem)


def run_as_argv(user: HostUser) -> list[str]:
    """What becomes ``user`` before it runs the rest of the command line."""
    return [SETPRIV, f"--reuid={user.uid}", f"--regid={user.gid}", "--clear-groups", "--"]


def sandbox_may_read(fd: int) -> None:
    """Let the sandbox's host user read and write the open file ``fd`` (a secret file
    SF wrote with mode 0600 for the worktree's commands); nothing when SF is not root."""
    user = host_user()
    if user is not None:
        acl.grant_fd(fd, user.uid, acl.RW)


def grant_binds(argv: Sequence[str], user: HostUser) -> None:
    """Let ``user`` resolve every bound path and write every writable one (see the
    module's text). ``OSError`` when the file system refuses ACLs."""
    binds = [
        (argv[at], Path(argv[at + 1]))
        for at in range(len(argv) - 2)
        if argv[at] in ("--bind", "--ro-bind")
    ]
    for kind, source in binds:
        _searchable_above(source, user.uid)
        if kind == "--bind":
            _writable(source, user.uid)


def _writable(source: Path, uid: int) -> None:
    if _still_granted(str(source)):
        return
    if acl.has_default(source, uid):  # granted before; the top again (a chmod since?)
        objects = source.name == "objects"
        acl.grant_path(source, uid, acl.RX if objects else acl.RWX, default=True)
        _remember_granted(str(source))
        return
    if source.name == "objects" and (source.parent / "HEAD").is_file():
        for name in FANOUT:  # made now: a command may not add entries to objects/
            (source / name).mkdir(exist_ok=True)
            _sticky_writable(source / name, uid)
        acl.grant_path(source, uid, acl.RX, default=True)  # the mark (default ACL) last
        return
    acl.grant_tree(source, uid)


def _sticky_writable(path: Path, uid: int) -> None:
    """``uid`` may add files to the directory ``path``, and remove only its own (the
    sticky bit): the repository's objects stay root's."""
    fd = os.open(path, acl.OPEN_DIR)
    try:
        os.fchmod(fd, stat.S_IMODE(os.fstat(fd).st_mode) | stat.S_ISVTX)
        acl.grant_fd(fd, uid, acl.RWX, default=True)
    finally:
        os.close(fd)


def _searchable_above(source: Path, uid: int) -> None:
    text = str(source)
    parts = text.split("/") if text.startswith("/") else []
    parents = ["/".join(parts[:end]) or "/" for end in range(1, len(parts))]
    for parent in parents or [str(path) for path in reversed(source.parents)]:
        if parent in _searchable or _still_granted(parent):
            continue
        if os.stat(parent).st_mode & 0o001:  # others may search it (looked at once)
            with _lock:
                _searchable.add(parent)
        else:  # the user gets x alone, again once a chmod reset the mask (its ctime)
            acl.grant_path(Path(parent), uid, acl.X)
            _remember_granted(parent)


def _still_granted(path: str) -> bool:
    """Whether ``path``'s ACL is the one SF set (its ``ctime`` has not moved since)."""
    remembered = _granted.get(path)
    if remembered is None:
        return False
    try:
        seen = os.stat(path)
    except OSError:
        return False
    return remembered == (seen.st_dev, seen.st_ino, seen.st_ctime_ns)


def _remember_granted(path: str) -> None:
    seen = os.stat(path)
    with _lock:
        if len(_granted) >= 100_000:
            _granted.clear()
        _granted[path] = (seen.st_dev, seen.st_ino, seen.st_ctime_ns)
