"""Who acted: a person, or SF itself with a label. Every app records changes with one."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AnonymousUser, User
from django.db import models

from sf_core.errors import CommandRejected


class ActorKind(models.TextChoices):
    USER = "user"
    SYSTEM = "system"


@dataclass(frozen=True)
class Actor:
    """Who asked for a change: a person, or SF itself (with a label)."""

    kind: str
    user: User | None = None
    label: str = ""

    @classmethod
    def of(cls, user: User | AnonymousUser) -> Actor:
        if not isinstance(user, User) or not user.is_authenticated:
            raise CommandRejected("an anonymous user cannot change a session")
        return cls(kind=ActorKind.USER, user=user, label=user.get_username())

    @classmethod
    def system(cls, label: str = "sf") -> Actor:
        return cls(kind=ActorKind.SYSTEM, label=label)

    def __str__(self) -> str:
        return self.label or self.kind


SF = Actor.system("sf")
