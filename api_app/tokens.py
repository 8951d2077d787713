"""API tokens: created (the secret returned once), revoked, and resolved from a bearer.

A token is ``sf_`` and 43 URL-safe characters from ``secrets``; the database keeps its
sha256 only, so a leaked table gives nobody a token. The person acting through a token
has exactly their project memberships (``agents_app.access``), narrowed to the token's
projects when it names some.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from agents_app.access import projects_visible
from agents_app.models import Project
from api_app.models import ApiToken
from sf_core.errors import NotAllowed, SfError

TOKEN_PREFIX = "sf_"
LAST_USED_PRECISION = timedelta(minutes=1)  # how stale "last used" may be


def token_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True)
class IssuedToken:
    token: ApiToken
    secret: str  # shown once, never stored


def token_create(*, user: User, name: str, projects: Iterable[Project] = ()) -> IssuedToken:
    """A new token for ``user``, restricted to ``projects`` (which they must see)."""
    name = name.strip()
    if not name:
        raise SfError("name the token, e.g. 'ci'")
    chosen = list(projects)
    visible = set(projects_visible(user).values_list("pk", flat=True))
    unseen = [project.name for project in chosen if project.pk not in visible]
    if unseen:
        raise SfError(f"you are not a member of {', '.join(unseen)}")
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with transaction.atomic():
        token = ApiToken.objects.create(
            user=user, name=name[:100], token_hash=token_hash(secret), prefix=secret[:10]
        )
        token.projects.set(chosen)
    return IssuedToken(token=token, secret=secret)


def projects_chosen(*, user: User, refs: Iterable[str]) -> list[Project]:
    """The projects a new token is asked for (ids, as the form sends them), each one the
    person may view. One they cannot see (or that does not exist: a stranger is not
    told which) is refused by the id they gave, never silently dropped: a token whose
    every project was dropped would see all the person's projects."""
    visible = projects_visible(user)
    chosen: list[Project] = []
    for ref in refs:
        project = visible.filter(pk=int(ref)).first() if ref.strip().isdigit() else None
        if project is None:
            raise NotAllowed(
                f"not allowed to make a token for project {ref.strip()!r}: it needs the "
                "viewer role on that project (you are not a member)"
            )
        chosen.append(project)
    return chosen


def token_revoke(*, user: User, token_id: int) -> ApiToken:
    """Revoke one of ``user``'s tokens (a conditional update: revoked once)."""
    token = ApiToken.objects.filter(user=user, pk=token_id).first()
    if token is None:
        raise SfError(f"no token {token_id}")
    ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    token.refresh_from_db()
    return token


def token_resolve(secret: str) -> ApiToken | None:
    """The active token of ``secret`` whose user is active, marked used; else None."""
    if not secret.startswith(TOKEN_PREFIX):
        return None
    token = (
        ApiToken.objects.select_related("user")
        .filter(token_hash=token_hash(secret), revoked_at__isnull=True, user__is_active=True)
        .first()
    )
    now = timezone.now()
    if token is not None and (
        token.last_used_at is None or now - token.last_used_at >= LAST_USED_PRECISION
    ):
        # Not on every call: a write per request (the same row for every call a CI job
        # makes at once) for a time the tokens page shows to the minute.
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token


def user_tokens(user: User) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(user=user).prefetch_related("projects")


def tokens_of_project_revoke(project: Project) -> int:
    """Revoke the tokens restricted to ``project`` alone, before it is deleted: with its
    row gone such a token would name no project, which means every one of the person's
    (fail closed, not open). Returns how many were revoked."""
    links = ApiToken.projects.through.objects
    others = links.exclude(project_id=project.pk).values("apitoken_id")
    alone = ApiToken.objects.filter(projects=project, revoked_at__isnull=True).exclude(
        pk__in=others
    )
    return alone.update(revoked_at=timezone.now())


def token_projects(token: ApiToken) -> QuerySet[Project]:
    """The projects the token sees: the user's, narrowed to the token's own if any."""
    visible = projects_visible(token.user)
    restricted = list(token.projects.values_list("pk", flat=True))
    return visible.filter(pk__in=restricted) if restricted else visible
