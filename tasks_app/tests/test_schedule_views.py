"""The schedules pages: create with clear errors, the list, a schedule's runs, the
buttons, who may do what; and the schedules on /tasks and the dashboard."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from agents_app.models import Project
from conftest import grant
from sf_core.actors import Actor
from tasks_app.features.schedules.runner import schedules_sweep
from tasks_app.features.schedules.services import schedule_create
from tasks_app.models import Schedule, ScheduleRun
from tasks_app.tests.schedule_helpers import PLAN_TEMPLATE, plan_spec

pytestmark = pytest.mark.django_db

FORM = {
    "name": "nightly bump",
    "kind": "plan",
    "plan_text": PLAN_TEMPLATE,
    "plan_format": "yaml",
    "cron": "30 2 * * *",
    "timezone": "Europe/Berlin",
    "run_control": "manual",
    "permission_profile": "normal",
    "model_mode": "deep",
    "catch_up_window": "2h",
}


@pytest.fixture
def bob(django_user_model: Any, project: Project) -> User:
    user: User = django_user_model.objects.create(username="bob")
    return user


def as_role(client: Client, bob: User, project: Project, role: str | None) -> Client:
    grant(bob, project, role)
    client.force_login(bob)
    return client


def test_an_operator_creates_a_schedule_and_sees_its_next_run_in_its_zone_and_utc(
    client: Client, bob: User, project: Project
) -> None:
    as_role(client, bob, project, "operator")
    response = client.post(reverse("project-schedules", args=[project.pk]), FORM)

    schedule = Schedule.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("schedule-detail", args=[schedule.pk])
    assert (schedule.run_as, schedule.cron, schedule.timezone) == (
        bob,
        "30 2 * * *",
        "Europe/Berlin",
    )
    assert schedule.catch_up_window.total_seconds() == 7200
    html = client.get(reverse("project-schedules", args=[project.pk])).content.decode()
    local = schedule.next_run_at.astimezone(__import__("zoneinfo").ZoneInfo("Europe/Berlin"))
    assert local.strftime("%Y-%m-%d 02:30 %Z") in html
    assert schedule.next_run_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M") in html


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("cron", "30 26 * * *", "bad hour field"),
        ("cron", "30 2 * *", "has 4 fields; a cron expression has five"),
        ("timezone", "Europe/Atlantis", "unknown time zone 'Europe/Atlantis'"),
        ("plan_text", "summary: no tasks\n", "tasks: Field required"),
        ("catch_up_window", "5s", "5s is outside 1m to 7d"),
        ("run_control", "sometimes", "Input should be 'manual', 'assisted' or 'autonomous'"),
    ],
)
def test_a_bad_field_is_named_beside_it_and_nothing_is_written(
    client: Client, bob: User, project: Project, field: str, value: str, words: str
) -> None:
    as_role(client, bob, project, "operator")
    response = client.post(reverse("project-schedules", args=[project.pk]), FORM | {field: value})
    assert response.status_code == 400
    html = response.content.decode()
    assert f'data-error="{field}"' in html
    assert words.replace("'", "&#x27;") in html
    assert not Schedule.objects.exists()


def test_an_operator_cannot_schedule_a_trusted_session_and_is_told_why(
    client: Client, bob: User, project: Project
) -> None:
    as_role(client, bob, project, "operator")
    form = FORM | {"permission_profile": "trusted"}
    response = client.post(reverse("project-schedules", args=[project.pk]), form)
    assert response.status_code == 400
    assert "it needs the approver role (you are operator)" in response.content.decode()
    assert not Schedule.objects.exists()


def test_a_viewer_sees_schedules_but_cannot_create_one(
    client: Client, bob: User, project: Project, user: User
) -> None:
    schedule_create(project=project, spec=plan_spec(), actor=Actor.of(user))
    as_role(client, bob, project, "viewer")
    page = client.get(reverse("project-schedules", args=[project.pk]))
    assert page.status_code == 200
    assert 'data-schedule="nightly bump"' in page.content.decode()
    assert "data-schedule-form" not in page.content.decode()

    form = FORM | {"name": "another"}
    assert client.post(reverse("project-schedules", args=[project.pk]), form).status_code == 403
    schedule = Schedule.objects.get()
    action = reverse("schedule-action", args=[schedule.pk, "pause"])
    assert client.post(action).status_code == 403
    assert Schedule.objects.get().paused is False
    assert Schedule.objects.count() == 1


def test_a_stranger_is_refused_the_pages(
    client: Client, bob: User, project: Project, user: User
) -> None:
    schedule = schedule_create(project=project, spec=plan_spec(), actor=Actor.of(user))
    as_role(client, bob, project, None)
    assert client.get(reverse("project-schedules", args=[project.pk])).status_code == 403
    assert client.get(reverse("schedule-detail", args=[schedule.pk])).status_code == 403
    assert client.post(reverse("schedule-action", args=[schedule.pk, "run"])).status_code == 403
    assert not ScheduleRun.objects.exists()


def test_the_buttons_pause_resume_run_now_and_delete(
    logged_in_client: Client, project: Project, user: User
) -> None:
    schedule = schedule_create(project=project, spec=plan_spec(), actor=Actor.of(user))

    def press(action: str) -> str:
        url = reverse("schedule-action", args=[schedule.pk, action])
        response = logged_in_client.post(url, follow=True)
        assert response.status_code == 200
        return response.content.decode()

    assert 'data-paused="true"' in press("pause")
    assert (
        "paused"
        in logged_in_client.get(reverse("project-schedules", args=[project.pk])).content.decode()
    )
    assert 'data-paused="false"' in press("resume")
    html = press("run")
    run = ScheduleRun.objects.get()
    assert (run.status, run.trigger) == ("proposed", "manual")
    assert f'href="/sessions/{run.session_id}/"' in html
    assert "plan " in html
    assert 'data-status="proposed"' in html
    press("delete")
    assert not Schedule.objects.exists()


def test_every_run_skip_and_miss_is_a_row_on_the_schedules_page(
    logged_in_client: Client, project: Project, user: User
) -> None:
    schedule = schedule_create(
        project=project,
        spec=plan_spec(),
        actor=Actor.of(user),
        now=datetime(2026, 3, 27, 12, tzinfo=UTC),
    )
    schedules_sweep(now=datetime(2026, 3, 28, 1, 30, 5, tzinfo=UTC))  # runs, waits for review
    schedules_sweep(now=datetime(2026, 3, 30, 0, 31, tzinfo=UTC))  # 29th missed, 30th skipped
    html = logged_in_client.get(reverse("schedule-detail", args=[schedule.pk])).content.decode()
    assert html.count("data-run=") == 3
    assert "2026-03-29 03:00 CEST" in html  # the missed occurrence, after the spring gap
    assert 'data-status="missed"' in html
    assert 'data-status="skipped"' in html
    assert "is still going" in html


def test_the_schedule_is_on_the_task_board_and_the_dashboard(
    logged_in_client: Client, project: Project, user: User, django_user_model: Any
) -> None:
    schedule = schedule_create(project=project, spec=plan_spec(), actor=Actor.of(user))
    for page in ("task-board", "dashboard"):
        html = logged_in_client.get(reverse(page)).content.decode()
        assert 'id="schedules-upcoming"' in html, page
        assert 'data-schedule="nightly bump"' in html, page
        assert schedule.next_run_at.strftime("%Y-%m-%d %H:%M") in html, page
    stranger = django_user_model.objects.create(username="eve")
    client = Client()
    client.force_login(stranger)
    assert 'data-schedule="nightly bump"' not in client.get(reverse("dashboard")).content.decode()
