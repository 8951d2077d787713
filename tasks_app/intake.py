"""From the web to a plan: an intent planned on a worker, or an uploaded plan file.

``planning_start`` checks the intent and the pre-flight (a model for planning, or a
recorded trace to answer instead), writes a ``PlanRequest`` in the *planning* state and
after commit sends ``tasks_app.plan_request_run`` by name to the workers (embedded,
without a broker: a background thread, as dispatch does). ``plan_request_run`` switches
the session to plan work mode if it must (a logged transition), calls
``plan_from_intent`` and records the outcome; every change is broadcast on commit so
that the session page's plans follow live.
"""

from __future__ import annotations

import logging
import tempfile
import threading
from functools import partial
from pathlib import Path

from celery import current_app
from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.utils import timezone

from agents_app.axes import ModelMode, PermissionProfile, RunControl, WorkMode
from agents_app.models import AgentSession, Project
from agents_app.preflight import PLANNING_MODE, model_problem, replay_trace_path
from agents_app.runtime.llm import ModelNotConfigured
from agents_app.runtime.replay import replay_activate, replay_deactivate
from agents_app.services import session_change_mode, session_create
from sf_core.actors import Actor
from sf_core.errors import CommandRejected, PlanInvalid, SfError
from sf_core.queues import WorkKind, queue_for
from tasks_app.models import Plan, PlanRequest, PlanRequestStatus, PlanSource
from tasks_app.plan_files import MAX_PLAN_BYTES, plan_file_read
from tasks_app.planning import plan_from_intent, planner_completion
from tasks_app.replays import planning_replay
from tasks_app.schemas import PlanSpec
from tasks_app.services import plan_accept, plan_create, plans_changed
from tasks_app.waiting import planning_claimed, planning_completion

logger = logging.getLogger("sf.planning")
PLAN_REQUEST_TASK = "tasks_app.plan_request_run"  # registered in tasks_app/tasks.py
PLANNER = Actor.system("planner")
EMPTY_INTENT = "say what you want first, e.g. 'add a --verbose flag to the CLI'"
UNRESTRICTED_UNCONFIRMED = (
    "the unrestricted profile lets every tool call proceed without asking (writes "
    "anywhere, dangerous git): tick 'I mean unrestricted' to confirm, or choose another profile"
)


def planning_check(
    *, intent: str, replay: str = "", session: AgentSession | None = None, trace: str = ""
) -> str:
    """Refuse an empty intent or planning without a model or a trace, before anything
    is written. Returns the trace the session will answer from ("" for a live model):
    ``trace`` (a path SF chose, the demo's), else the offered trace named ``replay``,
    else the session's own."""
    if not intent.strip():
        raise CommandRejected(EMPTY_INTENT)
    if not trace and replay:
        trace = str(replay_trace_path(replay))
    elif not trace and session is not None:
        trace = session.replay_trace
    problem = model_problem(PLANNING_MODE, replay_trace=trace)
    if problem:
        raise ModelNotConfigured(problem)
    return trace


def planning_start(
    *, session: AgentSession, intent: str, actor: Actor, replay: str = "", trace: str = ""
) -> PlanRequest:
    """A plan request in the *planning* state, handed to a worker after commit."""
    trace = planning_check(intent=intent, replay=replay, session=session, trace=trace)
    with transaction.atomic():
        if trace != session.replay_trace:
            AgentSession.objects.filter(pk=session.pk).update(replay_trace=trace)
        request = PlanRequest.objects.create(
            session=session,
            intent=intent.strip(),
            requested_by=actor.user if isinstance(actor.user, User) else None,
        )
        plans_changed(session_id=session.pk)
        transaction.on_commit(partial(_hand_over, request.pk))
    return request


def project_intent_start(
    *, project: Project, intent: str, actor: Actor, replay: str = "", trace: str = ""
) -> PlanRequest:
    """The project page's box: a new session with the default axes, then planning."""
    planning_check(intent=intent, replay=replay, trace=trace)
    with transaction.atomic():
        session = session_create(
            project=project,
            created_by=actor.user if isinstance(actor.user, User) else None,
            title=intent.strip().splitlines()[0][:120],
        )
        return planning_start(
            session=session, intent=intent, actor=actor, replay=replay, trace=trace
        )


def _hand_over(request_id: int) -> None:
    if settings.CELERY_TASK_ALWAYS_EAGER:  # embedded: no broker, plan in a thread
        threading.Thread(
            target=_plan_inline, args=(request_id,), name=f"sf-plan-{request_id}", daemon=True
        ).start()
        return
    queue = queue_for(WorkKind.SHORT)  # read now: tests point it at their worker
    current_app.send_task(PLAN_REQUEST_TASK, args=[request_id], queue=queue)


def _plan_inline(request_id: int) -> None:
    try:
        plan_request_run(request_id=request_id)
    finally:
        connection.close()


