"""Plans in, acceptance (with Run autonomously), scheduling and claiming."""

from __future__ import annotations

import pytest

from agents_app.models import AgentSession, ModeTransition
from sf_core.actors import Actor
from sf_core.errors import InvalidTransition, PlanInvalid
from tasks_app.lifecycle import task_transition
from tasks_app.models import Plan, PlanStatus, ScheduleStatus, Task, TaskStatus
from tasks_app.schemas import plan_spec_parse
from tasks_app.selectors import task_summary_line
from tasks_app.services import plan_accept, plan_create, plan_reject, schedule_ready, task_claim
from tasks_app.tests.conftest import make_plan, plan_data, task_data

pytestmark = pytest.mark.django_db
ACTOR = Actor.system("test")


def schedules(plan: Plan) -> dict[str, str]:
    return {t.key: t.schedule.status for t in plan.tasks.select_related("schedule")}


def test_a_plan_is_stored_proposed_with_its_tasks_and_graph(diamond_plan: Plan) -> None:
    assert diamond_plan.status == PlanStatus.PROPOSED
    tasks = list(diamond_plan.tasks.all())
    assert [t.key for t in tasks] == ["a", "b", "c", "d"]
    assert tasks[0].criteria == [("R1", "a works"), ("R2", "a is tested")]
    assert tasks[0].branch == f"sf/p{tasks[0].plan_id}/a/1"
    d = tasks[3]
    assert sorted(dep.depends_on.key for dep in d.dependencies.all()) == ["b", "c"]


def test_a_new_plan_supersedes_the_open_one(plan_session: AgentSession, diamond_plan: Plan) -> None:
    newer = make_plan(plan_session, task_data("x"))
    diamond_plan.refresh_from_db()
    assert diamond_plan.status == PlanStatus.SUPERSEDED
    assert newer.status == PlanStatus.PROPOSED


def test_tasks_without_verify_take_the_project_default(plan_session: AgentSession) -> None:
    project = plan_session.project
    project.policy = {**project.policy, "default_verify": ["make test"]}
    project.save()
    plan = make_plan(plan_session, task_data("a", verify=[]))
    assert plan.tasks.get().verify == ["make test"]


def test_a_task_with_no_verification_at_all_rejects_the_plan(plan_session: AgentSession) -> None:
    spec = plan_spec_parse(plan_data(task_data("a"), task_data("b", verify=[])))
    with pytest.raises(PlanInvalid, match=r"tasks\[1\] \(b\).verify: no verify commands"):
        plan_create(session=plan_session, spec=spec, source="api")
    assert Plan.objects.count() == 0
    assert Task.objects.count() == 0


def test_run_autonomously_moves_the_session_and_starts_dispatch(
    plan_session: AgentSession, diamond_plan: Plan
) -> None:
    assert plan_session.axes.as_dict() == {
        "work_mode": "plan",
        "run_control": "manual",
        "permission_profile": "normal",
        "model_mode": "deep",
        "surface": "web",
    }
    plan_accept(plan=diamond_plan, actor=ACTOR, autonomous=True, permission_profile="trusted")

    plan_session.refresh_from_db()
    diamond_plan.refresh_from_db()
    assert plan_session.axes.as_dict() == {
        "work_mode": "build",
        "run_control": "autonomous",
        "permission_profile": "trusted",
        "model_mode": "smart",
        "surface": "web",
    }
    transition = ModeTransition.objects.get()
    assert transition.reason == f"plan {diamond_plan.pk} run autonomously"
    assert transition.from_axes.work_mode == "plan"
    assert diamond_plan.status == PlanStatus.ACCEPTED
    assert (diamond_plan.accepted_run_control, diamond_plan.accepted_permission_profile) == (
        "autonomous",
        "trusted",
    )
    assert schedules(diamond_plan) == {"a": "due", "b": "queued", "c": "queued", "d": "queued"}


