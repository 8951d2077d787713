"""Running git: one helper so every call has the same environment, timeout and errors.

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
from pathlib import Path

from sf_core.errors import SfError

GIT_TIMEOUT_SECONDS = 120
# Far longer than any one command SF runs holds a lock (a checkout of a large tree
# included), short enough that a lock left by a dead git costs one wait, not a task.
GIT_LOCK_STALE_SECONDS = 30.0
LOCK_POLL_SECONDS = 0.5
_LOCKED = re.compile(r"Unable to create '([^']+\.lock)': File exists")
logger = logging.getLogger("sf.git")


class GitError(SfError):
    """A git command failed; the message carries git's own words."""


def git(
    *args: str, cwd: str | Path, check: bool = True, timeout: float = GIT_TIMEOUT_SECONDS
) -> str:
    """Run ``git args`` in ``cwd`` and return its stdout (stripped of the final newline)."""
    # Past this, a lock still in the way is renewed by a live git: give up with its error.
    deadline = time.monotonic() + GIT_LOCK_STALE_SECONDS + 5 * LOCK_POLL_SECONDS
    while True:
        result = _run(args, cwd, timeout)
        lock = _lock_in_the_way(result, cwd)
        if lock is None or not _lock_cleared(lock, deadline):
            break
    if check and result.returncode != 0:
        detail = (result.stderr or result.stdout).strip().splitlines()
        raise GitError(f"git {' '.join(args)} failed: {_words(detail) or result.returncode}")
    return result.stdout.rstrip("\n")


def _words(lines: list[str]) -> str:
    """git's own reason: its ``fatal:`` or ``error:`` line (advice follows it, such as
    "remove the file manually to continue" after a lock), else its last line."""
    reasons = [line for line in lines if line.startswith(("fatal:", "error:"))]
    return reasons[0] if reasons else (lines[-1] if lines else "")


def _run(
    args: tuple[str, ...], cwd: str | Path, timeout: float
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "GIT_TERMINAL_PROMPT": "0",  # never wait for credentials
        "LC_ALL": "C",  # messages we can match
    }
    try:
        return subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError as exc:
        raise GitError(f"cannot run git in {cwd}: {exc}") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {' '.join(args)} timed out after {timeout:g}s") from None


def _lock_in_the_way(result: subprocess.CompletedProcess[str], cwd: str | Path) -> Path | None:
    """The lock file a failed command could not create (git's words, ``LC_ALL=C``)."""
    if result.returncode == 0:
        return None
    found = _LOCKED.search(result.stderr or "")
    return None if found is None else Path(cwd) / found.group(1)


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


def repository_check(path: str, branch: str) -> None:
    """Raise ``SfError`` unless ``path`` is an absolute path to a git work tree with ``branch``."""
    if not os.path.isabs(path):
        raise SfError(f"repository path must be absolute, got {path!r}")
    if not os.path.isdir(path):
        raise SfError(f"repository path {path} does not exist or is not a directory")
    if git("rev-parse", "--is-inside-work-tree", cwd=path, check=False) != "true":
        raise SfError(f"{path} is not a git work tree (run `git init` there first)")
    if not git("rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", cwd=path, check=False):
        raise SfError(f"{path} has no branch {branch!r}")


def git_ok(*args: str, cwd: str | Path) -> bool:
    """Whether ``git args`` exits 0 (for questions such as ``merge-base --is-ancestor``)."""
    try:
        git(*args, cwd=cwd)
    except GitError:
        return False
    return True
