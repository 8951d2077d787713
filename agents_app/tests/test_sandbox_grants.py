"""The sandbox user's ACL grants (``sandbox_user``, SF as root) are made again when a
directory changed, and only then: every command used to open and read the ACL of every
directory it binds writable and of the directories above that others may not search."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from agents_app.runtime import sandbox_acl
from agents_app.runtime.sandbox import CommandRun, SandboxPolicy, bwrap_problem
from agents_app.tests import sandbox_users
from agents_app.tests.sandbox_users import BWRAP
from conftest import make_git_repo

pytestmark = [
    pytest.mark.skipif(bool(bwrap_problem(BWRAP)), reason="bubblewrap is required"),
    pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox user is SF-as-root's"),
]


@pytest.fixture
def worktree() -> Iterator[Path]:
    """A linked worktree of a fresh repository on an SF-like branch."""
    sandbox_users.ensure_sandbox_user()
    for place in sandbox_users.shared_place():
        repo = make_git_repo(place / "repo")
        wt = place / "wt"
        subprocess.run(
            ["git", "worktree", "add", "-q", "-b", "sf/p1/k/1", str(wt)], cwd=repo, check=True
        )
        yield wt


def contained(wt: Path, command: str) -> CommandRun:
    return sandbox_users.contained("root", wt, command, SandboxPolicy(profile="normal"))


def test_a_grant_is_made_again_once_its_directory_changed(
    worktree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A directory whose ctime has not moved since SF's grant keeps it; a chmod resets
    # the ACL's mask (the named user gets nothing) and moves the ctime: granted again.
    contained(worktree, "true")  # the worktree's first command: whole trees granted
    contained(worktree, "true")  # the tops looked at again, their ctimes remembered
    granted: list[Path] = []
    original = sandbox_acl.grant_path

    def counted(path: Path, *args: int, **kwargs: bool) -> None:
        granted.append(path)
        original(path, *args, **kwargs)

    monkeypatch.setattr(sandbox_acl, "grant_path", counted)
    assert contained(worktree, "true").exit_code == 0
    assert granted == [], "nothing changed since the last command: nothing granted again"

    worktree.chmod(0o700)
    done = contained(worktree, "echo x > made.txt && echo y >> README.md")
    assert done.exit_code == 0, done.output
    assert granted == [worktree]
    assert (worktree / "made.txt").read_text() == "x\n"
