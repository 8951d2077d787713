"""``sf doctor`` (text, JSON, exit codes, --fix twice) and the doctor page (staff only,
the Fix POST with CSRF, the nav link)."""

from __future__ import annotations

from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from agents_app.models import RepairRecord
from conftest import grant
from sf_core.doctor import DoctorOutput

pytestmark = pytest.mark.django_db


def run_sf(*args: str) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    try:
        call_command("sf", *args, stdout=out, stderr=err)
    except SystemExit as exit_:
        return int(exit_.code or 0), out.getvalue(), err.getvalue()
    return 0, out.getvalue(), err.getvalue()


def test_a_healthy_installation_exits_0_with_a_line_per_check() -> None:
    code, out, _ = run_sf("doctor")
    assert code == 0
    assert "ok  database" in out
    assert out.splitlines()[-1].startswith("healthy (17 checks")


def test_an_error_exits_1_and_json_follows_the_schema(settings: Any) -> None:
    settings.SF_DOCTOR_DISK_ERROR_MIB = 10**9
    code, out, _ = run_sf("doctor", "--output-format", "json")
    output = DoctorOutput.model_validate_json(out)
    assert code == 1
    assert not output.report.healthy
    assert output.report.severity == "error"
    assert [c.id for c in output.report.failing()] == ["disk.space"]
    assert output.repairs == []


def test_fix_repairs_once_and_the_second_run_changes_nothing(stale_lock: Path) -> None:
    code, out, _ = run_sf("doctor", "--fix", "--output-format", "json")
    first = DoctorOutput.model_validate_json(out)
    assert code == 0
    assert [(r.check_id, r.target) for r in first.repairs] == [("locks.dead", str(stale_lock))]
    assert not stale_lock.exists()
    record = RepairRecord.objects.get()
    assert (record.actor_kind, record.actor_label) == ("system", "doctor")

    code, out, _ = run_sf("doctor", "fix")  # DESIGN §8 spelling
    assert code == 0
    assert "fixed " not in out
    assert RepairRecord.objects.count() == 1


def test_an_unknown_check_is_a_usage_error() -> None:
    code, _, err = run_sf("doctor", "--check", "no.such")
    assert code == 2
    assert err.startswith("unknown check no.such; known: broker, database,")


def test_one_check_only(stale_lock: Path) -> None:
    code, out, _ = run_sf("doctor", "--check", "locks.dead")
    assert code == 0
    assert "fixable: sf doctor --fix" in out
    assert "database" not in out


def test_the_page_is_for_staff(client: Client, user: User, staff_user: User) -> None:
    assert client.get("/doctor/").status_code == 302  # to the login page
    client.force_login(user)
    assert client.get("/doctor/").status_code == 403
    assert b'href="/doctor/"' not in client.get("/").content
    client.force_login(staff_user)
    response = client.get("/doctor/")
    assert response.status_code == 200
    assert b'data-check="workers.clock"' in response.content
    assert b'href="/doctor/"' in client.get("/").content


def test_fix_is_a_post_with_csrf(staff_user: User, project: Any, stale_lock: Path) -> None:
    grant(staff_user, project, "admin")  # the repairs touch its repository
    client = Client(enforce_csrf_checks=True)
    client.force_login(staff_user)
    assert client.post("/doctor/").status_code == 403
    assert stale_lock.exists(), "refused without the token: nothing changed"

    page = client.get("/doctor/")
    token = page.context["csrf_token"]
    response = client.post("/doctor/", {"csrfmiddlewaretoken": str(token)})

    assert response.status_code == 200
    assert b"data-doctor-repairs" in response.content
    assert b"stale git lock removed" in response.content
    assert not stale_lock.exists()
    assert RepairRecord.objects.get().actor_label == "grace"


def test_the_command_bar_answers_doctor_inline(
    logged_in_client: Client, agent_session: Any, stale_lock: Path
) -> None:
    url = f"/sessions/{agent_session.pk}/command"
    response = logged_in_client.post(url, {"text": "/doctor"}, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert response.status_code == 200
    assert "WARNING locks.dead: git lock" in html
    assert stale_lock.exists(), "/doctor only inspects"

    response = logged_in_client.post(url, {"text": "/doctor fix"}, HTTP_HX_REQUEST="true")
    assert "stale git lock removed" in response.content.decode()
    assert not stale_lock.exists()
