"""Git worktrees for tasks, checkpoints, and the fail-closed merge into the base branch.

Each attempt at a task works in its own worktree on branch
``sf/p<plan>/<task-key>/<attempt>``, under
``SF_DATA_DIR/worktrees/<project>/p<plan>-<task-key>-<attempt>``: two plans with the same
task key on one repository never share a branch, and a person's retry (a new attempt,
``Task.branch_attempt``) starts from a fresh branch off the base instead of the failed
tree. Automatic retries within one attempt keep working in the same tree. The worktree
and its branch go when the task is done (after a verified merge), cancelled, skipped
or retried. A merge never touches the
base branch unless it is certain: it is computed with ``git merge-tree`` (no
working tree involved), committed with ``commit-tree`` and published with a
compare-and-swap ``update-ref``. A conflict, an empty result or any error leaves
the base branch, the worktree and the task branch exactly as they were.
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from agents_app.models import Project
from sf_core.git import GitError, git, git_ok
from tasks_app.models import Task

logger = logging.getLogger("sf.merge")


@dataclass(frozen=True)
class Workspace:
    repo: Path
    path: Path
    branch: str
    base: str
    # Files written into the tree from secrets: never committed (worktree-environment.md).
    private: tuple[str, ...] = ()


def workspace_for(
    *,
    repo: str | Path,
    project_id: int,
    plan_id: int,
    key: str,
    base: str,
    attempt: int = 1,
    private: tuple[str, ...] = (),
) -> Workspace:
    name = f"p{plan_id}-{key}-{attempt}"
    path = Path(settings.SF_DATA_DIR) / "worktrees" / str(project_id) / name
    branch = f"sf/p{plan_id}/{key}/{attempt}"
    return Workspace(repo=Path(repo), path=path, branch=branch, base=base, private=private)


def workspace_of(task: Task) -> Workspace:
    """The workspace of ``task``'s current attempt (``Task.branch`` names its branch)."""
    project = Project.objects.get(pk=task.plan.session.project_id)
    return workspace_for(
        repo=project.repository(),  # resolved again: refused if a symlink moved it
        project_id=project.pk,
        plan_id=task.plan_id,
        key=task.key,
        base=project.base_branch,
        attempt=task.branch_attempt,
        private=tuple(f.path for f in project.parsed_policy.worktree.files),
    )


def worktree_ensure(ws: Workspace) -> Path:
    """Create the worktree (and its branch from the base) or reuse the existing one."""
    registration = _registration(ws)
    if registration is not None and UNFINISHED in registration:
        # A `git worktree add` killed before it finished (its worker killed, the OOM
        # killer) leaves the tree registered, locked "initializing", and maybe checked
        # out in part: committed as it is, the missing files would be deleted on merge.
        git("worktree", "remove", "--force", "--force", str(ws.path), cwd=ws.repo, check=False)
    elif (ws.path / ".git").exists() and registration is not None:
        return ws.path
    ws.path.parent.mkdir(parents=True, exist_ok=True)
    if ws.path.exists():
        shutil.rmtree(ws.path)  # a leftover from a crash before git registered it
    has_branch = git(
        "rev-parse", "--verify", "--quiet", f"refs/heads/{ws.branch}", cwd=ws.repo, check=False
    )
    add = ["worktree", "add", str(ws.path), ws.branch]
    if not has_branch:
        add = ["worktree", "add", "-b", ws.branch, str(ws.path), ws.base]
    try:
        git(*add, cwd=ws.repo)
    except GitError:
        # A registration left by a crash (its folder gone) refuses the path: prune and
        # try once more. Pruning first, every unit, cost a git process for nothing.
        git("worktree", "prune", cwd=ws.repo)
        git(*add, cwd=ws.repo)
    return ws.path


UNFINISHED = "locked initializing"  # how `git worktree list` shows one still being added


def _registered(ws: Workspace) -> bool:
    """Is ``ws.path`` a worktree of this repository (not a leftover of another one)?"""
    return _registration(ws) is not None


def _registration(ws: Workspace) -> list[str] | None:
    """The lines `git worktree list --porcelain` gives for ``ws.path`` (None: not one)."""
    listing = git("worktree", "list", "--porcelain", cwd=ws.repo)
    for block in listing.split("\n\n"):
        lines = block.strip().splitlines()
        if lines and lines[0] == f"worktree {ws.path.resolve()}":
            return lines
    return None


