"""Registering a repository as a project, and who becomes its admin."""

from __future__ import annotations

import unicodedata
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction

from agents_app.access import repo_path_check
from agents_app.models import Project, ProjectMembership, Role
from agents_app.schemas import policy_parse
from sf_core.errors import SfError
from sf_core.git import repository_check


def project_create(
    *,
    name: str,
    repo_path: str,
    base_branch: str = "main",
    policy: Any = None,
    created_by: User | None = None,
    path_chosen_by_sf: bool = False,
) -> Project:
    """Create a project on an existing git repository and branch; the policy document is
    validated against ``ProjectPolicy``. The person who creates it (``created_by``)
    becomes its admin, and may only register a repository under ``SF_REPO_ROOTS``
    (unless SF chose the path itself: ``path_chosen_by_sf``, the demo's); SF's own
    checkout is refused to everyone (``access.repo_path_check``)."""
    name = project_name_check(name)
    parsed = policy_parse(policy)
    if "*" in parsed.egress and created_by is not None and not created_by.is_staff:
        raise SfError(
            "egress '*' (every public host) is a server admin's grant; list the domains "
            "the project needs (pypi.org, *.pythonhosted.org) instead"
        )
    repository_check(repo_path, base_branch)
    repo_path_check(repo_path, by_person=created_by is not None and not path_chosen_by_sf)
    if Project.objects.filter(name=name).exists():
        raise SfError(f"a project named {name!r} already exists")
    with transaction.atomic():
        project = Project.objects.create(
            name=name,
            repo_path=repo_path,
            base_branch=base_branch,
            policy=parsed.model_dump(mode="json"),
        )
        if created_by is not None:
            ProjectMembership.objects.create(project=project, user=created_by, role=Role.ADMIN)
    return project


def project_name_check(name: str) -> str:
    """A project name, stripped: not empty, not too long, no control characters."""
    name = name.strip()
    limit = Project._meta.get_field("name").max_length or 0
    if not name:
        raise SfError("a project needs a name")
    if len(name) > limit:
        raise SfError(f"a project name has at most {limit} characters (got {len(name)})")
    if any(unicodedata.category(char) == "Cc" for char in name):
        raise SfError("a project name may not contain control characters")
    return name
