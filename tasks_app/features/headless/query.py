"""``sf headless query``: an instant snapshot of a session, read from the database
only (no model, no worker, nothing written)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth.models import User

from agents_app.access import Action, require
from agents_app.badge import badge_for
from agents_app.models import AgentSession, ReviewStatus, RiskDecision
from sf_core.errors import SfError
from tasks_app.models import Plan, Task
from tasks_app.selectors import task_board


def session_snapshot(
    *, session_id: int | None, project: str | None, user: User | None = None
) -> dict[str, Any]:
    """The snapshot of the session; with a person acting, only if they may view it."""
    session = _find(session_id, project)
    if user is not None:
        require(user, session.project, Action.VIEW)
    return snapshot_of(session)


def session_report_snapshot(sender: object, *, session: AgentSession, **_: Any) -> dict[str, Any]:
    """The ``session_report_requested`` receiver: the same snapshot, for ``/status`` and
    ``/session-report`` (``agents_app.reports`` turns it into lines)."""
    return {"snapshot": snapshot_of(session)}


def snapshot_of(session: AgentSession) -> dict[str, Any]:
    board = task_board(session_id=session.pk, statuses=[])
    rows = {row["id"]: row for row in board.as_json()["tasks"]}
    plans = list(Plan.objects.filter(session=session).order_by("created_at", "pk"))
    tasks = list(
        Task.objects.filter(plan__session=session).order_by("plan__created_at", "position")
    )
    pending = RiskDecision.objects.filter(session=session, review_status=ReviewStatus.PENDING)
    badge = badge_for(session)
    return {
        "summary": (
            f"session {session.pk} ({session.status}) on {session.project.repo_path}: "
            f"{badge.full_text}"
        ),
        "session": {
            "id": session.pk,
            "title": session.title,
            "project": session.project.name,
            "repo_path": session.project.repo_path,
            "status": session.status,
            "axes": session.axes.as_dict(),
            "paused": session.paused,
            "pause_reason": session.pause_reason,
            "activity": session.activity,
            "driver": session.driver,
            "badge": badge.full_text,
            "cost": {
                "spent": str(session.cost_spent),
                "budget": None if session.cost_budget is None else str(session.cost_budget),
            },
            "autonomous_continues": {
                "count": session.autonomous_continues,
                "max": session.max_autonomous_continues,
            },
        },
        "plans": [
            {"id": plan.pk, "status": plan.status, "summary": plan.summary} for plan in plans
        ],
        "tasks": [
            {
                "key": task.key,
                "plan": task.plan_id,
                "title": task.title,
                "status": task.status,
                "reason": task.status_reason,
                "board": rows.get(task.pk),
            }
            for task in tasks
        ],
        "pending_approvals": [
            {"id": d.pk, "tool": d.tool, "reason": d.reason} for d in pending.order_by("pk")
        ],
        "totals": board.as_json()["totals"],
    }


def _find(session_id: int | None, project: str | None) -> AgentSession:
    sessions = AgentSession.objects.select_related("project")
    if session_id is not None:
        found = sessions.filter(pk=session_id).first()
        if found is None:
            raise SfError(f"--session {session_id}: no such session")
        return found
    if project:
        repo = str(Path(project).resolve())
        latest = sessions.filter(project__repo_path=repo).order_by("-created_at", "-pk").first()
        if latest is None:
            raise SfError(f"--project {project}: no session has run on it")
        return latest
    raise SfError("query needs --session ID or --project PATH")
