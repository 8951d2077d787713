"""Several processes claim from the same ready set in PostgreSQL: no task twice."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sf_core.actors import Actor
from tasks_app.models import ScheduleStatus, TaskSchedule
from tasks_app.services import plan_accept
from tasks_app.tests.conftest import make_plan, task_data
from tests.processes import ROOT, child_database_url

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
PROCESSES = 4
TASKS = 60


def test_concurrent_claimers_never_share_a_task(agent_session: Any, tmp_path: Path) -> None:
    plan = make_plan(agent_session, *(task_data(f"t{i}") for i in range(TASKS)))
    plan_accept(plan=plan, actor=Actor.system("test"), autonomous=True)
    assert TaskSchedule.objects.filter(status=ScheduleStatus.DUE).count() == TASKS

    children = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.claim_worker",
                f"claimer-{n}",
                str(tmp_path),
                str(PROCESSES),
            ],
            cwd=ROOT,
            env={**os.environ, "DATABASE_URL": child_database_url(f"claimer-{n}")},
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(PROCESSES)
    ]
    results = [json.loads(child.communicate(timeout=120)[0]) for child in children]

    claimed = [task_id for result in results for task_id in result]
    assert len(claimed) == len(set(claimed)), "a task was claimed twice"
    assert sorted(claimed) == sorted(plan.tasks.values_list("pk", flat=True))
    assert sum(1 for result in results if result) >= 2, "the claimers did not actually overlap"
    owners = dict(TaskSchedule.objects.values_list("task_id", "claimed_by"))
    for n, result in enumerate(results):
        assert all(owners[task_id] == f"claimer-{n}" for task_id in result)
