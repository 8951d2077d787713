"""The login page and single sign-on's two steps (docs/sso.md).

``/login/`` offers the password form (unless ``SF_LOCAL_LOGIN=0``) and a "Log in with
<provider>" button (when single sign-on is configured). ``/sso/login/`` sends the
browser to the provider with a fresh state, nonce and PKCE challenge (kept in the
session); ``/sso/callback/`` takes the provider's answer back, and any refusal, from
the state to the token's signature, comes back to the login page with one clear line
and a 4xx status (502 when the provider could not be asked).
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.contrib.admin import site as admin_site
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.generic import View
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from agents_app.services.sso import SsoRefused
from sf_web.sso import SSO_CALLBACK_MARK
from sf_web.sso_discovery import sso_setting

logger = logging.getLogger("sf.access")
LOGIN_TEMPLATE = "registration/login.html"


def login_context(request: HttpRequest) -> dict[str, Any]:
    """What the login page shows besides the form: which ways in there are."""
    return {
        "local_login": settings.SF_LOCAL_LOGIN,
        "sso_name": settings.SF_OIDC_PROVIDER_NAME if settings.SF_SSO_ENABLED else "",
    }


class LoginView(auth_views.LoginView):
    """Django's login view, with single sign-on's button, and the password form refused
    when local login is off."""

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return {**super().get_context_data(**kwargs), **login_context(self.request)}

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not settings.SF_LOCAL_LOGIN:
            return sso_refused(
                request,
                SsoRefused(
                    "password login is turned off on this SF (SF_LOCAL_LOGIN=0): "
                    f"log in with {settings.SF_OIDC_PROVIDER_NAME}"
                ),
            )
        response: HttpResponse = super().post(request, *args, **kwargs)
        return response


def admin_login(request: HttpRequest) -> HttpResponse:
    """The admin's own login form checks passwords too: without local login it sends
    the person to SF's login page, which offers single sign-on."""
    if settings.SF_LOCAL_LOGIN:
        response: HttpResponse = admin_site.login(request)
        return response
    target = request.GET.get("next") or reverse("admin:index")
    return redirect(reverse("login") + "?" + urlencode({"next": target}))


def sso_refused(request: HttpRequest, exc: SsoRefused) -> HttpResponse:
    """The login page with the refusal on it, logged on ``sf.access``."""
    logger.warning(
        "sso refused: %s (from %s)", exc, request.META.get("REMOTE_ADDR", "an unknown address")
    )
    context = {
        **login_context(request),
        "form": AuthenticationForm(request) if settings.SF_LOCAL_LOGIN else None,
        "sso_error": str(exc),
        "next": "",
    }
    return render(request, LOGIN_TEMPLATE, context, status=exc.status_code)


class SsoStartView(OIDCAuthenticationRequestView):
    """Off to the provider (``?next=`` is kept for the way back, if it is ours)."""

    get_settings = staticmethod(sso_setting)

    def __init__(self, **kwargs: Any) -> None:
        View.__init__(self, **kwargs)  # the endpoint is read (maybe discovered) in get()

    def get(self, request: HttpRequest) -> HttpResponse:
        if not settings.SF_SSO_ENABLED:
            raise Http404("single sign-on is not configured (SF_OIDC_CLIENT_ID)")
        try:
            self.OIDC_OP_AUTH_ENDPOINT = sso_setting("OIDC_OP_AUTHORIZATION_ENDPOINT")
        except SsoRefused as exc:
            return sso_refused(request, exc)
        self.OIDC_RP_CLIENT_ID = settings.OIDC_RP_CLIENT_ID
        response: HttpResponse = super().get(request)
        return response


class SsoCallbackView(OIDCAuthenticationCallbackView):
    """The provider's answer: checked, then the person is logged in (and created on
    their first login), or the login page says why not."""

    get_settings = staticmethod(sso_setting)

    def get(self, request: HttpRequest) -> HttpResponse:
        if not settings.SF_SSO_ENABLED:
            raise Http404("single sign-on is not configured (SF_OIDC_CLIENT_ID)")
        states = request.session.get("oidc_states")
        state = request.GET.get("state")
        if "code" in request.GET and isinstance(states, dict) and state not in states:
            return sso_refused(
                request,
                SsoRefused(
                    "the answer's state does not match a login started in this browser: "
                    "it was forged, replayed or started elsewhere; start the login again"
                ),
            )
        setattr(request, SSO_CALLBACK_MARK, True)
        try:
            response: HttpResponse = super().get(request)
        except SsoRefused as exc:
            return sso_refused(request, exc)
        return response

    def login_failure(self) -> HttpResponse:
        request = self.request
        error = request.GET.get("error")
        if error:
            detail = request.GET.get("error_description")
            message = f"the provider refused the login: {error}" + (
                f" ({detail})" if detail else ""
            )
        elif "code" not in request.GET or "state" not in request.GET:
            message = "the provider's answer has no code and state: start the login again"
        elif "oidc_states" not in request.session:
            message = (
                "this browser has no login in progress (its session expired, or cookies are "
                "blocked): start the login again"
            )
        else:
            message = "the login did not complete: start it again"
        return sso_refused(request, SsoRefused(message))
