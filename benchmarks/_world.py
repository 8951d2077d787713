"""A busy project for the web benchmarks: a 1,000-task board in every state, real
branches waiting to merge, and a unit with a long trace.

The states are written straight to the rows (as a long autonomous run would have left
them), not driven through units: the benchmarks measure reading them. Call after
``_common.django_team_mode()``.
"""

from __future__ import annotations

import random
import subprocess
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

from _common import ROOT, throwaway_repo
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from agents_app.models import AgentSession, Project, TraceEvent, TraceKind
from agents_app.services import project_create, session_create
from sf_core.actors import Actor
from tasks_app.models import Plan, Task, TaskRuntime, Unit
from tasks_app.schemas import plan_spec_parse
from tasks_app.services import plan_accept, plan_create

# Shares of a board far into an autonomous run: most done, a few running, in review or
# failed, the rest waiting. What is left over stays todo.
STATES = (("done", 0.55), ("review", 0.03), ("in_progress", 0.02), ("failed", 0.03))
UNIT_STATUS = {"done": "succeeded", "review": "succeeded", "in_progress": "running"}
SOURCES = (
    "tasks_app/board.py",
    "tasks_app/surfaces/views.py",
    "sf_core/consumers.py",
    "sf_core/live.py",
)


@dataclass
class World:
    project: Project
    session: AgentSession
    plan: Plan
    user: User
    unit: Unit  # the one with the long trace
    cookie: str  # "sessionid=…" of ``user``, logged in

    def delete(self) -> None:
        self.project.delete()
        self.user.delete()


def build(tmp: Path, *, tag: str, tasks: int = 1000, trace_events: int = 300) -> World:
    repo = throwaway_repo(tmp)
    project = project_create(name=f"bench-{tag}", repo_path=str(repo))
    user = User.objects.create_superuser(f"bench-{tag}", password=None)
    session = session_create(project=project, axes={"work_mode": "plan"})
    plan = plan_create(session=session, spec=plan_spec_parse(_plan(tasks)), source="api")
    plan_accept(plan=plan, actor=Actor.system("bench"), start=False)
    keys = _set_states(plan)
    _branches(repo, plan, keys["review"])
    task = Task.objects.get(plan=plan, key=keys["done"][0])
    unit = Unit.objects.get(task=task)
    _trace(session, unit, trace_events)
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(user)
    cookie = f"sessionid={client.cookies['sessionid'].value}"
    return World(project, session, plan, user, unit, cookie)


def _plan(size: int) -> dict[str, object]:
    """Tasks depend on up to three earlier ones; every tenth claims a shared file."""
    rng = random.Random(size)
    tasks = []
    for index in range(size):
        earlier = rng.sample(range(index), k=min(index, rng.randint(0, 3)))
        tasks.append(
            {
                "key": f"t{index}",
                "title": f"task {index}: change module {index % 37}",
                "acceptance_criteria": ["it works", "the tests pass"],
                "verify": ["true"],
                "intent_claim": [f"src/m{index % 37}.py"] if index % 10 == 0 else [],
                "depends_on": [{"task": f"t{e}", "condition": "success"} for e in earlier],
            }
        )
    return {"summary": f"{size} tasks", "tasks": tasks}


def _set_states(plan: Plan) -> dict[str, list[str]]:
    """Give the tasks their states, units and runtimes; return the keys by state."""
    tasks = list(plan.tasks.order_by("position"))
    rng = random.Random(7)
    rng.shuffle(tasks)
    by_state: dict[str, list[str]] = {}
    start = 0
    now = timezone.now()
    units, runtimes = [], []
    for state, share in STATES:
        chosen = tasks[start : start + round(share * len(tasks))]
        start += len(chosen)
        by_state[state] = sorted((task.key for task in chosen), key=lambda k: int(k[1:]))
        Task.objects.filter(pk__in=[t.pk for t in chosen]).update(
            status=state,
            status_reason="verification failed" if state == "failed" else "",
            cost_spent=Decimal("0.0421"),
            retry_count=3 if state == "failed" else 0,
        )
        for task in chosen:
            attempts = 3 if state == "failed" else 1
            for attempt in range(1, attempts + 1):
                status = UNIT_STATUS.get(state, "failed")
                units.append(Unit(task=task, attempt=attempt, status=status, model="bench/m"))
            if state == "in_progress":
                runtimes.append(TaskRuntime(task=task, worker="w1@bench", last_heartbeat_at=now))
    Unit.objects.bulk_create(units)
    TaskRuntime.objects.bulk_create(runtimes)
    by_state["todo"] = [task.key for task in tasks[start:]]
    return by_state


def _branches(repo: Path, plan: Plan, keys: list[str]) -> None:
    """A real branch for each task in review, each changing a file another one changes
    too (the board flags those as merge conflicts)."""

    def git(*args: str) -> None:
        command = ["git", "-c", "user.name=bench", "-c", "user.email=b@example.com", *args]
        subprocess.run(command, cwd=repo, check=True, capture_output=True)

    for index, key in enumerate(keys):
        git("switch", "-q", "-c", f"sf/p{plan.pk}/{key}/1", "main")
        path = repo / f"src/m{index % 5}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"def f{index}():\n    return {index}\n")
        git("add", "-A")
        git("commit", "-q", "-m", f"{key}")
    git("switch", "-q", "main")


def _trace(session: AgentSession, unit: Unit, count: int) -> None:
    """A long trace as a real unit writes one: model steps, each followed by its tool
    call (files read with their content, commands with their output, edits)."""
    sources = [(ROOT / path).read_text() for path in SOURCES]
    started = timezone.now() - timedelta(minutes=30)
    events = []
    for seq in range(count):
        source = sources[seq % len(sources)]
        path = SOURCES[seq % len(SOURCES)]
        if seq % 2 == 0:
            kind, name = TraceKind.MODEL_STEP, "bench/m"
            call = {"id": f"c{seq}", "name": "read_file", "arguments": {"path": path}}
            payload = {
                "content": f"Reading {path} to see how step {seq} fits.",
                "tool_calls": [call],
            }
        elif seq % 6 == 1:
            kind, name = TraceKind.TOOL_CALL, "read_file"
            payload = {"arguments": {"path": path}, "output": source[:6000]}
        elif seq % 6 == 3:
            kind, name = TraceKind.TOOL_CALL, "run_command"
            lines = "\n".join(f"tests/test_{i}.py::test_case_{i} PASSED" for i in range(60))
            payload = {"arguments": {"command": "pytest -q"}, "output": lines}
        else:
            kind, name = TraceKind.TOOL_CALL, "edit_file"
            search = "\n".join(source.splitlines()[10:20])
            arguments = {"path": path, "search": search, "replace": search + "\n# changed"}
            payload = {"arguments": arguments, "output": "edited"}
        at = started + timedelta(seconds=seq)
        events.append(
            TraceEvent(
                session=session,
                unit=unit,
                seq=seq + 1,
                kind=kind,
                name=name,
                payload=payload,
                started_at=at,
                finished_at=at,
            )
        )
    TraceEvent.objects.bulk_create(events)
