"""Sessions with plans and tasks in given states, for the dashboard's session table."""

from __future__ import annotations

import re
from typing import Any

from django.utils import timezone

from agents_app.models import AgentSession, Project
from agents_app.services import session_create
from tasks_app.models import Plan, PlanSource, PlanStatus, Task
from tasks_app.schemas import plan_spec_parse
from tasks_app.services import plan_create

ROW = re.compile(r'<tr data-session="(\d+)" data-outcome="(\w+)">(.*?)</tr>', re.S)


def new_session(project: Project, title: str = "", **fields: Any) -> AgentSession:
    session = session_create(project=project, title=title)
    if fields:
        AgentSession.objects.filter(pk=session.pk).update(**fields)
        session.refresh_from_db()
    return session


def work(session: AgentSession, *task_statuses: str, plan_status: str = "accepted") -> Plan:
    """A plan of ``session`` in ``plan_status`` with one task per status (a, b, …)."""
    tasks = [
        {
            "key": chr(ord("a") + i),
            "title": f"Task {i}",
            "acceptance_criteria": ["it works"],
            "verify": ["true"],
        }
        for i in range(len(task_statuses))
    ]
    spec = plan_spec_parse({"summary": "work", "intent": "do it", "tasks": tasks})
    plan = plan_create(session=session, spec=spec, source=PlanSource.API)
    accepted_at = None if plan_status == PlanStatus.PROPOSED else timezone.now()
    Plan.objects.filter(pk=plan.pk).update(status=plan_status, accepted_at=accepted_at)
    for i, status in enumerate(task_statuses):
        Task.objects.filter(plan=plan, key=chr(ord("a") + i)).update(status=status)
    plan.refresh_from_db()
    return plan


def rows(html: str) -> dict[int, tuple[str, str]]:
    """The table's rows: session id → (outcome, the row's HTML)."""
    return {int(pk): (outcome, body) for pk, outcome, body in ROW.findall(html)}