def test_plain_accept_builds_but_keeps_the_run_control(
    plan_session: AgentSession, diamond_plan: Plan
) -> None:
    plan_accept(plan=diamond_plan, actor=ACTOR)
    plan_session.refresh_from_db()
    assert (plan_session.work_mode, plan_session.run_control, plan_session.permission_profile) == (
        "build",
        "manual",
        "normal",
    )
    with pytest.raises(InvalidTransition, match="only a proposed plan can be accepted"):
        plan_accept(plan=diamond_plan, actor=ACTOR)


def test_accept_rejects_an_unknown_profile(diamond_plan: Plan) -> None:
    with pytest.raises(PlanInvalid, match="unknown permission profile 'root'"):
        plan_accept(plan=diamond_plan, actor=ACTOR, autonomous=True, permission_profile="root")
    diamond_plan.refresh_from_db()
    assert diamond_plan.status == PlanStatus.PROPOSED


def test_rejecting_a_plan(diamond_plan: Plan) -> None:
    plan_reject(plan=diamond_plan, reason="too big")
    assert diamond_plan.status == PlanStatus.REJECTED
    with pytest.raises(InvalidTransition):
        plan_accept(plan=diamond_plan, actor=ACTOR)


def finish(task: Task) -> None:
    for status in ("in_progress", "verifying", "review", "done"):
        task_transition(task=task, to=status, reason="test")


def test_dependencies_release_their_dependents_in_waves(diamond_plan: Plan) -> None:
    plan_accept(plan=diamond_plan, actor=ACTOR, autonomous=True)
    finish(diamond_plan.tasks.get(key="a"))
    assert {t.key for t in schedule_ready(plan=diamond_plan)} == {"b", "c"}
    finish(diamond_plan.tasks.get(key="b"))
    assert schedule_ready(plan=diamond_plan) == []  # d still needs c
    finish(diamond_plan.tasks.get(key="c"))
    assert [t.key for t in schedule_ready(plan=diamond_plan)] == ["d"]


def test_a_failed_dependency_blocks_its_dependent_for_a_person(plan_session: AgentSession) -> None:
    plan = make_plan(
        plan_session,
        task_data("a"),
        task_data("b", depends_on=["a"]),
        task_data("cleanup", depends_on=[{"task": "a", "condition": "failure"}]),
        task_data("report", depends_on=[{"task": "a", "condition": "always"}]),
    )
    plan_accept(plan=plan, actor=ACTOR)
    task = plan.tasks.get(key="a")
    task_transition(task=task, to="in_progress", reason="t")
    task_transition(task=task, to="failed", reason="t")
    due = {t.key for t in schedule_ready(plan=plan)}
    assert due == {"cleanup", "report"}
    b = plan.tasks.get(key="b")
    assert b.status == TaskStatus.BLOCKED
    assert b.status_reason == "dependency: a failed; this task needs it done"


def test_claiming_takes_each_due_task_once(diamond_plan: Plan) -> None:
    plan_accept(plan=diamond_plan, actor=ACTOR, autonomous=True)
    first = task_claim(worker="w1")
    assert first is not None
    assert first.key == "a"
    assert task_claim(worker="w2") is None
    first.schedule.refresh_from_db()
    assert (first.schedule.status, first.schedule.claimed_by) == (ScheduleStatus.CLAIMED, "w1")


def test_the_session_summary_counts_the_tasks_ready_to_run(diamond_plan: Plan) -> None:
    plan_accept(plan=diamond_plan, actor=ACTOR, autonomous=True)
    summary = task_summary_line(diamond_plan.session)
    assert "4 tasks" in summary
    assert "· 1 ready ·" in summary  # a; b, c and d wait for their dependencies
    finish(diamond_plan.tasks.get(key="a"))
    schedule_ready(plan=diamond_plan)
    assert "· 2 ready ·" in task_summary_line(diamond_plan.session)
