"""Error views Django cannot render from a template name alone."""

from __future__ import annotations

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
