"""The outcome metrics page: the figures per project and over time, with charts and the
cost roll-ups. A person sees the projects they may view; naming another is refused."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from agents_app.access import Action, projects_visible, require
from agents_app.models import Project
from dashboard_app.charts import Bar, bar_chart
from dashboard_app.metrics_report import (
    MetricsQueryInvalid,
    MetricsReport,
    duration,
    metrics_report,
    percent,
    window_parse,
)

OUTCOME_SERIES = (("merged", "#2e7d32"), ("failed", "#c62828"), ("cancelled", "#9e9e9e"))


@require_GET
@login_required
def metrics_page(request: HttpRequest) -> HttpResponse:
    """``?project=ID&since=YYYY-MM-DD&until=YYYY-MM-DD&by=day|week``."""
    projects = _projects(request)
    error = ""
    try:
        window = window_parse(
            request.GET.get("since"), request.GET.get("until"), request.GET.get("by")
        )
    except MetricsQueryInvalid as exc:
        error, window = str(exc), window_parse(None, None, None)
    report = metrics_report(projects, window)
    context = {
        "report": report,
        "error": error,
        "rows": _rows(report),
        "charts": _charts(report),
        "choices": projects_visible(request.user).order_by("name"),
        "chosen": request.GET.get("project", ""),
    }
    return render(request, "dashboard_app/metrics.html", context)


def _projects(request: HttpRequest) -> QuerySet[Project]:
    chosen = request.GET.get("project")
    if not chosen:
        return projects_visible(request.user)
    if not chosen.isdigit():
        raise Http404("project is a number")
    project = get_object_or_404(Project, pk=int(chosen))
    require(request.user, project, Action.VIEW)
    return Project.objects.filter(pk=project.pk)


def _rows(report: MetricsReport) -> list[dict[str, Any]]:
    """The figures as the table shows them, overall first."""
    return [
        {
            "name": name,
            "f": f,
            "median": duration(f.accept_to_merge_median_s),
            "p90": duration(f.accept_to_merge_p90_s),
            "pass_rate": percent(f.first_attempt_pass_rate),
            "approvals": "-" if f.approvals_per_task is None else f"{f.approvals_per_task:.2g}",
        }
        for name, f in [("All projects", report.overall), *report.projects]
    ]


def _charts(report: MetricsReport) -> dict[str, Any]:
    labels = [period.isoformat() for period, _ in report.series]
    outcome_bars = [
        Bar(label, (f.merged, f.failed, f.cancelled))
        for label, (_, f) in zip(labels, report.series, strict=True)
    ]
    cost_bars = [
        Bar(label, (float(f.cost_usd),))
        for label, (_, f) in zip(labels, report.series, strict=True)
    ]
    return {
        "outcomes": bar_chart("Tasks merged, failed and cancelled", OUTCOME_SERIES, outcome_bars),
        "cost": bar_chart("Spend in USD", (("spent", "#1565c0"),), cost_bars, unit=" $"),
    }
