"""Project members: add, change role, remove — admins only, and never the last admin.

The last-admin rule is checked under a lock on the project's admin rows, so two admins
demoting each other at the same moment cannot leave a project without one.
"""

from __future__ import annotations

import logging

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction

from agents_app.access import Action, require_actor
from agents_app.models import MembershipSource, Project, ProjectMembership, Role
from sf_core.actors import Actor
from sf_core.errors import SfError

logger = logging.getLogger("sf.access")


def member_add(*, project: Project, username: str, role: str, actor: Actor) -> ProjectMembership:
    """Give ``username`` a role on the project (they must not be a member yet)."""
    require_actor(actor, project, Action.MANAGE_MEMBERS)
    _check_role(role)
    user = _user_named(username)
    with transaction.atomic():
        if ProjectMembership.objects.filter(project=project, user=user).exists():
            raise SfError(f"{username} is already a member of {project.name}; change their role")
        membership = ProjectMembership.objects.create(project=project, user=user, role=role)
    logger.info("member added: %s as %s on project %s by %s", username, role, project.pk, actor)
    return membership


def member_set_role(
    *, project: Project, username: str, role: str, actor: Actor
) -> ProjectMembership:
    """Change a member's role; demoting the last admin is refused. A role set here is a
    person's decision: single sign-on no longer changes it (``source`` becomes manual)."""
    require_actor(actor, project, Action.MANAGE_MEMBERS)
    _check_role(role)
    with transaction.atomic():
        membership = _membership(project, username)
        if membership.role == Role.ADMIN and role != Role.ADMIN:
            _keep_an_admin(project, username, "demote")
        membership.role = role
        membership.source = MembershipSource.MANUAL
        membership.save(update_fields=["role", "source"])
    logger.info("member role: %s is %s on project %s by %s", username, role, project.pk, actor)
    return membership


def member_remove(*, project: Project, username: str, actor: Actor) -> None:
    """Remove a member; removing the last admin is refused."""
    require_actor(actor, project, Action.MANAGE_MEMBERS)
    with transaction.atomic():
        membership = _membership(project, username)
        if membership.role == Role.ADMIN:
            _keep_an_admin(project, username, "remove")
        membership.delete()
    logger.info("member removed: %s from project %s by %s", username, project.pk, actor)


def _keep_an_admin(project: Project, username: str, verb: str) -> None:
    admins = list(
        ProjectMembership.objects.select_for_update()
        .filter(project=project, role=Role.ADMIN)
        .values_list("user__username", flat=True)
    )
    if admins == [username]:
        raise SfError(
            f"cannot {verb} {username}: they are the last admin of {project.name}; "
            "make someone else admin first"
        )


def _membership(project: Project, username: str) -> ProjectMembership:
    membership = (
        ProjectMembership.objects.select_for_update()
        .filter(project=project, user__username=username)
        .first()
    )
    if membership is None:
        raise SfError(f"{username!r} is not a member of {project.name}")
    return membership


def _user_named(username: str) -> User:
    user = get_user_model().objects.filter(username=username.strip()).first()
    if user is None:
        raise SfError(f"no user named {username.strip()!r}")
    return user


def _check_role(role: str) -> None:
    if role not in Role.values:
        raise SfError(f"unknown role {role!r}; accepted: {', '.join(Role.values)}")
