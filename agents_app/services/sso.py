"""Single sign-on's writes: the person behind a provider account, and their roles.

``sso_claims_parse`` turns the claims of a verified login (the id_token's and the
userinfo endpoint's) into what SF keeps, refusing with one clear line what it cannot
use. ``sso_login`` finds the person by the provider account (creating them on their
first login), then ``sso_roles_sync`` makes their single-sign-on memberships follow
the groups claim through the ``SsoGroupRole`` table an admin edits:

- a project that one of their groups maps to gets the highest role mapped (a new
  membership is marked ``source = sso``);
- a membership single sign-on made whose project none of their groups maps to any
  more is removed, and a changed mapping changes its role;
- a membership given by hand is never touched, and the last admin of a project is
  kept (logged) rather than leave the project without one.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from agents_app.models import (
    MembershipSource,
    ProjectMembership,
    Role,
    SsoGroupRole,
    SsoIdentity,
    role_rank,
)
from sf_core.errors import SfError

logger = logging.getLogger("sf.access")

MAX_GROUPS = 1000  # a claim longer than this is a misconfigured provider, not a person


class SsoRefused(SfError):
    """A single sign-on login SF will not complete; the message says why, for people."""

    status_code = 403


@dataclass(frozen=True)
class SsoClaims:
    issuer: str
    subject: str
    username: str
    email: str
    first_name: str
    last_name: str
    groups: tuple[str, ...]


@dataclass(frozen=True)
class RoleChange:
    project_id: int
    before: str  # "" when the person had no single-sign-on role there
    after: str  # "" when it was removed


@dataclass(frozen=True)
class SsoLogin:
    user: User
    created: bool
    changes: tuple[RoleChange, ...]


def sso_claims_parse(
    claims: Mapping[str, Any], *, issuer: str, username_claim: str, groups_claim: str
) -> SsoClaims:
    """What SF keeps of a verified login's claims; ``SsoRefused`` names what is wrong."""
    subject = claims.get("sub")
    if not isinstance(subject, str) or not subject:
        raise SsoRefused("the provider sent no subject ('sub' claim) for this account")
    username = claims.get(username_claim)
    if not isinstance(username, str) or not username.strip():
        raise SsoRefused(
            f"the provider sent no {username_claim!r} claim for {subject!r}: SF names people "
            "by it (SF_OIDC_USERNAME_CLAIM; add the scope that carries it to SF_OIDC_SCOPES)"
        )
    username = username.strip()
    try:
        UnicodeUsernameValidator()(username)
    except ValidationError:
        raise SsoRefused(
            f"the {username_claim!r} claim {username!r} is not a valid SF username "
            "(letters, digits and @ . + - _ only)"
        ) from None
    if len(username) > User._meta.get_field("username").max_length:  # type: ignore[operator]
        raise SsoRefused(f"the {username_claim!r} claim {username[:40]!r}… is too long")
    return SsoClaims(
        issuer=issuer,
        subject=subject,
        username=username,
        email=_text(claims, "email"),
        first_name=_text(claims, "given_name"),
        last_name=_text(claims, "family_name"),
        groups=_groups(claims.get(groups_claim), groups_claim),
    )


def _text(claims: Mapping[str, Any], name: str) -> str:
    value = claims.get(name)
    return value.strip()[:150] if isinstance(value, str) else ""


def _groups(value: object, claim: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(group, str) for group in value):
        raise SsoRefused(
            f"the {claim!r} claim is a {type(value).__name__}; SF expects a list of group "
            "names (SF_OIDC_GROUPS_CLAIM)"
        )
    if len(value) > MAX_GROUPS:
        raise SsoRefused(f"the {claim!r} claim lists {len(value)} groups; SF reads {MAX_GROUPS}")
    return tuple(sorted({group for group in value if group}))