def plan_request_run(*, request_id: int) -> PlanRequest:
    """Plan one request (the worker's side). A request no longer planning is left
    alone (a duplicate delivery); any failure ends it *failed* with the reason."""
    request = PlanRequest.objects.get(pk=request_id)
    claimed = PlanRequest.objects.filter(
        pk=request_id, status=PlanRequestStatus.PLANNING, started_at__isnull=True
    ).update(started_at=timezone.now())
    if claimed != 1:  # finished, or another delivery is planning it
        return request
    planning_claimed(request)
    session = AgentSession.objects.select_related("project").get(pk=request.session_id)
    try:
        _to_plan_mode(session, request)
        plan = _plan(session, request)
    except Exception as exc:
        if not isinstance(exc, SfError):  # a rule's refusal needs no traceback
            logger.exception("planning request %s failed", request.pk)
        return _finish(request, PlanRequestStatus.FAILED, reason=_reason(exc))
    return _finish(request, PlanRequestStatus.PLANNED, plan=plan)


def _to_plan_mode(session: AgentSession, request: PlanRequest) -> None:
    if session.work_mode == WorkMode.PLAN:
        return
    session_change_mode(
        session=session,
        changes={"work_mode": WorkMode.PLAN},
        reason=f"planning the intent of request {request.pk}",
        actor=PLANNER,
    )
    session.refresh_from_db()


def _plan(session: AgentSession, request: PlanRequest) -> Plan:
    """The plan of ``request``; the session page says while it waits for the model."""
    completion = planning_completion(request, planner_completion)
    if not session.replay_trace:
        return plan_from_intent(session=session, intent=request.intent, completion=completion)
    replay = planning_replay(session.replay_trace)
    model = replay_activate(replay)
    try:
        return plan_from_intent(
            session=session, intent=request.intent, model=model, completion=completion
        )
    finally:
        replay_deactivate(replay)


def _finish(
    request: PlanRequest, status: str, *, reason: str = "", plan: Plan | None = None
) -> PlanRequest:
    with transaction.atomic():
        PlanRequest.objects.filter(pk=request.pk).update(
            status=status, status_reason=reason, plan=plan, finished_at=timezone.now()
        )
        plans_changed(session_id=request.session_id)
    request.refresh_from_db()
    logger.info("planning request %s %s%s", request.pk, status, f": {reason}" if reason else "")
    return request


def _reason(exc: Exception) -> str:
    text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return text[:1000]


# --- plan files and the plan page ---------------------------------------------------------


def plan_upload_read(*, name: str, content: bytes) -> PlanSpec:
    """A plan file's content read and validated as ``sf plan import`` reads the file;
    the messages name ``name`` (its suffix says the format). Writes nothing."""
    name = Path(name or "plan").name
    if len(content) > MAX_PLAN_BYTES:
        raise PlanInvalid(f"{name}: larger than {MAX_PLAN_BYTES // 1024} KiB")
    with tempfile.TemporaryDirectory(prefix="sf-plan-") as folder:
        path = Path(folder) / name
        path.write_bytes(content)
        try:
            return plan_file_read(path)
        except PlanInvalid as exc:
            raise PlanInvalid(str(exc).replace(str(path), name)) from None


def plan_upload(*, session: AgentSession, name: str, content: bytes) -> Plan:
    """An uploaded plan file, read and validated as ``sf plan import`` reads one; the
    messages name the uploaded file. Nothing is written when anything is wrong."""
    spec = plan_upload_read(name=name, content=content)
    return plan_create(session=session, spec=spec, source=PlanSource.FILE)


def units_problem(session: AgentSession, *, autonomous: bool) -> str:
    """Why the units of an accepted plan could not ask a model, or "" (the pre-flight
    of **Run autonomously**: it runs in smart model mode)."""
    if not autonomous and session.run_control == RunControl.MANUAL:
        return ""  # nothing runs until a person asks
    mode = ModelMode.SMART if autonomous else session.model_mode
    return model_problem(mode, replay_trace=session.replay_trace)


def plan_start(
    *,
    plan: Plan,
    actor: Actor,
    autonomous: bool,
    permission_profile: str | None,
    replay: str = "",
    confirmed: bool = False,
) -> Plan:
    """**Accept** / **Run autonomously** from the plan page, refused before anything
    changes when its units would have no model to ask, or when it raises the profile to
    unrestricted without the person's confirmation (as ``--confirm`` is for commands).
    ``replay`` names an offered trace for the units to answer from instead."""
    session = plan.session
    raising = session.permission_profile != PermissionProfile.UNRESTRICTED
    if permission_profile == PermissionProfile.UNRESTRICTED and raising and not confirmed:
        raise CommandRejected(UNRESTRICTED_UNCONFIRMED)
    with transaction.atomic():
        if replay:
            session.replay_trace = str(replay_trace_path(replay))
            AgentSession.objects.filter(pk=session.pk).update(replay_trace=session.replay_trace)
        problem = units_problem(session, autonomous=autonomous)
        if problem:
            raise ModelNotConfigured(problem)
        return plan_accept(
            plan=plan, actor=actor, autonomous=autonomous, permission_profile=permission_profile
        )
