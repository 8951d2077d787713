"""The session report as text for people: ``/status`` (short) and ``/session-report``
(everything ``sf headless query`` answers), one fact per line.

The numbers come from ``agents_app.selectors.session_report``; the plans, tasks,
approvals and totals from the apps built on this one, which add the headless query's
snapshot to it through ``session_report_requested`` (key ``snapshot``). Without them
(this app alone) the report has the session's own lines only.
"""

from __future__ import annotations

from typing import Any

from agents_app.badge import badge_for
from agents_app.models import AgentSession


def cost_line(report: dict[str, Any]) -> str:
    spent, budget = report["cost_spent"], report["cost_budget"]
    if budget is None:
        return f"spent ${spent} (no budget)"
    return f"spent ${spent} of ${budget} ({report['budget_used_percent']}%)"


def status_text(session: AgentSession, report: dict[str, Any]) -> str:
    """Where the session stands: badge, pause, what runs, tasks, what waits on a person."""
    snapshot = report.get("snapshot") or {}
    lines = [f"{badge_for(session).full_text} · {report['status']}", *_state_lines(session)]
    lines.append(f"tasks: {report.get('tasks_summary', 'no tasks')}")
    approvals = snapshot.get("pending_approvals") or []
    if approvals:
        lines.append(f"approvals pending: {len(approvals)}")
    if report["pending_transitions"]:
        lines.append(f"steering pending: {report['pending_transitions']}")
    lines.append(f"cost: {cost_line(report)}")
    return "\n".join(lines)


def session_report_text(session: AgentSession, report: dict[str, Any]) -> str:
    """The whole session: what ``/status`` says, then every plan with its tasks, the
    pending approvals and the board's totals."""
    snapshot = report.get("snapshot") or {}
    head = snapshot.get("summary") or (
        f"session {session.pk} ({report['status']}): {badge_for(session).full_text}"
    )
    lines = [head, *_state_lines(session)]
    lines.append(
        f"cost: {cost_line(report)} · autonomous units "
        f"{report['autonomous_continues']} of {report['max_autonomous_continues']}"
    )
    lines.append(f"transitions: {report['transitions']} ({report['pending_transitions']} pending)")
    lines += _plan_lines(snapshot)
    lines += [
        f"approval pending: #{a['id']} {a['tool']}: {a['reason']}"
        for a in snapshot.get("pending_approvals") or []
    ]
    if "totals" in snapshot:
        lines.append(f"totals: {_totals(snapshot['totals'])}")
    else:
        lines.append(f"tasks: {report.get('tasks_summary', 'no tasks')}")
    return "\n".join(lines)


def _state_lines(session: AgentSession) -> list[str]:
    lines = []
    if session.paused:
        lines.append(f"paused: {session.pause_reason or 'by a person'}")
    running = "a unit is running" if session.activity != "idle" else "no unit running"
    if session.interrupt_requested:
        running += " · /stop: it stops at its next dispatch point"
    if session.step_requested:
        running += " · /next: one unit, then pause"
    lines.append(running)
    return lines


def _plan_lines(snapshot: dict[str, Any]) -> list[str]:
    tasks = snapshot.get("tasks") or []
    lines = []
    for plan in snapshot.get("plans") or []:
        lines.append(f"plan #{plan['id']} ({plan['status']}): {plan['summary']}")
        for task in (t for t in tasks if t["plan"] == plan["id"]):
            lines.append(f"  {task['key']} {task['status']}{_task_detail(task)}")
    if not lines:
        lines.append("no plans")
    return lines


def _task_detail(task: dict[str, Any]) -> str:
    board = task.get("board") or {}
    parts = [task["reason"]] if task.get("reason") else []
    if board.get("next_action"):  # names the blockers too
        parts.append(f"next: {board['next_action']}")
    return f" · {' · '.join(parts)}" if parts else ""


def _totals(totals: dict[str, Any]) -> str:
    counts = ", ".join(f"{n} {status}" for status, n in sorted(totals["counts"].items()))
    return (
        f"{counts or 'no tasks'} · ${totals['cost_spent']} spent · "
        f"{totals['scheduled_dispatches']} scheduled · {totals['stuck_units']} stuck · "
        f"{totals['workers_online']} workers online"
    )