# Caches that running code or tests leaves behind are never part of a unit's work,
# whether or not the project's .gitignore lists them.
NEVER_COMMIT = (
    "**/__pycache__/**",
    "**/*.py[co]",
    "**/.pytest_cache/**",
    "**/.mypy_cache/**",
    "**/.ruff_cache/**",
)


def checkpoint_commit(ws: Workspace, message: str) -> str | None:
    """Commit everything the unit changed in its worktree; the new commit, or None."""
    excluded = [f":(exclude,glob){pattern}" for pattern in NEVER_COMMIT]
    excluded += [f":(exclude,literal){path}" for path in ws.private]
    git("add", "--all", "--", ".", *excluded, cwd=ws.path)
    if not git("diff", "--cached", "--name-only", cwd=ws.path):
        return None
    git(
        "-c",
        "user.name=SF",
        "-c",
        "user.email=sf@localhost",
        "commit",
        "--quiet",
        "--no-verify",
        "-m",
        message,
        cwd=ws.path,
    )
    return git("rev-parse", "HEAD", cwd=ws.path)


def checkpoint_patch(ws: Workspace) -> str:
    """The task branch's changes against the base, as one patch (``base...branch``:
    from their merge base, found by the same git process)."""
    return git("diff", "--binary", f"{ws.base}...{ws.branch}", "--", cwd=ws.repo)


@dataclass(frozen=True)
class MergeResult:
    merged: bool
    commit: str = ""  # the base branch's new head when merged (the candidate before)
    reason: str = ""  # why not, when not
    already: bool = False  # the branch was merged before (a repeated merge is a no-op)
    base_head: str = ""  # the base head the merge was computed on
    moved: bool = False  # refused only because the base branch moved meanwhile


def merge_into_base(ws: Workspace, *, commit: str | None, message: str) -> MergeResult:
    """Merge the task branch, which must contain the unit's ``commit``, fail-closed."""
    candidate = merge_compute(ws, commit=commit, message=message)
    if not candidate.merged or candidate.already:
        return candidate
    return merge_publish(ws, candidate, commit=commit or "")


def merge_compute(ws: Workspace, *, commit: str | None, message: str) -> MergeResult:
    """The merge commit of the task branch onto the current base head, not yet on the
    base branch (``commit`` of the result); or why there is none. Touches no ref."""
    if not commit:
        return MergeResult(merged=False, reason="the unit produced no changes (empty result)")
    try:
        return _compute(ws, commit, message)
    except GitError as exc:
        return MergeResult(merged=False, reason=str(exc))


def _compute(ws: Workspace, commit: str, message: str) -> MergeResult:
    heads = git("rev-parse", f"refs/heads/{ws.base}", f"refs/heads/{ws.branch}", cwd=ws.repo)
    base_head, branch_head = heads.splitlines()
    if git_ok("merge-base", "--is-ancestor", commit, base_head, cwd=ws.repo):
        return MergeResult(merged=True, commit=base_head, already=True, base_head=base_head)
    if not git_ok("merge-base", "--is-ancestor", commit, branch_head, cwd=ws.repo):
        return MergeResult(merged=False, reason=f"{ws.branch} no longer contains {commit[:12]}")
    tree = git(
        "merge-tree",
        "--write-tree",
        "--name-only",
        "--no-messages",
        base_head,
        branch_head,
        cwd=ws.repo,
        check=False,
    )
    lines = tree.splitlines()
    if len(lines) != 1:
        conflicts = ", ".join(lines[1:]) or "unknown files"
        return MergeResult(merged=False, reason=f"merge conflict in {conflicts}")
    merged = git(
        "-c",
        "user.name=SF",
        "-c",
        "user.email=sf@localhost",
        "commit-tree",
        lines[0],
        "-p",
        base_head,
        "-p",
        branch_head,
        "-m",
        message,
        cwd=ws.repo,
    )
    return MergeResult(merged=True, commit=merged, base_head=base_head)


