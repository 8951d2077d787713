"""Who sees which of the doctor's findings, and who may run its repairs.

The doctor's checks read every project's state and its fixes act across projects
(``sf_core.doctor``). A person (the page, ``sf doctor --as``, ``/doctor`` in the
command bar) sees only the findings of projects they may view, and SF's own state
(``Finding.project_id`` None: workers, disk, the database), which names no project.
Running the repairs needs the REPAIR action (``access.ACTION_ROLES``) on *each*
project a fixable finding is about; a fix of SF's shared state (a dead worker's rows,
tasks left between two steps) acts on every project's work, so it needs REPAIR on
every project. SF itself (a system actor: the shell without ``--as``, repair mode) is
not a member and is never refused.
"""

from __future__ import annotations

import logging

from django.contrib.auth.models import AnonymousUser, User

from agents_app.access import AccessDenied, Action, may, projects_visible
from agents_app.models import Project
from sf_core.actors import Actor
from sf_core.doctor import CheckReport, DoctorReport, Finding, Severity

logger = logging.getLogger("sf.access")
_RANK = [Severity.OK, Severity.INFO, Severity.WARNING, Severity.ERROR]


def report_for(report: DoctorReport, user: User | AnonymousUser | None) -> DoctorReport:
    """``report`` with only the findings ``user`` may see (all of them for SF itself)."""
    if user is None:
        return report
    visible = set(projects_visible(user).values_list("pk", flat=True))
    checks = [_narrowed(check, visible) for check in report.checks]
    worst = max((c.severity for c in checks), key=_RANK.index, default=Severity.OK)
    return report.model_copy(
        update={"checks": checks, "severity": worst, "healthy": worst != Severity.ERROR}
    )


def _narrowed(check: CheckReport, visible: set[int]) -> CheckReport:
    findings = [f for f in check.findings if f.project_id is None or f.project_id in visible]
    worst = max((f.severity for f in findings), key=_RANK.index, default=Severity.OK)
    return check.model_copy(
        update={
            "findings": findings,
            "severity": worst,
            "fixable": any(f.fixable for f in findings),
        }
    )


def repairs_require(actor: Actor, report: DoctorReport) -> list[str]:
    """Raise ``AccessDenied`` naming the first project whose repairs the person may not
    run (not by name if they cannot see it); return the ids of the checks that have
    something to fix. ``report`` is the whole report, not what the person sees."""
    fixable = [(c.id, f) for c in report.checks for f in c.findings if f.fixable]
    user = actor.user
    if user is not None:
        for project in _affected([f for _, f in fixable]):
            if not may(user, project, Action.REPAIR):
                hidden = not may(user, project, Action.VIEW)
                logger.warning("refused: user=%s project=%s action=%r", user, project.pk, "repair")
                raise AccessDenied(user=user, project=project, action=Action.REPAIR, hidden=hidden)
    return sorted({check_id for check_id, _ in fixable})


def _affected(findings: list[Finding]) -> list[Project]:
    ids: set[int] = set()
    for finding in findings:
        if finding.project_id is None:  # SF's shared state: every project's work
            return list(Project.objects.order_by("pk"))
        ids.add(finding.project_id)
    return list(Project.objects.filter(pk__in=ids).order_by("pk"))
