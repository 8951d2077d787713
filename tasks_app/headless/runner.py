"""One headless run: resolve the session and its plan, run units (inline in a thread of
this process, or on the Celery workers), watch the database for events, and end
with an outcome and its exit code.

The main thread never runs a unit: it polls for events, emits heartbeats, and
handles SIGINT/SIGTERM and ``--timeout`` by pausing the session with a reason, so a
running unit stops at its next dispatch point and ``--session ID`` resumes it later.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from types import FrameType
from typing import Any, Literal

from django.conf import settings
from django.db import close_old_connections, connections
from django.db.models import Sum
from django.utils import timezone

from agents_app.badge import badge_for
from agents_app.models import AgentSession, ReviewStatus, RiskDecision
from agents_app.runtime.llm import model_for
from agents_app.runtime.replay import Replay, replay_load
from agents_app.services import Actor, session_change_mode, session_create, session_set_paused
from sf_web.errors import SfError
from tasks_app.dispatch import IN_FLIGHT, dispatch, due_tasks, next_units, unit_recover
from tasks_app.engine import UnitOptions, unit_run
from tasks_app.headless.answers import Answers, answers_apply, asked_question
from tasks_app.headless.events import ExitCode, ResultEvent, TaskOutcome
from tasks_app.headless.observer import Observer, session_event
from tasks_app.models import (
    Plan,
    PlanSource,
    PlanStatus,
    Task,
    TaskRuntime,
    TaskSchedule,
    TaskStatus,
    Unit,
    UnitStatus,
)
from tasks_app.schemas import PlanSpec
from tasks_app.services import plan_accept, plan_create, schedule_ready

logger = logging.getLogger("sf.headless")
HEADLESS = Actor.system("headless")
PAUSE_PREFIX = "headless: "  # a pause headless made itself, and lifts when it resumes
LIFTABLE_PAUSES = (PAUSE_PREFIX, "assisted run control")
ACTIVE = (TaskStatus.IN_PROGRESS, TaskStatus.VERIFYING)
FINISHED = (TaskStatus.DONE, TaskStatus.CANCELLED)
POLL = 0.2
SETTLE_EVERY = 1.0  # seconds between checks that worker-driven units are all done
SESSION_FILE = "SF_HEADLESS_SESSION_FILE"


class SessionBusy(SfError):
    """Another headless process drives this session."""


@dataclass(frozen=True)
class HeadlessOptions:
    mode: Literal["autonomous", "next"] = "autonomous"
    project: Path | None = None
    session_id: int | None = None
    intent: str = ""
    plan: PlanSpec | None = None
    plan_source: str = PlanSource.FILE
    autonomous: bool = False
    permission_profile: str | None = None
    model_mode: str | None = None
    model: str | None = None
    timeout: float | None = None
    max_autonomous_continues: int | None = None
    replay_path: Path | None = None
    replay: Replay | None = None
    answers: Answers | None = None
    via_workers: bool = False


@dataclass
class Outcome:
    code: ExitCode
    status: Literal["success", "error", "timeout", "blocked", "cancelled", "reload", "usage"]
    reason: str
    waiting_for: list[str] = field(default_factory=list)


Emit = Callable[[Any], None]


class HeadlessRun:
    def __init__(self, options: HeadlessOptions, *, emit: Emit, progress: Callable[[str], None]):
        self.options = options
        self.emit = emit
        self.progress = progress
        self.started = time.monotonic()
        self.started_at = timezone.now()
        self.signal_received: int | None = None
        self.stop = threading.Event()  # no more units
        self.abandon = threading.Event()  # and do not wait for the running one
        self.units_run = 0
        self.reload = False
        self.crash: BaseException | None = None
        self.session: AgentSession | None = None
        self.plan: Plan | None = None
        self._lock: Any = None

    # --- the whole run -------------------------------------------------------------

    def execute(self) -> ResultEvent:
        """Set up (errors here change nothing), then run to an outcome."""
        session, resumed = self._session()
        self.session = session
        self._lock = session_lock(session.pk)
        if SESSION_FILE in os.environ:  # the supervisor resumes this session after a crash
            Path(os.environ[SESSION_FILE]).write_text(str(session.pk))
        observer = Observer(session.pk, from_start=not resumed)
        self.emit(session_event(session, resumed=resumed))
        self._recover_orphans(session)
        self._apply_session_options(session)
        plan = self._plan(session)
        self.plan = plan
        self._flush(observer)
        if plan.status == PlanStatus.PROPOSED:
            if not self.options.autonomous:
                return self._result(self._awaiting_acceptance(plan))
            plan_accept(
                plan=plan,
                actor=HEADLESS,
                autonomous=True,
                permission_profile=self._profile(),
                start=False,
            )
            plan.refresh_from_db()
        elif plan.status != PlanStatus.ACCEPTED:
            reason = f"plan {plan.pk} is {plan.status}: {plan.status_reason or 'nothing to run'}"
            return self._result(Outcome(ExitCode.ERROR, "error", reason))
        self._ready_to_build(session)
        self._flush(observer)
        outcome = self._watch(observer)
        self._flush(observer)
        return self._result(outcome)

    def install_signal_handlers(self) -> None:
        def handler(signum: int, _frame: FrameType | None) -> None:
            if self.signal_received is None:
                self.signal_received = signum
                self.progress(f"{signal.Signals(signum).name}: stopping at the next safe point")
            else:  # a second signal: stop waiting for the unit
                self.abandon.set()

        signal.signal(signal.SIGINT, handler)
        signal.signal(signal.SIGTERM, handler)

    # --- set-up ---------------------------------------------------------------------

    def _session(self) -> tuple[AgentSession, bool]:
        from tasks_app.replaying import project_for_path

        options = self.options
        if options.session_id is not None:
            try:
                session = AgentSession.objects.select_related("project").get(pk=options.session_id)
            except AgentSession.DoesNotExist:
                raise SfError(f"--session {options.session_id}: no such session") from None
            return session, True
        assert options.project is not None  # the command checked
        project = project_for_path(options.project)
        title = options.intent or (options.plan.summary if options.plan else "headless run")
        session = session_create(
            project=project,
            title=f"headless: {title}"[:300],
            axes={"work_mode": "plan", "model_mode": "deep", "surface": "headless"},
        )
        return AgentSession.objects.select_related("project").get(pk=session.pk), False

    def _apply_session_options(self, session: AgentSession) -> None:
        """Driver, replay trace and limits are the run's; they are stored so that the
        dashboard, workers and a resumed run see the same."""
        options = self.options
        fields: dict[str, Any] = {"driver": "workers" if options.via_workers else "inline"}
        if options.replay_path is not None:
            fields["replay_trace"] = str(options.replay_path.resolve())
        if options.max_autonomous_continues is not None:
            fields["max_autonomous_continues"] = options.max_autonomous_continues
        if session.surface != "headless" and session.activity == "idle":
            session_change_mode(
                session=session,
                changes={"surface": "headless"},
                reason="driven by sf headless",
                actor=HEADLESS,
            )
        AgentSession.objects.filter(pk=session.pk).update(**fields)

    def _plan(self, session: AgentSession) -> Plan:
        """The session's open plan, or a new one from --plan-file, the trace or --intent."""
        open_plan = (
            Plan.objects.filter(
                session=session, status__in=(PlanStatus.PROPOSED, PlanStatus.ACCEPTED)
            )
            .order_by("-created_at", "-pk")
            .first()
        )
        if open_plan is not None:
            return open_plan
        options = self.options
        if options.plan is not None:
            return plan_create(session=session, spec=options.plan, source=options.plan_source)
        if options.intent:
            from tasks_app.planning import plan_from_intent

            self.progress("planning from the intent (deep model)")
            return plan_from_intent(session=session, intent=options.intent, model=options.model)
        raise SfError(
            f"session {session.pk} has no open plan: give --intent TEXT or --plan-file PATH"
        )

    def _profile(self) -> str | None:
        if self.options.permission_profile:
            return self.options.permission_profile
        if self.options.replay is not None:
            profile = self.options.replay.header.get("permission_profile")
            return str(profile) if profile else None
        return None

    def _ready_to_build(self, session: AgentSession) -> None:
        """An accepted plan: lift our own pauses, autonomous run control for the
        autonomous mode, the chosen profile and model mode."""
        session.refresh_from_db()
        if session.paused and session.pause_reason.startswith(LIFTABLE_PAUSES):
            session_set_paused(
                session=session, paused=False, reason="resumed by sf headless", actor=HEADLESS
            )
            session.refresh_from_db()
        changes: dict[str, str] = {}
        if self.options.mode == "autonomous" and session.run_control != "autonomous":
            changes["run_control"] = "autonomous"
        if self.options.permission_profile:
            changes["permission_profile"] = self.options.permission_profile
        if self.options.model_mode:
            changes["model_mode"] = self.options.model_mode
        if session.work_mode == "plan":
            changes["work_mode"] = "build"
        if changes:
            session_change_mode(
                session=session, changes=changes, reason="sf headless options", actor=HEADLESS
            )

    def _recover_orphans(self, session: AgentSession) -> None:
        """Units left running by a headless process that died (we hold the session's
        lock, so no live process is running them): crash recovery."""
        if session.driver != "inline":
            return  # worker-driven units are the workers' sweep's to recover
        for unit in Unit.objects.filter(
            task__plan__session=session, status=UnitStatus.RUNNING
        ).select_related("task__plan"):
            if unit_recover(unit=unit, cause="its headless process died"):
                self.progress(f"recovered unit {unit.attempt} of {unit.task.key} (process died)")

    # --- running --------------------------------------------------------------------

    def _watch(self, observer: Observer) -> Outcome:
        assert self.session is not None
        session_id = self.session.pk
        engine: threading.Thread | None = None
        if self.options.via_workers:
            self._check_workers()
            dispatch(session_id=session_id)
        else:
            engine = threading.Thread(target=self._engine, name="sf-headless-engine", daemon=True)
            engine.start()
        deadline = self.started + self.options.timeout if self.options.timeout else None
        heartbeat_every = settings.SF_HEADLESS_HEARTBEAT.total_seconds()
        next_heartbeat = time.monotonic() + heartbeat_every
        stopping: tuple[ExitCode, str, float] | None = None
        next_settle_check = time.monotonic()
        while True:
            self._flush(observer)
            now = time.monotonic()
            if now >= next_heartbeat:
                self.emit(observer.heartbeat(now - self.started))
                next_heartbeat = now + heartbeat_every
            if stopping is None:
                if self.signal_received is not None:
                    name = signal.Signals(self.signal_received).name
                    stopping = self._stop(ExitCode.CANCELLED, f"cancelled by {name}")
                elif deadline is not None and now >= deadline:
                    stopping = self._stop(
                        ExitCode.ERROR, f"timed out after {self.options.timeout:g} s"
                    )
            if engine is not None:
                if not engine.is_alive():
                    break
            elif now >= next_settle_check:  # it dispatches too: once a second is plenty
                if self._workers_settled(session_id):
                    break
                next_settle_check = now + SETTLE_EVERY
            if stopping is not None and (now >= stopping[2] or self.abandon.is_set()):
                self.progress("a unit is still running; leaving it for crash recovery")
                break
            self.stop.wait(POLL)
        if stopping is not None:
            code, reason, _ = stopping
            resume = f"; resume with --session {session_id}"
            if code == ExitCode.CANCELLED:
                return Outcome(code, "cancelled", reason + resume)
            return Outcome(code, "timeout", reason + resume)
        if self.crash is not None:
            return Outcome(ExitCode.ERROR, "error", f"engine error: {self.crash}")
        if self.reload:
            return Outcome(
                ExitCode.RELOAD,
                "reload",
                f"ran {self.units_run} units, the limit of one process "
                f"(SF_HEADLESS_UNITS_PER_PROCESS); restart with --session {session_id}",
            )
        return self._settled_outcome()

    def _check_workers(self) -> None:
        from sf_web.status import worker_statuses

        if settings.CELERY_TASK_ALWAYS_EAGER:
            self.progress("embedded mode (no REDIS_URL): the units run in this process")
        elif not any(worker.online for worker in worker_statuses()):
            self.progress(
                "no worker is online: the units wait for one (scripts/run.sh starts one, "
                "or `celery -A sf_web worker`)"
            )

    def _stop(self, code: ExitCode, reason: str) -> tuple[ExitCode, str, float]:
        """Pause the session (state kept); a running unit stops at its next dispatch
        point. Returns what to exit with and until when to wait for the unit."""
        assert self.session is not None
        self.stop.set()
        session = AgentSession.objects.get(pk=self.session.pk)
        session_set_paused(
            session=session, paused=True, reason=PAUSE_PREFIX + reason, actor=HEADLESS
        )
        self.progress(f"{reason}: waiting for the running unit to stop")
        return code, reason, time.monotonic() + settings.SF_HEADLESS_GRACE.total_seconds()

    def _engine(self) -> None:
        """The inline driver: run units until nothing is runnable (or we are told to
        stop), settling what --answers answers in between."""
        assert self.session is not None
        session_id = self.session.pk
        options = UnitOptions(
            model=self.options.model,
            answers=self.options.answers.ask_user if self.options.answers else {},
        )
        limit = settings.SF_HEADLESS_UNITS_PER_PROCESS
        try:
            while not self.stop.is_set():
                task_id = self._next_task(session_id)
                if task_id is None:
                    if self.options.answers and answers_apply(
                        self.options.answers, session_id=session_id
                    ):
                        continue
                    return
                if limit and self.units_run >= limit:
                    self.reload = True
                    return
                worker = f"headless-{os.getpid()}"
                report = unit_run(task_id=task_id, worker=worker, options=options)
                if report is None:
                    return
                self.units_run += 1
                if self.options.mode == "next":
                    return
        except BaseException as exc:
            logger.exception("headless engine error")
            self.crash = exc
        finally:
            connections.close_all()

    def _next_task(self, session_id: int) -> int | None:
        session = AgentSession.objects.get(pk=session_id)
        if self.options.mode == "next":
            if session.paused or session.status != "active":
                return None
            for plan in Plan.objects.filter(session=session, status=PlanStatus.ACCEPTED):
                schedule_ready(plan=plan)
            due = due_tasks(session_id)
            return due[0] if due else None
        task_ids = next_units(session)
        return task_ids[0] if task_ids else None

    def _workers_settled(self, session_id: int) -> bool:
        """Via workers: no unit in flight (from its claim until its runtime row is gone,
        review and merge included) and nothing the engine would dispatch.

        Due work is looked for *before* work in flight: a worker's claim moves a task
        from due to in flight in one transaction, so in this order nothing slips
        between the two checks."""
        if not self.stop.is_set():
            close_old_connections()
            session = AgentSession.objects.get(pk=session_id)
            if next_units(session):
                dispatch(session_id=session_id)
                return False
            answers = self.options.answers
            if answers and answers_apply(answers, session_id=session_id):
                dispatch(session_id=session_id)
                return False
        return not self._in_flight(session_id)

    @staticmethod
    def _in_flight(session_id: int) -> bool:
        return (
            Task.objects.filter(plan__session_id=session_id, status__in=ACTIVE).exists()
            or TaskSchedule.objects.filter(
                task__plan__session_id=session_id, status__in=IN_FLIGHT
            ).exists()
            or TaskRuntime.objects.filter(task__plan__session_id=session_id).exists()
        )

    # --- the outcome ----------------------------------------------------------------

    def _settled_outcome(self) -> Outcome:
        assert self.plan is not None
        tasks = list(self.plan.tasks.order_by("position"))
        if tasks and all(task.status in FINISHED for task in tasks):
            done = sum(task.status == TaskStatus.DONE for task in tasks)
            return Outcome(ExitCode.SUCCESS, "success", f"{done} of {len(tasks)} tasks done")
        failed = [task for task in tasks if task.status == TaskStatus.FAILED]
        if failed:
            names = ", ".join(f"{t.key} ({t.status_reason})" for t in failed)
            return Outcome(ExitCode.ERROR, "error", f"failed: {names}")
        waiting = self._waiting_for(tasks)
        if self.options.mode == "next" and self.units_run:
            if waiting and any(t.status == TaskStatus.BLOCKED for t in tasks):
                return Outcome(ExitCode.BLOCKED, "blocked", "the unit needs a person", waiting)
            return Outcome(ExitCode.SUCCESS, "success", "one unit ran; `next` runs another")
        if waiting:
            return Outcome(ExitCode.BLOCKED, "blocked", waiting[0], waiting)
        return Outcome(ExitCode.ERROR, "error", "nothing is runnable and the plan is not done")

    def _waiting_for(self, tasks: list[Task]) -> list[str]:
        assert self.session is not None
        session = AgentSession.objects.get(pk=self.session.pk)
        waiting = []
        if session.paused:
            waiting.append(f"session paused: {session.pause_reason or 'by a person'}")
        for decision in RiskDecision.objects.filter(
            session=session, review_status=ReviewStatus.PENDING
        ).order_by("pk"):
            waiting.append(
                f"approve or reject decision {decision.pk} ({decision.tool}: {decision.reason}) "
                "at /approvals/ or in the admin"
            )
        for task in tasks:
            question = asked_question(task) if task.status == TaskStatus.BLOCKED else None
            if question is not None:
                waiting.append(f"answer {task.key}'s question (--answers): {question}")
            elif task.status == TaskStatus.BLOCKED and not task.status_reason.startswith(
                "approval needed"
            ):
                waiting.append(f"unblock {task.key}: {task.status_reason}")
            elif task.status == TaskStatus.REVIEW:
                waiting.append(f"review {task.key} on the task board")
            elif task.status == TaskStatus.PAUSED:
                waiting.append(f"resume {task.key}: {task.status_reason}")
        return waiting

    def _awaiting_acceptance(self, plan: Plan) -> Outcome:
        reason = (
            f"plan {plan.pk} awaits acceptance: review it on the dashboard, or "
            f"`manage.py sf plan accept {plan.pk} --autonomous`, or run headless with --autonomous"
        )
        return Outcome(ExitCode.BLOCKED, "blocked", reason, [reason])

    def _result(self, outcome: Outcome) -> ResultEvent:
        session, plan = self.session, self.plan
        tasks = list(plan.tasks.order_by("position")) if plan is not None else []
        cost = (
            Unit.objects.filter(task__plan__session=session).aggregate(total=Sum("cost"))["total"]
            if session is not None
            else None
        )
        return ResultEvent(
            at=timezone.now(),
            ok=outcome.code == ExitCode.SUCCESS,
            exit_code=int(outcome.code),
            status=outcome.status,
            reason=outcome.reason,
            session=session.pk if session else None,
            plan=plan.pk if plan else None,
            units=Unit.objects.filter(task__plan=plan, started_at__gte=self.started_at).count()
            if plan is not None
            else 0,
            cost_usd=str(cost or Decimal("0")),
            duration_s=round(time.monotonic() - self.started, 3),
            tasks=[
                TaskOutcome(key=t.key, title=t.title, status=t.status, reason=t.status_reason)
                for t in tasks
            ],
            waiting_for=outcome.waiting_for,
            resume=(
                f"python manage.py sf headless --session {session.pk}"
                if session is not None and outcome.code != ExitCode.SUCCESS
                else ""
            ),
        )

    def _flush(self, observer: Observer) -> None:
        for event in observer.poll():
            self.emit(event)

    def badge_text(self) -> str:
        if self.session is None:
            return "SF"
        return badge_for(AgentSession.objects.get(pk=self.session.pk)).terminal_title


# --- one driver per session -------------------------------------------------------------

LOCK_NAMESPACE = 0x5346  # "SF"


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


def model_check(options: HeadlessOptions) -> None:
    """A live run needs its models configured: fail before anything is written.

    Stopping at plan acceptance with a plan file needs none; neither does a replay,
    nor a resumed session that answers from its trace."""
    if options.replay is not None:
        return
    if options.session_id is not None and (
        AgentSession.objects.filter(pk=options.session_id).exclude(replay_trace="").exists()
    ):
        return
    if options.intent:
        model_for("deep", options.model)
    if options.autonomous or options.session_id is not None or options.mode == "next":
        model_for(options.model_mode or "smart", options.model)


def replay_check(path: Path) -> Replay:
    return replay_load(path)