def merge_publish(ws: Workspace, candidate: MergeResult, *, commit: str) -> MergeResult:
    """Move the base branch to ``candidate.commit`` with a compare-and-swap on the head
    it was computed on; ``moved`` when the base branch moved meanwhile (compute again)."""
    old, merged = candidate.base_head, candidate.commit
    try:
        checked_out = _base_checked_out(ws)
        if checked_out and _base_worktree_dirty(ws):
            return MergeResult(
                merged=False, reason=f"the checked-out {ws.base} has uncommitted changes"
            )
        # Compare-and-swap: fails if someone moved the base branch since we read it.
        if not git_ok("update-ref", f"refs/heads/{ws.base}", merged, old, cwd=ws.repo):
            now = git("rev-parse", f"refs/heads/{ws.base}", cwd=ws.repo)
            return MergeResult(
                merged=False, moved=now != old, reason=f"{ws.base} moved from {old[:12]}"
            )
        if not git_ok("merge-base", "--is-ancestor", commit, merged, cwd=ws.repo):
            return MergeResult(
                merged=False, reason="the merge commit does not contain the unit's commit"
            )
    except GitError as exc:
        return MergeResult(merged=False, reason=str(exc))
    # The base branch has moved: merged, whatever happens to the checked-out files now
    # (a failed refresh is caught up by the next merge, ``_catch_up_checked_out_base``).
    try:
        if checked_out:  # bring its files up to the new commit
            git("read-tree", "-m", "-u", old, merged, cwd=ws.repo)
    except GitError as exc:
        logger.warning("%s merged as %s; its checked-out files lag: %s", ws.branch, merged, exc)
    return MergeResult(merged=True, commit=merged, base_head=old)


def scratch_worktree_add(ws: Workspace, *, name: str, commit: str) -> Path:
    """A detached worktree of ``commit`` (a merge candidate) to verify it in."""
    path = ws.path.parent.parent.parent / "merge" / ws.path.parent.name / name
    if path.exists():
        scratch_worktree_remove(ws, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    git("worktree", "add", "--detach", "--quiet", str(path), commit, cwd=ws.repo)
    return path


def scratch_worktree_remove(ws: Workspace, path: Path) -> None:
    removed = path.exists() and git_ok("worktree", "remove", "--force", str(path), cwd=ws.repo)
    if not removed:  # its registration may be left behind: prune it
        shutil.rmtree(path, ignore_errors=True)
        git("worktree", "prune", cwd=ws.repo)


def _base_checked_out(ws: Workspace) -> bool:
    """Whether the repository has a work tree with the base branch checked out (its
    files must follow the base ref). One git process answers both questions."""
    answer = git(
        "rev-parse", "--is-bare-repository", "--symbolic-full-name", "HEAD", cwd=ws.repo
    ).splitlines()
    return answer == ["false", f"refs/heads/{ws.base}"]


def _base_worktree_dirty(ws: Workspace) -> bool:
    """The checked-out base branch's files differ from its head, and not only because
    an earlier merge moved the branch before refreshing them (caught up here)."""
    if not git("status", "--porcelain", "--untracked-files=no", cwd=ws.repo):
        return False
    return not _catch_up_checked_out_base(ws)


# How far back the checked-out files of the base branch may lag behind its head.
CATCH_UP_DEPTH = 20


def _catch_up_checked_out_base(ws: Workspace) -> bool:
    """The checked-out base differs from its head: if only because an earlier merge
    moved the branch and died (or failed) before refreshing the files — they are
    exactly an older commit of the branch, nothing changed on top — bring them up to
    the head. True if caught up; False for a person's uncommitted changes."""
    if not git_ok("diff", "--quiet", cwd=ws.repo):
        return False  # files changed in the working tree: a person's, never ours
    heads = git("rev-list", "--first-parent", "-n", str(CATCH_UP_DEPTH), "HEAD", cwd=ws.repo)
    for older in heads.splitlines()[1:]:
        if git_ok("diff", "--cached", "--quiet", older, cwd=ws.repo):
            git("read-tree", "-m", "-u", older, "HEAD", cwd=ws.repo)
            logger.warning("the checked-out %s lagged at %s; caught up", ws.base, older[:12])
            return True
    return False


def worktree_remove(ws: Workspace) -> None:
    """Remove the worktree and its branch, and check both are gone (raises ``GitError``
    otherwise). Called after a verified merge, and for a cancelled, skipped or retried
    task, whose unmerged work goes with it (its patch stays on its units)."""
    if ws.path.exists():
        # Twice forced: a tree whose `git worktree add` was killed is still locked.
        git("worktree", "remove", "--force", "--force", str(ws.path), cwd=ws.repo)
    else:  # gone without git knowing (a crash, a person): its registration goes too
        git("worktree", "prune", cwd=ws.repo)
    git("branch", "-D", ws.branch, cwd=ws.repo, check=False)
    if _registered(ws) or git(
        "rev-parse", "--verify", "--quiet", f"refs/heads/{ws.branch}", cwd=ws.repo, check=False
    ):
        raise GitError(f"could not remove the worktree {ws.path} or the branch {ws.branch}")
