"""A model's review before a person's, through real units with a scripted provider:
advisory (shown; a person decides), required (request_changes sends the task back with
the comments in the next attempt's brief), and a model that gives no usable verdict."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from agents_app.models import RiskDecision, TraceEvent
from agents_app.runtime.recording import trace_export, trace_write
from agents_app.services import project_create
from agents_app.tests.runtime_helpers import ScriptedModel
from conftest import grant
from tasks_app.engine.replaying import demo_repo_create, replay_run
from tasks_app.features.model_review import model_review_verdict
from tasks_app.features.model_review.sweep import model_reviews_recover
from tasks_app.models import DiffComment, ModelReview, Unit
from tasks_app.recording import task_plan_yaml
from tasks_app.tests.test_engine import git, run_next, start, task_spec, writes

pytestmark = pytest.mark.django_db
DEEP = "openai/gpt-4o"


@pytest.fixture(autouse=True)
def deep_model(settings: Any) -> None:
    settings.SF_MODEL_DEEP = DEEP


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return demo_repo_create(tmp_path / "greet")


def policy(mode: str, **extra: Any) -> dict[str, Any]:
    return {"model_review": {"mode": mode, **extra}}


def verdict(kind: str, reasons: str, *comments: tuple[int, str]) -> tuple[str, list[Any]]:
    given = [{"path": "hello.txt", "line": line, "text": text} for line, text in comments]
    arguments = {"verdict": kind, "reasons": reasons, "comments": given}
    return ("my verdict", [("review_verdict", arguments)])


def test_an_advisory_review_is_shown_beside_the_diff_and_a_person_decides(
    repo: Path, user: User, logged_in_client: Client
) -> None:
    # Trusted and low risk would approve by itself: the model's request keeps it for a person.
    session, plan = start(repo, task_spec(), profile="trusted", policy=policy("advisory"))
    grant(user, session.project, "approver")
    model = ScriptedModel(
        *writes("hello\nworld\n"),
        ("reading", [("read_file", {"path": "hello.txt"})]),
        verdict("request_changes", "R1 asks for a greeting", (2, "say there"), (40, "far away")),
        cost=0.01,
    )
    report = run_next(session, model)

    assert report.task_status == "review"
    unit = Unit.objects.get(pk=report.unit_id)
    review = ModelReview.objects.get(unit=unit)
    assert (review.verdict, review.mode, review.sent_back) == ("request_changes", "advisory", False)
    assert review.reasons == "R1 asks for a greeting"
    assert review.notes == ["a comment on hello.txt:40 was dropped: the diff has no such line"]
    assert model_review_verdict(unit) == "request_changes"
    (comment,) = DiffComment.objects.filter(unit=unit)
    assert (comment.by_model, comment.line, comment.line_text) == (True, 2, "world")
    assert comment.author_label.startswith("model review (")
    # The review's prompt: the criteria and the numbered diff; its tools only read.
    asked = model.calls[2]
    assert asked["model"] == DEEP
    assert "- R1: hello.txt says hello" in asked["messages"][1]["content"]
    assert "2\t+world" in asked["messages"][1]["content"]
    offered = {tool["function"]["name"] for tool in asked["tools"]}
    assert offered == {"read_file", "grep", "glob", "list_dir", "review_verdict"}
    # Its two steps are counted on the unit, its task and its session.
    assert review.cost == Decimal("0.02")
    unit.refresh_from_db()
    session.refresh_from_db()
    assert unit.cost == plan.tasks.get().cost_spent == session.cost_spent == Decimal("0.04")
    assert RiskDecision.objects.filter(unit_id=unit.pk, tool="read_file").get().work_mode == (
        "review"
    )

    page = logged_in_client.get(reverse("unit-detail", args=[unit.pk])).content.decode()
    assert 'data-model-review="request_changes"' in page
    assert 'data-review-mode="advisory"' in page
    assert "R1 asks for a greeting" in page
    assert f'data-model-comment="{comment.pk}"' in page
    assert "a comment on hello.txt:40 was dropped" in page
    assert f'data-comment="{comment.pk}" data-addressed="no" data-by-model' in page
    assert 'id="approve-merge"' in page  # a person decides


def test_a_required_review_sends_the_task_back_with_its_comments_in_the_brief(
    repo: Path,
) -> None:
    session, plan = start(repo, task_spec(), profile="normal", policy=policy("required"))
    first_model = ScriptedModel(
        *writes("hello\nworld\n"),
        verdict("request_changes", "greet the reader", (2, "say there, not world")),
    )
    first = run_next(session, first_model)
    assert first.task_status == "todo"
    task = plan.tasks.get()
    assert task.status_reason == "changes requested by model review: greet the reader"
    assert ModelReview.objects.get(unit_id=first.unit_id).sent_back

    second_model = ScriptedModel(*writes("hello\nthere\n"), verdict("approve", "meets R1"))
    second = run_next(session, second_model)

    brief = second_model.calls[0]["messages"][1]["content"]
    assert "A model review reviewed attempt 1's changes and sent them back" in brief
    assert "> changes requested by model review: greet the reader" in brief
    assert "- hello.txt:2: `world`\n  say there, not world" in brief
    assert second.task_status == "review"  # approved by the model: a person still merges
    assert model_review_verdict(second.unit_id) == "approve"
    assert DiffComment.objects.get(unit_id=first.unit_id).addressed  # attempt 2 changed it


def test_a_required_review_sends_a_task_back_at_most_max_rounds_times(repo: Path) -> None:
    session, _ = start(repo, task_spec(), profile="normal", policy=policy("required", max_rounds=1))
    run_next(session, ScriptedModel(*writes("hello\nworld\n"), verdict("request_changes", "no")))
    second = run_next(
        session, ScriptedModel(*writes("hello\nthere\n"), verdict("request_changes", "still no"))
    )
    assert second.task_status == "review"
    review = ModelReview.objects.get(unit_id=second.unit_id)
    assert not review.sent_back
    assert review.notes == ["not sent back: it was sent back 1 times already; a person decides"]


def test_a_model_without_a_usable_verdict_is_no_verdict_and_blocks_nothing(repo: Path) -> None:
    session, plan = start(repo, task_spec(), profile="normal", policy=policy("required"))
    model = ScriptedModel(
        *writes("hello\nworld\n"),
        # Not offered (a review only reads): the model is told so, and nothing is written.
        ("let me fix it", [("write_file", {"path": "hello.txt", "content": "bye\n"})]),
        ("bad verdict", [("review_verdict", {"verdict": "maybe", "reasons": "hm"})]),
        ("It looks fine to me.", []),
        ("Really fine.", []),
        ("Fine.", []),
    )
    report = run_next(session, model)

    assert report.task_status == "review"  # a person decides; nothing waits
    review = ModelReview.objects.get(unit_id=report.unit_id)
    assert review.verdict == "no_verdict"
    assert model_review_verdict(report.unit_id) == "no_verdict"
    assert review.notes[0].startswith("no verdict: the review ended no_progress")
    refused = TraceEvent.objects.get(
        unit_id=report.unit_id, name="write_file", payload__stage="review"
    )
    assert "unknown tool 'write_file'" in refused.payload["output"]
    assert git(repo, "show", f"{plan.tasks.get().branch}:hello.txt") == "hello\nworld"


def test_a_verdict_the_model_wrote_as_text_is_read(repo: Path) -> None:
    session, _ = start(repo, task_spec(), profile="normal", policy=policy("advisory"))
    text = 'My verdict: {"verdict": "approve", "reasons": "R1 is met"}'
    model = ScriptedModel(*writes("hello\n"), (text, []), (text, []), (text, []))
    report = run_next(session, model)

    review = ModelReview.objects.get(unit_id=report.unit_id)
    assert (review.verdict, review.reasons) == ("approve", "R1 is met")
    assert "read from the model's text" in review.notes[0]


def test_without_a_deep_model_the_review_is_no_verdict(repo: Path, settings: Any) -> None:
    settings.SF_MODEL_DEEP = ""
    session, _ = start(repo, task_spec(), profile="normal", policy=policy("required"))
    report = run_next(session, ScriptedModel(*writes("hello\n")))
    assert report.task_status == "review"
    review = ModelReview.objects.get(unit_id=report.unit_id)
    assert review.verdict == "no_verdict"
    assert "SF_MODEL_DEEP" in review.notes[0]


def test_with_the_policy_off_there_is_no_review(repo: Path) -> None:
    session, _ = start(repo, task_spec(), profile="normal")
    model = ScriptedModel(*writes("hello\n"))
    report = run_next(session, model)
    assert report.task_status == "review"
    assert len(model.calls) == 2
    assert model_review_verdict(report.unit_id) is None


def test_a_recorded_review_replays_to_the_same_verdict(tmp_path: Path) -> None:
    original = demo_repo_create(tmp_path / "original")
    session, plan = start(original, task_spec(), profile="normal", policy=policy("advisory"))
    model = ScriptedModel(
        *writes("hello\nworld\n"),
        ("reading", [("read_file", {"path": "hello.txt"})]),
        verdict("request_changes", "greet the reader", (2, "say there")),
    )
    report = run_next(session, model)
    header = {"plan_yaml": task_plan_yaml(plan.tasks.get()), "permission_profile": "normal"}
    records = trace_export(unit_id=report.unit_id, header=header)
    stages = [r.get("stage") for r in records if r["type"] in ("model_step", "tool_call")]
    assert stages == [None] * 4 + ["review"] * 4
    trace = trace_write(tmp_path / "reviewed.jsonl", records)

    copy = demo_repo_create(tmp_path / "copy")
    project_create(name="copy", repo_path=str(copy.resolve()), policy=policy("advisory"))
    [task] = replay_run(trace, project_path=copy).tasks()
    assert task.status == "review", task.status_reason
    review = ModelReview.objects.get(unit__task=task)
    assert review.model.startswith("replay/")
    assert (review.verdict, review.reasons) == ("request_changes", "greet the reader")
    assert DiffComment.objects.get(unit__task=task).line == 2


def test_a_review_whose_run_was_lost_ends_with_no_verdict_in_the_sweep(
    repo: Path, settings: Any
) -> None:
    session, plan = start(repo, task_spec(), profile="normal")
    report = run_next(session, ScriptedModel(*writes("hello\n")))
    lost = ModelReview.objects.create(unit_id=report.unit_id, mode="required")
    settings.SF_WORKER_STALE_AFTER = timedelta(0)  # its unit's runtime is gone already
    assert model_reviews_recover() == 1
    lost.refresh_from_db()
    assert lost.verdict == "no_verdict"
    assert "its worker stopped" in lost.notes[0]
    assert plan.tasks.get().status == "review"  # a person decides, as without a review
    assert model_reviews_recover() == 0
