"""Running git: one helper so every call has the same environment, timeout and errors.

Where git finds its files. SF never lets git discover a repository from the directory
it runs in: every call names the git directory and the work tree itself (``GIT_DIR``,
``GIT_WORK_TREE``, ``GIT_COMMON_DIR``), computed from SF's own records — a project's
repository path (``repository``) and, for a task's worktree, the admin directory git
keeps for it, ``<repo>/.git/worktrees/<name>`` (``linked_worktree``). A worktree's
``.git`` file and its admin directory are writable by the commands that run in it, so
git must not follow them to a git directory a command planted (its ``core.fsmonitor``,
its hooks). git still reads the admin directory's ``commondir`` for its refs, whatever
``GIT_COMMON_DIR`` says: the engine checks those files before it acts on a worktree
(``metadata_problems``; ``tasks_app.engine.worktrees``).

What git reads besides the repository: nothing. The environment is built, not
inherited (no ``GIT_*`` variable of the worker reaches git), the system and global
config are off (``GIT_CONFIG_NOSYSTEM``, ``GIT_CONFIG_GLOBAL=/dev/null``), and every
call overrides, on its command line, what could run a program: no fsmonitor, no hooks,
no ssh command, no transport (``protocol.allow=never``; a push to the forge's remote
opens https, ssh and file only: ``remote=True``). Nested repositories in a work tree
(``plans/r/.git`` with a config of its own) are never entered: submodules are not
recursed into, ``status`` and ``diff`` get ``--ignore-submodules=all``, and ``git add``
(which runs ``git status`` inside every nested repository it tracks, whatever the
config says) is refused on a worktree: ``stage_changes`` stages with ``update-index``.

A git killed in the middle of a command (``kill -9`` of a worker, the OOM killer, a
host lost) leaves its lock file behind (``index.lock``, ``refs/heads/main.lock``), and
git never removes one by itself: every later command that needs that lock fails with
"Unable to create '….lock': File exists" until a person deletes it. A live git holds
a lock for as long as its one command takes, so the helper waits for a lock in the way
and removes one older than ``GIT_LOCK_STALE_SECONDS``: a dead command's.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sf_core.errors import SfError
from sf_core.git_links import odd_entries

GIT_TIMEOUT_SECONDS = 120
# Far longer than any one command SF runs holds a lock (a checkout of a large tree
# included), short enough that a lock left by a dead git costs one wait, not a task.
GIT_LOCK_STALE_SECONDS = 30.0
LOCK_POLL_SECONDS = 0.5
_LOCKED = re.compile(r"Unable to create '([^']+\.lock)': File exists")
logger = logging.getLogger("sf.git")

# Overrides on every command line: the command scope wins over every config file, and
# git hands it down to any git it starts (a nested repository's included).
HARDENED = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "protocol.allow=never",
    "submodule.recurse=false",
    "diff.ignoreSubmodules=all",
    "status.submoduleSummary=false",
    "fetch.recurseSubmodules=false",
    "push.recurseSubmodules=no",
)
LOCAL_ONLY = ("core.sshCommand=",)  # no ssh at all, unless a remote is the point
REMOTE = ("protocol.https.allow=always", "protocol.ssh.allow=always", "protocol.file.allow=always")
# Of the worker's environment, git gets these and nothing else.
KEPT = ("PATH", "HOME", "TZ")
KEPT_FOR_REMOTE = ("SSH_AUTH_SOCK", "SSL_CERT_FILE", "SSL_CERT_DIR", "HTTPS_PROXY", "https_proxy")
FIXED_ENV = {
    "LC_ALL": "C",  # messages we can match
    "GIT_TERMINAL_PROMPT": "0",  # never wait for credentials
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_ATTR_NOSYSTEM": "1",
    # ~/.config/git/{ignore,attributes}: what SF commits depends on the repository only.
    "XDG_CONFIG_HOME": "/dev/null",
}
# Commands that look into every nested repository they track (``git add`` runs
# ``git status`` inside each one to see whether it is dirty, whatever the config says).
ENTERS_NESTED = ("add", "stash", "submodule")
GITLINK = "160000"


class GitError(SfError):
    """A git command failed; the message carries git's own words."""


@dataclass(frozen=True)
class Checkout:
    """A work tree and the git directories that hold it, as SF's records name them."""

    work_tree: Path
    git_dir: Path  # the repository's .git, or a linked worktree's admin directory
    common_dir: Path  # the repository's .git

    @property
    def linked(self) -> bool:
        return self.git_dir != self.common_dir


