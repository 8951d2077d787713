"""The repository of record on a git remote, and this worker host's mirror of it.

A project whose policy names ``record.url`` (``agents_app.schemas.RecordPolicy``) is
worked on by hosts that share no disk: the remote holds the truth (the base branch and
every attempt's branch), and each host keeps a mirror of it under its own
``SF_DATA_DIR/mirrors/<project>`` with its worktrees beside it (``workspaces``). Then:

- **before a unit** (``unit_sync``) the host fetches the base branch and the task's
  branches into the mirror; a task branch the remote has moved past this host's (a
  unit ran elsewhere since, the merge queue sent the task back) replaces it, and the
  stale worktree goes; one this host is ahead of (a checkpoint not pushed yet) stays;
- **after a checkpoint** (``branch_push``) the attempt's branch is pushed, before the
  task goes on to review: nothing the next unit or the merge queue needs stays on the
  host that made it. A push refused because the remote moved on is this unit being
  superseded: a system fault (``GitError``), the task runs again from the remote;
- **the merge queue** (``merge_sync`` before each computation, ``base_publish`` for the
  compare-and-swap) fetches, merges, verifies and pushes the base with
  ``--force-with-lease=<base>:<the head it merged onto>``: a push that loses a race is
  "moved" (the queue fetches, computes and verifies again), never a second merge; a
  merge that landed before its row said so (a host killed after the push) is found
  already contained in the base by the next run (``merge_compute``'s ``already``).

Hosts on one machine share the mirror between their processes: a flock on
``<mirror>.lock`` keeps two fetches (or a fetch and a push) from writing the same refs.
The mirror is an ordinary repository with an empty work tree and its ``HEAD`` on a
branch nobody uses, so the base branch is never "checked out" in it. The mirror, its
lock, and the tree of the record's base that planning and skills read
(``project_tree``) are ``agents_app.mirrors``: below the apps that read them.
"""

from __future__ import annotations

import logging

from agents_app.mirrors import FETCHED, mirror_ensure, mirror_locked
from sf_core.git import GitError, git, git_ok
from tasks_app.engine.worktrees import MergeResult, worktree_discard, worktree_remove
from tasks_app.workspaces import Workspace

logger = logging.getLogger("sf.record")


def _fetch(ws: Workspace) -> None:
    """The remote's base branch and every attempt's branch of the task, as they are now
    (``--prune``: a branch deleted there is forgotten here)."""
    family = ws.branch.rpartition("/")[0]  # sf/p<plan>/<key>: every attempt
    git(
        "fetch",
        "--quiet",
        "--no-tags",
        "--prune",
        ws.remote,
        f"+refs/heads/{ws.base}:{FETCHED}{ws.base}",
        f"+refs/heads/{family}/*:{FETCHED}{family}/*",
        cwd=ws.repo,
        remote=True,
    )


def _ref(ws: Workspace, name: str) -> str | None:
    found = git("rev-parse", "--verify", "--quiet", name, cwd=ws.repo, check=False)
    return found or None


def _sync(ws: Workspace, *, keep_ahead: bool) -> None:
    mirror_ensure(ws.repo)
    with mirror_locked(ws.repo):
        _fetch(ws)
        base = _ref(ws, f"{FETCHED}{ws.base}")
        if base is None:
            raise GitError(f"the repository of record {ws.remote} has no branch {ws.base}")
        git("update-ref", f"refs/heads/{ws.base}", base, cwd=ws.repo)
        remote = _ref(ws, f"{FETCHED}{ws.branch}")
        local = _ref(ws, f"refs/heads/{ws.branch}")
        if remote is None or remote == local:
            return
        ahead = local is not None and git_ok(
            "merge-base", "--is-ancestor", remote, local, cwd=ws.repo
        )
        if keep_ahead and ahead:
            return  # a checkpoint of this host's not pushed yet: pushed after the unit
        if local is not None:  # the remote moved past (or away from) this host's tree
            logger.info("%s moved on the record: this host's worktree goes", ws.branch)
            worktree_discard(ws.repo, ws.path)
        git("update-ref", f"refs/heads/{ws.branch}", remote, cwd=ws.repo)


def unit_sync(ws: Workspace) -> None:
    """Before a unit: the mirror fetched, the task's branch as the record has it."""
    if ws.remote:
        _sync(ws, keep_ahead=True)


def merge_sync(ws: Workspace) -> None:
    """Before the merge queue computes a merge: the base and the branch as the record
    has them (the unit that went to review pushed its last checkpoint)."""
    if ws.remote:
        _sync(ws, keep_ahead=False)


def _push(ws: Workspace, *args: str) -> None:
    git("push", "--quiet", "--no-verify", *args, cwd=ws.repo, remote=True)


def branch_push(ws: Workspace) -> None:
    """Push the attempt's branch to the record (a fast-forward, or refused: a unit
    elsewhere moved it on, and this one is superseded). ``GitError`` when not pushed."""
    if not ws.remote:
        return
    with mirror_locked(ws.repo):
        _push(ws, ws.remote, f"refs/heads/{ws.branch}:refs/heads/{ws.branch}")


def commit_push(ws: Workspace, commit: str) -> None:
    """Fast-forward the record's task branch to ``commit`` (the merged tree a failed
    verification sends back), best effort: the next unit's sync takes what is there."""
    if not ws.remote:
        return
    try:
        with mirror_locked(ws.repo):
            _push(ws, ws.remote, f"{commit}:refs/heads/{ws.branch}")
    except GitError as exc:
        logger.warning("%s: the merged tree was not pushed to the record: %s", ws.branch, exc)


def base_publish(ws: Workspace, candidate: MergeResult, *, commit: str) -> MergeResult:
    """Move the record's base branch to the verified ``candidate`` by compare-and-swap
    on the head it was computed on (``--force-with-lease``); ``moved`` when the record's
    base moved meanwhile (fetch, compute and verify again)."""
    old, merged = candidate.base_head, candidate.commit
    if not git_ok("merge-base", "--is-ancestor", commit, merged, cwd=ws.repo):
        reason = "the merge commit does not contain the unit's commit"
        return MergeResult(merged=False, reason=reason)
    lease = f"--force-with-lease=refs/heads/{ws.base}:{old}"
    with mirror_locked(ws.repo):
        try:
            _push(ws, lease, ws.remote, f"{merged}:refs/heads/{ws.base}")
        except GitError as exc:
            _fetch(ws)
            now = _ref(ws, f"{FETCHED}{ws.base}")
            if now is not None and now != old:  # lost the race (or won it unheard)
                reason = f"{ws.base} moved from {old[:12]} on the record"
                return MergeResult(merged=False, moved=True, reason=reason)
            return MergeResult(merged=False, reason=str(exc))
        git("update-ref", f"refs/heads/{ws.base}", merged, cwd=ws.repo)
    return MergeResult(merged=True, commit=merged, base_head=old)


def workspace_remove(ws: Workspace) -> None:
    """Remove the attempt's worktree and branch: here, and (record mode) this host's
    copy and the record's branch, if this host has a mirror (the web may have none: a
    branch left on the record belongs to no live task and is harmless)."""
    if not ws.remote:
        worktree_remove(ws)
        return
    if not (ws.repo / ".git").is_dir():
        return
    worktree_remove(ws)
    try:
        with mirror_locked(ws.repo):
            _push(ws, ws.remote, f":refs/heads/{ws.branch}")
    except GitError as exc:
        logger.warning("%s stays on the record: %s", ws.branch, exc)
