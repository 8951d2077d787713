"""Where a path lands: resolved against the worktree, and the places outside it that matter.

``resolve_path`` follows ``~``, ``..`` and symlinks the way a write would; the places
(the operating system's files, shell start-up and credential files, the temporary
directories) are what the harness and the built-in denies look for.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

_SYSTEM: tuple[str, ...] = tuple(
    str.split(
        "/etc /boot /usr /bin /sbin /lib /lib32 /lib64 /libx32 /sys /proc /root /var/lib "
        "/var/spool/cron"
    )
)
# Under the home directory: what runs at log-in, and keys and credentials.
_STARTUP: tuple[str, ...] = tuple(
    str.split(
        ".ssh .bashrc .bash_profile .bash_login .profile .zshrc .zprofile .zshenv .gitconfig "
        ".config/git .npmrc .pypirc .netrc .aws .kube .docker .gnupg .config/autostart "
        ".config/systemd .local/bin"
    )
)


@dataclass(frozen=True, slots=True)
class ResolvedPath:
    raw: str
    path: str  # absolute, with `~`, `..` and symlinks resolved
    inside: bool  # inside the worktree (a symlink pointing out counts as outside)
    relative: str | None  # posix path from the worktree root when inside ("." for the root)


def resolve_path(path: str, worktree: Path | str, cwd: str | None = None) -> ResolvedPath:
    """Resolve ``~``, ``..``, relative and symlinked parts of ``path`` against the worktree.

    ``os.path.realpath`` follows every existing symlink (dangling ones too), so a link in
    the worktree that points elsewhere resolves to where a write would really land.
    """
    root = real_root(str(worktree))
    expanded = expand_home(path)
    full = os.path.realpath(os.path.join(cwd or root, expanded))
    inside = within(full, root)
    relative = (full[len(root) :].lstrip(os.sep) or ".") if inside else None
    return ResolvedPath(path, full, inside, relative)


def expand_home(path: str) -> str:
    """``~`` and ``~user`` expanded; a name no user can have is left as written."""
    if not path.startswith("~"):
        return path
    try:
        return os.path.expanduser(path)
    except ValueError:  # the password database refuses a name with a NUL byte ("~\x00")
        return path


@lru_cache(maxsize=64)
def real_root(worktree: str) -> str:
    return os.path.realpath(worktree)


def within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def lexical_path(path: str, worktree: Path | str | None) -> str:
    """``path`` relative to the worktree when inside it, without following symlinks."""
    expanded = expand_home(path)
    if worktree is None:
        return os.path.normpath(expanded)
    root = os.path.normpath(os.path.abspath(str(worktree)))
    full = os.path.normpath(os.path.join(root, expanded))
    if full == root:
        return "."
    return full[len(root) + 1 :] if full.startswith(root + os.sep) else full


# -- places ----------------------------------------------------------------------------------------


def outside_harness(path: str) -> str:
    """The harness id of a write to ``path`` outside the worktree, or ""."""
    if any(path == p or path.startswith(p + "/") for p in _SYSTEM):
        return "write-system"
    home = os.path.expanduser("~")
    if any(path == f"{home}/{p}" or path.startswith(f"{home}/{p}/") for p in _STARTUP):
        return "write-startup"
    return ""


def root_like(path: str) -> bool:
    """/, a top-level directory, the home directory or its parent."""
    home = os.path.expanduser("~")
    return path.count("/") <= 1 or path in (home, os.path.dirname(home))


def temporary(path: str) -> bool:
    return any(path.startswith(t + "/") for t in _temp_dirs())


@lru_cache(maxsize=1)
def _temp_dirs() -> tuple[str, ...]:
    return tuple({"/tmp", "/var/tmp", os.path.realpath(tempfile.gettempdir())})
