"""Units inline: worktrees, verification, review, fail-closed merge, retries, recovery."""

from __future__ import annotations

import itertools
import subprocess
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import override_settings
from django.utils import timezone

from agents_app.gate.approvals import decision_review
from agents_app.models import AgentSession, ModeTransition, Project, RiskDecision, TraceEvent
from agents_app.runtime.replay import replay_load
from agents_app.services import project_create, session_create
from agents_app.tests.runtime_helpers import ScriptedModel
from conftest import grant
from sf_core.actors import Actor
from sf_core.errors import InvalidTransition
from tasks_app.engine.drain import drain
from tasks_app.engine.replaying import demo_repo_create, replay_start
from tasks_app.engine.review import task_approve, task_request_changes
from tasks_app.engine.sweep import engine_sweep
from tasks_app.engine.unit import UnitOptions, unit_run
from tasks_app.models import Plan, ScheduleStatus, TaskRuntime, TaskSchedule, Unit
from tasks_app.schemas import plan_spec_parse
from tasks_app.services import plan_accept, plan_create
from tests.fixtures import HANDWRITTEN_DEMO_TRACE

pytestmark = pytest.mark.django_db
MODEL = "openai/gpt-4o"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return demo_repo_create(tmp_path / "greet")


def start(
    repo: Path, *tasks: dict[str, Any], profile: str = "trusted", policy: Any = None
) -> tuple[AgentSession, Plan]:
    # A repository is one project: a second plan on ``repo`` joins the project it has.
    project = Project.objects.filter(repo_path=str(repo.resolve())).first()
    if project is None or policy is not None:
        project = project_create(
            name=f"p-{repo.name}-{Plan.objects.count()}", repo_path=str(repo), policy=policy
        )
    session = session_create(project=project, axes={"work_mode": "plan", "model_mode": "deep"})
    AgentSession.objects.filter(pk=session.pk).update(driver="inline")
    spec = plan_spec_parse({"summary": "s", "tasks": list(tasks)})
    plan = plan_create(session=session, spec=spec, source="api")
    plan_accept(
        plan=plan, actor=Actor.system("t"), autonomous=True, permission_profile=profile, start=False
    )
    session.refresh_from_db()
    return session, plan


def task_spec(key: str = "hello", **extra: Any) -> dict[str, Any]:
    return {
        "key": key,
        "title": "Write hello.txt",
        "acceptance_criteria": ["hello.txt says hello"],
        "verify": ["grep -q hello hello.txt"],
        "risk_level": "low",
        **extra,
    }


def writes(content: str, path: str = "hello.txt") -> list[tuple[str, list[tuple[str, Any]]]]:
    return [
        ("writing", [("write_file", {"path": path, "content": content})]),
        ("done", [("finish", {"summary": f"wrote {path}"})]),
    ]


def run_next(session: AgentSession, model: ScriptedModel, **options: Any) -> Any:
    task_ids = list(
        TaskSchedule.objects.filter(
            task__plan__session=session, status=ScheduleStatus.DUE
        ).values_list("task_id", flat=True)
    )
    return unit_run(
        task_id=task_ids[0],
        worker="test",
        options=UnitOptions(model=MODEL, completion=model, **options),
    )


def test_the_demo_trace_replays_to_a_merged_commit(repo: Path) -> None:
    session, plan = replay_start(
        replay_load(HANDWRITTEN_DEMO_TRACE),
        project=project_create(name="demo", repo_path=str(repo)),
    )
    ran = drain(
        session_id=session.pk,
        worker="test",
        options=UnitOptions(replay=replay_load(HANDWRITTEN_DEMO_TRACE)),
    )
    task = plan.tasks.get()
    assert ran == 1
    assert task.status == "done"
    assert "merged as" in task.status_reason
    history = git(repo, "log", "--format=%s").splitlines()
    assert history[0] == "sf: merge shout-flag: Add a --shout flag that upper-cases the greeting"
    assert sorted(history[1:]) == ["The greeter", "sf(shout-flag): attempt 1"]
    assert (
        subprocess.run(
            ["python3", "greet.py", "--shout", "Ada"], cwd=repo, capture_output=True, text=True
        ).stdout
        == "HELLO, ADA!\n"
    )
    unit = Unit.objects.get()
    assert (unit.status, unit.verification_passed) == ("succeeded", True)
    assert '+    parser.add_argument("--shout"' in unit.checkpoint_patch
    # The repository's instructions (a note: the sample has none), then 10 steps and calls.
    kinds = list(TraceEvent.objects.filter(unit=unit).values_list("kind", "name"))
    assert (len(kinds), kinds[0]) == (11, ("note", "instructions"))
    assert not git(repo, "branch", "--list", "sf/*"), "the branch goes after a verified merge"
    assert "sf/" not in git(repo, "worktree", "list")
    assert TaskSchedule.objects.get().status == ScheduleStatus.CONSUMED
    assert not TaskRuntime.objects.exists()


