from __future__ import annotations

import json
import os
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from tasks_app.engine.workers import worker_register

pytestmark = pytest.mark.django_db


def run_sf(*args: str) -> tuple[int, str]:
    out = StringIO()
    try:
        call_command("sf", *args, stdout=out, stderr=StringIO())
    except SystemExit as exit_:
        return int(exit_.code or 0), out.getvalue()
    return 0, out.getvalue()


def test_status_prints_every_probe() -> None:
    code, out = run_sf("status")
    assert code == 0
    assert "ok  database  PostgreSQL" in out
    assert "ok  broker    redis" in out
    assert "ok  native    sf_native" in out


def test_status_as_json_lists_workers() -> None:
    worker_register(hostname="w9@host", pid=9, concurrency=1, queues="sf")
    code, out = run_sf("status", "--output-format", "json")
    data = json.loads(out)
    assert code == 0
    assert data["workers_online"] == 1
    assert data["workers"][0]["hostname"] == "w9@host"
    assert data["database"]["ok"] is True


def test_ensure_admin_creates_the_user_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SF_ADMIN_PASSWORD", raising=False)
    password_file = tmp_path / "admin-password"
    code, out = run_sf("ensure-admin", "--password-file", str(password_file))
    assert code == 0
    assert "created" in out
    password = password_file.read_text().strip()
    assert oct(os.stat(password_file).st_mode & 0o777) == "0o600"
    admin = User.objects.get(username="admin")
    assert admin.is_superuser
    assert admin.check_password(password)

    code, out = run_sf("ensure-admin", "--password-file", str(password_file))
    assert "exists" in out
    admin.refresh_from_db()
    assert admin.check_password(password)
    assert out == (
        f"admin user 'admin' exists; the password generated for it is in {password_file} "
        "(unless it was changed since)\n"
    )


def test_ensure_admin_with_sf_admin_password_names_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SF_ADMIN_PASSWORD", "a long chosen password 42")
    password_file = tmp_path / "admin-password"
    code, out = run_sf("ensure-admin", "--password-file", str(password_file))
    assert code == 0
    assert out == "admin user 'admin' created; password from SF_ADMIN_PASSWORD\n"
    assert not password_file.exists()
    assert User.objects.get(username="admin").check_password("a long chosen password 42")

    code, out = run_sf("ensure-admin", "--password-file", str(password_file))
    assert out == "admin user 'admin' exists; its password was left unchanged\n"


def test_ensure_admin_says_where_a_generated_password_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SF_ADMIN_PASSWORD", raising=False)
    password_file = tmp_path / "admin-password"
    code, out = run_sf("ensure-admin", "--password-file", str(password_file))
    assert code == 0
    assert out == f"admin user 'admin' created; password in {password_file}\n"
    assert password_file.is_file()
