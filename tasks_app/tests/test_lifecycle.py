"""The lifecycle table, exhaustively: every allowed and every forbidden pair."""

from __future__ import annotations

import itertools

import pytest
from django.db import IntegrityError, transaction

from sf_core.actors import Actor
from sf_core.errors import InvalidTransition
from tasks_app.lifecycle import (
    ALLOWED,
    RECOVERY_ACTIONS,
    allowed,
    recovery_actions,
    task_transition,
)
from tasks_app.models import HoldReason, Plan, Task, TaskStatus, TaskTransition

pytestmark = pytest.mark.django_db
S = TaskStatus

EXPECTED = {
    ("todo", "in_progress"),
    ("in_progress", "verifying"),
    ("verifying", "review"),
    ("review", "done"),
    ("in_progress", "retrying"),
    ("verifying", "retrying"),
    ("retrying", "in_progress"),
    ("in_progress", "failed"),
    ("verifying", "failed"),
    ("retrying", "failed"),
    ("review", "todo"),
    ("review", "retrying"),  # the merged tree failed in the merge queue
    ("review", "failed"),  # ... with its retries spent
    ("todo", "blocked"),
    ("in_progress", "blocked"),
    ("verifying", "blocked"),
    ("retrying", "blocked"),
    ("review", "blocked"),
    ("blocked", "todo"),
    ("blocked", "in_progress"),
    ("blocked", "review"),
    ("todo", "paused"),
    ("in_progress", "paused"),
    ("retrying", "paused"),
    ("blocked", "paused"),
    ("paused", "todo"),
    ("failed", "todo"),
    # skip: a person goes on without a task no unit is running (tasks_app.engine.recovery)
    ("todo", "skipped"),
    ("blocked", "skipped"),
    ("paused", "skipped"),
    ("failed", "skipped"),
    *(
        (status, "cancelled")
        for status in S.values
        if status not in ("done", "cancelled", "skipped")
    ),
}


def test_the_table_is_exactly_the_designed_lifecycle() -> None:
    table = {(a, b) for a, targets in ALLOWED.items() for b in targets}
    assert table == EXPECTED
    assert set(ALLOWED) == set(S.values)


def test_skipped_is_final_and_reachable_only_while_no_unit_runs() -> None:
    assert ALLOWED[S.SKIPPED] == frozenset()
    assert {a for a, targets in ALLOWED.items() if S.SKIPPED in targets} == {
        S.TODO,
        S.BLOCKED,
        S.PAUSED,
        S.FAILED,
    }


def test_recovery_actions_are_moves_of_the_table() -> None:
    targets = {
        "retry": S.TODO,
        "resume": S.TODO,
        "stop": S.PAUSED,  # after its step
        "skip": S.SKIPPED,
        "cancel": S.CANCELLED,
    }
    for action, sources in RECOVERY_ACTIONS.items():
        assert all(allowed(source, targets[action]) for source in sources), action
    assert recovery_actions(S.FAILED) == ["retry", "skip", "cancel"]
    assert recovery_actions(S.PAUSED) == ["resume", "skip", "cancel"]
    assert recovery_actions(S.IN_PROGRESS) == ["stop", "cancel"]  # the unit honours them
    assert recovery_actions(S.VERIFYING) == ["cancel"]
    assert recovery_actions(S.DONE) == []


def test_done_is_reachable_only_from_review() -> None:
    assert {a for a, targets in ALLOWED.items() if S.DONE in targets} == {S.REVIEW}


def set_status(task: Task, status: str) -> Task:
    Task.objects.filter(pk=task.pk).update(status=status)
    task.refresh_from_db()
    return task


@pytest.mark.parametrize(("current", "target"), list(itertools.product(S.values, S.values)))
def test_every_pair(diamond_plan: Plan, current: str, target: str) -> None:
    task = set_status(diamond_plan.tasks.get(key="a"), current)
    if allowed(current, target):
        task_transition(task=task, to=target, reason="test", actor=Actor.system("tester"))
        task.refresh_from_db()
        assert task.status == target
        logged = TaskTransition.objects.get(task=task)
        assert (logged.from_status, logged.to_status, logged.actor_label) == (
            current,
            target,
            "tester",
        )
    else:
        with pytest.raises(InvalidTransition, match=f"cannot go from {current} to {target}"):
            task_transition(task=task, to=target, reason="test")
        task.refresh_from_db()
        assert task.status == current
        assert not TaskTransition.objects.filter(task=task).exists()


def test_a_stale_view_of_the_status_loses_the_race(diamond_plan: Plan) -> None:
    seen_by_first = diamond_plan.tasks.get(key="a")
    seen_by_second = diamond_plan.tasks.get(key="a")
    task_transition(task=seen_by_first, to=S.IN_PROGRESS, reason="first")
    with pytest.raises(InvalidTransition, match="changed concurrently"):
        task_transition(task=seen_by_second, to=S.CANCELLED, reason="second")
    assert diamond_plan.tasks.get(key="a").status == S.IN_PROGRESS
    assert TaskTransition.objects.count() == 1


def test_timestamps_follow_the_lifecycle(diamond_plan: Plan) -> None:
    task = diamond_plan.tasks.get(key="a")
    for status in (S.IN_PROGRESS, S.VERIFYING, S.REVIEW):
        task_transition(task=task, to=status, reason="go")
    task.refresh_from_db()
    assert task.started_at is not None
    assert task.completed_at is None
    task_transition(task=task, to=S.DONE, reason="merged")
    task.refresh_from_db()
    assert task.completed_at is not None
    assert list(task.transitions.values_list("to_status", flat=True)) == [
        "in_progress",
        "verifying",
        "review",
        "done",
    ]


def test_a_hold_reason_goes_with_a_held_status_only(diamond_plan: Plan) -> None:
    task = diamond_plan.tasks.get(key="a")
    task_transition(task=task, to=S.PAUSED, reason="session paused: lunch", hold=HoldReason.BUDGET)
    task.refresh_from_db()
    assert (task.status, task.hold_reason) == ("paused", "budget")
    task_transition(task=task, to=S.TODO, reason="running again")
    task.refresh_from_db()
    assert task.hold_reason == ""
    task_transition(task=task, to=S.BLOCKED, reason="someone said so")
    assert Task.objects.get(pk=task.pk).hold_reason == "person", "unsaid: a person held it"
    with pytest.raises(ValueError, match="only for paused or blocked"):
        task_transition(task=task, to=S.TODO, reason="x", hold=HoldReason.STUCK)
    assert Task.objects.get(pk=task.pk).status == "blocked"


def test_the_database_refuses_a_hold_reason_on_a_running_task(diamond_plan: Plan) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        Task.objects.filter(key="a").update(hold_reason=HoldReason.STUCK)
