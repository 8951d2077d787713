from __future__ import annotations

from django.urls import path

from api_app import views
from api_app.api import api

urlpatterns = [
    path("api/", api.urls),
    path("profile/tokens/", views.tokens_page, name="api-tokens"),
    path("profile/tokens/<int:token_id>/revoke/", views.token_revoke_view, name="api-token-revoke"),
]
