"""The dashboard (system status and recent sessions) and the health endpoint."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from agents_app.selectors import session_list
from dashboard_app.status import system_status


@require_GET
@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    recent = session_list().order_by("-created_at", "-pk")[:10]  # projects already joined
    return render(
        request, "dashboard_app/dashboard.html", {"status": system_status(), "sessions": recent}
    )


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
