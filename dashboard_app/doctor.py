"""The doctor page and the doctor's text: staff only, each seeing the findings of the
projects they may view (and SF's own state); a Fix button that POSTs (CSRF), allowed
only to someone who may run the repairs on each project they touch
(``agents_app.doctor_access``), and then shows the repairs applied with the report."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Q, QuerySet
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from agents_app.access import sessions_visible
from agents_app.doctor_access import repairs_require, report_for
from agents_app.models import RepairRecord
from agents_app.services.repairs import doctor_repair
from sf_core.actors import Actor
from sf_core.doctor import DoctorOutput, Severity, doctor_run
from sf_core.http import AuthedRequest

MARKS = {Severity.OK: "ok ", Severity.INFO: "-- ", Severity.WARNING: "!! ", Severity.ERROR: "BAD"}
RECENT_REPAIRS = 20


def doctor_lines(output: DoctorOutput) -> list[str]:
    """The report for people: one line per check, its findings under it, then the
    repairs applied (``--fix``) and the verdict."""
    lines: list[str] = []
    for check in output.report.checks:
        lines.append(f"{MARKS[check.severity]} {check.id:<24} {check.title}")
        for finding in check.findings:
            fix = " (fixable: sf doctor --fix)" if finding.fixable else ""
            lines.append(f"      {finding.severity}: {finding.message}{fix}")
            lines.extend(f"        {item}" for item in finding.evidence)
    for repair in output.repairs:
        lines.append(f"fixed {repair.check_id}: {repair.target}: {repair.action}")
    failing = len(output.report.failing())
    verdict = (
        "healthy"
        if output.report.healthy
        else f"{failing} check{'s' if failing != 1 else ''} failing"
    )
    lines.append(
        f"{verdict} ({len(output.report.checks)} checks, {output.report.milliseconds:.0f} ms)"
    )
    return lines


def repairs_visible(user: Any) -> QuerySet[RepairRecord]:
    """Repairs of sessions the person may view and the repairs they made themselves;
    the others no session names (the shell's, another person's on the page) name paths
    of any project: superusers only."""
    records = RepairRecord.objects.select_related("session")
    if user.is_superuser:
        return records
    return records.filter(Q(session__in=sessions_visible(user)) | Q(actor_user_id=user.pk))


@require_http_methods(["GET", "POST"])
@login_required
def doctor_page(request: AuthedRequest) -> HttpResponse:
    if not request.user.is_staff:
        raise PermissionDenied("the doctor page is for staff")
    repairs = []
    actor = Actor.of(request.user)
    if request.method == "POST":
        ids = repairs_require(actor, doctor_run())  # the whole report: what the fixes touch
        repairs = doctor_repair(actor=actor, ids=ids) if ids else []
    report = report_for(doctor_run(), request.user)
    context = {
        "output": DoctorOutput(report=report, repairs=repairs),
        "fixed": request.method == "POST",
        "recent": repairs_visible(request.user)[:RECENT_REPAIRS],
    }
    return render(request, "dashboard_app/doctor.html", context)
