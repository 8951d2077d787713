"""The dashboard (system status and the session table) and the health endpoint."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from agents_app.access import projects_visible
from dashboard_app.run_demo import run_demo_opened, run_demo_status
from dashboard_app.sessions import Outcome, project_choices, session_table
from dashboard_app.status import system_status
from sf_core.microcache import PAGES
from tasks_app.features.schedules.selectors import schedules_upcoming


@require_GET
@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    """System status and the session table, filtered by the query string (``q``,
    ``project``, ``outcome``, ``page``); a value that does not parse is named on the page
    and ignored, never a 500."""
    run_demo_opened()  # scripts/run.sh's demo waits for the first person to look
    context = {
        # The same for everyone: kept for SF_PAGE_CACHE (its live box follows it).
        "status": PAGES.get(("system-status",), system_status),
        "run_demo": run_demo_status(projects_visible(request.user)),
        "table": session_table(request.GET, request.user),
        "projects": project_choices(request.user),
        "outcomes": Outcome.ALL,
        "upcoming": schedules_upcoming(projects=projects_visible(request.user)),
    }
    return render(request, "dashboard_app/dashboard.html", context)


@require_GET
@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness for load balancers and compose: 200 when the database and broker answer."""
    status = system_status()
    healthy = status.database.ok and status.broker.ok
    body = {
        "ok": healthy,
        "database": status.database.ok,
        "broker": status.broker.ok,
        "native": status.native.ok,
    }
    return JsonResponse(body, status=200 if healthy else 503)