def repository(path: str | Path) -> Checkout:
    """The main checkout of the repository at ``path``: its ``.git`` directory. A
    ``.git`` file (a linked worktree, a separate git dir) is refused: it is what a
    command in a worktree can rewrite."""
    top = Path(path)
    dotgit = top / ".git"
    if not dotgit.is_dir():
        what = "a .git file, not a directory" if dotgit.exists() else "no .git directory"
        raise GitError(f"{top} is not a git work tree: it has {what}")
    return Checkout(work_tree=top, git_dir=dotgit, common_dir=dotgit)


def new_repository(path: str | Path) -> Checkout:
    """Where ``git init`` at ``path`` makes a repository (its ``.git`` need not exist)."""
    top = Path(path)
    return Checkout(work_tree=top, git_dir=top / ".git", common_dir=top / ".git")


def linked_worktree(repo: str | Path, path: str | Path) -> Checkout:
    """The worktree SF made at ``path`` of the repository at ``repo``: git keeps it in
    ``<repo>/.git/worktrees/<name of path>`` (SF's names never collide)."""
    common = repository(repo).common_dir.resolve()
    tree = Path(path).resolve()
    return Checkout(work_tree=tree, git_dir=common / "worktrees" / tree.name, common_dir=common)


def git(
    *args: str,
    cwd: str | Path | Checkout,
    check: bool = True,
    timeout: float = GIT_TIMEOUT_SECONDS,
    remote: bool = False,
    stdin: str | None = None,
) -> str:
    """Run ``git args`` on ``cwd`` (a main checkout's path, or a ``Checkout``) and return
    its stdout (stripped of the final newline). ``remote``: the command talks to a
    remote (a push), which opens the transports a remote needs."""
    try:
        checkout = cwd if isinstance(cwd, Checkout) else repository(cwd)
        argv, env = command(args, checkout, remote=remote)
    except GitError:
        if check:
            raise
        return ""
    # Past this, a lock still in the way is renewed by a live git: give up with its error.
    deadline = time.monotonic() + GIT_LOCK_STALE_SECONDS + 5 * LOCK_POLL_SECONDS
    while True:
        result = _run(argv, env, checkout.work_tree, timeout, stdin, shown=args)
        lock = _lock_in_the_way(result, checkout.work_tree)
        if lock is None or not _lock_cleared(lock, deadline):
            break
    if check and result.returncode != 0:
        detail = (result.stderr or result.stdout).strip().splitlines()
        raise GitError(f"git {' '.join(args)} failed: {_words(detail) or result.returncode}")
    return result.stdout.rstrip("\n")


def command(
    args: tuple[str, ...], checkout: Checkout, *, remote: bool = False
) -> tuple[list[str], dict[str, str]]:
    """The argv and the whole environment of ``git args`` on ``checkout``."""
    subcommand = _subcommand(args)
    if checkout.linked and subcommand in ENTERS_NESTED:
        raise GitError(
            f"git {subcommand} is not run on a worktree: it enters the nested "
            "repositories a command left there (stage with sf_core.git.stage_changes)"
        )
    overrides = HARDENED + (REMOTE if remote else LOCAL_ONLY)
    argv = ["git", *(arg for item in overrides for arg in ("-c", item))]
    argv += _with_submodules_ignored(args, subcommand)
    kept = KEPT + (KEPT_FOR_REMOTE if remote else ())
    env = {name: os.environ[name] for name in kept if name in os.environ}
    env |= FIXED_ENV | {
        "GIT_DIR": str(checkout.git_dir),
        "GIT_WORK_TREE": str(checkout.work_tree),
        "GIT_COMMON_DIR": str(checkout.common_dir),
    }
    return argv, env


def _subcommand(args: tuple[str, ...]) -> str:
    """The git command in ``args``, after the ``-c name=value`` options before it."""
    at = 0
    while at < len(args) and args[at] == "-c":
        at += 2
    return args[at] if at < len(args) else ""


def _with_submodules_ignored(args: tuple[str, ...], subcommand: str) -> list[str]:
    """``status`` and ``diff`` with ``--ignore-submodules=all`` (a ``.gitmodules`` in
    the tree can turn the config's off), and ``diff`` without external drivers."""
    extra = {
        "status": ["--ignore-submodules=all"],
        "diff": ["--ignore-submodules=all", "--no-ext-diff", "--no-textconv"],
    }.get(subcommand)
    if not extra:
        return list(args)
    at = args.index(subcommand) + 1
    return [*args[:at], *extra, *args[at:]]


