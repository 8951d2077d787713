"""Running git: one helper so every call has the same environment, timeout and errors."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from sf_core.errors import SfError

GIT_TIMEOUT_SECONDS = 120


class GitError(SfError):
    """A git command failed; the message carries git's own words."""


def git(
    *args: str, cwd: str | Path, check: bool = True, timeout: float = GIT_TIMEOUT_SECONDS
) -> str:
    """Run ``git args`` in ``cwd`` and return its stdout (stripped of the final newline)."""
    env = {
        **os.environ,
        "GIT_TERMINAL_PROMPT": "0",  # never wait for credentials
        "LC_ALL": "C",  # messages we can match
    }
    try:
        result = subprocess.run(
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
    if check and result.returncode != 0:
        detail = (result.stderr or result.stdout).strip().splitlines()
        raise GitError(
            f"git {' '.join(args)} failed: {detail[-1] if detail else result.returncode}"
        )
    return result.stdout.rstrip("\n")


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
