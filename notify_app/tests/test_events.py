"""Notices become outbox rows once per state change, in the change's own transaction."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.db import transaction

from agents_app.gate.session import SessionGate, input_hash
from agents_app.models import AgentSession, Project, SessionStatus
from agents_app.services import session_finish
from agents_app.services.budget import session_charge
from conftest import grant
from notify_app.models import Channel, Delivery, Notification, NotificationPreference
from notify_app.outbox import notification_enqueue
from sf_core.actors import Actor
from sf_core.notices import Notice, NoticeKind
from tasks_app.engine.review import review_start
from tasks_app.lifecycle import task_transition
from tasks_app.models import HoldReason, Task, TaskStatus
from tasks_app.tests.conftest import make_plan, task_data

pytestmark = pytest.mark.django_db
S = TaskStatus


@pytest.fixture
def task(agent_session: AgentSession) -> Task:
    plan = make_plan(agent_session, task_data("a"))
    task = plan.tasks.get()
    return task_transition(task=task, to=S.IN_PROGRESS, reason="a unit started")


def kinds() -> list[str]:
    return list(Notification.objects.order_by("pk").values_list("kind", flat=True))


def test_a_failed_task_is_one_notification_with_a_delivery_per_channel(
    task: Task, user: User
) -> None:
    User.objects.filter(pk=user.pk).update(email="ada@example.com")
    task_transition(task=task, to=S.FAILED, reason="retries spent")
    notification = Notification.objects.get()
    assert notification.kind == NoticeKind.TASK_FAILED
    assert notification.task_id == task.pk
    assert notification.session_id == task.plan.session_id
    assert "retries spent" in notification.text
    channels = set(Delivery.objects.values_list("channel", flat=True))
    assert channels == {Channel.EMAIL, Channel.BROWSER}  # no webhook URL set


def test_a_rolled_back_change_leaves_no_notification(task: Task) -> None:
    def fail_then_roll_back() -> None:
        with transaction.atomic():
            task_transition(task=task, to=S.FAILED, reason="retries spent")
            raise RuntimeError("the outcome failed after the move")

    with pytest.raises(RuntimeError):
        fail_then_roll_back()
    task.refresh_from_db()
    assert task.status == S.IN_PROGRESS
    assert not Notification.objects.exists()
    assert not Delivery.objects.exists()


def test_the_same_notice_raised_twice_is_enqueued_once(project: Project) -> None:
    notice = Notice(kind=NoticeKind.TASK_BLOCKED, dedupe_key="k-1", project_id=project.pk, text="x")
    with transaction.atomic():
        assert notification_enqueue(notice=notice) is not None
        assert notification_enqueue(notice=notice) is None  # the caller's transaction lives on
        assert Notification.objects.count() == 1
    assert Delivery.objects.count() == 1  # the browser of the one member


def test_which_moves_are_news(task: Task) -> None:
    task_transition(task=task, to=S.BLOCKED, reason="stuck: same call 3x", hold=HoldReason.STUCK)
    task_transition(task=task, to=S.TODO, reason="a person unblocked it")
    task_transition(task=task, to=S.BLOCKED, reason="a decision", hold=HoldReason.APPROVAL_NEEDED)
    task_transition(task=task, to=S.TODO, reason="approved")
    task_transition(task=task, to=S.BLOCKED, reason="a person", hold=HoldReason.PERSON)
    task_transition(task=task, to=S.TODO, reason="again")
    task_transition(task=task, to=S.BLOCKED, reason="merge refused", hold=HoldReason.MERGE_REFUSED)
    # stuck, then a real block; approval (the decision says it) and a person's block are quiet
    assert kinds() == [NoticeKind.STUCK_LOOP, NoticeKind.TASK_BLOCKED]


def test_an_ask_of_the_gate_notifies_approvers_only(
    agent_session: AgentSession, git_repo: Path, user: User, reviewer: User
) -> None:
    grant(user, agent_session.project, "operator")
    AgentSession.objects.filter(pk=agent_session.pk).update(
        run_control="autonomous", work_mode="build"
    )
    gate = SessionGate(session_id=agent_session.pk, worktree=git_repo)
    push = {"command": "git push origin main", "cwd": None, "timeout_s": 120}
    verdict = gate.check("run_command", push, input_hash("run_command", push))
    assert verdict.decision == "ask"
    notification = Notification.objects.get()
    assert notification.kind == NoticeKind.APPROVAL_NEEDED
    assert notification.payload["decision_id"] == verdict.decision_id
    assert set(notification.deliveries.values_list("user_id", flat=True)) == {reviewer.pk}


def test_review_waiting_unless_the_profile_approves_it_itself(task: Task) -> None:
    task_transition(task=task, to=S.VERIFYING, reason="the agent finished")
    task_transition(task=task, to=S.REVIEW, reason="verification passed")
    review_start(task=task)
    review_start(task=task)  # the same entry into review: still one notice
    assert kinds() == [NoticeKind.REVIEW_WAITING]


def test_budget_80_and_100_once_each(agent_session: AgentSession) -> None:
    AgentSession.objects.filter(pk=agent_session.pk).update(cost_budget=Decimal("1.00"))
    agent_session.refresh_from_db()
    session_charge(session=agent_session, cost=Decimal("0.85"))
    session_charge(session=agent_session, cost=Decimal("0.05"))
    session_charge(session=agent_session, cost=Decimal("0.20"))
    session_charge(session=agent_session, cost=Decimal("0.20"))
    assert kinds() == [NoticeKind.BUDGET_80, NoticeKind.BUDGET_100]


def test_a_session_finishing_is_news_once(agent_session: AgentSession) -> None:
    actor = Actor.system("test")
    for _ in range(2):
        session_finish(
            session=agent_session, status=SessionStatus.COMPLETED, reason="plan done", actor=actor
        )
    assert kinds() == [NoticeKind.SESSION_FINISHED]


def test_preferences_filter_by_kind_and_project(
    agent_session: AgentSession, user: User, staff_user: User, git_repo: Path
) -> None:
    project = agent_session.project
    other = Project.objects.create(name="other", repo_path=str(git_repo) + "-other")
    grant(staff_user, project, "viewer")
    only_failures = NotificationPreference.objects.create(user=user, kinds=["task_failed"])
    elsewhere = NotificationPreference.objects.create(user=staff_user)
    elsewhere.projects.set([other])

    def notify(kind: NoticeKind, key: str) -> set[int]:
        notice = Notice(kind=kind, dedupe_key=key, project_id=project.pk, text="x")
        notification = notification_enqueue(notice=notice)
        assert notification is not None
        return set(notification.deliveries.values_list("user_id", flat=True))

    assert notify(NoticeKind.TASK_FAILED, "a") == {user.pk}
    assert notify(NoticeKind.TASK_BLOCKED, "b") == set()
    elsewhere.projects.set([other, project])
    only_failures.kinds = []
    only_failures.save()
    assert notify(NoticeKind.TASK_BLOCKED, "c") == {user.pk, staff_user.pk}
    grant(staff_user, project, None)  # chose the project, but is no longer a member
    assert notify(NoticeKind.TASK_BLOCKED, "d") == {user.pk}
