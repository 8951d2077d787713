"""The doctor page and the doctor's text: staff only (the checks read every project's
state and the fixes act across projects), a Fix button that POSTs (CSRF) and then
shows the repairs applied with the report after them."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

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


@require_http_methods(["GET", "POST"])
@login_required
def doctor_page(request: AuthedRequest) -> HttpResponse:
    if not request.user.is_staff:
        raise PermissionDenied("the doctor page is for staff")
    repairs = []
    if request.method == "POST":
        repairs = doctor_repair(actor=Actor.of(request.user))
    context = {
        "output": DoctorOutput(report=doctor_run(), repairs=repairs),
        "fixed": request.method == "POST",
        "recent": RepairRecord.objects.select_related("session")[:RECENT_REPAIRS],
    }
    return render(request, "dashboard_app/doctor.html", context)