def test_a_failed_verification_is_retried_with_its_output(repo: Path) -> None:
    session, plan = start(repo, task_spec())
    first = run_next(session, ScriptedModel(*writes("goodbye")))
    assert (first.outcome, first.task_status) == ("verification_failed", "retrying")
    task = plan.tasks.get()
    assert task.retry_count == 1
    assert "exit 1" in Unit.objects.get(attempt=1).verification_output

    second_model = ScriptedModel(*writes("hello"))
    second = run_next(session, second_model)
    assert second.task_status == "done"
    prompt = second_model.calls[0]["messages"][1]["content"]
    assert "## Attempt 1 did not pass (failed)" in prompt
    assert "$ grep -q hello hello.txt  [exit 1" in prompt


def test_retries_are_bounded_then_repair_follows_the_policy(repo: Path) -> None:
    session, plan = start(
        repo,
        task_spec(max_retries=1, verify=["test -f hello.txt && false"]),
        policy={"repair_policy": "auto"},
    )
    run_next(session, ScriptedModel(*writes("a")))
    report = run_next(session, ScriptedModel(*writes("b")))
    assert report.task_status == "failed"
    assert plan.tasks.get().status_reason.endswith("1 retries spent")
    session.refresh_from_db()
    assert (session.work_mode, session.permission_profile) == ("repair", "normal")
    assert ModeTransition.objects.filter(
        session=session, reason__startswith="repair: task hello failed"
    ).exists()


def test_a_merge_conflict_blocks_and_keeps_the_work(repo: Path) -> None:
    session, plan = start(repo, task_spec(verify=["true"], risk_level="high"))  # waits in review
    assert run_next(session, ScriptedModel(*writes("task side\n"))).task_status == "review"
    (repo / "hello.txt").write_text("base side\n")  # meanwhile, the base branch moves
    git(repo, "add", "hello.txt")
    git(repo, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "conflicting change")
    base_head = git(repo, "rev-parse", "main")

    task = task_approve(task=plan.tasks.get(), actor=Actor.system("ada"))

    assert task.status == "blocked"
    assert task.status_reason == "merge refused: merge conflict in hello.txt"
    assert git(repo, "rev-parse", "main") == base_head, "the base branch did not move"
    assert (repo / "hello.txt").read_text() == "base side\n"
    assert task.branch == f"sf/p{plan.pk}/hello/1"
    assert git(repo, "branch", "--list", task.branch), "the branch is kept"
    worktrees = git(repo, "worktree", "list").splitlines()
    assert any(line.endswith(f"[{task.branch}]") for line in worktrees), "the worktree is kept"


def test_review_waits_for_a_person_under_normal(repo: Path, user: User) -> None:
    session, plan = start(repo, task_spec(), profile="normal")
    report = run_next(session, ScriptedModel(*writes("hello")))
    assert report.task_status == "review"
    task = plan.tasks.get()
    task_request_changes(task=task, actor=Actor.system("ada"), reason="say it louder")
    task.refresh_from_db()
    assert (task.status, task.status_reason) == ("todo", "changes requested by ada: say it louder")


def test_approving_a_task_in_review_merges_it(repo: Path) -> None:
    session, plan = start(repo, task_spec(risk_level="high"))  # high risk: a person approves
    assert run_next(session, ScriptedModel(*writes("hello"))).task_status == "review"
    task = plan.tasks.get()
    task_approve(task=task, actor=Actor.system("ada"))
    task.refresh_from_db()
    assert task.status == "done"
    assert (repo / "hello.txt").read_text() == "hello"
    with pytest.raises(InvalidTransition, match="not in review"):
        task_approve(task=task, actor=Actor.system("ada"))
    assert git(repo, "log", "--format=%s", "-1").startswith("sf: merge hello")


