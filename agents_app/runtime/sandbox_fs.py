"""What a sandboxed command sees of the host's files: an allowlist, not the host minus
some holes.

- the toolchain read-only: ``/usr``, and ``/bin``, ``/sbin``, ``/lib*`` as on the host
  (symbolic links into ``/usr`` stay links); ``SF_SANDBOX_RO_PATHS`` adds more (a
  toolchain under ``/opt``);
- a minimal ``/etc``: ``passwd`` and ``group`` naming only the sandbox's user, and a
  copy of the files programs need to run and to resolve names (``ETC_ALLOWED``), made
  again when one of them changes on the host; never ``shadow``, never another user's
  file;
- the worktree read-write, with its ``.git`` file read-only;
- of the repository's ``.git`` only what ``git add``/``git commit`` in a linked
  worktree needs (``git_binds``);
- nothing else: no home directory (``$HOME`` is an empty tmpfs), no ``/srv``, ``/run``,
  ``/root``, ``/home``, ``/sys``, no other checkout, no SF data.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

SANDBOX_UID = 1000
SANDBOX_GID = 1000
SANDBOX_USER = "sandbox"
TOOLCHAIN = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_ALLOWED = (
    "alternatives",
    "bash.bashrc",
    "ca-certificates",
    "ca-certificates.conf",
    "debian_version",
    "gai.conf",
    "host.conf",
    "hostname",
    "hosts",
    "inputrc",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "locale.alias",
    "localtime",
    "magic",
    "mime.types",
    "nsswitch.conf",
    "os-release",
    "profile",
    "protocols",
    "python3",
    "python3.11",
    "resolv.conf",
    "services",
    "ssl/certs",
    "ssl/openssl.cnf",
    "timezone",
)

GITCONFIG = "[safe]\n\tdirectory = *\n"
_lock = threading.RLock()
_private: list[Path] = []
_etc_built: dict[str, tuple[tuple[object, ...], Path, float]] = {}
ETC_RECHECK_S = 1.0


def private_dir() -> Path:
    """A directory of this process for the sandbox's generated files (the seccomp
    program, passwd, group: nothing secret). Mode 0755: SF's ``bwrap`` may run as
    another user than SF (the tests run it as an ordinary user)."""
    with _lock:
        if _private and _private[0].is_dir():
            return _private[0]
        path = Path(tempfile.mkdtemp(prefix="sf-sandbox-"))
        path.chmod(0o755)
        _private[:] = [path]
        atexit.register(shutil.rmtree, path, ignore_errors=True)
        return path


def toolchain_binds(extra: Sequence[Path] = ()) -> list[str]:
    argv: list[str] = []
    for name in TOOLCHAIN:
        path = Path(name)
        if path.is_symlink():
            argv += ["--symlink", os.readlink(path), name]
        elif path.is_dir():
            argv += ["--ro-bind", name, name]
    for path in extra:
        if path.exists():
            argv += ["--ro-bind", str(path), str(path)]
    return argv


def etc_dir(home: Path | None) -> Path:
    """A minimal ``/etc`` for ``home``: a copy of the allowed host files, with passwd and
    group made up, bound read-only as one directory (one mount, not thirty). Made again
    when an allowed host file changed (its modification time or size; ``resolv.conf``
    rewritten by DHCP, say), which is looked at once per ``ETC_RECHECK_S`` at most."""
    home_text = str(home) if home is not None else "/tmp"
    with _lock:
        built = _etc_built.get(home_text)
        if built is not None and time.monotonic() < built[2] and built[1].is_dir():
            return built[1]
        signature = (home_text, *_etc_signature())
        if built is not None and built[0] == signature and built[1].is_dir():
            _etc_built[home_text] = (signature, built[1], time.monotonic() + ETC_RECHECK_S)
            return built[1]
        where = Path(tempfile.mkdtemp(prefix="etc-", dir=private_dir()))
        where.chmod(0o755)
        for name in ETC_ALLOWED:
            _copy_into(Path("/etc") / name, where / name)
        passwd, group = _identity(home_text)
        (where / "passwd").write_text(passwd, encoding="utf-8")
        (where / "group").write_text(group, encoding="utf-8")
        # The worktree is SF's user's, not the sandbox's (as root, bwrap runs as
        # another user, sandbox_user): git in the sandbox works in it all the same
        # (GIT_CONFIG_SYSTEM names this file for a git built with another path).
        (where / "gitconfig").write_text(GITCONFIG, encoding="utf-8")
        # A copy made before stays until the process ends: a running command has it
        # bound as its /etc.
        _etc_built[home_text] = (signature, where, time.monotonic() + ETC_RECHECK_S)
        return where


def _etc_signature() -> list[tuple[str, int, int]]:
    signature = []
    for name in ETC_ALLOWED:
        try:
            found = (Path("/etc") / name).stat()
        except OSError:
            continue
        signature.append((name, found.st_mtime_ns, found.st_size))
    return signature


def _copy_into(source: Path, target: Path) -> None:
    """A file's content (links followed), a directory's tree (links kept: they point
    into ``/usr``); nothing when the host has no such entry."""
    try:
        if source.is_dir():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copytree(source, target, symlinks=True)
        elif source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            target.chmod(0o644)
    except OSError:  # unreadable: left out, as on a host without it
        return


def _identity(home_text: str) -> tuple[str, str]:
    passwd = (
        f"{SANDBOX_USER}:x:{SANDBOX_UID}:{SANDBOX_GID}:SF sandbox:{home_text}:/bin/bash\n"
        "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
    )
    group = f"{SANDBOX_USER}:x:{SANDBOX_GID}:\nnogroup:x:65534:\n"
    return passwd, group


def hidden_binds(hidden: Sequence[Path], visible: Sequence[Path]) -> list[str]:
    """An empty tmpfs over each hidden path that lies inside something made visible
    (SF's data directory inside an ``expose``d folder)."""
    argv: list[str] = []
    for path in sorted({p.resolve() for p in hidden}, key=lambda p: len(p.parts)):
        if path.is_dir() and any(path.is_relative_to(seen) for seen in visible):
            argv += ["--tmpfs", str(path)]
    return argv


# --- git ------------------------------------------------------------------------------

# ``HEAD`` too: the writable ref directories are the branch's it names, so a command
# that moved it would choose what the next command may write (every branch, or
# through a planted link any directory of the host).
ADMIN_READ_ONLY = ("HEAD", "commondir", "gitdir", "config.worktree")
# Not the main checkout's HEAD: git in a linked worktree reads its own (one mount less
# per command, and the main checkout's branch is not the command's business).
COMMON_READ_ONLY = ("config", "packed-refs", "shallow", "info", "hooks", "refs")


_git_built: dict[tuple[Path, bool], tuple[object, Path, object, tuple[str, ...]]] = {}


def git_binds(worktree: Path, *, writable: bool = True) -> list[str]:
    """``_git_binds`` of ``worktree``, made again when its ``.git`` file or its branch
    (the admin directory's ``HEAD``) changed, or a directory it binds is gone.
    ``writable=False``: every git directory read-only (an MCP server's)."""
    dotgit = _stat_of(worktree / ".git")
    with _lock:
        built = _git_built.get((worktree, writable))
    if built is not None and built[0] == dotgit and built[2] == _stat_of(built[1]):
        sources = built[3][1::3]  # every bind is (--bind or --ro-bind, source, target)
        if all(os.path.exists(source) for source in sources):
            return list(built[3])
    admin = _gitdir_of(worktree / ".git") if (worktree / ".git").is_file() else None
    head = (admin or worktree / ".git") / "HEAD"
    head_seen = _stat_of(head)  # before the binds are made from it
    argv = _git_binds(worktree, "--bind" if writable else "--ro-bind")
    with _lock:
        _git_built[(worktree, writable)] = (dotgit, head, head_seen, tuple(argv))
    return argv


def _stat_of(path: Path) -> tuple[int, int, int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_ino, found.st_mtime_ns, found.st_size


def _git_binds(worktree: Path, bind: str) -> list[str]:
    """What git in ``worktree`` needs: of the repository's ``.git`` the objects, its
    refs and config read-only, the worktree's admin directory and its branch's ref
    directory writable; the ``.git`` file and the admin files that say where the
    repository is (``commondir``, ``gitdir``, ``config.worktree``) read-only."""
    dotgit = worktree / ".git"
    if dotgit.is_dir():  # a main checkout: all of it is writable but hooks and config
        if bind == "--ro-bind":
            return ["--ro-bind", str(dotgit), str(dotgit)]
        return [
            arg
            for name in ("hooks", "config")
            if (dotgit / name).exists()
            for arg in ("--ro-bind", str(dotgit / name), str(dotgit / name))
        ]
    if not dotgit.is_file():
        return []
    admin = _gitdir_of(dotgit)
    if admin is None:
        return ["--ro-bind", str(dotgit), str(dotgit)]
    common = _common_dir(admin)
    argv = []
    for name in COMMON_READ_ONLY:
        if (common / name).exists():
            argv += ["--ro-bind", str(common / name), str(common / name)]
    writable = [common / "objects", admin]
    branch = _branch_of(admin)
    if branch:
        # The directory of the branch's loose ref and of its reflog: git writes
        # ``<ref>.lock`` beside the ref, then renames it over.
        writable += [(common / "refs/heads" / branch).parent]
        writable += [(common / "logs/refs/heads" / branch).parent]
    for path in writable:
        argv += [bind, str(_real_dir(common, path)), str(path)]
    for name in ADMIN_READ_ONLY:
        if (admin / name).exists():
            argv += ["--ro-bind", str(admin / name), str(admin / name)]
    return [*argv, "--ro-bind", str(dotgit), str(dotgit)]


def _real_dir(top: Path, path: Path) -> Path:
    """``path``, a directory under ``top`` made where missing, refused when any part of
    it from ``top`` on is a symbolic link (one a command planted in a writable
    directory: bwrap would resolve it on the host for the source, in the sandbox for
    the target, and bind a host directory of the command's choosing there)."""
    at = top
    for part in path.relative_to(top).parts:
        at = at / part
        with contextlib.suppress(FileExistsError):
            os.mkdir(at)
        if at.is_symlink() or not at.is_dir():
            raise SandboxGitError(f"{at} is not a plain directory (a link a command left?)")
    return path


class SandboxGitError(OSError):
    """A git directory the sandbox would make writable is not as git made it."""


def _gitdir_of(dotgit: Path) -> Path | None:
    text = dotgit.read_text(encoding="utf-8", errors="replace").strip()
    if not text.startswith("gitdir:"):
        return None
    admin = Path(text.removeprefix("gitdir:").strip())
    admin = (dotgit.parent / admin).resolve()
    return admin if admin.is_dir() else None


def _common_dir(admin: Path) -> Path:
    pointer = admin / "commondir"
    if not pointer.is_file():
        return admin
    return (admin / pointer.read_text(encoding="utf-8").strip()).resolve()


def _branch_of(admin: Path) -> str:
    head = (admin / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
    ref = head.removeprefix("ref: ").strip() if head.startswith("ref: ") else ""
    if not ref.startswith("refs/heads/") or ".." in ref.split("/"):
        return ""
    return ref.removeprefix("refs/heads/")
