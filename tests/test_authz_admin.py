"""The Django admin, by a project admin who is staff (issue 28, A3 and A5's dropdowns):
no form moves a row to another project, and no choice lists another project's rows or
people who share no project with the person.

Each test here failed on the main of 2026-11-28 (55a698e): ``bob`` moved a membership
of his project to project B with the admin role, and every dropdown listed every
project, session, plan and user.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib import admin
from django.contrib.auth.models import Permission, User
from django.forms import ModelChoiceField
from django.test import Client, RequestFactory

from agents_app.admin_scope import FK_PROJECT_PATHS, ProjectScopedAdmin
from agents_app.models import AgentSession, Project, ProjectMembership, Role
from agents_app.services import project_create, session_create
from conftest import make_git_repo
from tasks_app.models import Plan, PlanSource, Task
from tasks_app.schemas import plan_spec_parse
from tasks_app.services import plan_create

pytestmark = pytest.mark.django_db


def plan_in(session: AgentSession) -> Plan:
    spec = plan_spec_parse(
        {
            "summary": "s",
            "tasks": [
                {"key": "k", "title": "t", "acceptance_criteria": ["ok"], "verify": ["true"]}
            ],
        }
    )
    return plan_create(session=session, spec=spec, source=PlanSource.API)


@pytest.fixture
def world(project: Project, tmp_path: Path) -> dict[str, Any]:
    """``bob`` (staff, every admin permission of the models) is admin of ``project``
    (A); B is another project with its own session and plan; ``mallory`` shares
    nothing with bob; ``carol`` is a viewer of A."""
    bob = User.objects.create(username="bob", is_staff=True)
    bob.user_permissions.add(*Permission.objects.exclude(content_type__app_label="auth"))
    ProjectMembership.objects.create(project=project, user=bob, role=Role.ADMIN)
    carol = User.objects.create(username="carol")
    ProjectMembership.objects.create(project=project, user=carol, role=Role.VIEWER)
    other = project_create(name="B", repo_path=str(make_git_repo(tmp_path / "b")))
    mallory = User.objects.create(username="mallory")
    ProjectMembership.objects.create(project=other, user=mallory, role=Role.ADMIN)
    mine = session_create(project=project, created_by=bob, title="mine")
    theirs = session_create(project=other, created_by=mallory, title="theirs")
    return {
        "bob": User.objects.get(pk=bob.pk),
        "carol": carol,
        "other": other,
        "mallory": mallory,
        "mine": mine,
        "theirs": theirs,
        "my_plan": plan_in(mine),
        "their_plan": plan_in(theirs),
    }


def request_by(user: User) -> Any:
    request = RequestFactory().get("/admin/")
    request.user = user
    return request


def test_a_membership_is_not_moved_to_another_project(
    client: Client, project: Project, world: dict[str, Any]
) -> None:
    membership = ProjectMembership.objects.get(user=world["carol"])
    client.force_login(world["bob"])
    url = f"/admin/agents_app/projectmembership/{membership.pk}/change/"
    client.post(
        url,
        {
            "project": world["other"].pk,
            "user": world["carol"].pk,
            "role": "admin",
            "created_at_0": "2026-11-28",
            "created_at_1": "00:00:00",
        },
    )
    membership.refresh_from_db()
    assert membership.project_id == project.pk
    assert not ProjectMembership.objects.filter(project=world["other"], user=world["carol"])


@pytest.mark.parametrize(
    ("model", "field", "own", "foreign"),
    [
        (AgentSession, "project", "mine", "other"),
        (AgentSession, "created_by", "mine", "mallory"),
        (Plan, "session", "my_plan", "theirs"),
        (Task, "plan", "my_task", "their_plan"),
    ],
)
def test_a_form_does_not_change_the_key_that_leads_to_the_project(
    world: dict[str, Any], model: Any, field: str, own: str, foreign: str
) -> None:
    world["my_task"] = world["my_plan"].tasks.get()
    row = world[own]
    model_admin = admin.site._registry[model]
    request = request_by(world["bob"])
    form_class = model_admin.get_form(request, row, change=True)
    assert field not in form_class.base_fields, f"{model.__name__}.{field} is editable"
    assert field in model_admin.get_readonly_fields(request, row)
    before = getattr(model.objects.get(pk=row.pk), f"{field}_id")
    assert before != world[foreign].pk


def test_no_admin_form_offers_another_projects_rows_or_strangers(
    project: Project, world: dict[str, Any]
) -> None:
    request = request_by(world["bob"])
    foreign_rows = {
        "agents_app.project": {world["other"].pk},
        "agents_app.agentsession": {world["theirs"].pk},
        "tasks_app.plan": {world["their_plan"].pk},
        "tasks_app.task": set(world["their_plan"].tasks.values_list("pk", flat=True)),
        "auth.user": {world["mallory"].pk},
    }
    checked = 0
    for model, model_admin in admin.site._registry.items():
        if not isinstance(model_admin, ProjectScopedAdmin):
            continue
        forms = [model_admin.get_form(request)]
        forms += [
            inline.get_formset(request, project if model is Project else None).form
            for inline in model_admin.get_inline_instances(request)
        ]
        for form_class in forms:
            for name, field in form_class.base_fields.items():
                if not isinstance(field, ModelChoiceField):
                    continue
                label = field.queryset.model._meta.label_lower
                assert label in FK_PROJECT_PATHS or label == "auth.user", (model, name)
                offered = set(field.queryset.values_list("pk", flat=True))
                assert not offered & foreign_rows.get(label, set()), (model, name, label)
                checked += 1
    assert checked >= 4  # membership project/user, the inline's user, plan's session, …
