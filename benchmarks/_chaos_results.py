"""How the chaos benchmark judges each task's end, honestly, from the database and git.

* A task whose verify command was made to fail on purpose (``doomed``) is the task's
  fault when it ends failed (or blocked as stuck) after a real verification failure;
  any other end of it is the system's.
* Every other task must end ``done`` and be merged exactly once: a task that ends
  failed, blocked or cancelled, or done without its merge commit, is a system failure
  (the model always answers right, so nothing else can be to blame).
* A task not in a final status when the deadline after the last fault is over is
  ``lost`` (and a system failure too).
* ``merged_twice``: a task key whose merge commit is in the base branch's history more
  than once.
* Recovery, per fault: from the moment the fault was cleared (a kill, a restart, a
  terminated connection and a lock left behind clear at once) to the start of the next
  unit of every task whose running unit it ended (the longest of them); when it ended
  none, to the next unit started anywhere (the system running units again).
"""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from _chaos_faults import Fault
from _common import percentile

from tasks_app.models import HoldReason, Task, TaskStatus, Unit, UnitStatus

FINAL = (
    TaskStatus.DONE,
    TaskStatus.FAILED,
    TaskStatus.CANCELLED,
    TaskStatus.SKIPPED,
    TaskStatus.BLOCKED,
)
MERGE_SUBJECT = re.compile(r"^sf: merge (\S+): ")


def merge_counts(repos: list[Path]) -> Counter[str]:
    """How often each task key's merge commit is in the base branch's history."""
    counts: Counter[str] = Counter()
    for repo in repos:
        log = subprocess.run(
            ["git", "log", "--format=%s", "main"], cwd=repo, capture_output=True, text=True
        ).stdout
        for line in log.splitlines():
            match = MERGE_SUBJECT.match(line)
            if match:
                counts[match.group(1)] += 1
    return counts


def open_count(plan_ids: list[int]) -> int:
    return Task.objects.filter(plan_id__in=plan_ids).exclude(status__in=FINAL).count()


def status_counts(plan_ids: list[int]) -> dict[str, int]:
    rows = Task.objects.filter(plan_id__in=plan_ids).values_list("status", flat=True)
    return dict(Counter(rows))


@dataclass
class Verdicts:
    system: list[str]  # "<key>: <why>"
    lost: list[str]
    model: int  # doomed tasks that ended as they should
    merged_twice: list[str]


def judge(plan_ids: list[int], doomed: set[str], merges: Counter[str]) -> Verdicts:
    verdicts = Verdicts(system=[], lost=[], model=0, merged_twice=[])
    verdicts.merged_twice = sorted(key for key, count in merges.items() if count > 1)
    tasks = Task.objects.filter(plan_id__in=plan_ids).order_by("key")
    for task in tasks:
        why = _system_reason(task, task.key in doomed, merges[task.key])
        if why is None:
            verdicts.model += task.key in doomed
        elif task.status not in FINAL:
            verdicts.lost.append(f"{task.key}: {why}")
        else:
            verdicts.system.append(f"{task.key}: {why}")
    return verdicts


def _system_reason(task: Task, doomed: bool, merged: int) -> str | None:
    """None when the task ended as the model and the task decided; else why not."""
    if task.status not in FINAL:
        return f"still {task.status} ({task.status_reason[:120]})"
    if not doomed:
        if task.status == TaskStatus.DONE and merged == 1:
            return None
        return f"{task.status}, merged {merged}x ({task.status_reason[:160]})"
    last = Unit.objects.filter(task=task).order_by("-attempt").first()
    verified_wrong = last is not None and last.verification_passed is False
    ended_by_task = task.status == TaskStatus.FAILED or (
        task.status == TaskStatus.BLOCKED and task.hold_reason == HoldReason.STUCK
    )
    if ended_by_task and verified_wrong and merged == 0:
        return None
    return f"doomed but {task.status}, merged {merged}x ({task.status_reason[:160]})"


def recoveries(faults: list[Fault], plan_ids: list[int]) -> tuple[list[tuple[str, float]], int]:
    """Seconds from each fault's clearing to units running again (see the module's
    docstring) by the fault's kind, and how many interrupted units were never followed
    by another."""
    units = list(
        Unit.objects.filter(task__plan_id__in=plan_ids)
        .order_by("started_at")
        .values("task_id", "started_at", "finished_at", "status")
    )
    starts = [u["started_at"] for u in units]
    by_task: dict[int, list[dict[str, Any]]] = {}
    for unit in units:
        by_task.setdefault(unit["task_id"], []).append(unit)
    figures: list[tuple[str, float]] = []
    unrecovered = 0
    for fault in faults:
        hit = [
            u
            for u in units
            if u["started_at"] <= fault.started
            and (u["finished_at"] is None or u["finished_at"] >= fault.started)
            and u["status"] != UnitStatus.SUCCEEDED
        ]
        waits = []
        for unit in hit:
            after = _next_start(by_task[unit["task_id"]], unit["started_at"])
            if after is None:
                unrecovered += 1
            else:
                waits.append(max(0.0, (after - fault.cleared).total_seconds()))
        if not hit:
            after = next((s for s in starts if s > fault.cleared), None)
            waits = [] if after is None else [(after - fault.cleared).total_seconds()]
        if waits:
            figures.append((fault.kind, round(max(waits), 1)))
    return figures, unrecovered


def _next_start(units: list[dict[str, Any]], after: datetime) -> datetime | None:
    return next((u["started_at"] for u in units if u["started_at"] > after), None)


def p95(values: list[float]) -> float | None:
    return round(percentile(values, 0.95), 1) if values else None


def by_kind(waits: list[tuple[str, float]]) -> dict[str, dict[str, float]]:
    """Per kind of fault: how many recoveries were measured, their median and longest."""
    kinds: dict[str, list[float]] = {}
    for kind, seconds in waits:
        kinds.setdefault(kind, []).append(seconds)
    return {
        kind: {"n": len(v), "p50": round(percentile(v, 0.5), 1), "max": max(v)}
        for kind, v in sorted(kinds.items())
    }


def unit_summary(plan_ids: list[int]) -> dict[str, int]:
    rows = Unit.objects.filter(task__plan_id__in=plan_ids).values_list("status", flat=True)
    return dict(Counter(rows))
