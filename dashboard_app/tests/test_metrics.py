"""The metrics of a fixture history (``metrics_history``) match figures computed by
hand; the page and ``sf metrics`` show the same; the page refuses a non-member."""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents_app.models import Project
from conftest import grant
from dashboard_app.costs import cost_rollup, ledger
from dashboard_app.metrics import p90
from dashboard_app.metrics_report import Window, metrics_report
from dashboard_app.tests.metrics_history import History, history_create
from tests.cli import run_sf

pytestmark = pytest.mark.django_db
WINDOW = Window(date(2026, 11, 2), date(2026, 11, 4), "day")
H = 3600


@pytest.fixture
def history(user: User, tmp_path: Path) -> History:
    return history_create(user, str(tmp_path))


def test_p90_is_the_nearest_rank() -> None:
    assert p90([]) is None
    assert p90([5.0]) == 5.0
    assert p90([float(n) for n in range(1, 11)]) == 9.0  # ceil(9.0) = 9th of 10
    assert p90([1.0, 2.0, 3.0]) == 3.0  # ceil(2.7) = 3rd


def test_the_figures_match_the_hand_computed_ones(history: History) -> None:
    report = metrics_report(Project.objects.all(), WINDOW)
    alpha = dict(report.projects)["alpha"].as_json()
    assert alpha == {
        "merged": 3,  # a1, a2, a5 (a5 failed first: its current status counts)
        "failed": 1,
        "cancelled": 1,
        "accept_to_merge_median_s": 30 * H,  # 2 h, 30 h, 48 h
        "accept_to_merge_p90_s": 48 * H,  # nearest rank: ceil(0.9 * 3) = 3rd
        "cost_usd": "1.050000",  # 0.10 planning + 0.20 + 0.30 + 0.25 + 0.15 + 0.05
        "cost_per_merged_usd": "0.350000",
        "first_attempts": 4,  # a1, a2, a3, a5
        "first_attempt_passes": 2,
        "first_attempt_pass_rate": 0.5,
        "approvals": 3,  # the pending one is not reviewed
        "tasks_run": 4,
        "approvals_per_task": 0.75,
    }
    overall = report.overall.as_json()
    assert (overall["merged"], overall["failed"], overall["cancelled"]) == (4, 1, 1)
    assert overall["accept_to_merge_median_s"] == (2 * H + 30 * H) / 2  # 2, 2, 30, 48 h
    assert overall["accept_to_merge_p90_s"] == 48 * H  # ceil(3.6) = 4th
    assert overall["cost_usd"] == "1.450000"  # b0's $9.99 is outside the window
    assert overall["cost_per_merged_usd"] == "0.362500"
    assert (overall["first_attempt_passes"], overall["first_attempts"]) == (3, 5)
    assert overall["approvals_per_task"] == 3 / 5


def test_the_figures_per_day_match_the_hand_computed_ones(history: History) -> None:
    series = {p.isoformat(): f for p, f in metrics_report(Project.objects.all(), WINDOW).series}
    assert list(series) == ["2026-11-02", "2026-11-03", "2026-11-04"]
    day = [series[d] for d in series]
    assert [(f.merged, f.failed, f.cancelled) for f in day] == [(1, 0, 0), (2, 1, 0), (1, 0, 1)]
    assert [f.cost_usd for f in day] == [Decimal("0.60"), Decimal("0.80"), Decimal("0.05")]
    assert [(f.first_attempt_passes, f.first_attempts) for f in day] == [(1, 2), (1, 2), (1, 1)]
    assert [(f.approvals, f.tasks_run) for f in day] == [(1, 2), (2, 3), (0, 1)]
    weekly = metrics_report(Project.objects.all(), Window(WINDOW.since, WINDOW.until, "week"))
    (week,) = weekly.series
    assert week == (date(2026, 11, 2), weekly.overall)


def test_cost_rollups_by_model_task_and_user(history: History, user: User) -> None:
    calls = ledger(Project.objects.all(), *WINDOW.bounds())
    by_model = {r.key: r.cost for r in cost_rollup(calls, "model")}
    assert by_model == {"openai/alpha-model": Decimal("1.05"), "openai/beta-model": Decimal("0.40")}
    by_task = {r.key.split(" ")[0]: r.cost for r in cost_rollup(calls, "task")}
    assert by_task["a2"] == Decimal("0.55")
    assert by_task["(planning)"] == Decimal("0.10")
    assert [(r.key, r.cost) for r in cost_rollup(calls, "user")] == [
        (user.username, Decimal("1.45"))
    ]
    assert [r.key for r in cost_rollup(calls, "day")] == ["2026-11-02", "2026-11-03", "2026-11-04"]


def test_sf_metrics_prints_the_same_figures_as_json(history: History) -> None:
    code, out, _ = run_sf(
        "metrics", "--since", "2026-11-02", "--until", "2026-11-04", "--output-format", "json"
    )
    assert code == 0
    data = json.loads(out)
    report = metrics_report(Project.objects.all(), WINDOW)
    assert data["overall"] == report.overall.as_json()
    assert data["projects"]["alpha"]["merged"] == 3
    assert [row["period"] for row in data["series"]] == ["2026-11-02", "2026-11-03", "2026-11-04"]
    code, text, _ = run_sf("metrics", "--project", "beta", "--since", "2026-11-02")
    assert code == 0
    assert "beta: merged 1, failed 0, cancelled 0" in text


def test_the_page_shows_a_members_project_and_refuses_another_user(
    client: Client, user: User, history: History, django_user_model: type[User]
) -> None:
    grant(user, history.alpha, "viewer")
    client.force_login(user)
    page = client.get("/metrics/", {"since": "2026-11-02", "until": "2026-11-04"})
    assert page.status_code == 200
    html = page.content.decode()
    assert 'data-project="alpha"' in html
    assert 'data-project="beta"' not in html, "not a member of beta"
    assert "<svg" in html
    assert "<title>Tasks merged, failed and cancelled</title>" in html
    stranger = django_user_model.objects.create_user("stranger", password="pw-for-tests")
    client.force_login(stranger)
    assert client.get("/metrics/", {"project": history.alpha.pk}).status_code == 403
    assert 'data-project="alpha"' not in client.get("/metrics/").content.decode()
