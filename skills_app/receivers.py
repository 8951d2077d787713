"""A project's skills are synced when it is registered (after the row commits)."""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
from django.db.models.signals import post_save
from django.dispatch import receiver

from agents_app.models import Project
from sf_core.git import GitError
from skills_app.sync import project_skills_sync

logger = logging.getLogger("sf.skills")


@receiver(post_save, sender=Project, dispatch_uid="skills_app.project_registered")
def project_registered(sender: Any, instance: Project, created: bool, **kwargs: Any) -> None:
    if not created or kwargs.get("raw"):
        return

    def sync() -> None:
        try:
            project_skills_sync(instance)
        except (OSError, GitError) as exc:  # reported by its first unit
            logger.warning("skills of %s not synced: %s", instance.name, exc)

    transaction.on_commit(sync)
