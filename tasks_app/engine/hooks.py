"""The engine's hooks into a running unit: heartbeats, steering at dispatch points,
pause/stop, the three timeouts, and stuck-loop detection."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from enum import StrEnum

from django.conf import settings
from django.db import DatabaseError, close_old_connections, connection
from django.db.models import F
from django.utils import timezone

from agents_app.models import Activity, AgentSession, SessionStatus
from agents_app.runtime.trace import TraceRecorder
from agents_app.services import DispatchPoint, session_apply_due, session_read
from sf_core.db import relaxed_commit, relaxed_update
from tasks_app.engine.followups import followups_take
from tasks_app.engine.stopping import POLL, StopWatch
from tasks_app.engine.stuck import detect
from tasks_app.models import StopKind, Task, TaskRuntime

logger = logging.getLogger("sf.engine")

WRAP_UP = (
    "You are close to this unit's time limit. Stop exploring: make sure the verify "
    "commands pass, then call finish with a summary."
)
DIAGNOSTIC = (
    "You seem to be stuck in a loop ({pattern}). Step back: say what you expected and "
    "what happened instead, then try a different approach or call finish with what is done."
)


class StopCause(StrEnum):
    """Why the hooks stopped a unit. The loop only carries the words (its ``detail``);
    what happens to the task is decided on this."""

    TIMEOUT = "timeout"  # hard or idle: the attempt counts, and it is retried
    STUCK = "stuck"  # the loop repeated after its diagnostic prompt
    STOPPED = "stopped"  # /stop
    SESSION_PAUSED = "session_paused"
    SESSION_ENDED = "session_ended"
    CANCELLED = "cancelled"  # a person cancelled this unit (``stopping``)
    AFTER_STEP = "after_step"  # a person stopped it after its step (``stopping``)


class Heartbeat:
    """Refreshes the task's runtime heartbeat from a thread while the unit runs, so a
    long model call is not mistaken for a dead worker (and a dead worker is noticed)."""

    def __init__(
        self, task_id: int, *, beat_now: bool = True, watch: StopWatch | None = None
    ) -> None:
        self.task_id = task_id
        self.beat_now = beat_now
        self.watch = watch  # polled between beats: a Cancel cuts the model's answer
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name=f"sf-unit-{task_id}", daemon=True)

    def __enter__(self) -> Heartbeat:
        if self.beat_now:
            self.beat()
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stopping.set()
        self.thread.join(timeout=5)

    def beat(self) -> None:
        TaskRuntime.objects.filter(task_id=self.task_id).update(last_heartbeat_at=timezone.now())

    def _run(self) -> None:
        try:
            self._beat_until_stopped()
        finally:
            connection.close()  # this thread's own: nobody else would close it

    def _beat_until_stopped(self) -> None:
        interval = settings.SF_WORKER_HEARTBEAT.total_seconds()
        wake = min(interval, POLL) if self.watch is not None else interval
        last = time.monotonic()
        while not self.stopping.wait(wake):
            try:
                if time.monotonic() - last >= interval - wake / 2:
                    self.beat()
                    last = time.monotonic()
                if self.watch is not None:
                    self.watch.poll()
            except DatabaseError:
                # Keep beating: the database may be back next time (a terminated
                # connection reconnects). A thread that died here would let the sweep
                # take a live unit for a dead one and run its task twice at once.
                logger.warning("heartbeat of task %s failed", self.task_id, exc_info=True)
            finally:
                close_old_connections()


@dataclass
class EngineHooks:
    session_id: int
    task: Task
    started: float = field(default_factory=time.monotonic)
    last_progress: float = field(default_factory=time.monotonic)
    history: list[str] = field(default_factory=list)
    pending_notes: list[str] = field(default_factory=list)
    wrapped_up: bool = False
    diagnosed: bool = False
    cause: StopCause | None = None  # set with the words when a hook stops the unit
    # The session row as read at the last dispatch point (model step or tool call), with
    # the steering due there applied; the unit's gate decides on it (``current_session``).
    session: AgentSession | None = None
    # Whether a tool call may decide on the last dispatch point's reading: only with a
    # gate that stores each decision on a reading still current (``SessionGate``'s
    # ``validates_readings``, wired by the unit).
    reuse_readings: bool = False
    # The running unit, and its trace: people's follow-ups reach its model before each
    # step (``followups``). Set by the unit once its loop starts.
    unit_id: int | None = None
    recorder: TraceRecorder | None = None
    watch: StopWatch | None = None  # a person's stop of this unit (``stopping``)

    def before_model(self) -> str | None:
        stop = self._person_stop(at_step=True)
        if stop:
            return stop
        now = time.monotonic()
        if now - self.started > settings.SF_UNIT_HARD_TIMEOUT.total_seconds():
            return self._stop(StopCause.TIMEOUT, f"hard timeout ({settings.SF_UNIT_HARD_TIMEOUT})")
        if now - self.last_progress > settings.SF_UNIT_IDLE_TIMEOUT.total_seconds():
            return self._stop(
                StopCause.TIMEOUT,
                f"idle timeout ({settings.SF_UNIT_IDLE_TIMEOUT} without a tool call or answer)",
            )
        self.last_progress = now
        # The offered tools of this step are the session's as of now, after the steering
        # due now (and what a tool call's end made due: nothing happens between them).
        session = self._read(DispatchPoint.BEFORE_TOOL)
        if session.activity == Activity.TOOL:  # back from the step's tool calls
            self._set_activity(Activity.UNIT)
        return self._session_stop()

    def notes(self) -> list[str]:
        elapsed = time.monotonic() - self.started
        if not self.wrapped_up and elapsed > settings.SF_UNIT_SOFT_TIMEOUT.total_seconds():
            self.wrapped_up = True
            self.pending_notes.append(WRAP_UP)
        notes, self.pending_notes = self.pending_notes, []
        if self.unit_id is not None:
            notes += followups_take(
                task_id=self.task.pk, unit_id=self.unit_id, recorder=self.recorder
            )
        return notes

    def before_tool(self, tool: str) -> str | None:
        # With ``reuse_readings`` the reading of the last dispatch point stands (no
        # query): the gate stores its decision only if the session still reads the same,
        # and otherwise ``forget``s it and the loop comes back here for a fresh one. The
        # gate also sets the activity to the tool's with the decision (the next model
        # step sets it back to the unit; the unit's end, to idle).
        stop = self._person_stop(at_step=False)
        if stop:
            return stop
        if self.session is None or not self.reuse_readings:
            self._read(DispatchPoint.BEFORE_TOOL)
        return self._session_stop()

    def forget(self) -> None:
        """The last reading is stale (the gate's ``on_stale``): read afresh next time."""
        self.session = None

    def after_tool(self, tool: str, input_hash: str) -> str | None:
        self.last_progress = time.monotonic()
        # The steering due after a tool call (``now``, ``after-current-tool``) is applied
        # at the next dispatch point, which follows at once: the next call's or the next
        # model step's read, or the unit's end. No query here.
        self.history.append(f"{tool}:{input_hash[:10]}")
        return self._stuck()

    def current_session(self) -> AgentSession:
        """The session as this dispatch point read it (the gate's ``source``)."""
        return self.session if self.session is not None else self._read(None)

    def _read(self, point: DispatchPoint | None) -> AgentSession:
        """Read the session (one query) and apply the steering due at ``point``."""
        if point is None:
            session = AgentSession.objects.select_related("project").get(pk=self.session_id)
        else:
            session, due = session_read(session_id=self.session_id, point=point)
            if due:
                session_apply_due(session=session, point=point)
                session, _ = session_read(session_id=self.session_id, point=point)
        self.session = session
        return session

    def _set_activity(self, activity: Activity) -> None:
        # Shown on the dashboard and by headless; not worth a WAL flush.
        with relaxed_commit():
            AgentSession.objects.filter(pk=self.session_id).update(activity=activity)
        if self.session is not None:
            self.session.activity = activity

    def _stuck(self) -> str | None:
        stuck = detect(self.history)
        if stuck is None:
            return None
        # A counter of evidence, like the trace: committed without waiting for the disk.
        relaxed_update(Task.objects.filter(pk=self.task.pk), stuck_count=F("stuck_count") + 1)
        if self.diagnosed:
            return self._stop(StopCause.STUCK, f"stuck: {stuck.describe()}")
        # Once per unit the agent gets a diagnostic prompt; the next repeat stops it.
        self.diagnosed = True
        self.history.clear()
        self.pending_notes.append(DIAGNOSTIC.format(pattern=stuck.describe()))
        return None

    def _session_stop(self) -> str | None:
        session = self.session or self._read(None)
        if session.interrupt_requested:
            return self._stop(StopCause.STOPPED, "stopped by /stop")
        if session.paused:
            reason = f"session paused: {session.pause_reason or 'by a person'}"
            return self._stop(StopCause.SESSION_PAUSED, reason)
        if session.status != SessionStatus.ACTIVE:
            return self._stop(StopCause.SESSION_ENDED, f"session {session.status}")
        return None

    def _person_stop(self, *, at_step: bool) -> str | None:
        """A Cancel stops the unit at any dispatch point; a Stop-after-step before its
        next model step. Read afresh before a model step, else as the heartbeat saw it."""
        if self.watch is None:
            return None
        request = self.watch.poll() if at_step else self.watch.request
        if request is None or (request.kind == StopKind.AFTER_STEP and not at_step):
            return None
        cancel = request.kind == StopKind.CANCEL
        return self._stop(StopCause.CANCELLED if cancel else StopCause.AFTER_STEP, request.words())

    def _stop(self, cause: StopCause, words: str) -> str:
        self.cause = cause
        return words