def _words(lines: list[str]) -> str:
    """git's own reason: its ``fatal:`` or ``error:`` line (advice follows it, such as
    "remove the file manually to continue" after a lock), else its last line."""
    reasons = [line for line in lines if line.startswith(("fatal:", "error:"))]
    return reasons[0] if reasons else (lines[-1] if lines else "")


def _run(
    argv: list[str],
    env: dict[str, str],
    cwd: Path,
    timeout: float,
    stdin: str | None,
    *,
    shown: tuple[str, ...],
) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            argv,
            cwd=cwd,
            env=env,
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise GitError(f"cannot run git in {cwd}: {exc}") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {' '.join(shown)} timed out after {timeout:g}s") from None


def _lock_in_the_way(result: subprocess.CompletedProcess[str], cwd: Path) -> Path | None:
    """The lock file a failed command could not create (git's words, ``LC_ALL=C``)."""
    if result.returncode == 0:
        return None
    found = _LOCKED.search(result.stderr or "")
    return None if found is None else cwd / found.group(1)


def _lock_cleared(lock: Path, deadline: float) -> bool:
    """Wait for ``lock`` a moment, or remove it if a dead git left it; True to try the
    command again, False when a live git keeps it past ``deadline``."""
    try:
        age = time.time() - lock.stat().st_mtime
    except FileNotFoundError:
        return True  # its git finished meanwhile
    if age >= GIT_LOCK_STALE_SECONDS:
        try:
            lock.unlink()
        except FileNotFoundError:
            return True
        logger.warning("removed %s: a lock %.0f s old, left by a git that died", lock, age)
        return True
    if time.monotonic() >= deadline:
        return False
    time.sleep(min(LOCK_POLL_SECONDS, GIT_LOCK_STALE_SECONDS - age + 0.01))
    return True


# --- a worktree: staging its changes, and what a command changed in its metadata ------


def stage_changes(checkout: Checkout, pathspec: Sequence[str] = (".",)) -> bool:
    """Stage every change under ``pathspec`` as ``git add --all`` would, without entering
    a nested repository: the paths ``status`` lists (it ignores them) are staged with
    ``update-index``; a nested repository is neither entered nor added. False when there
    was nothing to stage."""
    listing = git(
        "status",
        "--porcelain=v2",
        "-z",
        "--untracked-files=all",
        "--no-renames",
        "--",
        *pathspec,
        cwd=checkout,
    )
    paths = changed_paths(listing)
    if not paths:
        return False
    staged = "".join(f"{path}\0" for path in paths)
    git(
        "update-index",
        "--add",
        "--remove",
        "--replace",
        "-z",
        "--stdin",
        cwd=checkout,
        stdin=staged,
    )
    return True


# The fields before the path in ``status --porcelain=v2`` entries, by kind.
_FIELDS = {"1": 8, "2": 9, "u": 10}


def changed_paths(listing: str) -> list[str]:
    """The paths of a ``status --porcelain=v2 -z`` listing, less nested repositories
    (an untracked ``dir/`` is one) and gitlinks."""
    entries = iter(listing.split("\0"))
    paths: list[str] = []
    for entry in entries:
        if entry.startswith("? "):
            if not entry.endswith("/"):
                paths.append(entry[2:])
            continue
        fields = _FIELDS.get(entry[:1])
        if fields is None:
            continue
        parts = entry.split(" ", fields)
        if entry[0] == "2":
            next(entries, None)  # its original path
        modes = parts[3:7] if entry[0] == "u" else parts[3:6]
        if GITLINK not in modes and not parts[2].startswith("S"):
            paths.append(parts[-1])
    return paths


