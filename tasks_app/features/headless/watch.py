"""Watching a session from outside its run, one step at a time (the API's event stream).

The same events as ``sf headless --output-format stream-json``, from the same
``Observer``: a ``session`` event first, then what the engine did, and — once the
session has finished — the ``result`` event headless would have ended with. Each
event comes with the text form of the state after it (``cursor.py``), which the API
sends as the event's SSE ``id``: resuming from it yields exactly the events after that
one. Nothing is kept between steps; the caller carries the state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from agents_app.models import AgentSession, SessionStatus
from tasks_app.features.headless.cursor import ObserverState
from tasks_app.features.headless.events import HeartbeatEvent, SessionEvent
from tasks_app.features.headless.observer import Marked, Observer, session_event
from tasks_app.features.headless.outcome import session_result
from tasks_app.models import UnitStatus


@dataclass(frozen=True)
class WatchStep:
    """What one look found: events with their ids, the state after them, whether the
    session's end has been reported (nothing more comes), and the units running."""

    events: list[tuple[Any, str]]
    state: ObserverState
    finished: bool
    running_units: list[int]


def watch_begin(*, session_id: int, from_start: bool) -> tuple[SessionEvent, ObserverState]:
    """The ``session`` event that opens a stream, and the state to go on from: nothing
    reported yet (``from_start``: the whole history follows), or everything so far."""
    session = AgentSession.objects.select_related("project").get(pk=session_id)
    observer = Observer(session_id, from_start=from_start)
    return session_event(session, resumed=not from_start), observer.state


def watch_step(*, session_id: int, state: ObserverState) -> WatchStep:
    """The events since ``state``; a finished session's last step adds the result.

    The session's status is read *before* the rows: a session seen finished has
    written everything it will, so the rows read after it are complete."""
    session = AgentSession.objects.filter(pk=session_id).first()
    if session is None:  # deleted while watched: nothing more will come
        return WatchStep([], state, True, [])
    finished = session.status != SessionStatus.ACTIVE
    observer = Observer(session_id, from_start=True, state=state.copy())
    marked = observer.poll_marked()
    after = observer.state
    if marked:
        after.ended = False
    events = _with_ids(state, marked, after)
    if finished and not after.ended:
        after = after.copy()
        after.ended = True
        events.append((session_result(session), after.token()))
    running = sorted(pk for pk, status in after.units.items() if status == UnitStatus.RUNNING)
    return WatchStep(events, after, finished, running)


def watch_heartbeat(*, session_id: int) -> HeartbeatEvent | None:
    """A heartbeat for a watcher: the session's age, activity and task counts."""
    session = AgentSession.objects.filter(pk=session_id).first()
    if session is None:
        return None
    elapsed = (timezone.now() - session.created_at).total_seconds()
    return Observer(session_id, from_start=True).heartbeat(max(0.0, elapsed))


def _with_ids(
    before: ObserverState, marked: list[Marked], after: ObserverState
) -> list[tuple[Any, str]]:
    """Each event with the token of the state after it. The last one gets the whole
    state after the look (rows it skipped, such as model steps, included)."""
    state = before.copy()
    events: list[tuple[Any, str]] = []
    for index, (event, mark) in enumerate(marked):
        if index == len(marked) - 1:
            state = after
        else:
            state.apply(mark)
        events.append((event, state.token()))
    return events
