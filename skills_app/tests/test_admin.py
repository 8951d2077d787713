"""The admin shows skills and their records; sync owns every synced field."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from agents_app.models import AgentSession, Project
from skills_app.models import Skill, SkillEvalRun, SkillProposal, SkillUse, SkillUseKind
from skills_app.sync import project_skills_sync
from skills_app.tests.helpers import write_skill

pytestmark = pytest.mark.django_db


def test_every_skill_page_of_the_admin_renders(
    admin_client: Client, project: Project, agent_session: AgentSession
) -> None:
    folder = write_skill(Path(project.repo_path), "notes", files={"evals/one/task.md": "x"})
    (folder / "evals/one/grader.py").write_text("pass\n")
    project_skills_sync(project)
    skill = Skill.objects.get(name="notes")
    use = SkillUse.objects.create(skill=skill, session=agent_session, kind=SkillUseKind.LOAD)
    run = SkillEvalRun.objects.create(case=skill.eval_cases.get(), model_mode="smart")
    proposal = SkillProposal.objects.create(
        project=project, name="p", description="d", kind="same-fix", fingerprint="f", skill_md="-"
    )
    rows = {
        "skill": skill,
        "skilluse": use,
        "skillevalcase": skill.eval_cases.get(),
        "skillevalrun": run,
        "skillproposal": proposal,
    }
    for model, row in rows.items():
        assert admin_client.get(reverse(f"admin:skills_app_{model}_changelist")).status_code == 200
        change = reverse(f"admin:skills_app_{model}_change", args=[row.pk])
        assert admin_client.get(change).status_code == 200, model
        assert admin_client.get(reverse(f"admin:skills_app_{model}_add")).status_code == 403


def test_synced_fields_are_read_only(admin_client: Client, project: Project) -> None:
    write_skill(Path(project.repo_path), "notes")
    project_skills_sync(project)
    skill = Skill.objects.get(name="notes")
    html = admin_client.get(reverse("admin:skills_app_skill_change", args=[skill.pk])).content
    for field in ("valid", "problem", "content_hash", "side_effects", "permission_profile"):
        assert f'name="{field}"'.encode() not in html, field
        assert f"field-{field}".encode() in html


def test_a_proposal_status_moves_only_through_its_service(
    admin_client: Client, project: Project
) -> None:
    proposal = SkillProposal.objects.create(
        project=project, name="p", description="d", kind="same-fix", fingerprint="f", skill_md="-"
    )
    url = reverse("admin:skills_app_skillproposal_change", args=[proposal.pk])
    html = admin_client.get(url).content
    assert b'name="status"' not in html
    assert b'name="description"' in html
