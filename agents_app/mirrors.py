"""What this host reads of a project: the registered checkout, or (record mode) its own
mirror of the repository of record.

In single-host mode every process sees the registered ``repo_path``. A project whose
policy names ``record.url`` is worked on by hosts that share no disk (docs/deploy.md):
a worker host may not have ``repo_path`` at all, and the web host's copy is whatever a
person last pulled. So whatever reads the project's files outside a task's worktree —
the planner's repository map and instruction files, the plan lint, the repository's
skills — reads ``project_tree``: in record mode, a tree of the record's base branch as
fetched just now into this host's mirror (``SF_DATA_DIR/mirrors/<project>``), and the
board's merge-conflict hints read the branches of ``record_branches``.

Kept here, below the apps that read it (skills_app, tasks_app's planning and engine),
with the mirror itself: ``tasks_app.engine.record`` fetches and pushes the task
branches through the same mirror and lock.

A tree is checked out once per base commit, into ``<mirror>.trees/<commit>`` (or
``<commit>-<part>`` for one folder; built aside, then renamed into place), and never
changed after: a planner reading one while
another process fetches a newer base is never shown half of each. Trees older than the
newest few are removed after ``TREE_KEPT_SECONDS``.
"""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings

from agents_app.models import Project
from sf_core.git import Checkout, GitError, git, git_ok, new_repository

logger = logging.getLogger("sf.record")
MIRROR_HEAD = "refs/heads/sf-mirror/unused"  # the mirror's HEAD: a branch never made
FETCHED = "refs/sf-record/heads/"  # what the remote had when this host last fetched
TREES_KEPT = 3  # the newest base trees kept whatever their age
TREE_KEPT_SECONDS = 3600  # an older tree goes after this long (a reader is long done)
# The board asks for the record's branches on every render: fetched at most this often
# per process (a hint a few seconds late is still a hint; a fetch is a round trip).
BRANCHES_MAX_AGE_SECONDS = 10.0
_BRANCHES_FETCHED: dict[int, float] = {}


def mirror_path(project_id: int) -> Path:
    """This host's mirror of a project's repository of record."""
    return Path(settings.SF_DATA_DIR) / "mirrors" / str(project_id)


@contextmanager
def mirror_locked(repo: Path) -> Iterator[None]:
    """This host's processes one at a time on the mirror's refs (fetch, push, trees)."""
    with open(repo.with_name(f"{repo.name}.lock"), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def mirror_ensure(repo: Path) -> None:
    """Make this host's mirror (an empty repository) unless it is there."""
    if (repo / ".git").is_dir():
        return
    repo.parent.mkdir(parents=True, exist_ok=True)
    with mirror_locked(repo):
        if (repo / ".git").is_dir():
            return
        building = repo.with_name(f"{repo.name}.new")
        shutil.rmtree(building, ignore_errors=True)
        building.mkdir()
        git("init", "--quiet", cwd=new_repository(building))
        git("symbolic-ref", "HEAD", MIRROR_HEAD, cwd=building)
        os.rename(building, repo)


def fetched_ref(repo: Path, branch: str) -> str | None:
    """The commit the record's ``branch`` had at this host's last fetch."""
    found = git("rev-parse", "--verify", "--quiet", f"{FETCHED}{branch}", cwd=repo, check=False)
    return found or None


def project_tree(project: Project, *, part: str = "") -> Path:
    """The tree to read for ``project`` on this host: the registered checkout in
    single-host mode; in record mode the record's base branch, fetched first, checked
    out under this host's data directory — only its folder ``part`` (at the same path
    in the tree) when that is all the caller reads: the skills before every unit need
    ``.agents/skills``, not a checkout of the whole repository after every merge.
    ``GitError`` when the record cannot be fetched or has no such branch (a stale tree
    would be read as the truth)."""
    record = project.parsed_policy.record
    if record is None:
        return project.repository()  # resolved again: refused if a symlink moved it
    repo = mirror_path(project.pk)
    mirror_ensure(repo)
    base = project.base_branch
    with mirror_locked(repo):
        git(
            "fetch", "--quiet", "--no-tags", record.url,
            f"+refs/heads/{base}:{FETCHED}{base}", cwd=repo, remote=True,
        )  # fmt: skip
        commit = fetched_ref(repo, base)
        if commit is None:
            raise GitError(f"the repository of record {record.url} has no branch {base}")
        name = f"{commit}-{part.strip('/').replace('/', '-')}" if part else commit
        tree = repo.with_name(f"{repo.name}.trees") / name
        if not tree.is_dir():
            _tree_build(repo, commit, tree, part.strip("/"))
    _trees_prune(tree)
    return tree


def _tree_build(repo: Path, commit: str, tree: Path, part: str) -> None:
    """Check ``commit`` (or only its folder ``part``) out at ``tree``, under the mirror's
    lock: the mirror's index is used, and emptied first (an entry left from the last
    tree would look up to date, and its file would not be written here)."""
    building = tree.with_name(f"{tree.name}.new")
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir(parents=True)
    aside = Checkout(work_tree=building, git_dir=repo / ".git", common_dir=repo / ".git")
    git("read-tree", "--empty", cwd=aside)
    if not part:
        git("read-tree", "--reset", "-u", commit, cwd=aside)
    elif git_ok("rev-parse", "--verify", "--quiet", f"{commit}:{part}", cwd=repo):
        git("read-tree", f"--prefix={part}/", f"{commit}:{part}", cwd=aside)
        git("checkout-index", "--all", "--force", f"--prefix={building}/", cwd=aside)
    os.rename(building, tree)


def _trees_prune(current: Path) -> None:
    """Remove the base trees beyond the newest ``TREES_KEPT`` once they are old."""
    try:
        trees = sorted(
            (p for p in current.parent.iterdir() if p.is_dir() and p != current),
            key=lambda p: p.stat().st_mtime,
            reverse=True,
        )
    except OSError:
        return
    now = time.time()
    for old in trees[TREES_KEPT - 1 :]:
        try:
            if now - old.stat().st_mtime > TREE_KEPT_SECONDS:
                shutil.rmtree(old, ignore_errors=True)
        except OSError:
            continue


def record_branches(project: Project) -> tuple[Path, dict[str, str]]:
    """This host's mirror and every branch of the record by name (its commit), fetched
    at most every ``BRANCHES_MAX_AGE_SECONDS`` per process; ``GitError`` when the
    record cannot be fetched."""
    record = project.parsed_policy.record
    assert record is not None, "record_branches is for a project in record mode"
    repo = mirror_path(project.pk)
    mirror_ensure(repo)
    last = _BRANCHES_FETCHED.get(project.pk)
    if last is None or time.monotonic() - last > BRANCHES_MAX_AGE_SECONDS:
        with mirror_locked(repo):
            git(
                "fetch", "--quiet", "--no-tags", "--prune", record.url,
                f"+refs/heads/*:{FETCHED}*", cwd=repo, remote=True,
            )  # fmt: skip
        _BRANCHES_FETCHED[project.pk] = time.monotonic()
    listed = git("for-each-ref", "--format=%(objectname) %(refname)", FETCHED, cwd=repo)
    heads = {}
    for line in listed.splitlines():
        commit, _, ref = line.partition(" ")
        heads[ref.removeprefix(FETCHED)] = commit
    return repo, heads
