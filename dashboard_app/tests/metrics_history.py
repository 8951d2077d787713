"""A fixture history for the metrics: two projects, plans accepted, tasks ending at
known times, units with costs and first-attempt results, reviewed risk decisions.

alpha (plan accepted 2026-11-02 09:00):
  a1 done 11-02 11:00 (2 h)    unit 1 passed (11-02)             calls $0.20
  a2 done 11-03 15:00 (30 h)   unit 1 failed (11-02), 2 passed   calls $0.30 + $0.25
  a3 failed 11-03 16:00        unit 1 errored (11-03)            calls $0.15
  a4 cancelled 11-04 10:00     no unit
  a5 done 11-04 09:00 (48 h)   failed 11-03 20:00 first; unit 1 passed (11-04)  $0.05
  planning call 11-02 08:50 $0.10; reviews approved 11-02, 11-03, rejected 11-03; 1 pending
beta (plan accepted 2026-11-03 10:00):
  b1 done 11-03 12:00 (2 h)    unit 1 passed (11-03)             calls $0.40
  b0 done 10-30 (before the window), its call 11-01 $9.99: outside the window
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

from django.contrib.auth.models import User

from agents_app.models import AgentSession, CallStage, ModelCall, Project, RiskDecision
from agents_app.services import session_create
from tasks_app.models import Plan, PlanStatus, Task, TaskTransition, Unit
from tasks_app.tests.conftest import make_plan, task_data


def at(day: int, hour: int, minute: int = 0, month: int = 11) -> datetime:
    return datetime(2026, month, day, hour, minute, tzinfo=UTC)


@dataclass
class History:
    alpha: Project
    beta: Project
    alpha_session: AgentSession


def _plan(session: AgentSession, accepted: datetime, *keys: str) -> dict[str, Task]:
    plan = make_plan(session, *[task_data(key) for key in keys])
    Plan.objects.filter(pk=plan.pk).update(status=PlanStatus.ACCEPTED, accepted_at=accepted)
    return {task.key: task for task in plan.tasks.all()}


def _ends(task: Task, *moves: tuple[str, datetime]) -> None:
    """The task's final moves; its status is the last one."""
    for status, moment in moves:
        TaskTransition.objects.create(
            task=task, from_status="in_progress", to_status=status, created_at=moment
        )
    Task.objects.filter(pk=task.pk).update(status=moves[-1][0])


def _unit(task: Task, attempt: int, started: datetime, passed: bool | None, cost: str) -> Unit:
    unit = Unit.objects.create(
        task=task,
        attempt=attempt,
        started_at=started,
        finished_at=started.replace(minute=30),
        verification_passed=passed,
        status="succeeded" if passed else "failed",
    )
    ModelCall.objects.create(
        session_id=task.plan.session_id,
        unit=unit,
        stage=CallStage.UNIT,
        model=f"openai/{task.plan.session.project.name}-model",
        tokens_in=100,
        tokens_out=10,
        cost=Decimal(cost),
        created_at=started.replace(minute=10),
    )
    return unit


def _review(session: AgentSession, status: str, moment: datetime | None) -> None:
    RiskDecision.objects.create(
        session=session,
        tool="run_command",
        input_normalized={},
        input_hash="h",
        risk_class="network",
        decision="ask",
        rule="r",
        work_mode=session.work_mode,
        run_control=session.run_control,
        permission_profile=session.permission_profile,
        model_mode=session.model_mode,
        surface=session.surface,
        review_status=status,
        reviewed_at=moment,
    )


def history_create(owner: User, tmp: str) -> History:
    # Rows, not the service: no repository is needed to count what happened.
    alpha = Project.objects.create(name="alpha", repo_path=f"{tmp}/alpha")
    beta = Project.objects.create(name="beta", repo_path=f"{tmp}/beta")
    sa = session_create(project=alpha, created_by=owner, axes={"work_mode": "plan"})
    sb = session_create(project=beta, created_by=owner, axes={"work_mode": "plan"})
    a = _plan(sa, at(2, 9), "a1", "a2", "a3", "a4", "a5")
    ModelCall.objects.create(
        session=sa, stage=CallStage.PLAN, model="openai/alpha-model", cost=Decimal("0.10"),
        created_at=at(2, 8, 50),
    )  # fmt: skip
    _ends(a["a1"], ("done", at(2, 11)))
    _unit(a["a1"], 1, at(2, 9), True, "0.20")
    _ends(a["a2"], ("done", at(3, 15)))
    _unit(a["a2"], 1, at(2, 10), False, "0.30")
    _unit(a["a2"], 2, at(3, 12), True, "0.25")
    _ends(a["a3"], ("failed", at(3, 16)))
    _unit(a["a3"], 1, at(3, 14), None, "0.15")
    _ends(a["a4"], ("cancelled", at(4, 10)))
    _ends(a["a5"], ("failed", at(3, 20)), ("done", at(4, 9)))
    _unit(a["a5"], 1, at(4, 8), True, "0.05")
    _review(sa, "approved", at(2, 12))
    _review(sa, "approved", at(3, 12))
    _review(sa, "rejected", at(3, 13))
    _review(sa, "pending", None)
    b = _plan(sb, at(3, 10), "b1", "b0")
    _ends(b["b1"], ("done", at(3, 12)))
    _unit(b["b1"], 1, at(3, 10), True, "0.40")
    _ends(b["b0"], ("done", at(30, 12, month=10)))
    _unit(b["b0"], 1, at(30, 10, month=10), True, "0")
    ModelCall.objects.create(
        session=sb, stage=CallStage.PLAN, model="openai/beta-model", cost=Decimal("9.99"),
        created_at=at(1, 12),
    )  # fmt: skip
    return History(alpha, beta, sa)
