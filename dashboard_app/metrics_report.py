"""One metrics report for the page and ``sf metrics``: the window, the figures overall,
per project and per period, and the cost roll-ups — the same numbers on both."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone

from agents_app.models import Project
from dashboard_app.costs import CostRow, cost_rollups, ledger
from dashboard_app.metrics import (
    BUCKETS,
    Figures,
    figures,
    metric_facts,
    of_project,
    series,
)
from sf_core.errors import SfError

DEFAULT_DAYS = 28
# The most periods one report has: the series is built period by period, so a window of
# centuries would keep a request busy for minutes (the API's fuzzing found it).
MAX_PERIODS = 400


class MetricsQueryInvalid(SfError):
    """A date or a bucket the metrics cannot use."""


@dataclass(frozen=True)
class Window:
    since: date  # first day included
    until: date  # last day included
    by: str  # day or week

    def bounds(self) -> tuple[datetime, datetime]:
        start = timezone.make_aware(datetime.combine(self.since, time.min))
        end = timezone.make_aware(datetime.combine(self.until + timedelta(days=1), time.min))
        return start, end


def window_parse(since: str | None, until: str | None, by: str | None) -> Window:
    """``YYYY-MM-DD`` dates (default: the last four weeks up to today) and day or week."""
    today = timezone.localdate()
    end = _day("until", until) if until else today
    start = _day("since", since) if since else end - timedelta(days=DEFAULT_DAYS - 1)
    if start > end:
        raise MetricsQueryInvalid(f"--since {start} is after --until {end}")
    if end >= date.max:
        raise MetricsQueryInvalid(f"--until {end} is past the last day SF can count")
    bucket = by or "day"
    if bucket not in BUCKETS:
        raise MetricsQueryInvalid(f"by {bucket!r}: accepted: {', '.join(BUCKETS)}")
    days = MAX_PERIODS * (7 if bucket == "week" else 1)
    if (end - start).days >= days:
        raise MetricsQueryInvalid(
            f"a window of at most {days} days by {bucket}; {start} to {end} is "
            f"{(end - start).days + 1} days"
        )
    return Window(start, end, bucket)


def _day(option: str, text: str) -> date:
    """A ``YYYY-MM-DD`` day, or an error naming the option and what is wrong."""
    try:
        return date.fromisoformat(text)
    except ValueError as exc:  # "2026-02-30": a date's shape, not a day of the calendar
        raise MetricsQueryInvalid(f"--{option} {text!r} is not a day (YYYY-MM-DD): {exc}") from None


@dataclass(frozen=True)
class MetricsReport:
    window: Window
    overall: Figures
    projects: list[tuple[str, Figures]]
    series: list[tuple[date, Figures]]
    costs: dict[str, list[CostRow]]

    def as_json(self) -> dict[str, Any]:
        return {
            "since": self.window.since.isoformat(),
            "until": self.window.until.isoformat(),
            "by": self.window.by,
            "overall": self.overall.as_json(),
            "projects": {name: figures.as_json() for name, figures in self.projects},
            "series": [{"period": p.isoformat(), **f.as_json()} for p, f in self.series],
            "costs": {by: [row.as_json() for row in rows] for by, rows in self.costs.items()},
        }


def metrics_report(projects: QuerySet[Project], window: Window) -> MetricsReport:
    start, end = window.bounds()
    facts = metric_facts(projects, start, end)
    names = sorted(projects.values_list("name", flat=True))
    return MetricsReport(
        window=window,
        overall=figures(facts),
        projects=[(name, figures(facts.only(of_project(name)))) for name in names],
        series=series(facts, window.by, window.since, window.until),
        costs=cost_rollups(ledger(projects, start, end)),
    )


def duration(seconds: float | None) -> str:
    """A duration for people: 45 s, 12 min, 3.5 h, 2.1 d."""
    if seconds is None:
        return "-"
    for limit, size, unit in ((60, 1, "s"), (3600, 60, "min"), (86400, 3600, "h")):
        if seconds < limit:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds / 86400:.3g} d"


def percent(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.0%}"


def _figure(value: object) -> str:
    return "-" if value is None else f"{value:.3g}" if isinstance(value, float) else str(value)


def report_lines(report: MetricsReport) -> list[str]:
    """The report as text (``sf metrics``)."""
    w = report.window
    lines = [f"metrics {w.since} to {w.until} (by {w.by})"]
    for name, f in [("all projects", report.overall), *report.projects]:
        lines.append(
            f"{name}: merged {f.merged}, failed {f.failed}, cancelled {f.cancelled}; "
            f"accept→merge median {duration(f.accept_to_merge_median_s)}, "
            f"p90 {duration(f.accept_to_merge_p90_s)}; ${f.cost_usd} spent, "
            f"${_figure(f.cost_per_merged_usd)} per merged; "
            f"first-attempt pass {percent(f.first_attempt_pass_rate)} "
            f"({f.first_attempt_passes}/{f.first_attempts}); "
            f"approvals per task {_figure(f.approvals_per_task)}"
        )
    for by, rows in report.costs.items():
        lines.append(f"cost by {by}:")
        lines += [f"  {r.key}: ${r.cost} ({r.calls} calls, {r.unpriced} unpriced)" for r in rows]
    return lines
