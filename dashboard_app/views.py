"""The dashboard (system status and recent sessions) and the health endpoint."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from agents_app.models import AgentSession
from agents_app.selectors import session_list
from dashboard_app.status import system_status
from tasks_app.models import Task, TaskStatus


@require_GET
@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    recent = with_review_counts(session_list()).order_by("-created_at", "-pk")[:10]
    return render(
        request, "dashboard_app/dashboard.html", {"status": system_status(), "sessions": recent}
    )


def with_review_counts(sessions: QuerySet[AgentSession]) -> QuerySet[AgentSession]:
    """Each session's tasks waiting in review (``in_review``), for the link to them.
    A subquery, not a Count over a join: ``session_list`` already counts transitions."""
    in_review = (
        Task.objects.filter(plan__session=OuterRef("pk"), status=TaskStatus.REVIEW)
        .order_by()
        .values("plan__session")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return sessions.annotate(
        in_review=Coalesce(Subquery(in_review, output_field=IntegerField()), 0)
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
