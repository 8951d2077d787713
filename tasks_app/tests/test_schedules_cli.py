"""``manage.py sf schedules``: create, list, show, pause, resume, run-now, delete, sweep."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from agents_app.models import Project
from conftest import grant
from tasks_app.models import Schedule, ScheduleRun
from tasks_app.tests.schedule_helpers import PLAN_TEMPLATE
from tests.cli import run_sf

pytestmark = pytest.mark.django_db


def create(project: Project, tmp_path: Path, *extra: str) -> tuple[int, str, str]:
    plan = tmp_path / "bump.yaml"
    plan.write_text(PLAN_TEMPLATE)
    return run_sf(
        "schedules", "create", "--project", str(project.pk), "--name", "nightly bump",
        "--plan-file", str(plan), "--cron", "30 2 * * *", "--timezone", "Europe/Berlin",
        "--output-format", "json", *extra,
    )  # fmt: skip


def test_a_schedule_is_created_listed_run_paused_and_deleted(
    project: Project, user: User, tmp_path: Path
) -> None:
    code, out, err = create(project, tmp_path, "--as", "ada", "--catch-up-window", "30m")
    assert (code, err) == (0, "")
    made = json.loads(out)
    assert made["run_as"] == "ada"
    assert made["catch_up_window_s"] == 1800
    assert made["next_run_local"].endswith(("02:30 CET", "02:30 CEST"))

    code, out, _ = run_sf("schedules", "list", "--project", str(project.pk))
    assert code == 0
    assert f"{made['id']}  nightly bump  30 2 * * * Europe/Berlin  next " in out

    code, out, _ = run_sf("schedules", "run-now", str(made["id"]), "--as", "ada")
    assert code == 0
    assert "proposed" in out
    code, out, _ = run_sf("schedules", "show", str(made["id"]), "--output-format", "json")
    rows = json.loads(out)
    assert [row.get("status") for row in rows[1:]] == ["proposed"]

    assert run_sf("schedules", "pause", str(made["id"]))[0] == 0
    assert Schedule.objects.get().paused is True
    assert run_sf("schedules", "resume", str(made["id"]))[0] == 0
    assert Schedule.objects.get().paused is False
    assert run_sf("schedules", "delete", str(made["id"]), "--as", "ada")[0] == 0
    assert not Schedule.objects.exists()


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (("--cron", "30 2 * *"), "error: cron: '30 2 * *' has 4 fields"),
        (("--timezone", "Berlin"), "error: timezone: unknown time zone 'Berlin'"),
        (("--catch-up-window", "soon"), "error: catch_up_window: 'soon' is not a duration"),
    ],
)
def test_bad_input_exits_2_naming_the_field(
    project: Project, tmp_path: Path, flags: tuple[str, ...], words: str
) -> None:
    code, _, err = create(project, tmp_path, *flags)
    assert code == 2
    assert words in err
    assert not Schedule.objects.exists()


def test_a_viewer_cannot_create_or_run_a_schedule(
    project: Project, tmp_path: Path, django_user_model: Any
) -> None:
    bob = django_user_model.objects.create(username="bob")
    grant(bob, project, "viewer")
    code, _, err = create(project, tmp_path, "--as", "bob")
    assert code == 2
    assert "not allowed to create, change or run a schedule" in err
    assert create(project, tmp_path)[0] == 0  # SF's own account may
    schedule = Schedule.objects.get()
    assert schedule.owner == "system"
    code, _, err = run_sf("schedules", "run-now", str(schedule.pk), "--as", "bob")
    assert code == 2
    assert not ScheduleRun.objects.exists()


def test_sweep_runs_as_sf_itself(project: Project, user: User) -> None:
    code, out, _ = run_sf("schedules", "sweep", "--output-format", "json")
    assert code == 0
    assert json.loads(out) == {"claimed": 0, "started": 0, "followed": 0}
    assert run_sf("schedules", "sweep", "--as", "ada")[0] == 2
