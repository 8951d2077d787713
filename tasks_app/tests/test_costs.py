"""Costs: budget reservations under parallel units, and every model call charged —
planning, failed and timed-out units — in the cost ledger as in the session's figures."""

from __future__ import annotations

import json
import threading
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.db.models import Sum

from agents_app.models import AgentSession, ModelCall
from agents_app.runtime.llm import complete
from agents_app.runtime.replay import recorded_response
from tasks_app.engine.sweep import unit_recover
from tasks_app.engine.unit import UnitOptions, unit_run
from tasks_app.models import HoldReason, Task, Unit
from tasks_app.tests.test_engine import MODEL, repo, start, task_spec  # noqa: F401 - fixture

STEP_COST = 0.04  # two steps a unit: $0.08, within a reservation of $0.10


class Gated:
    """A model that waits until the test lets it answer, so that every unit has been
    claimed before any spends or settles; then lists the directory once and finishes."""

    def __init__(self) -> None:
        self.go = threading.Event()

    def __call__(self, **kwargs: Any) -> Any:
        assert self.go.wait(60), "the test never let the units run"
        first = not any(m.get("role") == "tool" for m in kwargs["messages"])
        tool, args = ("list_dir", {"path": "."}) if first else ("finish", {"summary": "s"})
        step = {
            "content": "",
            "tool_calls": [
                {"id": f"c{time.monotonic_ns()}", "name": tool, "arguments": json.dumps(args)}
            ],
            "tokens_in": 50,
            "tokens_out": 10,
            "cost": STEP_COST,
        }
        return complete(**kwargs, mock_response=recorded_response(kwargs["model"], step))


def _run(task_id: int, worker: str, model: Gated, reports: dict[int, Any]) -> None:
    try:
        options = UnitOptions(model=MODEL, completion=model)
        reports[task_id] = unit_run(task_id=task_id, worker=worker, options=options)
    finally:
        connection.close()


def _wait_for(condition: Any, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.mark.django_db(transaction=True)
def test_four_parallel_units_with_a_budget_for_three_reservations_start_three(
    repo: Path,  # noqa: F811
) -> None:
    # Verification fails (and no retry): no unit merges, so four worktrees never race a merge.
    tasks = [task_spec(f"t{i}", verify=["false"], max_retries=0) for i in range(4)]
    budgets = {"session_cost_usd": "0.30", "unit_reserve_usd": "0.10"}
    session, plan = start(repo, *tasks, policy={"budgets": budgets})
    model, reports = Gated(), {}
    ids = list(plan.tasks.order_by("key").values_list("pk", flat=True))
    threads = [
        threading.Thread(target=_run, args=(task_id, f"w{i}", model, reports))
        for i, task_id in enumerate(ids)
    ]
    for thread in threads:
        thread.start()

    def settled_claims() -> bool:
        held = Task.objects.filter(plan=plan, hold_reason=HoldReason.BUDGET).count()
        return Unit.objects.filter(task__plan=plan).count() + held == 4

    _wait_for(settled_claims)
    session.refresh_from_db()
    assert Unit.objects.filter(task__plan=plan).count() == 3, "exactly three started"
    assert session.cost_reserved == Decimal("0.30")
    waiting = Task.objects.get(plan=plan, hold_reason=HoldReason.BUDGET)
    assert waiting.status == "paused"
    assert "reserved by running units" in waiting.status_reason
    model.go.set()
    for thread in threads:
        thread.join(120)
    session.refresh_from_db()
    spent = ModelCall.objects.filter(session=session).aggregate(total=Sum("cost"))["total"]
    assert spent == Decimal("0.24")
    assert session.cost_spent == Decimal("0.24") <= session.cost_budget
    assert session.cost_reserved == 0, "every reservation settled"
    assert list(Unit.objects.values_list("cost_reserved", flat=True)) == [0, 0, 0]
    assert reports[waiting.pk] is None


@pytest.mark.django_db
def test_a_unit_that_raises_releases_its_reservation(repo: Path) -> None:  # noqa: F811
    session, plan = start(repo, task_spec(), policy={"budgets": {"session_cost_usd": "1"}})

    def crash(**kwargs: Any) -> Any:
        raise RuntimeError("the worker's code broke")

    with pytest.raises(RuntimeError):
        unit_run(
            task_id=plan.tasks.get().pk,
            worker="test",
            options=UnitOptions(model=MODEL, completion=crash),
        )
    session.refresh_from_db()
    assert session.cost_reserved == 0
    assert Unit.objects.get(task__plan=plan).cost_reserved == 0


@pytest.mark.django_db
def test_the_sweep_charges_a_lost_unit_from_the_ledger_and_frees_its_reservation(
    repo: Path,  # noqa: F811
) -> None:
    session, plan = start(repo, task_spec(), policy={"budgets": {"session_cost_usd": "1"}})
    task = plan.tasks.get()
    Task.objects.filter(pk=task.pk).update(status="in_progress")
    unit = Unit.objects.create(task=task, attempt=1, cost_reserved=Decimal("0.50"))
    AgentSession.objects.filter(pk=session.pk).update(cost_reserved=Decimal("0.50"))
    ModelCall.objects.create(
        session=session, unit=unit, stage="unit", model=MODEL, cost=Decimal("0.03")
    )
    assert unit_recover(unit=unit) is True  # its worker died with the reservation held
    session.refresh_from_db()
    unit.refresh_from_db()
    assert (session.cost_reserved, unit.cost_reserved) == (0, 0)
    assert session.cost_spent == Decimal("0.03") == unit.cost
    assert Task.objects.get(pk=task.pk).cost_spent == Decimal("0.03")
    assert unit_recover(unit=unit) is False  # once
    session.refresh_from_db()
    assert session.cost_spent == Decimal("0.03")
