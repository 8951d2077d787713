"""``sf skills proposals [--project P] | accept ID | reject ID`` and the two POST views."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from agents_app.tests.test_cli import run_sf
from conftest import grant
from skills_app.models import ProposalStatus, SkillProposal
from tasks_app.features.skills.proposals import skill_evidence_check
from tasks_app.tests.test_skill_proposals import failed_unit, world

pytestmark = pytest.mark.django_db


@pytest.fixture
def proposal(git_repo: Path) -> SkillProposal:
    task = world(git_repo)
    for n in (1, 2, 3):
        found = skill_evidence_check(unit_id=failed_unit(task, n).pk)
    assert found is not None
    return found


def test_the_cli_lists_then_accepts_a_proposal(proposal: SkillProposal) -> None:
    code, out, _ = run_sf("skills", "proposals", "--project", proposal.project.name)
    assert code == 0
    assert f"#{proposal.pk}" in out
    assert "proposed" in out
    assert proposal.name in out

    code, out, _ = run_sf(
        "skills", "proposals", "accept", str(proposal.pk), "--output-format", "json"
    )
    assert code == 0
    (row,) = json.loads(out)
    assert row["status"] == "accepted"
    assert row["task"] == f"skill-{proposal.name}"

    code, _, err = run_sf("skills", "proposals", "reject", str(proposal.pk))
    assert code == 2
    assert "only a proposed one can be rejected" in err


def test_the_cli_refuses_a_viewer(proposal: SkillProposal, user: User) -> None:
    grant(user, proposal.project, "viewer")
    code, _, err = run_sf("skills", "proposals", "reject", str(proposal.pk), "--as", user.username)
    assert code == 2
    assert "needs the approver role" in err
    code, out, _ = run_sf("skills", "proposals", "--as", user.username)
    assert code == 0
    assert proposal.name in out


def test_skills_sync_and_list_still_work(proposal: SkillProposal) -> None:
    code, _, _ = run_sf("skills", "list", "--project", proposal.project.name)
    assert code == 0


def test_the_views_reject_and_go_back_to_the_referrer(
    proposal: SkillProposal, client: Client, user: User
) -> None:
    grant(user, proposal.project, "approver")
    client.force_login(user)
    url = reverse("skill-proposal-reject", args=[proposal.pk])
    response = client.post(url, HTTP_REFERER="http://testserver/skills/")
    assert response.status_code == 302
    assert response["Location"] == "http://testserver/skills/"
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.REJECTED

    again = client.post(reverse("skill-proposal-accept", args=[proposal.pk]))
    assert again.status_code == 409


def test_accepting_in_the_browser_needs_an_approver(
    proposal: SkillProposal, client: Client, user: User
) -> None:
    grant(user, proposal.project, "operator")
    client.force_login(user)
    url = reverse("skill-proposal-accept", args=[proposal.pk])
    assert client.post(url).status_code == 403
    assert client.get(url).status_code == 405
    grant(user, proposal.project, "approver")
    response = client.post(url, HTTP_REFERER="https://evil.example/")
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.ACCEPTED
    assert response["Location"].startswith(reverse("task-board"))
