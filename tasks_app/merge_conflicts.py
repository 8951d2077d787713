"""Conflicts seen before merging: tasks waiting to merge into the same base branch whose
branches change the same files, and in Python files the same functions or classes.

What a branch changes is read from git (``git diff --name-only`` against its merge base
with the base branch), not from the plan's declared ``intent_claim``. Python symbols
come from the standard library's ``ast``: tree-sitter is installed in our environment
but only with its bash grammar (no ``tree-sitter-python``), and ``ast`` parses exactly
the Python the project runs. A symbol is changed when its definition (its syntax tree,
positions aside) differs between the merge base and the branch head, or exists on one
side only. Two tasks that ``depends_on`` orders (directly or through others) run one
after the other, so they are never flagged. A warning, not a lock: the merge queue
still verifies every merged tree.
"""

from __future__ import annotations

import ast
import functools
import logging
import os
import time
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from agents_app.mirrors import record_branches
from agents_app.models import Project
from sf_core.git import GitError, git
from tasks_app.models import Task, TaskStatus
from tasks_app.workspaces import workspace_for

logger = logging.getLogger("sf.board")
WAITING_TO_MERGE = (TaskStatus.REVIEW,)  # in review, or approved and queued


@dataclass(frozen=True)
class Conflict:
    first: Task
    second: Task
    files: list[str]
    symbols: list[str]  # "path:Qualified.name" changed on both branches

    def describe(self, other: Task) -> str:
        detail = ", ".join(self.files)
        if self.symbols:
            detail += f" (both change {', '.join(self.symbols)})"
        return f"{other.key}: {detail}"

    @property
    def warning(self) -> str:
        return f"{self.first.key} and {self.describe(self.second)}"


