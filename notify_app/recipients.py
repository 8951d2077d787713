"""Who hears about a notice, and over which channels (preferences, membership, role)."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User

from agents_app.models import ProjectMembership, Role, role_rank
from notify_app.models import Channel, NotificationPreference
from sf_core.notices import NoticeKind

# Who can act on these: a viewer or operator cannot approve or review, so is not paged.
ACTIONABLE_BY_APPROVERS = frozenset({NoticeKind.APPROVAL_NEEDED, NoticeKind.REVIEW_WAITING})


@dataclass(frozen=True)
class Recipient:
    user: User
    channels: tuple[str, ...]


def preference_of(user: User) -> NotificationPreference:
    """The person's preferences, or the defaults (unsaved) when they never chose: email
    is on by default only for an account that has an address to send to."""
    try:
        return user.notification_preference
    except NotificationPreference.DoesNotExist:
        return NotificationPreference(user=user, email=bool(user.email))


def channels_of(user: User, preference: NotificationPreference) -> tuple[str, ...]:
    channels: list[str] = []
    if preference.email and user.email:
        channels.append(Channel.EMAIL)
    if preference.webhook_url:
        channels.append(Channel.WEBHOOK)
    if preference.browser:
        channels.append(Channel.BROWSER)
    return tuple(channels)


def wants(preference: NotificationPreference, *, kind: str, project_id: int | None) -> bool:
    """Whether the person chose to hear about ``kind`` in ``project_id``: an empty
    list of kinds or of projects means all of them."""
    if preference.kinds and kind not in preference.kinds:
        return False
    if project_id is None or preference.pk is None:
        return True
    chosen = {project.pk for project in preference.projects.all()}
    return not chosen or project_id in chosen


def recipients(*, kind: str, project_id: int) -> list[Recipient]:
    """The active members of the project who want ``kind`` from it, with their channels."""
    memberships = ProjectMembership.objects.filter(
        project_id=project_id, user__is_active=True
    ).select_related("user", "user__notification_preference")
    found: list[Recipient] = []
    for membership in memberships:
        if kind in ACTIONABLE_BY_APPROVERS and role_rank(membership.role) < role_rank(
            Role.APPROVER
        ):
            continue
        preference = preference_of(membership.user)
        if not wants(preference, kind=kind, project_id=project_id):
            continue
        channels = channels_of(membership.user, preference)
        if channels:
            found.append(Recipient(user=membership.user, channels=channels))
    return found