def test_an_ask_blocks_the_task_until_a_reviewer_approves(
    repo: Path, staff_user: User, django_capture_on_commit_callbacks: Any
) -> None:
    session, plan = start(repo, task_spec(verify=["true"]), profile="normal")
    reviewer = staff_user
    grant(reviewer, session.project, "approver")
    push = ("pushing", [("run_command", {"command": "git push origin main"})])
    report = run_next(session, ScriptedModel(push))
    assert report.task_status == "blocked"
    decision = RiskDecision.objects.get(review_status="pending")
    assert plan.tasks.get().status_reason.startswith(f"approval needed (decision {decision.pk})")

    with django_capture_on_commit_callbacks(execute=True):
        decision_review(decision=decision, reviewer=reviewer, approve=True, scope="once")
    task = plan.tasks.get()
    assert task.status == "todo"
    # The next attempt goes on from the blocked conversation: the approved push is made
    # first, and the model is asked only what comes after it (``engine.resuming``).
    finish = ScriptedModel(("done", [("finish", {"summary": "pushed"})]))
    assert run_next(session, finish).outcome == "verified"
    assert (
        "exit code"
        in [m for m in finish.calls[0]["messages"] if m["role"] == "tool"][-1]["content"]
    )


def test_a_looping_agent_is_stopped_within_the_window(repo: Path) -> None:
    session, plan = start(repo, task_spec())
    loop = [
        ("again", [("list_dir", {"path": "."})]),
        ("and again", [("read_file", {"path": "greet.py"})]),
    ] * 10
    model = ScriptedModel(*loop)
    report = run_next(session, model)
    task = plan.tasks.get()
    assert report.task_status == "blocked"
    assert task.status_reason.startswith("stuck: list_dir")
    assert task.stuck_count == 2
    # After tool results the note rides in the last result (runtime/wire.append_note).
    diagnostic = [
        m["content"] for m in model.calls[-1]["messages"] if m["role"] in ("user", "tool")
    ]
    assert any("stuck in a loop" in text for text in diagnostic)
    assert len(model.calls) <= 12, "stopped within the window, not at the step limit"


def test_budget_warnings_fire_in_order_and_pause_at_100(repo: Path) -> None:
    tasks = [task_spec(f"t{i}", verify=["true"]) for i in range(5)]
    session, plan = start(repo, *tasks, policy={"budgets": {"session_cost_usd": "0.10"}})
    crossings = []
    for _ in range(5):
        run_next(
            session,
            ScriptedModel(
                *[("spend", [("list_dir", {"path": "."})])] * 3,
                ("x", [("finish", {"summary": "s"})]),
                cost=0.007,
            ),
        )
        session.refresh_from_db()
        crossings.append(list(session.budget_alerts))
        if session.paused:
            break
    notes = TraceEvent.objects.filter(session=session, kind="note", name="budget").order_by("seq")
    assert [event.payload["threshold"] for event in notes] == [75, 80, 90, 100]
    assert session.paused
    assert session.cost_spent >= Decimal("0.10")
    assert (
        session.pause_reason
        == f"budget reached: ${session.cost_spent} of $0.1000; approve to continue"
    )
    assert crossings[-1] == [75, 80, 90, 100]
    assert all(earlier == later[: len(earlier)] for earlier, later in itertools.pairwise(crossings))
    waiting = plan.tasks.filter(status="todo").first()
    assert waiting is not None
    assert unit_run(task_id=waiting.pk, worker="test") is None, "no unit runs past the budget"


@override_settings(SF_UNIT_HARD_TIMEOUT=timedelta(seconds=0))
def test_a_timed_out_unit_is_recorded_and_the_loop_advances(repo: Path) -> None:
    session, plan = start(repo, task_spec())
    report = run_next(session, ScriptedModel(*writes("hello")))
    assert report.outcome == "interrupted"
    unit = Unit.objects.get()
    assert unit.status == "timed_out"
    assert unit.summary.startswith("hard timeout")
    assert plan.tasks.get().status == "retrying"


def test_assisted_pauses_after_one_unit(repo: Path) -> None:
    session, _plan = start(repo, task_spec(), task_spec("second", verify=["true"]))
    AgentSession.objects.filter(pk=session.pk).update(run_control="assisted")
    ran = drain(
        session_id=session.pk,
        worker="t",
        options=UnitOptions(model=MODEL, completion=ScriptedModel(*writes("hello"))),
    )
    session.refresh_from_db()
    assert ran == 1
    assert session.paused
    assert session.pause_reason.startswith("assisted run control: one unit done")


