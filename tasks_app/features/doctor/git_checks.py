"""The doctor's git checks: orphaned worktrees and ``sf/*`` branches, and lock files
left in the projects' repositories by a git that died.

A task's worktree and branch (``engine/worktrees.py``) live while the task may still
need them: every task not done, cancelled or skipped keeps its current attempt's (a
failed task's stay for a person to look at). Anything else under
``SF_DATA_DIR/worktrees/<project>/`` or named ``sf/…`` in the repository is an orphan:
a crash between the merge and the cleanup, a plan deleted, an attempt superseded.
The fix removes it the way the engine would (its files and admin directory, without
running git on them; ``git branch -D``), and its audit row keeps the branch's commit,
so ``git branch NAME SHA`` brings it back.

Per host: each host looks at its own ``SF_DATA_DIR`` and, for a project with a
repository of record, its own mirror (``workspaces.project_repo``). A tree of a live
task is never an orphan, whichever host runs the task now; a host without the mirror
(the web, a worker that never ran the project) has nothing to say about it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from agents_app.models import Project, RepositoryMoved
from sf_core.actors import Actor
from sf_core.doctor import Finding, RepairDone, Severity
from sf_core.git import GIT_LOCK_STALE_SECONDS, git, git_ok
from tasks_app.engine.worktrees import worktree_discard
from tasks_app.models import ACTIVE_MERGE_STATUSES, MergeRequest, Task, TaskStatus
from tasks_app.workspaces import project_repo, workspace_for

FINISHED = (TaskStatus.DONE, TaskStatus.CANCELLED, TaskStatus.SKIPPED)


@dataclass
class Orphans:
    project: Project
    worktrees: list[Path] = field(default_factory=list)  # directories, maybe registered
    registrations: list[str] = field(default_factory=list)  # registered, directory gone
    branches: list[tuple[str, str]] = field(default_factory=list)  # (branch, commit)

    def __bool__(self) -> bool:
        return bool(self.worktrees or self.registrations or self.branches)


def _projects() -> list[Project]:
    """Projects whose repository is where it was registered: one whose path now resolves
    elsewhere (a swapped symlink) is ``projects.repository``'s error, and no fix of
    this module may delete branches or worktrees in whatever it points to."""
    return [p for p in Project.objects.order_by("pk") if _in_place(p)]


def _in_place(project: Project) -> bool:
    try:
        return Path(project_repo(project), ".git").exists()
    except RepositoryMoved:
        return False


def project_orphans(project: Project) -> Orphans:
    live_paths, live_branches = _live(project)
    found = Orphans(project)
    data = Path(settings.SF_DATA_DIR)
    roots = [data / "worktrees" / str(project.pk), data / "merge" / str(project.pk)]
    for root in roots:
        if root.is_dir():
            found.worktrees += [p for p in sorted(root.iterdir()) if p not in live_paths]
    for path in _registered(project):
        inside = any(path.is_relative_to(root) for root in roots)
        if inside and not path.exists():
            found.registrations.append(str(path))
    refs = git(
        "for-each-ref",
        "--format=%(refname:short) %(objectname)",
        "refs/heads/sf/",
        cwd=project_repo(project),
    )
    for line in refs.splitlines():
        branch, _, commit = line.partition(" ")
        if branch not in live_branches:
            found.branches.append((branch, commit))
    return found


def _live(project: Project) -> tuple[set[Path], set[str]]:
    tasks = Task.objects.filter(plan__session__project=project).exclude(status__in=FINISHED)
    paths: set[Path] = set()
    branches: set[str] = set()
    for plan_id, key, attempt in tasks.values_list("plan_id", "key", "branch_attempt"):
        ws = workspace_for(
            repo=project_repo(project),
            project_id=project.pk,
            plan_id=plan_id,
            key=key,
            base=project.base_branch,
            attempt=attempt,
        )
        paths.add(ws.path)
        branches.add(ws.branch)
    merges = MergeRequest.objects.filter(project=project, status__in=ACTIVE_MERGE_STATUSES)
    data = Path(settings.SF_DATA_DIR)
    paths |= {
        data / "merge" / str(project.pk) / f"m{pk}" for pk in merges.values_list("pk", flat=True)
    }
    return paths, branches


def _registered(project: Project) -> list[Path]:
    listing = git("worktree", "list", "--porcelain", cwd=project_repo(project))
    return [
        Path(line[len("worktree ") :])
        for line in listing.splitlines()
        if line.startswith("worktree ")
    ]


def worktrees_check() -> list[Finding]:
    findings: list[Finding] = []
    for project in _projects():
        found = project_orphans(project)
        name = project.name
        pk = project.pk
        findings += [
            _finding(f"project {name}: orphaned worktree {p}", str(p), pk) for p in found.worktrees
        ]
        findings += [
            _finding(f"project {name}: worktree {p} is registered but gone", p, pk)
            for p in found.registrations
        ]
        findings += [
            _finding(f"project {name}: branch {b} belongs to no live task", f"{b} at {c}", pk)
            for b, c in found.branches
        ]
    return findings


def _finding(message: str, target: str, project_id: int) -> Finding:
    return Finding(
        severity=Severity.WARNING,
        message=message,
        evidence=[target],
        fixable=True,
        target=target,
        project_id=project_id,
    )


def worktrees_fix(actor: Actor) -> list[RepairDone]:
    """Worktrees first (git will not delete a branch checked out in one), then the
    stale registrations, then the branches. Each acts on what it finds now."""
    done: list[RepairDone] = []
    for project in _projects():
        found = project_orphans(project)
        repo = project_repo(project)
        for path in found.worktrees:
            worktree_discard(repo, path)  # never `git worktree remove`: it reads the tree
            done.append(RepairDone(target=str(path), action="orphaned worktree removed"))
        if found.registrations or found.worktrees:
            git("worktree", "prune", cwd=repo)
        done += [
            RepairDone(target=p, action="stale registration pruned") for p in found.registrations
        ]
        for branch, commit in found.branches:
            if git_ok("branch", "-D", branch, cwd=repo):
                action = f"orphaned branch deleted (was {commit}; git branch {branch} {commit})"
                done.append(RepairDone(target=f"{repo}: {branch}", action=action))
    return done


# --- lock files of a git that died ------------------------------------------------------


def _stale_locks() -> list[tuple[int, Path]]:
    """Lock files older than ``GIT_LOCK_STALE_SECONDS``: a live git holds one for one
    command; git never removes a dead one's (``sf_core.git``)."""
    now = time.time()
    found: list[tuple[int, Path]] = []
    for project in _projects():
        repo = project_repo(project)
        common = Path(git("rev-parse", "--git-common-dir", cwd=repo))
        gitdir = common if common.is_absolute() else repo / common
        candidates = [
            *gitdir.glob("*.lock"),
            *(gitdir / "refs").rglob("*.lock"),
            *gitdir.glob("worktrees/*/*.lock"),
        ]
        for lock in candidates:
            try:
                if now - lock.stat().st_mtime >= GIT_LOCK_STALE_SECONDS:
                    found.append((project.pk, lock))
            except FileNotFoundError:
                continue
    return sorted(found)


def git_locks_check() -> list[Finding]:
    return [
        Finding(
            severity=Severity.WARNING,
            message=f"git lock {lock} was left by a git that died",
            evidence=[f"{time.time() - lock.stat().st_mtime:.0f} s old"],
            fixable=True,
            target=str(lock),
            project_id=project_id,
        )
        for project_id, lock in _stale_locks()
    ]


def git_locks_fix(actor: Actor) -> list[RepairDone]:
    done = []
    for _, lock in _stale_locks():
        try:
            lock.unlink()
        except FileNotFoundError:
            continue
        done.append(RepairDone(target=str(lock), action="stale git lock removed"))
    return done
