"""``scripts/run.sh``'s demo, told on the dashboard: it waits for the first person to open
the dashboard, then the dashboard says where it is.

A demo that runs the moment the server answers is over before a newcomer has logged in
(issue [6/8]: done 18 s after the web first answered). So ``run.sh`` prepares the demo's
repository (``SF_DATA_DIR/demo/greeter``), leaves a marker (``demo/run-demo-waiting``)
and waits. The first dashboard a logged-in person opens takes the marker (renamed to
``demo/run-demo-started``, holding the time), and ``run.sh`` starts the replayed session.
From then on the dashboard's demo card follows it live (the status panel's refresh):
starting, then the session's status, each task's status and the unit to watch.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone

from agents_app.models import AgentSession, Project
from tasks_app.models import Task, Unit

WAITING = "run-demo-waiting"  # run.sh waits while this file exists
STARTED = "run-demo-started"  # the time the first person opened the dashboard
REPOSITORY = "greeter"


@dataclass(frozen=True)
class TaskNow:
    key: str
    status: str
    unit: Unit | None  # its latest attempt, the page to watch


@dataclass(frozen=True)
class RunDemo:
    state: str  # waiting | starting | the session's status
    started_at: datetime | None = None
    session: AgentSession | None = None
    tasks: list[TaskNow] = field(default_factory=list)


def demo_folder() -> Path:
    return Path(settings.SF_DATA_DIR) / "demo"


def run_demo_opened() -> None:
    """A person opened the dashboard: a demo waiting for that starts (at most once; the
    first of several web processes to rename the marker wins)."""
    folder = demo_folder()
    with contextlib.suppress(FileNotFoundError):
        os.replace(folder / WAITING, folder / STARTED)
        (folder / STARTED).write_text(timezone.now().isoformat())


def run_demo_status(projects: QuerySet[Project]) -> RunDemo | None:
    """Where run.sh's demo is, for a person who may view ``projects``; None when run.sh
    started no demo (``SF_DEMO=0``, another way of running SF)."""
    folder = demo_folder()
    if (folder / WAITING).exists():
        return RunDemo(state="waiting")
    started_at = _started_at(folder / STARTED)
    if started_at is None:
        return None
    repo = str((folder / REPOSITORY).resolve())
    session = (
        AgentSession.objects.filter(
            project__in=projects, project__repo_path=repo, created_at__gte=started_at
        )
        .order_by("-created_at", "-pk")
        .first()
    )
    if session is None:
        return RunDemo(state="starting", started_at=started_at)
    return RunDemo(
        state=session.status, started_at=started_at, session=session, tasks=_tasks(session)
    )


def _started_at(path: Path) -> datetime | None:
    try:
        return datetime.fromisoformat(path.read_text().strip())
    except (OSError, ValueError):
        return None


def _tasks(session: AgentSession) -> list[TaskNow]:
    tasks = Task.objects.filter(plan__session=session).order_by("plan_id", "position")
    latest = {
        unit.task_id: unit
        for unit in Unit.objects.filter(task__plan__session=session).order_by("attempt", "pk")
    }
    return [TaskNow(task.key, task.status, latest.get(task.pk)) for task in tasks]