def test_a_crashed_unit_is_recovered_with_a_briefing(repo: Path) -> None:
    session, plan = start(repo, task_spec())
    AgentSession.objects.filter(pk=session.pk).update(driver="workers")
    task = plan.tasks.get()
    unit = Unit.objects.create(task=task, attempt=1)
    TraceEvent.objects.create(
        session=session,
        unit=unit,
        seq=0,
        kind="tool_call",
        name="write_file",
        payload={"arguments": {"path": "hello.txt"}, "output": "wrote 5 bytes"},
    )
    TaskSchedule.objects.filter(task=task).update(
        status=ScheduleStatus.DISPATCHED, claimed_by="dead@host"
    )
    from tasks_app.lifecycle import task_transition

    task_transition(task=task, to="in_progress", reason="unit started")
    TaskRuntime.objects.create(
        task=task, worker="dead@host", pid=1, last_heartbeat_at=timezone.now() - timedelta(hours=1)
    )

    assert unit_run(task_id=task.pk, worker="other") is None, "a dispatched task is someone's"
    result = engine_sweep()
    assert result["recovered"] == 1
    unit.refresh_from_db()
    task.refresh_from_db()
    assert unit.status == "crashed"
    assert (task.status, task.retry_count) == ("retrying", 0)
    AgentSession.objects.filter(pk=session.pk).update(driver="inline")
    model = ScriptedModel(*writes("hello"))
    assert run_next(session, model).task_status == "done"
    assert "## Recovery briefing" in model.calls[0]["messages"][1]["content"]
    assert (
        "write_file(path='hello.txt') → wrote 5 bytes" in model.calls[0]["messages"][1]["content"]
    )


def test_a_duplicate_delivery_does_nothing(repo: Path) -> None:
    session, plan = start(repo, task_spec())
    task = plan.tasks.get()
    assert run_next(session, ScriptedModel(*writes("hello"))).task_status == "done"
    assert unit_run(task_id=task.pk, worker="late-redelivery") is None
    assert Unit.objects.count() == 1
    assert git(repo, "log", "--format=%s").count("sf: merge hello") == 1


def test_costs_are_charged_to_task_and_session(repo: Path) -> None:
    session, plan = start(repo, task_spec())
    run_next(session, ScriptedModel(*writes("hello"), cost=0.05))
    session.refresh_from_db()
    assert session.cost_spent == Decimal("0.1000")
    assert plan.tasks.get().cost_spent == Decimal("0.1000")
    unit = Unit.objects.get()
    assert (unit.tokens_in, unit.tokens_out) == (100, 20)


def test_a_skill_the_model_makes_up_is_a_tool_error_and_the_unit_goes_on(repo: Path) -> None:
    """Qwen2.5-Coder-1.5B called load_skill("add_shout_flag") in a repository with no
    skills, and the unit (and its task) failed outright. With a skill on offer the
    model may still name a wrong one: it is told so and carries on."""
    skill = repo / ".agents" / "skills" / "greeting-style"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: greeting-style\ndescription: How greetings are worded\n---\nBe kind.\n"
    )
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "a skill")
    session, _ = start(repo, task_spec())
    model = ScriptedModel(
        ("a skill", [("load_skill", {"name": "add_shout_flag"})]), *writes("hello")
    )
    report = run_next(session, model)
    assert report.outcome == "verified", report.detail
    answer = model.calls[1]["messages"][-1]
    assert answer["role"] == "tool"
    assert "no skill named 'add_shout_flag'; available: greeting-style" in answer["content"]
    offered = {tool["function"]["name"] for tool in model.calls[0]["tools"]}
    assert "load_skill" in offered


def test_without_skills_load_skill_is_not_offered(repo: Path) -> None:
    session, _ = start(repo, task_spec())
    model = ScriptedModel(*writes("hello"))
    assert run_next(session, model).outcome == "verified"
    offered = {tool["function"]["name"] for tool in model.calls[0]["tools"]}
    assert "load_skill" not in offered
    assert {"read_file", "write_file", "edit_file", "finish"} <= offered


def test_a_task_over_its_own_budget_fails_instead_of_looping(repo: Path) -> None:
    """Paused for budget, the task was resumed at once (its session ran on) into another
    unit, and another: seen with a plan whose task had cost_budget 0."""
    session, plan = start(repo, task_spec(cost_budget="0.01"))
    expensive = ScriptedModel(*[("spend", [("list_dir", {"path": "."})])] * 3, cost=0.02)
    report = run_next(session, expensive)
    task = plan.tasks.get()
    assert (report.outcome, task.status) == ("budget", "failed")
    assert task.status_reason.startswith("its budget is spent: $0.0200 of $0.0100")
    assert drain(session_id=session.pk, worker="test") == 0  # nothing resumes it
    assert Unit.objects.filter(task=task).count() == 1
