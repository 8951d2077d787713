"""Error views Django cannot render from a template name alone."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.http import url_has_allowed_host_and_scheme


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """A refused form (stale token): say what to do, reload, instead of Django's page.

    ``reason`` is Django's technical wording, which Django logs already and which
    means nothing to the person at the browser. The reload link goes back to the page
    the form was on (the referrer, when it is ours), never re-sends the POST.
    """
    referrer = request.headers.get("Referer", "")
    same_site = url_has_allowed_host_and_scheme(
        referrer, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    response = render(request, "403_csrf.html", {"back": referrer if same_site else ""}, status=403)
    # htmx does not swap a 403 into the page; base.html's listener sees this header and
    # offers the reload instead of the click failing silently.
    response["X-SF-CSRF-Failure"] = "reload"
    return response


def login_locked_out(
    request: HttpRequest,
    original_response: HttpResponse | None = None,
    credentials: dict[str, Any] | None = None,
) -> HttpResponse:
    """django-axes' lockout response (``AXES_LOCKOUT_CALLABLE``): too many failed logins
    for this username from this address. A page in SF's layout saying how long to wait,
    429 as django-axes answers by default."""
    cool_off: timedelta = settings.AXES_COOLOFF_TIME
    context = {"failures": settings.AXES_FAILURE_LIMIT, "wait": _duration_words(cool_off)}
    return render(request, "registration/locked_out.html", context, status=429)


def _duration_words(duration: timedelta) -> str:
    seconds = max(1, round(duration.total_seconds()))
    for unit, size in (("hour", 3600), ("minute", 60), ("second", 1)):
        if seconds >= size and (seconds % size == 0 or unit == "second"):
            count = seconds // size
            return f"{count} {unit}{'' if count == 1 else 's'}"
    return f"{seconds} seconds"
