"""The inline driver: units run in this process, one after the other, until nothing
is dispatchable (headless, replay, skill evals, and the embedded default's thread that
``dispatch`` starts without a broker, plugged in as ``extensions.inline_drain``)."""

from __future__ import annotations

import threading

from agents_app.models import AgentSession
from tasks_app.engine.dispatch import next_units
from tasks_app.engine.unit import unit_run
from tasks_app.engine.values import UnitOptions


def drain(
    *,
    session_id: int,
    worker: str,
    options: UnitOptions | None = None,
    stop: threading.Event | None = None,
    limit: int | None = None,
    step: bool = False,
) -> int:
    """Run the session's units inline until nothing is dispatchable, ``stop`` is set or
    ``limit`` units ran. Returns how many ran. ``step``: see ``next_units``."""
    ran = 0
    while not (stop and stop.is_set()) and (limit is None or ran < limit):
        session = AgentSession.objects.get(pk=session_id)
        task_ids = next_units(session, step=step)
        if not task_ids:
            return ran
        report = unit_run(task_id=task_ids[0], worker=worker, options=options)
        if report is None:  # not ours after all (a claim lost, a pause): stop here
            return ran
        ran += 1
    return ran


_DRAINING: set[int] = set()
# Who runs a unit without a worker, as the board's runtime column shows it.
INLINE_WORKER = "this server (inline)"
_DRAIN_LOCK = threading.Lock()


def drain_in_background(session_id: int) -> None:
    with _DRAIN_LOCK:
        if session_id in _DRAINING:
            return
        _DRAINING.add(session_id)

    def run() -> None:
        try:
            drain(session_id=session_id, worker=INLINE_WORKER)
        finally:
            with _DRAIN_LOCK:
                _DRAINING.discard(session_id)

    threading.Thread(target=run, name=f"sf-drain-{session_id}", daemon=True).start()
