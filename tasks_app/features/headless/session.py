"""The session and plan a headless run drives, set up before any unit runs (errors
here change nothing), and the lock that makes this process its only driver."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import connections

from agents_app.axes import NEW_SESSION_AXES, PermissionProfile, RunControl, Surface, WorkMode
from agents_app.models import Activity, AgentSession, PauseCause, SessionDriver
from agents_app.services import session_change_mode, session_create, session_set_paused
from sf_core.actors import Actor
from sf_core.errors import SfError
from tasks_app.engine.replaying import project_for_path
from tasks_app.engine.sweep import unit_recover
from tasks_app.features.headless.options import HeadlessOptions
from tasks_app.models import FINISHED_PLAN_STATUSES, Plan, PlanStatus, Unit, UnitStatus
from tasks_app.planning import LintSetting, interrupted_intent, plan_from_intent
from tasks_app.services import plan_create

HEADLESS = Actor.system("headless")
PAUSE_PREFIX = "headless: "  # how a pause headless made itself reads to people
# Pauses headless lifts when it resumes: its own, and the one after an assisted unit.
LIFTABLE_PAUSES = frozenset({PauseCause.HEADLESS, PauseCause.ASSISTED})
LOCK_NAMESPACE = 0x5346  # "SF"
# A new headless session reads only, unless --permission-profile (or the replayed
# trace's header) says otherwise: nobody watches a CI run to catch a write.
HEADLESS_DEFAULT_PROFILE = PermissionProfile.RESTRICTED.value
Progress = Callable[[str], None]


class SessionBusy(SfError):
    """Another headless process drives this session."""


def session_resolve(options: HeadlessOptions) -> tuple[AgentSession, bool]:
    """The session to drive and whether it is resumed (``--session``) or new."""
    if options.session_id is not None:
        try:
            session = AgentSession.objects.select_related("project").get(pk=options.session_id)
        except AgentSession.DoesNotExist:
            raise SfError(f"--session {options.session_id}: no such session") from None
        return session, True
    assert options.project is not None  # the command checked
    project = project_for_path(options.project, created_by=options.user)
    title = options.intent or (options.plan.summary if options.plan else "headless run")
    session = session_create(
        project=project,
        created_by=options.user,
        title=f"headless: {title}"[:300],
        axes={
            **NEW_SESSION_AXES,
            "surface": Surface.HEADLESS,
            "permission_profile": profile_for(options) or HEADLESS_DEFAULT_PROFILE,
        },
    )
    return AgentSession.objects.select_related("project").get(pk=session.pk), False


def session_configure(session: AgentSession, options: HeadlessOptions) -> None:
    """Driver, replay trace and limits are the run's; they are stored so that the
    dashboard, workers and a resumed run see the same."""
    driver = SessionDriver.WORKERS if options.via_workers else SessionDriver.INLINE
    fields: dict[str, Any] = {"driver": driver}
    if options.replay_path is not None:
        fields["replay_trace"] = str(options.replay_path.resolve())
    if options.max_autonomous_continues is not None:
        fields["max_autonomous_continues"] = options.max_autonomous_continues
    if session.surface != Surface.HEADLESS and session.activity == Activity.IDLE:
        session_change_mode(
            session=session,
            changes={"surface": Surface.HEADLESS},
            reason="driven by sf headless",
            actor=HEADLESS,
        )
    AgentSession.objects.filter(pk=session.pk).update(**fields)


RESUMABLE_PLANS = (PlanStatus.PROPOSED, PlanStatus.ACCEPTED, *FINISHED_PLAN_STATUSES)


def plan_resolve(
    session: AgentSession, options: HeadlessOptions, progress: Progress, profile: str | None = None
) -> Plan:
    """The session's open plan, or a new one from --plan-file, the trace or --intent
    (or the intent of a planning a signal or --timeout cut short). ``profile``: the
    one the plan will run under, for the plan lint.

    A plan that finished (done, failed, cancelled) is still the session's plan: a
    resumed run reports how it ended instead of starting another."""
    open_plan = (
        Plan.objects.filter(session=session, status__in=(*RESUMABLE_PLANS,))
        .order_by("-created_at", "-pk")
        .first()
    )
    if open_plan is not None:
        return open_plan
    if options.plan is not None:
        return plan_create(session=session, spec=options.plan, source=options.plan_source)
    intent = options.intent or interrupted_intent(session)
    if intent:
        progress("planning from the intent (deep model)")
        # A resumed session (--session, a restart after a crash) does not pay twice
        # for a planning call it made already: its answer is in the session's trace.
        return plan_from_intent(
            session=session,
            intent=intent,
            model=options.model,
            reuse=options.session_id is not None,
            lint=LintSetting(
                profile=profile or session.permission_profile,
                unattended=options.autonomous,
            ),
        )
    raise SfError(f"session {session.pk} has no open plan: give --intent TEXT or --plan-file PATH")


def profile_for(options: HeadlessOptions) -> str | None:
    """The permission profile asked for, or the one the replayed trace was recorded with."""
    if options.permission_profile:
        return options.permission_profile
    if options.replay is not None:
        profile = options.replay.header.get("permission_profile")
        return str(profile) if profile else None
    return None


def session_ready_to_build(session: AgentSession, options: HeadlessOptions) -> None:
    """An accepted plan: lift our own pauses, autonomous run control for the
    autonomous mode, the chosen profile and model mode."""
    session.refresh_from_db()
    if session.paused and session.pause_cause in LIFTABLE_PAUSES:
        session_set_paused(
            session=session, paused=False, reason="resumed by sf headless", actor=HEADLESS
        )
        session.refresh_from_db()
    changes: dict[str, str] = {}
    if options.mode == "autonomous" and session.run_control != RunControl.AUTONOMOUS:
        changes["run_control"] = RunControl.AUTONOMOUS
    if options.permission_profile:
        changes["permission_profile"] = options.permission_profile
    if options.model_mode:
        changes["model_mode"] = options.model_mode
    if session.work_mode == WorkMode.PLAN:
        changes["work_mode"] = WorkMode.BUILD
    if changes:
        session_change_mode(
            session=session, changes=changes, reason="sf headless options", actor=HEADLESS
        )


def orphans_recover(session: AgentSession, progress: Progress) -> None:
    """Units left running by a headless process that died (we hold the session's
    lock, so no live process is running them): crash recovery."""
    if session.driver != SessionDriver.INLINE:
        return  # worker-driven units are the workers' sweep's to recover
    for unit in Unit.objects.filter(
        task__plan__session=session, status=UnitStatus.RUNNING
    ).select_related("task__plan"):
        if unit_recover(unit=unit, cause="its headless process died"):
            progress(f"recovered unit {unit.attempt} of {unit.task.key} (process died)")


def session_lock(session_id: int) -> Any:
    """Hold a PostgreSQL advisory lock for the session on a connection of its own, for
    as long as this process lives: two headless processes never drive one session,
    and a dead one's lock is gone with its connection. (SQLite: one process anyway.)"""
    connection = connections["default"]
    if connection.vendor != "postgresql":
        return None
    raw = connection.get_new_connection(connection.get_connection_params())
    raw.autocommit = True
    row = raw.execute(
        "SELECT pg_try_advisory_lock(%s, %s)", [LOCK_NAMESPACE, session_id]
    ).fetchone()
    if not row or not row[0]:
        raw.close()
        raise SessionBusy(f"session {session_id} is already driven by another headless process")
    return raw
