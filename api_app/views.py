"""The profile page's API tokens: create (the secret shown once) and revoke."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods, require_POST

from agents_app.access import projects_visible
from api_app.tokens import projects_chosen, token_create, token_revoke, user_tokens
from sf_core.errors import SfError
from sf_core.http import AuthedRequest


def _page(request: AuthedRequest, *, status: int = 200, **extra: object) -> HttpResponse:
    context = {
        "tokens": user_tokens(request.user),
        "projects": projects_visible(request.user).order_by("name"),
        **extra,
    }
    return render(request, "api_app/tokens.html", context, status=status)


@require_http_methods(["GET", "POST"])
@login_required
def tokens_page(request: AuthedRequest) -> HttpResponse:
    if request.method == "GET":
        return _page(request)
    try:
        chosen = projects_chosen(user=request.user, refs=request.POST.getlist("projects"))
        issued = token_create(user=request.user, name=request.POST.get("name", ""), projects=chosen)
    except SfError as exc:
        return _page(request, status=exc.status_code, error=str(exc))
    return _page(request, secret=issued.secret, created=issued.token)


@require_POST
@login_required
def token_revoke_view(request: AuthedRequest, token_id: int) -> HttpResponse:
    try:
        token_revoke(user=request.user, token_id=token_id)
    except SfError as exc:
        return _page(request, status=404, error=str(exc))
    return _page(request, message="token revoked")
