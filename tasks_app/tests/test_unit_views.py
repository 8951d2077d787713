"""The unit page (diff, trace, verification), its review buttons, and the links to it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.template.loader import render_to_string
from django.test import Client
from django.urls import reverse

from agents_app.models import AgentSession, RiskDecision
from agents_app.tests.runtime_helpers import ScriptedModel
from conftest import grant
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.models import Plan, Task, Unit
from tasks_app.surfaces.unit_views import unit_context
from tasks_app.tests.test_engine import git, run_next, start, task_spec, writes

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return demo_repo_create(tmp_path / "greet")


@pytest.fixture
def in_review(repo: Path, user: User) -> tuple[AgentSession, Plan]:
    """A task in review after one replayed unit wrote hello.txt (normal: a person reviews);
    ``user`` (the logged-in client's) is an approver of its project."""
    session, plan = start(repo, task_spec(), profile="normal")
    grant(user, session.project, "approver")
    model = ScriptedModel(
        ("checking", [("run_command", {"command": "ls -la"})]), *writes("hello\nworld\n")
    )
    assert run_next(session, model).task_status == "review"
    return session, plan


def unit_of(plan: Plan) -> Unit:
    return Unit.objects.get(task__plan=plan)


def test_the_unit_page_shows_the_diff_trace_and_verification(
    logged_in_client: Client, in_review: tuple[AgentSession, Plan]
) -> None:
    unit = unit_of(in_review[1])
    html = logged_in_client.get(reverse("unit-detail", args=[unit.pk])).content.decode()
    assert 'data-path="hello.txt" data-file-status="added"' in html
    assert 'data-added="2"' in html
    assert 'data-removed="0"' in html
    assert '<tr class="diff-add"><td class="ln"></td><td class="ln">2</td>' in html
    assert '<span class="dim">$</span> ls -la' in html  # the command line, not a dict repr
    assert "{&#x27;command&#x27;" not in html
    assert "\\n" not in html
    assert 'id="unit-verification"' in html
    assert "Verification passed" in html


def test_the_live_partial_carries_no_token_and_posts_with_htmx(
    in_review: tuple[AgentSession, Plan],
) -> None:
    """The consumer renders without a request: the CSRF header on <body> must do."""
    unit = Unit.objects.select_related("task__plan").get(task__plan=in_review[1])
    html = render_to_string("tasks_app/unit_detail.html#unit-state", unit_context(unit))
    assert "csrfmiddlewaretoken" not in html
    assert 'method="post"' not in html
    assert f'hx-post="{reverse("task-review", args=[unit.task_id])}"' in html
    assert 'id="approve-merge"' in html
    assert 'id="request-changes"' in html


def test_approving_over_htmx_redirects_the_client_and_merges(
    logged_in_client: Client, in_review: tuple[AgentSession, Plan], repo: Path
) -> None:
    task = in_review[1].tasks.get()
    response = logged_in_client.post(
        reverse("task-review", args=[task.pk]), {"action": "approve"}, **HTMX
    )
    assert response.headers["HX-Redirect"] == reverse(
        "unit-detail", args=[unit_of(in_review[1]).pk]
    )
    task.refresh_from_db()
    assert task.status == "done"
    assert git(repo, "log", "--format=%s", "-1").startswith("sf: merge hello")


def test_a_plain_post_still_redirects(
    logged_in_client: Client, in_review: tuple[AgentSession, Plan]
) -> None:
    task = in_review[1].tasks.get()
    response = logged_in_client.post(
        reverse("task-review", args=[task.pk]), {"action": "changes", "reason": "louder"}
    )
    assert response.status_code == 302
    task.refresh_from_db()
    assert (task.status, task.status_reason) == ("todo", "changes requested by ada: louder")


def test_changes_without_a_comment_show_the_error_beside_the_buttons(
    logged_in_client: Client, in_review: tuple[AgentSession, Plan]
) -> None:
    task = in_review[1].tasks.get()
    response = logged_in_client.post(
        reverse("task-review", args=[task.pk]), {"action": "changes", "reason": " "}, **HTMX
    )
    assert response.status_code == 200
    assert response.content.decode() == '<p class="error" role="alert">say what should change</p>'
    assert Task.objects.get(pk=task.pk).status == "review"


def test_approving_from_an_earlier_attempts_page_is_refused_as_stale(
    logged_in_client: Client, in_review: tuple[AgentSession, Plan], repo: Path
) -> None:
    """Attempt 1 was sent back and attempt 2 waits for review: an Approve posted from
    attempt 1's page (its unit) merges nothing and says where the task is."""
    session, plan = in_review
    task, first = plan.tasks.get(), unit_of(plan)
    url = reverse("task-review", args=[task.pk])
    logged_in_client.post(url, {"action": "changes", "reason": "louder", "unit": first.pk})
    assert run_next(session, ScriptedModel(*writes("hello, louder\n"))).task_status == "review"

    response = logged_in_client.post(url, {"action": "approve", "unit": first.pk}, **HTMX)

    assert response.content.decode() == (
        '<p class="error" role="alert">this page is stale: task hello is at attempt 2 now;'
        " review it there</p>"
    )
    assert Task.objects.get(pk=task.pk).status == "review"
    second = Unit.objects.get(task=task, attempt=2)
    page = logged_in_client.get(reverse("unit-detail", args=[first.pk])).content.decode()
    assert f'data-stale-attempt="{second.pk}"' in page
    assert 'id="approve-merge"' not in page
    page = logged_in_client.get(reverse("unit-detail", args=[second.pk])).content.decode()
    assert "<p data-requested-changes>changes requested by ada: louder</p>" in page
    logged_in_client.post(url, {"action": "approve", "unit": second.pk}, **HTMX)
    assert Task.objects.get(pk=task.pk).status == "done"


def test_the_board_links_each_task_to_its_units(
    logged_in_client: Client, in_review: tuple[AgentSession, Plan]
) -> None:
    session, plan = in_review
    unit = unit_of(plan)
    html = logged_in_client.get(f"/tasks/?session={session.pk}").content.decode()
    assert f'<a href="/units/{unit.pk}/" data-unit-link="{unit.pk}">unit 1 · succeeded</a>' in html
    assert f'<a href="/units/{unit.pk}/" data-review-link>awaiting review</a>' in html
    page = logged_in_client.get(reverse("session-plans", args=[session.pk]), **HTMX)
    assert f'href="/units/{unit.pk}/" data-unit-link="{unit.pk}"' in page.content.decode()
    assert "review unit 1" in page.content.decode()


def test_approvals_and_the_dashboard_lead_to_the_work(
    client: Client, staff_user: User, in_review: tuple[AgentSession, Plan]
) -> None:
    session, plan = in_review
    unit = unit_of(plan)
    RiskDecision.objects.create(
        session=session,
        unit=unit,
        tool="run_command",
        input_normalized={"command": "pip install x"},
        input_hash="h",
        risk_class="install",
        decision="ask",
        rule="r",
        work_mode="build",
        run_control="manual",
        permission_profile="normal",
        model_mode="smart",
        surface="web",
        review_status="pending",
    )
    grant(staff_user, session.project, "viewer")
    client.force_login(staff_user)
    approvals = client.get(reverse("approvals")).content.decode()
    assert f'href="/units/{unit.pk}/" data-unit-link="{unit.pk}">hello · unit 1</a>' in approvals
    dashboard = client.get(reverse("dashboard")).content.decode()
    assert (
        f'?session={session.pk}&amp;status=review" data-in-review="1">1 in review</a>' in dashboard
    )


def test_unit_urls_come_from_the_model(in_review: tuple[AgentSession, Plan]) -> None:
    unit: Any = unit_of(in_review[1])
    assert unit.get_absolute_url() == f"/units/{unit.pk}/"
