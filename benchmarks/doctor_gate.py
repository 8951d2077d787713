"""What the doctor costs, and what its pre-dispatch gate adds to a dispatch.

* ``gate_cold_median_ms`` / ``gate_cold_statements``: the cheap checks once (what a
  dispatch pays when the cached report is older than SF_DOCTOR_GATE_CACHE).
* ``gate_cached_median_us``: the cached report (what nearly every dispatch pays).
* ``next_units_median_ms`` with the cache (the default) and ``next_units_uncached_
  median_ms`` with SF_DOCTOR_GATE_CACHE=0, on a session with one due task.
* ``doctor_full_median_ms``: every check (``sf doctor``), with this benchmark's one
  project.
Needs team mode (.sf/env); creates and deletes a throw-away project.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path

from _common import django_team_mode, median_seconds, parse_args, report

django_team_mode()

from django.db import connection  # noqa: E402
from django.test.utils import CaptureQueriesContext, override_settings  # noqa: E402

from agents_app.models import AgentSession, Project  # noqa: E402
from agents_app.services import project_create, session_create  # noqa: E402
from sf_core.actors import Actor  # noqa: E402
from sf_core.doctor import doctor_run, gate_forget, gate_report  # noqa: E402
from tasks_app.engine.dispatch import next_units  # noqa: E402
from tasks_app.engine.replaying import demo_repo_create  # noqa: E402
from tasks_app.schemas import plan_spec_parse  # noqa: E402
from tasks_app.services import plan_accept, plan_create  # noqa: E402

RUNS = 200
TASK = {"key": "t", "title": "t", "acceptance_criteria": ["a"], "verify": ["true"]}


def session_with_a_due_task(root: Path) -> AgentSession:
    repo = demo_repo_create(root / "repo")
    project = project_create(name=f"bench-doctor-{uuid.uuid4().hex[:8]}", repo_path=str(repo))
    session = session_create(project=project, axes={"work_mode": "plan", "model_mode": "deep"})
    AgentSession.objects.filter(pk=session.pk).update(driver="inline")
    spec = plan_spec_parse({"summary": "s", "tasks": [TASK]})
    plan = plan_accept(
        plan=plan_create(session=session, spec=spec, source="api"),
        actor=Actor.system("bench"),
        autonomous=True,
        start=False,
    )
    assert plan.status == "accepted"
    session.refresh_from_db()
    return session


def cold_gate() -> None:
    gate_forget()
    gate_report()


def main() -> None:
    global RUNS
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=RUNS, help="of the gate; the full doctor: 20")
    RUNS = parse_args(parser, smoke={"runs": 2}).runs
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        session = session_with_a_due_task(Path(tmp))
        try:
            figures = measure(session)
        finally:
            Project.objects.filter(pk=session.project_id).delete()
    figures["load_average_1m"] = round(load, 2)
    report(figures)


def measure(session: AgentSession) -> dict[str, float]:
    with CaptureQueriesContext(connection) as queries:
        cold_gate()
    cold = median_seconds(cold_gate, runs=RUNS)
    gate_report()
    cached = median_seconds(gate_report, runs=RUNS * 10)
    assert next_units(session), "the task is due"
    with_cache = median_seconds(lambda: next_units(session), runs=RUNS)
    with override_settings(SF_DOCTOR_GATE_CACHE=timedelta(0)):
        uncached = median_seconds(lambda: next_units(session), runs=RUNS)
    full = [_timed_full() for _ in range(min(20, RUNS))]
    return {
        "gate_cold_median_ms": round(cold * 1000, 3),
        "gate_cold_statements": len(queries),
        "gate_cached_median_us": round(cached * 1e6, 3),
        "next_units_median_ms": round(with_cache * 1000, 3),
        "next_units_uncached_median_ms": round(uncached * 1000, 3),
        "doctor_full_median_ms": round(statistics.median(full) * 1000, 3),
    }


def _timed_full() -> float:
    started = time.perf_counter()
    doctor_run()
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
