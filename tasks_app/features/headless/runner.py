"""One headless run: resolve the session and its plan, run units (inline in a thread of
this process, or on the Celery workers), watch the database for events, and end
with an outcome and its exit code.

The units run through the engine's own drivers: ``drain.drain`` inline (``next``
is ``drain(limit=1, step=True)``), ``dispatch.dispatch`` via the workers. The main
thread never runs a unit: it polls for events, emits heartbeats, and handles
SIGINT/SIGTERM and ``--timeout`` by pausing the session with a reason, so a running
unit stops at its next dispatch point and ``--session ID`` resumes it later.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, Literal

from django.conf import settings
from django.db import close_old_connections, connections
from django.utils import timezone

from agents_app.badge import badge_for
from agents_app.models import AgentSession, PauseCause
from agents_app.services import session_set_paused
from tasks_app.engine.dispatch import IN_FLIGHT, dispatch, next_due_at, next_units
from tasks_app.engine.drain import drain
from tasks_app.engine.outage import provider_resume, provider_waiting
from tasks_app.engine.values import UnitOptions
from tasks_app.features.headless.answers import answers_apply
from tasks_app.features.headless.events import ExitCode, ResultEvent
from tasks_app.features.headless.observer import Observer, session_event
from tasks_app.features.headless.options import HeadlessOptions
from tasks_app.features.headless.outcome import (
    Outcome,
    awaiting_acceptance,
    lint_refused,
    result_event,
    settled_outcome,
)
from tasks_app.features.headless.session import (
    HEADLESS,
    PAUSE_PREFIX,
    orphans_recover,
    plan_resolve,
    profile_for,
    session_configure,
    session_lock,
    session_ready_to_build,
    session_resolve,
)
from tasks_app.features.headless.supervisor import SESSION_FILE
from tasks_app.models import (
    ACTIVE_MERGE_STATUSES,
    FINISHED_PLAN_STATUSES,
    MergeRequest,
    Plan,
    PlanSource,
    PlanStatus,
    Task,
    TaskRuntime,
    TaskSchedule,
    TaskStatus,
)
from tasks_app.plan_lint import lint_errors
from tasks_app.planning import planning_interrupted
from tasks_app.selectors import worker_statuses
from tasks_app.services import plan_accept

logger = logging.getLogger("sf.headless")
ACTIVE = (TaskStatus.IN_PROGRESS, TaskStatus.VERIFYING)
POLL = 0.2
SETTLE_EVERY = 1.0  # seconds between checks that worker-driven units are all done

Emit = Callable[[Any], None]


class PlanningCut(BaseException):
    """A signal or ``--timeout`` while planning: raised where the main thread is (a
    model call's socket read, a backoff's sleep), so planning stops at once. Not an
    ``Exception``: nothing on the way (litellm, httpx, the router) may catch it."""

    def __init__(self, code: ExitCode, reason: str) -> None:
        super().__init__(reason)
        self.code, self.reason = code, reason


@dataclass(frozen=True)
class Stopping:
    """A signal or the timeout: exit with ``code`` once the running unit stops (or at
    ``until``, leaving it for crash recovery)."""

    code: ExitCode
    reason: str
    until: float


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
        self.planning = False  # a signal or the timeout cuts planning short (PlanningCut)
        self._lock: Any = None

    # --- the whole run -------------------------------------------------------------

    def execute(self) -> ResultEvent:
        """Set up (errors here change nothing), then run to an outcome."""
        session, resumed = session_resolve(self.options)
        self.session = session
        self._lock = session_lock(session.pk)
        if SESSION_FILE in os.environ:  # the supervisor resumes this session after a crash
            Path(os.environ[SESSION_FILE]).write_text(str(session.pk))
        observer = Observer(session.pk, from_start=not resumed)
        self.emit(session_event(session, resumed=resumed))
        orphans_recover(session, self.progress)
        session_configure(session, self.options)
        planned = self._planned(session)
        if isinstance(planned, Outcome):
            return self._result(planned)
        plan = self.plan = planned
        self._flush(observer)
        if plan.status == PlanStatus.PROPOSED:
            if not self.options.autonomous:
                return self._result(awaiting_acceptance(plan))
            if plan.source == PlanSource.MODEL and lint_errors(plan.lint):
                return self._result(lint_refused(plan))
            plan_accept(
                plan=plan,
                actor=HEADLESS,
                autonomous=True,
                permission_profile=profile_for(self.options),
                start=False,
            )
            plan.refresh_from_db()
        elif plan.status not in (PlanStatus.ACCEPTED, *FINISHED_PLAN_STATUSES):
            reason = f"plan {plan.pk} is {plan.status}: {plan.status_reason or 'nothing to run'}"
            return self._result(Outcome(ExitCode.ERROR, "error", reason))
        session_ready_to_build(session, self.options)
        self._flush(observer)
        outcome = self._watch(observer)
        self._flush(observer)
        return self._result(outcome)

    def release(self) -> None:
        """Let go of the session's lock (a process exit would too; a run in a test or a
        long-lived process must not leave its connection open)."""
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def install_signal_handlers(self) -> None:
        def handler(signum: int, _frame: FrameType | None) -> None:
            if self.signal_received is None:
                self.signal_received = signum
                self.progress(f"{signal.Signals(signum).name}: stopping at the next safe point")
                if self.planning:  # nothing to wait for: the model's answer is cut short
                    raise PlanningCut(
                        ExitCode.CANCELLED, f"cancelled by {signal.Signals(signum).name}"
                    )
            else:  # a second signal: stop waiting for the unit
                self.abandon.set()

        signal.signal(signal.SIGINT, handler)
        signal.signal(signal.SIGTERM, handler)

    def badge_text(self) -> str:
        if self.session is None:
            return "SF"
        return badge_for(AgentSession.objects.get(pk=self.session.pk)).terminal_title

    # --- planning -------------------------------------------------------------------

    def _planned(self, session: AgentSession) -> Plan | Outcome:
        """The session's plan (``plan_resolve``: planning from --intent may take
        minutes). A signal or ``--timeout`` cuts planning where it is — the model's
        answer included — and pauses the session; ``--session ID`` plans again."""
        try:
            with self._planning_deadline():
                if self.signal_received is not None:
                    name = signal.Signals(self.signal_received).name
                    raise PlanningCut(ExitCode.CANCELLED, f"cancelled by {name}")
                return plan_resolve(session, self.options, self.progress, profile_for(self.options))
        except PlanningCut as cut:
            return self._planning_cut(session, cut)

    @contextmanager
    def _planning_deadline(self) -> Iterator[None]:
        """While planning, a signal raises ``PlanningCut`` (the handler), and so does
        ``--timeout`` (SIGALRM; only the main thread can set it)."""
        alarm = bool(self.options.timeout) and threading.current_thread() is threading.main_thread()
        previous: Any = None
        if alarm:
            left = max(0.001, self.started + float(self.options.timeout or 0) - time.monotonic())
            reason = f"timed out after {self.options.timeout:g} s"

            def on_alarm(_signum: int, _frame: FrameType | None) -> None:
                if self.planning:
                    raise PlanningCut(ExitCode.ERROR, reason)

            previous = signal.signal(signal.SIGALRM, on_alarm)
            signal.setitimer(signal.ITIMER_REAL, left)
        self.planning = True
        try:
            yield
        finally:
            self.planning = False
            if alarm:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)

    def _planning_cut(self, session: AgentSession, cut: PlanningCut) -> Outcome:
        """Planning was cut: the session paused with the reason (a query cut mid-way
        may have left the connection unusable: a fresh one), the intent kept for the
        resumed run, the documented exit code."""
        connection = connections["default"]
        if connection.connection is not None and not connection.in_atomic_block:
            connection.close_if_unusable_or_obsolete()
        reason = f"{cut.reason} while planning"
        planning_interrupted(session=session, intent=self.options.intent or "", reason=reason)
        session_set_paused(
            session=AgentSession.objects.get(pk=session.pk),
            paused=True,
            reason=PAUSE_PREFIX + reason,
            actor=HEADLESS,
            cause=PauseCause.HEADLESS,
        )
        self.progress(f"{reason}: the session is paused")
        status: Literal["cancelled", "timeout"] = (
            "cancelled" if cut.code == ExitCode.CANCELLED else "timeout"
        )
        return Outcome(cut.code, status, f"{reason}; resume with --session {session.pk}")

    # --- running --------------------------------------------------------------------

    def _watch(self, observer: Observer) -> Outcome:
        """Poll for events until the units are done (or a signal or the timeout)."""
        assert self.session is not None
        engine = self._start_units(self.session.pk)
        heartbeat_every = settings.SF_HEADLESS_HEARTBEAT.total_seconds()
        next_heartbeat = time.monotonic() + heartbeat_every
        next_settle_check = time.monotonic()
        stopping: Stopping | None = None
        while True:
            self._flush(observer)
            now = time.monotonic()
            if now >= next_heartbeat:
                self.emit(observer.heartbeat(now - self.started))
                next_heartbeat = now + heartbeat_every
            stopping = stopping or self._should_stop(now)
            if engine is not None:
                if not engine.is_alive():
                    break
            elif now >= next_settle_check:  # it dispatches too: once a second is plenty
                if self._workers_settled(self.session.pk):
                    break
                next_settle_check = now + SETTLE_EVERY
            if stopping is not None and (now >= stopping.until or self.abandon.is_set()):
                self.progress("a unit is still running; leaving it for crash recovery")
                break
            self.stop.wait(POLL)
        return self._watched_outcome(stopping)

    def _start_units(self, session_id: int) -> threading.Thread | None:
        """Via workers: dispatch to them. Inline: the engine thread (returned)."""
        if self.options.via_workers:
            self._check_workers()
            dispatch(session_id=session_id)
            return None
        engine = threading.Thread(target=self._engine, name="sf-headless-engine", daemon=True)
        engine.start()
        return engine

    def _should_stop(self, now: float) -> Stopping | None:
        if self.signal_received is not None:
            name = signal.Signals(self.signal_received).name
            return self._stop(ExitCode.CANCELLED, f"cancelled by {name}")
        if self.options.timeout and now >= self.started + self.options.timeout:
            return self._stop(ExitCode.ERROR, f"timed out after {self.options.timeout:g} s")
        return None

    def _watched_outcome(self, stopping: Stopping | None) -> Outcome:
        assert self.session is not None
        assert self.plan is not None
        session_id = self.session.pk
        if stopping is not None:
            resume = f"; resume with --session {session_id}"
            if stopping.code == ExitCode.CANCELLED:
                return Outcome(stopping.code, "cancelled", stopping.reason + resume)
            return Outcome(stopping.code, "timeout", stopping.reason + resume)
        if self.crash is not None:
            return Outcome(ExitCode.ERROR, "error", f"engine error: {self.crash}")
        if self.reload:
            return Outcome(
                ExitCode.RELOAD,
                "reload",
                f"ran {self.units_run} units, the limit of one process "
                f"(SF_HEADLESS_UNITS_PER_PROCESS); restart with --session {session_id}",
            )
        return settled_outcome(
            plan=self.plan,
            session_id=session_id,
            step=self.options.step,
            units_run=self.units_run,
        )

    def _check_workers(self) -> None:
        if settings.CELERY_TASK_ALWAYS_EAGER:
            self.progress("embedded mode (no REDIS_URL): the units run in this process")
        elif not any(worker.online for worker in worker_statuses()):
            self.progress(
                "no worker is online: the units wait for one (scripts/run.sh starts one, "
                "or `celery -A sf_web worker`)"
            )

    def _stop(self, code: ExitCode, reason: str) -> Stopping:
        """Pause the session (state kept); a running unit stops at its next dispatch
        point. Returns what to exit with and until when to wait for the unit."""
        assert self.session is not None
        self.stop.set()
        session = AgentSession.objects.get(pk=self.session.pk)
        session_set_paused(
            session=session,
            paused=True,
            reason=PAUSE_PREFIX + reason,
            actor=HEADLESS,
            cause=PauseCause.HEADLESS,
        )
        self.progress(f"{reason}: waiting for the running unit to stop")
        return Stopping(code, reason, time.monotonic() + settings.SF_HEADLESS_GRACE.total_seconds())

    def _engine(self) -> None:
        """The inline driver: the engine's ``drain`` until nothing is runnable (or we are
        told to stop), settling what --answers answers in between."""
        try:
            while not self.stop.is_set():
                if self._process_limit_reached():
                    return
                ran = self._drain()
                self.units_run += ran
                if self.options.step and self.units_run:
                    return
                if not ran and not self._answer() and not self._waited_for_work():
                    return
        except BaseException as exc:
            logger.exception("headless engine error")
            self.crash = exc
        finally:
            connections.close_all()

    def _drain(self) -> int:
        assert self.session is not None
        per_process = settings.SF_HEADLESS_UNITS_PER_PROCESS
        limit = per_process - self.units_run if per_process else None
        return drain(
            session_id=self.session.pk,
            worker=f"headless-{os.getpid()}",
            options=UnitOptions(
                model=self.options.model,
                answers=self.options.answers.ask_user if self.options.answers else {},
            ),
            stop=self.stop,
            limit=1 if self.options.step else limit,
            step=self.options.step,
        )

    def _process_limit_reached(self) -> bool:
        """One process runs at most SF_HEADLESS_UNITS_PER_PROCESS units; with more to
        run it asks its supervisor for a reload (a fresh process resumes)."""
        per_process = settings.SF_HEADLESS_UNITS_PER_PROCESS
        if not per_process or self.units_run < per_process:
            return False
        assert self.session is not None
        session = AgentSession.objects.get(pk=self.session.pk)
        self.reload = bool(next_units(session, step=self.options.step))
        return True

    def _provider_back(self) -> bool:
        """A provider outage paused the session: wait for its retry time (a signal or
        ``--timeout`` ends the wait), lift the pause and go on. False: no such pause."""
        assert self.session is not None
        due = provider_waiting(AgentSession.objects.get(pk=self.session.pk))
        if due is None:
            return False
        wait = (due - timezone.now()).total_seconds()
        if wait > 0:
            self.progress(f"the model provider is unavailable; trying again in {wait:.0f} s")
            if self.stop.wait(wait):
                return False
        return provider_resume(session_id=self.session.pk)

    def _waited_for_work(self) -> bool:
        """Nothing ran: wait for a provider outage to pass, or for a task backing off
        after system faults to be due (``engine.system_faults``). False: nothing to wait
        for (or a signal ended the wait)."""
        if self._provider_back():
            return True
        assert self.session is not None
        due = next_due_at(self.session.pk)
        if due is None:
            return False
        wait = max(0.0, (due - timezone.now()).total_seconds())
        self.progress(f"a task runs again in {wait:.0f} s, after system faults")
        return not self.stop.wait(wait)

    def _answer(self) -> bool:
        """Settle what --answers answers; True if that unblocked something."""
        assert self.session is not None
        answers = self.options.answers
        return bool(answers and answers_apply(answers, session_id=self.session.pk))

    def _workers_settled(self, session_id: int) -> bool:
        """Via workers: no unit in flight (from its claim until its runtime row is gone,
        review and merge included) and nothing the engine would dispatch.

        Due work is looked for *before* work in flight: a worker's claim moves a task
        from due to in flight in one transaction, so in this order nothing slips
        between the two checks."""
        if not self.stop.is_set():
            close_old_connections()
            provider_resume(session_id=session_id)  # the workers' sweep does it too
            session = AgentSession.objects.get(pk=session_id)
            if next_units(session) or self._answer():
                dispatch(session_id=session_id)
                return False
            if provider_waiting(session) is not None or next_due_at(session_id) is not None:
                # A provider outage, or a task backing off after system faults: the
                # units run again at their time.
                return False
        return not self._in_flight(session_id)

    @staticmethod
    def _in_flight(session_id: int) -> bool:
        """A unit claimed or running, or an approved task's merge queued or verifying on
        a worker (it runs after the unit's runtime row is gone: without it, a task
        waiting for its merge looked like one waiting for a person's review)."""
        return (
            Task.objects.filter(plan__session_id=session_id, status__in=ACTIVE).exists()
            or TaskSchedule.objects.filter(
                task__plan__session_id=session_id, status__in=IN_FLIGHT
            ).exists()
            or TaskRuntime.objects.filter(task__plan__session_id=session_id).exists()
            # An approved task waits in the merge queue after its unit's runtime row is
            # gone, until a worker merges it: still in flight, not a review to wait for.
            or MergeRequest.objects.filter(
                task__plan__session_id=session_id, status__in=ACTIVE_MERGE_STATUSES
            ).exists()
        )

    # --- the outcome ----------------------------------------------------------------

    def _result(self, outcome: Outcome) -> ResultEvent:
        return result_event(
            outcome,
            session=self.session,
            plan=self.plan,
            started_at=self.started_at,
            duration_s=time.monotonic() - self.started,
        )

    def _flush(self, observer: Observer) -> None:
        for event in observer.poll():
            self.emit(event)