def sso_login(*, claims: SsoClaims, create_users: bool = True) -> SsoLogin:
    """The person a verified login is, created on their first login, with their
    single-sign-on roles brought in line with their groups."""
    with transaction.atomic():
        identity = (
            SsoIdentity.objects.select_for_update()
            .select_related("user")
            .filter(issuer=claims.issuer, subject=claims.subject)
            .first()
        )
        created = identity is None
        if identity is None:
            identity = _identity_create(claims, create_users)
        user = identity.user
        if not user.is_active:
            raise SsoRefused(f"the SF account {user.username!r} is deactivated")
        _user_update(user, claims)
        identity.groups = list(claims.groups)
        identity.last_login_at = timezone.now()
        identity.save(update_fields=["groups", "last_login_at"])
        changes = sso_roles_sync(user=user, groups=claims.groups)
    logger.info(
        "sso login: %s (%s at %s)%s, groups %s, role changes %s",
        user.username,
        claims.subject,
        claims.issuer,
        " created" if created else "",
        list(claims.groups),
        [(c.project_id, c.before, c.after) for c in changes],
    )
    return SsoLogin(user=user, created=created, changes=tuple(changes))


def _identity_create(claims: SsoClaims, create_users: bool) -> SsoIdentity:
    user_model = get_user_model()
    if user_model.objects.filter(username=claims.username).exists():
        raise SsoRefused(
            f"an SF account named {claims.username!r} already exists and is not linked to "
            "this provider account: an SF admin links it (admin, SSO identities) or renames it"
        )
    if not create_users:
        raise SsoRefused(
            f"no SF account is linked to {claims.username!r} and SF_OIDC_CREATE_USERS is off: "
            "an SF admin creates and links it first"
        )
    user = user_model.objects.create_user(
        claims.username,
        email=claims.email,
        first_name=claims.first_name,
        last_name=claims.last_name,
    )  # no password: this person logs in through the provider only
    return SsoIdentity.objects.create(user=user, issuer=claims.issuer, subject=claims.subject)


def _user_update(user: User, claims: SsoClaims) -> None:
    fields = {"email": claims.email, "first_name": claims.first_name, "last_name": claims.last_name}
    changed = [name for name, value in fields.items() if value and getattr(user, name) != value]
    for name in changed:
        setattr(user, name, fields[name])
    if changed:
        user.save(update_fields=changed)


def sso_roles_wanted(groups: Iterable[str]) -> dict[int, str]:
    """Project id -> the highest role the table maps any of ``groups`` to."""
    wanted: dict[int, str] = {}
    rows = SsoGroupRole.objects.filter(group__in=list(groups)).values_list("project_id", "role")
    for project_id, role in rows:
        if role_rank(role) > role_rank(wanted.get(project_id)):
            wanted[project_id] = role
    return wanted


def sso_roles_sync(*, user: User, groups: Iterable[str]) -> list[RoleChange]:
    """Bring the person's single-sign-on memberships in line with ``groups``."""
    wanted = sso_roles_wanted(groups)
    changes: list[RoleChange] = []
    with transaction.atomic():
        held = {
            m.project_id: m for m in ProjectMembership.objects.select_for_update().filter(user=user)
        }
        for project_id, membership in held.items():
            if membership.source != MembershipSource.SSO:
                continue  # given by hand: a person's decision, kept as it is
            role, before = wanted.get(project_id, ""), str(membership.role)
            if role == before or not _may_leave_admin(membership, role):
                continue
            if role:
                membership.role = role
                membership.save(update_fields=["role"])
            else:
                membership.delete()
            changes.append(RoleChange(project_id, before, role))
        for project_id, role in wanted.items():
            if project_id not in held:
                ProjectMembership.objects.create(
                    project_id=project_id, user=user, role=role, source=MembershipSource.SSO
                )
                changes.append(RoleChange(project_id, "", role))
    return changes


def _may_leave_admin(membership: ProjectMembership, role: str) -> bool:
    """False when ``membership`` is its project's last admin and ``role`` is not admin."""
    if membership.role != Role.ADMIN or role == Role.ADMIN:
        return True
    admins = (
        ProjectMembership.objects.select_for_update()
        .filter(project_id=membership.project_id, role=Role.ADMIN)
        .exclude(pk=membership.pk)
    )
    if admins.exists():
        return True
    logger.warning(
        "sso: %s stays admin of project %s: their groups no longer make them admin, but "
        "they are its last admin (make someone else admin first)",
        membership.user_id,
        membership.project_id,
    )
    return False