def metadata_problems(
    checkout: Checkout, *, missing_ok: bool = False, links: bool = True
) -> list[str]:
    """How a linked worktree's ``.git`` file and admin files differ from what
    ``git worktree add`` wrote: where they point is SF's to say, and no config of its
    own. Each problem is a sentence; none when all is as SF made it. ``missing_ok``: a
    file that is gone is no problem (a worktree a crash left half made). ``links``:
    ``planted_links`` too (False when the caller looked just before)."""
    admin = checkout.git_dir
    pointers = (
        (checkout.work_tree / ".git", "gitdir: ", admin, "its .git file"),
        (admin / "gitdir", "", checkout.work_tree / ".git", "its admin file gitdir"),
        (admin / "commondir", "", checkout.common_dir, "its admin file commondir"),
    )
    problems = []
    for path, prefix, expected, what in pointers:
        problem = _pointer_problem(path, prefix, expected, what)
        if problem and not (missing_ok and not os.path.lexists(path)):
            problems.append(problem)
    for name in ("config.worktree", "config"):
        if os.path.lexists(admin / name):
            problems.append(f"a {name} was written into its admin directory {admin}")
    problems += alternates_problems(checkout)
    for where, found in (planted_links(checkout) if links else {}).items():
        shown = ", ".join(str(path.relative_to(where)) for path in found[:3])
        more = f" and {len(found) - 3} more" if len(found) > 3 else ""
        problems.append(f"{where} holds a link or special file git did not make: {shown}{more}")
    return problems


def alternates_problems(checkout: Checkout) -> list[str]:
    """An ``objects/info/alternates`` (or ``http-alternates``) has git read objects from
    every directory it names, and ``objects/info`` is writable in the sandbox: one a
    command wrote would have SF's git read other repositories' objects (a tree forged
    here naming their blobs brings them into this task's patch). SF cannot tell one a
    person made (``git clone --shared``), so it works on no repository that has one."""
    info = checkout.common_dir / "objects" / "info"
    return [
        f"{info / name} names object directories of other repositories for git to read "
        "(SF works on no repository with alternates: a command can write one; remove it "
        "if no person made it, or `git repack -a -d` first if one did)"
        for name in ("alternates", "http-alternates")
        if os.path.lexists(info / name)
    ]


def planted_links(checkout: Checkout) -> dict[Path, list[Path]]:
    """What is neither a plain file nor a directory in the git directories a sandboxed
    command may write — the admin directory, ``refs``, ``logs`` and ``objects`` (its
    top two levels: loose objects are written by name, never through a link) — by the
    directory holding it. git writes through a link there (a reflog appended to, a
    new object written into a linked folder): any file or folder of the host, written
    with SF's rights. git itself makes none of these. A directory unchanged since it was
    last found clean is not read again (``sf_core.git_links``: its ``ctime`` says so)."""
    found: dict[Path, list[Path]] = {}
    common = checkout.common_dir
    roots = [(common / "refs", 99), (common / "logs", 99), (common / "objects", 2)]
    if checkout.linked:
        roots.append((checkout.git_dir, 99))
    for root, depth in roots:
        odd = odd_entries(root, depth)
        if odd:
            found[root] = odd
    return found


def _pointer_problem(path: Path, prefix: str, expected: Path, what: str) -> str:
    if path.is_symlink() or not path.is_file():
        shown = "is gone" if not os.path.lexists(path) else "is no longer a plain file"
        return f"{what} {path} {shown}"
    with open(path, "rb") as handle:
        text = handle.read(4096).decode("utf-8", errors="replace").rstrip("\n")
    value = text.removeprefix(prefix) if text.startswith(prefix) else ""
    target = os.path.normpath(os.path.join(path.parent, value)) if value else ""
    if target != os.path.normpath(expected):
        return f"{what} points at {value or text!r}, not at {expected}"
    return ""


def repository_check(path: str, branch: str) -> None:
    """Raise ``SfError`` unless ``path`` is an absolute path to a git work tree with ``branch``."""
    if not os.path.isabs(path):
        raise SfError(f"repository path must be absolute, got {path!r}")
    if not os.path.isdir(path):
        raise SfError(f"repository path {path} does not exist or is not a directory")
    try:
        repository(path)
    except GitError as exc:
        raise SfError(f"{exc} (run `git init` there first)") from None
    if git("rev-parse", "--is-inside-work-tree", cwd=path, check=False) != "true":
        raise SfError(f"{path} is not a git work tree (run `git init` there first)")
    if not git("rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", cwd=path, check=False):
        raise SfError(f"{path} has no branch {branch!r}")


def git_ok(*args: str, cwd: str | Path | Checkout) -> bool:
    """Whether ``git args`` exits 0 (for questions such as ``merge-base --is-ancestor``)."""
    try:
        git(*args, cwd=cwd)
    except GitError:
        return False
    return True