def python_symbols(source: str) -> dict[str, str]:
    """Top-level functions and classes and their methods, by qualified name, each with
    its definition's syntax tree (without positions). Unparseable source has none."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    found: dict[str, str] = {}

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = prefix + node.name
                found[name] = ast.dump(node, include_attributes=False)
                if isinstance(node, ast.ClassDef):
                    walk(node.body, name + ".")

    walk(tree.body, "")
    return found


def changed_symbols(old: str, new: str) -> set[str]:
    """The symbols whose definition differs between ``old`` and ``new`` source."""
    before, after = python_symbols(old), python_symbols(new)
    return {name for name in before.keys() | after.keys() if before.get(name) != after.get(name)}


@functools.lru_cache(maxsize=512)
def _changes(repo: str, merge_base: str, head: str) -> dict[str, frozenset[str]]:
    """Files a branch changes, each with its changed Python symbols. Cached: both
    commits are immutable, and the board asks again on every render."""
    changes: dict[str, frozenset[str]] = {}
    for path in git("diff", "--name-only", merge_base, head, cwd=repo).splitlines():
        symbols: frozenset[str] = frozenset()
        if path.endswith(".py"):
            old = git("show", f"{merge_base}:{path}", cwd=repo, check=False)
            new = git("show", f"{head}:{path}", cwd=repo, check=False)
            symbols = frozenset(changed_symbols(old, new))
        changes[path] = symbols
    return changes


@functools.lru_cache(maxsize=1024)
def _merge_base(repo: str, base: str, head: str) -> str | None:
    """The merge base of two commits (by id, so the answer never changes)."""
    try:
        return git("merge-base", base, head, cwd=repo)
    except GitError:
        return None


def branch_heads(repo: str) -> dict[str, str]:
    """Every local branch's commit, by branch name: one ``git for-each-ref`` for the
    whole repository, where the board used to run two git commands per task. Kept
    while the refs on disk are unchanged: a process per board render cost more (a fork)
    than the rest of the merge-conflict check."""
    stamp = _refs_stamp(Path(repo))
    cached = _HEADS.get(repo)
    if stamp is not None and cached is not None and cached[0] == stamp:
        return cached[1]
    heads = _branch_heads(repo)
    # A folder's time moves in clock ticks (a few ms): a change in the same tick as the
    # last one would look like no change, so refs that just moved are not kept.
    if stamp is not None and time.time_ns() - max(stamp) > SETTLED_NS:
        _HEADS[repo] = (stamp, heads)
    return heads


SETTLED_NS = 100_000_000  # 0.1 s
_HEADS: dict[str, tuple[tuple[int, ...], dict[str, str]]] = {}


def _refs_stamp(repo: Path) -> tuple[int, ...] | None:
    """When the branches last changed: git writes a ref through a lock file renamed
    into place, so every change touches its folder under refs/heads (or packed-refs).
    None where refs are not plain files (a reftable repository): no caching."""
    git_dir, heads = repo / ".git", repo / ".git" / "refs" / "heads"
    try:
        stamps = [os.stat(heads).st_mtime_ns, len(os.listdir(heads))]
        for folder, children, _ in os.walk(heads):
            stamps += [os.stat(os.path.join(folder, child)).st_mtime_ns for child in children]
        packed = git_dir / "packed-refs"
        stamps.append(packed.stat().st_mtime_ns if packed.exists() else 0)
    except OSError:  # no such folder (reftable), or a branch deleted while we looked
        return None
    return tuple(stamps)


def _branch_heads(repo: str) -> dict[str, str]:
    try:
        listed = git("for-each-ref", "--format=%(objectname) %(refname)", "refs/heads/", cwd=repo)
    except GitError:
        return {}
    heads = {}
    for line in listed.splitlines():
        commit, _, ref = line.partition(" ")
        heads[ref.removeprefix("refs/heads/")] = commit
    return heads


def _commit_of(repo: Path, revision: str) -> str | None:
    """A base that is not a local branch (a remote branch, a tag): asked of git."""
    try:
        return git("rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}", cwd=repo)
    except GitError:
        return None


def branch_changes(
    task: Task, heads: Mapping[str, str], repo: str | Path | None = None
) -> dict[str, frozenset[str]]:
    """What ``task``'s branch changes against its base (``heads``: the branches of
    ``repo``, by default the registered checkout's ``branch_heads``); nothing if it has
    no branch."""
    project = task.plan.session.project  # board_tasks selects it with the task
    ws = workspace_for(
        repo=repo or project.repository(),
        project_id=project.pk,
        plan_id=task.plan_id,
        key=task.key,
        base=project.base_branch,
        attempt=task.branch_attempt,
    )
    head, base = heads.get(ws.branch), heads.get(ws.base) or _commit_of(ws.repo, ws.base)
    merge_base = _merge_base(str(ws.repo), base, head) if head and base else None
    if merge_base is None:
        return {}
    return _changes(str(ws.repo), merge_base, head)


def project_branches(project: Project) -> tuple[Path, Mapping[str, str]]:
    """Where ``project``'s branches are read on this host, and each one's commit: the
    registered checkout's, or in record mode the record's as this host's mirror last
    fetched them (``agents_app.mirrors.record_branches``; none when it is out of reach:
    a hint, not a lock)."""
    if project.parsed_policy.record is None:
        return project.repository(), branch_heads(project.repo_path)
    try:
        return record_branches(project)
    except GitError as exc:
        logger.warning("merge-conflict hints of %s skipped: %s", project.name, exc)
        return Path(project.repo_path), {}


def ordered_pairs(
    depends_on: Mapping[int, Iterable[int]], among: Iterable[int] | None = None
) -> set[tuple[int, int]]:
    """Every (earlier, later) pair ``depends_on`` orders, transitively, by task id; with
    ``among``, only pairs of those tasks (the closure of a 1,000-task board is ~10⁵
    pairs, and only the few tasks waiting to merge are ever asked about)."""
    wanted = None if among is None else set(among)
    pairs: set[tuple[int, int]] = set()
    for task in depends_on if wanted is None else wanted:
        stack, seen = list(depends_on.get(task, ())), set()
        while stack:
            earlier = stack.pop()
            if earlier in seen:
                continue
            seen.add(earlier)
            if wanted is None or earlier in wanted:
                pairs.add((earlier, task))
            stack.extend(depends_on.get(earlier, ()))
    return pairs


def merge_conflicts(tasks: list[Task], ordered: Collection[tuple[int, int]]) -> list[Conflict]:
    """Pairs of tasks waiting to merge into the same project's base branch whose
    branches change the same files, except the ``ordered`` pairs (``ordered_pairs``)."""
    waiting = [task for task in tasks if task.status in WAITING_TO_MERGE]
    if len(waiting) < 2:
        return []
    projects = {task.pk: task.plan.session.project for task in waiting}
    refs = {project.pk: project_branches(project) for project in projects.values()}
    changes = {}
    for task in waiting:
        repo, heads = refs[projects[task.pk].pk]
        changes[task.pk] = branch_changes(task, heads, repo)
    conflicts = []
    for index, first in enumerate(waiting):
        for second in waiting[index + 1 :]:
            if _ordered(first, second, ordered) or projects[first.pk] != projects[second.pk]:
                continue
            conflict = _conflict(first, second, changes[first.pk], changes[second.pk])
            if conflict is not None:
                conflicts.append(conflict)
    return conflicts


def _ordered(first: Task, second: Task, ordered: Collection[tuple[int, int]]) -> bool:
    return (first.pk, second.pk) in ordered or (second.pk, first.pk) in ordered


def _conflict(
    first: Task,
    second: Task,
    ours: Mapping[str, frozenset[str]],
    theirs: Mapping[str, frozenset[str]],
) -> Conflict | None:
    files = sorted(ours.keys() & theirs.keys())
    if not files:
        return None
    symbols = sorted(f"{path}:{name}" for path in files for name in ours[path] & theirs[path])
    return Conflict(first=first, second=second, files=files, symbols=symbols)


def conflicts_by_task(conflicts: list[Conflict]) -> dict[int, list[str]]:
    """Each task's conflicts, as the board shows them next to it."""
    found: dict[int, list[str]] = {}
    for conflict in conflicts:
        found.setdefault(conflict.first.pk, []).append(conflict.describe(conflict.second))
        found.setdefault(conflict.second.pk, []).append(conflict.describe(conflict.first))
    return found
