"""Bearer tokens for the API, and the objects a token may reach (404 otherwise).

An object of a project the token cannot see answers 404, as if it did not exist: the
API does not tell strangers what is there. Within a visible project, an action the
person's role does not allow raises ``AccessDenied`` (403, ``agents_app.access``).
The MCP server (``mcp_app``) holds its callers to the same two rules through
``api_app.operations``, which takes the token rather than a request.
"""

from __future__ import annotations

from typing import Any, TypeVar

from django.db.models import Model, QuerySet
from django.http import HttpRequest
from ninja.security import HttpBearer

from api_app.models import ApiToken
from api_app.problems import ApiProblem
from api_app.tokens import token_projects, token_resolve

M = TypeVar("M", bound=Model)


class TokenAuth(HttpBearer):
    """``Authorization: Bearer sf_…``: an active token of an active user."""

    def authenticate(self, request: HttpRequest, token: str) -> ApiToken | None:
        found = token_resolve(token)
        if found is not None:
            request.user = found.user
        return found


def api_token(request: HttpRequest) -> ApiToken:
    token: ApiToken = request.auth  # type: ignore[attr-defined]
    return token


def visible_or_404(
    token: ApiToken, queryset: QuerySet[M], pk: int, project_path: str, **related: Any
) -> M:
    """``queryset``'s object ``pk`` if its project (at ``project_path``) is visible to
    ``token``; otherwise a 404 problem that does not say whether it exists."""
    visible = token_projects(token)
    lookup = {f"{project_path}__in" if project_path else "pk__in": visible}
    found = queryset.filter(pk=pk, **lookup, **related).first()
    if found is None:
        name = queryset.model._meta.verbose_name
        raise ApiProblem(404, "not-found", f"no {name} {pk}")
    return found
