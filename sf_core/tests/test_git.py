"""A lock file left behind by a git that died does not stop SF's git commands; a lock
a live git holds is waited for, never broken."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from sf_core import git as git_module
from sf_core.git import GitError, git


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    (path / "a.txt").write_text("a\n")
    subprocess.run(["git", "add", "a.txt"], cwd=path, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "a"],
        cwd=path,
        check=True,
    )
    return path


def left_behind(lock: Path, age_s: float) -> Path:
    """A lock file as a git killed ``age_s`` seconds ago left it."""
    lock.write_text("")
    then = time.time() - age_s
    os.utime(lock, (then, then))
    return lock


def test_a_stale_index_lock_is_removed_and_the_command_runs(repo: Path) -> None:
    lock = left_behind(repo / ".git" / "index.lock", age_s=git_module.GIT_LOCK_STALE_SECONDS + 5)
    (repo / "b.txt").write_text("b\n")

    git("add", "b.txt", cwd=repo)

    assert not lock.exists()
    assert git("diff", "--cached", "--name-only", cwd=repo) == "b.txt"


def test_a_stale_ref_lock_does_not_stop_a_compare_and_swap(repo: Path) -> None:
    head = git("rev-parse", "HEAD", cwd=repo)
    tree = git("rev-parse", "HEAD^{tree}", cwd=repo)
    # SF's git reads no global config: the identity is given, as SF's merges give it.
    identity = ("-c", "user.name=t", "-c", "user.email=t@e")
    child = git(*identity, "commit-tree", tree, "-p", head, "-m", "b", cwd=repo)
    lock = left_behind(repo / ".git" / "refs" / "heads" / "main.lock", age_s=3600)

    git("update-ref", "refs/heads/main", child, head, cwd=repo)

    assert git("rev-parse", "refs/heads/main", cwd=repo) == child
    assert not lock.exists()


def test_a_lock_a_live_git_holds_is_waited_for_not_removed(repo: Path) -> None:
    lock = left_behind(repo / ".git" / "index.lock", age_s=0)
    removed_by_holder = threading.Event()

    def holder_finishes() -> None:
        time.sleep(1.0)
        lock.unlink()
        removed_by_holder.set()

    threading.Thread(target=holder_finishes).start()
    (repo / "b.txt").write_text("b\n")
    started = time.monotonic()

    git("add", "b.txt", cwd=repo)

    assert removed_by_holder.is_set(), "the command waited for the holder"
    assert time.monotonic() - started >= 0.9


def test_a_fresh_lock_left_behind_is_removed_once_it_is_stale(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(git_module, "GIT_LOCK_STALE_SECONDS", 1.0)
    lock = left_behind(repo / ".git" / "index.lock", age_s=0)
    (repo / "b.txt").write_text("b\n")

    git("add", "b.txt", cwd=repo)

    assert not lock.exists()


def test_a_lock_renewed_past_the_deadline_fails_with_gits_words(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(git_module, "GIT_LOCK_STALE_SECONDS", 0.6)
    monkeypatch.setattr(git_module, "LOCK_POLL_SECONDS", 0.1)
    lock = repo / ".git" / "index.lock"
    stop = threading.Event()

    def live_git() -> None:  # a git that keeps taking the lock again
        while not stop.is_set():
            lock.write_text("")
            time.sleep(0.05)

    thread = threading.Thread(target=live_git)
    thread.start()
    try:
        with pytest.raises(GitError, match=r"index\.lock"):
            git("add", "a.txt", cwd=repo)
    finally:
        stop.set()
        thread.join()
