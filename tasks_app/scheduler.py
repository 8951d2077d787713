"""Pure scheduling: dependency cycles, waves and blockers computed from the graph.

Nothing here touches the database; the services and selectors feed it plain values.
Blockers are never implied by plan order, only by ``depends_on`` and its condition.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

# Statuses a dependency can no longer leave (for the purpose of its dependents).
FINISHED = frozenset({"done", "failed", "cancelled", "skipped"})
# What a ``success`` dependency accepts: done, or skipped (a person chose to go on
# without it — finished without a merge).
SUCCEEDED = frozenset({"done", "skipped"})


@dataclass(frozen=True)
class Edge:
    """``task`` depends on ``on`` with ``condition`` (success, failure or always)."""

    task: str
    on: str
    condition: str = "success"


# How a finished dependency ended, as a person says it.
_ENDED = {
    "failed": "failed",
    "cancelled": "was cancelled",
    "skipped": "was skipped",
    "done": "succeeded",
}


@dataclass(frozen=True)
class Blocker:
    on: str
    condition: str
    status: str
    satisfiable: bool  # False: this dependency ended the wrong way; it never clears

    def describe(self, name: str | None = None) -> str:
        """A sentence about this blocker, naming the dependency ``name`` (or its id)."""
        wanted = {"success": "done", "failure": "failed", "always": "finished"}[self.condition]
        shown = name or self.on
        if not self.satisfiable:  # it ended the wrong way: only a retry or a skip helps
            ended = _ENDED.get(self.status, self.status)
            return f"{shown} {ended}; this task needs it {wanted}"
        return f"{shown} to be {wanted} (now {self.status})"


def find_cycle(keys: Iterable[str], edges: Iterable[Edge]) -> list[str] | None:
    """A dependency cycle as ``[a, b, c, a]`` (a depends on b …), or None. Iterative DFS."""
    graph: dict[str, list[str]] = {key: [] for key in keys}
    for edge in edges:
        graph.setdefault(edge.task, []).append(edge.on)
    state: dict[str, int] = {}  # 1 = on the current path, 2 = finished
    for root in graph:
        if state.get(root):
            continue
        path, stack = [root], [iter(graph[root])]
        state[root] = 1
        while stack:
            child = next(stack[-1], None)
            if child is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(child) == 1:
                return [*path[path.index(child) :], child]
            elif not state.get(child):
                state[child] = 1
                path.append(child)
                stack.append(iter(graph.get(child, ())))
    return None


def compute_waves(keys: Sequence[str], edges: Iterable[Edge]) -> list[list[str]]:
    """Group tasks in waves: a wave's tasks depend only on tasks of earlier waves, so
    each wave may run in parallel. Order inside a wave follows ``keys``. Assumes no
    cycle (``find_cycle`` first)."""
    position = {key: index for index, key in enumerate(keys)}
    waiting = {key: 0 for key in keys}
    dependents: dict[str, list[str]] = {key: [] for key in keys}
    for edge in edges:
        waiting[edge.task] += 1
        dependents[edge.on].append(edge.task)
    wave = [key for key in keys if waiting[key] == 0]
    waves: list[list[str]] = []
    while wave:
        waves.append(wave)
        following: list[str] = []
        for key in wave:
            for dependent in dependents[key]:
                waiting[dependent] -= 1
                if waiting[dependent] == 0:
                    following.append(dependent)
        wave = sorted(following, key=position.__getitem__)
    return waves


def blockers_of(
    key: str, edges_by_task: Mapping[str, Sequence[Edge]], statuses: Mapping[str, str]
) -> list[Blocker]:
    """The dependencies of ``key`` whose condition does not hold (yet, or ever)."""
    found = []
    for edge in edges_by_task.get(key, ()):
        status = statuses[edge.on]
        if condition_met(edge.condition, status):
            continue
        found.append(Blocker(edge.on, edge.condition, status, satisfiable=status not in FINISHED))
    return found


def condition_met(condition: str, status: str) -> bool:
    if condition == "success":
        return status in SUCCEEDED
    if condition == "failure":
        return status == "failed"
    return status in FINISHED  # always


def ready_keys(
    keys: Sequence[str], edges: Iterable[Edge], statuses: Mapping[str, str]
) -> list[str]:
    """Tasks in ``todo`` whose dependencies all hold: what may be dispatched now."""
    by_task = edges_by(edges)
    return [
        key for key in keys if statuses[key] == "todo" and not blockers_of(key, by_task, statuses)
    ]


def edges_by(edges: Iterable[Edge]) -> dict[str, list[Edge]]:
    grouped: dict[str, list[Edge]] = {}
    for edge in edges:
        grouped.setdefault(edge.task, []).append(edge)
    return grouped


def claims_overlap(claims: Mapping[str, Sequence[str]]) -> list[tuple[str, str, list[str]]]:
    """Pairs of tasks whose intent claims name a file in common (a warning, not a lock)."""
    owners: dict[str, list[str]] = {}
    for key, files in claims.items():
        for path in set(files):
            owners.setdefault(posixpath.normpath(path), []).append(key)
    pairs: dict[tuple[str, str], list[str]] = {}
    for path, keys in owners.items():
        for index, first in enumerate(keys):
            for second in keys[index + 1 :]:
                pair = (min(first, second), max(first, second))
                pairs.setdefault(pair, []).append(path)
    return [(a, b, sorted(paths)) for (a, b), paths in sorted(pairs.items())]
