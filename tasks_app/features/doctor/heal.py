"""/doctor heal: a repair unit with the doctor's report as its brief (docs/doctor.md).

The command service (agents_app, below this app) sends ``doctor_heal_requested``; this
receiver makes a one-task plan whose description is the report, accepts it, and moves
the session to repair work mode, where a unit gets only the repair tools (read,
search, list, run: ``REPAIR_TOOLS``; nothing writes or edits a file, no MCP tools).
The unit then runs like any other: dispatch, the permission gate on every command,
verification, review by a person. The session stays in repair until a person moves
it on (/mode build): the doctor's passing checks say nothing about what the agent
diagnosed.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from agents_app.axes import WorkMode
from agents_app.models import AgentSession, PauseCause
from agents_app.services import session_change_mode
from sf_core.actors import Actor
from sf_core.doctor import DoctorReport, Severity
from sf_core.errors import CommandRejected
from tasks_app.engine.dispatch import dispatch_on_commit
from tasks_app.models import PlanSource
from tasks_app.schemas import plan_spec_parse
from tasks_app.services import plan_accept, plan_create

HEAL_ACTOR = Actor.system("doctor-heal")
BRIEF_LIMIT = 18_000  # TaskSpec.description holds 20 000 characters
CRITERIA = [
    "every failing check in the brief is diagnosed: its cause, with the evidence read",
    "only commands a repair needs are run, each named in the summary with its outcome",
    "what is left for a person is said plainly in the summary",
]


def doctor_heal(
    *, session: AgentSession, report: DoctorReport, actor: Actor, **_: Any
) -> dict[str, Any]:
    """The ``doctor_heal_requested`` receiver: the repair plan, accepted, and the
    session in repair mode. Refused when no check fails (nothing to heal)."""
    failing = report.failing(Severity.WARNING)
    if not failing:
        raise CommandRejected("nothing to heal: every check passes (/doctor shows them)")
    with transaction.atomic():
        plan = plan_create(session=session, spec=_spec(report, len(failing)), source=PlanSource.API)
        plan_accept(plan=plan, actor=actor, start=False)
        session_change_mode(
            session=session,
            changes={"work_mode": WorkMode.REPAIR},
            reason=f"/doctor heal by {actor.label or actor.kind}: plan {plan.pk}",
            actor=HEAL_ACTOR,
        )
        _start(session)
    checks = f"{len(failing)} failing check{'s' if len(failing) != 1 else ''}"
    return {
        "message": f"repair unit queued: plan {plan.pk} ({checks})",
        "data": {"plan_id": plan.pk},
    }


def _spec(report: DoctorReport, failing: int) -> Any:
    brief = report.brief()
    if len(brief) > BRIEF_LIMIT:
        brief = brief[:BRIEF_LIMIT] + "\n[… the rest of the report: sf doctor]"
    return plan_spec_parse(
        {
            "summary": f"Heal SF: {failing} failing {'checks' if failing != 1 else 'check'}",
            "intent": "/doctor heal",
            "tasks": [
                {
                    "key": "heal",
                    "title": f"Diagnose and repair {failing} failing health checks",
                    "description": "The doctor's report (sf doctor):\n\n" + brief,
                    "acceptance_criteria": CRITERIA,
                    # The repair tools write nothing: the unit leaves its tree as
                    # it found it (a run command could change a tracked file).
                    "verify": ["git diff --quiet HEAD"],
                    "risk_level": "low",
                    "mutation_scope": "workspace",
                    "task_kind": "chore",
                    "max_retries": 0,
                }
            ],
        }
    )


def _start(session: AgentSession) -> None:
    session.refresh_from_db()
    if session.paused and session.pause_cause != PauseCause.PERSON:
        return  # a budget or a limit holds it: the plan waits like any other
    dispatch_on_commit(session.pk)
