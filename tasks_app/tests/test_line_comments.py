"""Line comments on a unit's diff: written by reviewers, carried by "Request changes"
into the next unit's brief, shown on the next unit's page as addressed or not."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from agents_app.models import AgentSession
from agents_app.tests.runtime_helpers import ScriptedModel
from conftest import grant
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.models import DiffComment, Plan, Unit
from tasks_app.tests.test_engine import run_next, start, task_spec, writes

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return demo_repo_create(tmp_path / "greet")


@pytest.fixture
def in_review(repo: Path, user: User) -> tuple[AgentSession, Plan, Unit]:
    session, plan = start(repo, task_spec(), profile="normal")
    grant(user, session.project, "approver")
    report = run_next(session, ScriptedModel(*writes("hello\nworld\n")))
    assert report.task_status == "review"
    return session, plan, Unit.objects.get(pk=report.unit_id)


def comment(client: Client, unit: Unit, line: int, text: str, side: str = "new") -> str:
    url = reverse("diff-comment-add", args=[unit.pk])
    data = {"path": "hello.txt", "line": line, "side": side, "text": text}
    response = client.post(url, data, **HTMX)  # type: ignore[arg-type]
    assert response.status_code == 200
    return response.content.decode()


def test_a_reviewer_comments_on_a_line_of_the_diff(
    logged_in_client: Client, in_review: tuple[AgentSession, Plan, Unit]
) -> None:
    unit = in_review[2]
    page = logged_in_client.get(reverse("unit-detail", args=[unit.pk])).content.decode()
    assert 'data-line="new:2"' in page
    form = logged_in_client.get(
        reverse("diff-comment-form", args=[unit.pk]), {"path": "hello.txt", "line": 2}, **HTMX
    ).content.decode()
    assert 'class="diff-comment-form"' in form
    assert "csrfmiddlewaretoken" not in form
    html = comment(logged_in_client, unit, 2, "say <b>there</b>, not world")
    saved = DiffComment.objects.get()
    assert (saved.path, saved.line, saved.line_text, saved.author_label) == (
        "hello.txt",
        2,
        "world",
        "ada",
    )
    assert 'id="diff-comments"' in html
    assert "say &lt;b&gt;there&lt;/b&gt;" in html


def test_a_comment_on_a_line_the_diff_does_not_show_is_refused(
    logged_in_client: Client, in_review: tuple[AgentSession, Plan, Unit]
) -> None:
    html = comment(logged_in_client, in_review[2], 40, "nope")
    assert "has no line hello.txt:40" in html
    assert not DiffComment.objects.exists()


def test_a_viewer_may_not_comment(
    logged_in_client: Client, user: User, in_review: tuple[AgentSession, Plan, Unit]
) -> None:
    session, _, unit = in_review
    grant(user, session.project, "viewer")
    page = logged_in_client.get(reverse("unit-detail", args=[unit.pk])).content.decode()
    assert "comment-line" not in page
    url = reverse("diff-comment-add", args=[unit.pk])
    data = {"path": "hello.txt", "line": 2, "text": "x"}
    assert logged_in_client.post(url, data, **HTMX).status_code == 403  # type: ignore[arg-type]
    form = reverse("diff-comment-form", args=[unit.pk])
    assert logged_in_client.get(form, {"path": "hello.txt", "line": 2}).status_code == 403
    assert not DiffComment.objects.exists()


def test_comments_travel_to_the_next_unit_and_show_whether_they_were_addressed(
    logged_in_client: Client, in_review: tuple[AgentSession, Plan, Unit]
) -> None:
    session, plan, first = in_review
    comment(logged_in_client, first, 2, "say there, not world")
    comment(logged_in_client, first, 1, "capitalise this")
    task = plan.tasks.get()
    review = reverse("task-review", args=[task.pk])
    logged_in_client.post(review, {"action": "changes", "reason": "see my comments"}, **HTMX)  # type: ignore[arg-type]
    model = ScriptedModel(*writes("hello\nthere\n"))
    second = Unit.objects.get(pk=run_next(session, model).unit_id)

    brief = model.calls[0]["messages"][1]["content"]
    assert "see my comments" in brief
    assert "- hello.txt:2: `world`\n  say there, not world" in brief
    assert "- hello.txt:1: `hello`\n  capitalise this" in brief

    changed = DiffComment.objects.get(line=2)
    unchanged = DiffComment.objects.get(line=1)
    assert (changed.line_changed, changed.addressed, changed.addressed_by) == (
        True,
        True,
        "attempt 2",
    )
    assert (unchanged.line_changed, unchanged.addressed) == (False, False)
    page = logged_in_client.get(reverse("unit-detail", args=[second.pk])).content.decode()
    assert "Review comments on attempt 1" in page
    assert f'data-comment="{changed.pk}" data-changed="yes" data-addressed="yes"' in page
    assert f'data-comment="{unchanged.pk}" data-changed="no" data-addressed="no"' in page

    url = reverse("diff-comment-addressed", args=[unchanged.pk])
    html = logged_in_client.post(url, **HTMX).content.decode()  # type: ignore[arg-type]
    assert f'data-comment="{unchanged.pk}" data-changed="no" data-addressed="yes"' in html
    unchanged.refresh_from_db()
    assert (unchanged.addressed, unchanged.addressed_by) == (True, "ada")
