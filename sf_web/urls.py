from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from sf_web import sso_views

urlpatterns = [
    path("", include("dashboard_app.urls")),
    path("login/", sso_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    # Single sign-on (docs/sso.md): off to the provider, and back.
    path("sso/login/", sso_views.SsoStartView.as_view(), name="sso-login"),
    path("sso/callback/", sso_views.SsoCallbackView.as_view(), name="sso-callback"),
    path("admin/login/", sso_views.admin_login),
    path("admin/", admin.site.urls),
    # Browsers ask for /favicon.ico whatever the page links; send them to the SVG.
    path(
        "favicon.ico",
        RedirectView.as_view(url=static("sf/favicon.svg"), permanent=True),
        name="favicon",
    ),
    path("", include("agents_app.urls")),
    path("", include("skills_app.urls")),
    path("", include("tasks_app.urls")),
    path("", include("notify_app.urls")),
    path("", include("api_app.urls")),
]
