"""Registering a repository as a project, and who becomes its admin."""

from __future__ import annotations

import unicodedata
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from agents_app.access import Action, repo_path_check, require
from agents_app.models import Project, ProjectMembership, Role
from agents_app.schemas import egress_entry, policy_parse
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
    demo: bool = False,
) -> Project:
    """Create a project on an existing git repository and branch; the policy document is
    validated against ``ProjectPolicy``. A person registering (``created_by``) needs the
    register-repository permission and a path under ``SF_REPO_ROOTS``, unless SF chose
    the path itself (``path_chosen_by_sf``: the demo's, whose project is a ``demo``);
    SF's own checkout is refused to everyone (``access.repo_path_check``). The person
    becomes the project's admin. The path is stored resolved, and a repository already
    registered under any spelling is refused, naming its project."""
    by_person = created_by is not None and not path_chosen_by_sf
    if by_person:
        require(created_by, None, Action.REGISTER_REPOSITORY)
    name = project_name_check(name)
    parsed = policy_parse(policy)
    every_host = any(egress_entry(entry)[0] == "*" for entry in parsed.egress)  # or "*:8080"
    if every_host and created_by is not None and not created_by.is_staff:
        raise SfError(
            "egress '*' (every public host) is a server admin's grant; list the domains "
            "the project needs (pypi.org, *.pythonhosted.org) instead"
        )
    repository_check(repo_path, base_branch)
    resolved = str(repo_path_check(repo_path, by_person=by_person))
    if Project.objects.filter(name=name).exists():
        raise SfError(f"a project named {name!r} already exists")
    _refuse_registered(resolved)
    try:
        with transaction.atomic():
            project = Project.objects.create(
                name=name,
                repo_path=resolved,
                base_branch=base_branch,
                policy=parsed.model_dump(mode="json"),
                demo=demo,
            )
            if created_by is not None:
                ProjectMembership.objects.create(project=project, user=created_by, role=Role.ADMIN)
    except IntegrityError:  # registered meanwhile (the unique constraint decides)
        _refuse_registered(resolved)
        raise
    return project


def _refuse_registered(resolved: str) -> None:
    first = Project.objects.filter(repo_path=resolved).first()
    if first is not None:
        raise SfError(
            f"the repository {resolved} is already registered as project {first.name!r} "
            "(one project per repository)"
        )


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
