"""The preferences page with its test button, the admin's delivery log."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from agents_app.models import Project
from notify_app.delivery import deliveries_run
from notify_app.models import Delivery, DeliveryStatus, NotificationPreference
from notify_app.outbox import notification_enqueue
from sf_core.notices import Notice, NoticeKind

pytestmark = pytest.mark.django_db


def test_saving_preferences_and_a_webhook_gets_a_secret(
    logged_in_client: Client, user: User, project: Project
) -> None:
    url = reverse("notify-preferences")
    assert logged_in_client.get(url).status_code == 200
    response = logged_in_client.post(
        url,
        {
            "email": "",
            "browser": "on",
            "webhook_url": "https://hooks.example.com/T1",
            "kinds": ["task_failed", "stuck_loop"],
            "projects": [project.pk],
        },
    )
    assert response.status_code == 302
    preference = NotificationPreference.objects.get(user=user)
    assert (preference.email, preference.browser) == (False, True)
    assert preference.kinds == ["task_failed", "stuck_loop"]
    assert list(preference.projects.all()) == [project]
    assert len(preference.webhook_secret) >= 32
    page = logged_in_client.get(url).content.decode()
    assert preference.webhook_secret in page
    assert "v0:TS:BODY" in page


def test_a_project_the_person_cannot_see_is_not_a_choice(
    logged_in_client: Client, user: User, project: Project, git_repo: object
) -> None:
    hidden = Project.objects.create(name="hidden", repo_path="/nowhere/hidden")
    response = logged_in_client.post(
        reverse("notify-preferences"), {"browser": "on", "projects": [hidden.pk]}
    )
    assert response.status_code == 400
    assert not NotificationPreference.objects.filter(user=user).exists()


def test_the_test_button_sends_to_the_person_alone(
    logged_in_client: Client, user: User, staff_user: User
) -> None:
    User.objects.filter(pk=user.pk).update(email="ada@example.com")
    response = logged_in_client.post(reverse("notify-test"))
    assert response.status_code == 302
    deliveries = Delivery.objects.all()
    assert {(d.user_id, d.channel) for d in deliveries} == {
        (user.pk, "email"),
        (user.pk, "browser"),
    }
    assert deliveries_run(worker="w") == {"sent": 2}
    assert logged_in_client.get(reverse("notify-test")).status_code == 405


def test_the_admin_delivery_log_renders_read_only(
    admin_client: Client, project: Project, user: User
) -> None:
    notice = Notice(kind=NoticeKind.TASK_FAILED, dedupe_key="k", project_id=project.pk, text="a")
    notification = notification_enqueue(notice=notice)
    assert notification is not None
    Delivery.objects.update(last_error="HTTPError: 500", status=DeliveryStatus.FAILED)
    delivery = Delivery.objects.get()
    listing = admin_client.get(reverse("admin:notify_app_delivery_changelist"))
    assert listing.status_code == 200
    assert "HTTPError: 500" in listing.content.decode()
    detail = admin_client.get(reverse("admin:notify_app_delivery_change", args=[delivery.pk]))
    assert detail.status_code == 200
    assert 'name="status"' not in detail.content.decode()
    page = admin_client.get(reverse("admin:notify_app_notification_change", args=[notification.pk]))
    assert page.status_code == 200


def test_a_staff_member_sees_only_their_projects_deliveries(
    client: Client, staff_user: User, project: Project
) -> None:
    from django.contrib.auth.models import Permission

    staff_user.user_permissions.add(Permission.objects.get(codename="view_delivery"))
    notice = Notice(kind=NoticeKind.TASK_FAILED, dedupe_key="k", project_id=project.pk, text="a")
    notification_enqueue(notice=notice)
    client.force_login(staff_user)
    listing = client.get(reverse("admin:notify_app_delivery_changelist"))
    assert listing.status_code == 200
    assert listing.context["cl"].result_count == 0


def email_tag(page: str) -> str:
    """The email checkbox's <input> tag."""
    found = re.search(r'<input[^>]*name="email"[^>]*>', page)
    assert found, "no email checkbox"
    return found.group(0)


def test_email_is_not_ticked_for_an_account_with_no_address(
    logged_in_client: Client, user: User
) -> None:
    page = logged_in_client.get(reverse("notify-preferences")).content.decode()
    email_input = email_tag(page)
    assert "checked" not in email_input
    assert "disabled" in email_input
    assert "no email address" in page
    logged_in_client.post(reverse("notify-preferences"), {"email": "on", "browser": "on"})
    assert NotificationPreference.objects.get(user=user).email is False


def test_email_is_ticked_by_default_for_an_account_with_an_address(
    logged_in_client: Client, user: User
) -> None:
    User.objects.filter(pk=user.pk).update(email="ada@example.com")
    page = logged_in_client.get(reverse("notify-preferences")).content.decode()
    assert "checked" in email_tag(page)
