"""The skills pages: the list, Sync now, one skill, its files, and who may see them."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from agents_app.models import AgentSession, Project
from conftest import grant
from skills_app.models import (
    ProposalStatus,
    Skill,
    SkillEvalCase,
    SkillEvalRun,
    SkillProposal,
    SkillUse,
    SkillUseKind,
)
from skills_app.sync import project_skills_sync
from skills_app.tests.helpers import write_skill

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def skills(project: Project) -> Project:
    repo = Path(project.repo_path)
    write_skill(
        repo,
        "release-notes",
        files={"scripts/check.sh": "echo <checked>\n", "evals/basic/task.md": "Check it"},
    )
    (repo / ".agents/skills/release-notes/evals/basic/grader.py").write_text("pass\n")
    write_skill(repo, "broken", extra="colour: blue\n")
    project_skills_sync(project)
    return project


def test_the_list_shows_each_skill_with_its_validity_and_problem(
    logged_in_client: Client, skills: Project
) -> None:
    html = logged_in_client.get(reverse("project-skills", args=[skills.pk])).content.decode()
    assert 'data-skill="release-notes" data-valid="true"' in html
    assert 'data-skill="broken" data-valid="false"' in html
    problem = Skill.objects.get(name="broken").problem
    assert "colour" in problem
    assert "SKILL.md" in problem
    shown = problem.replace(f"{skills.repo_path}/", "")
    assert shown.startswith(".agents/skills/broken/SKILL.md: ")
    assert shown.replace("'", "&#x27;") in html
    assert "data-invalid-notice" in html
    assert "restricted" in html
    assert "person · model" in html


def test_the_list_counts_uses_and_shows_the_last_eval_per_model_mode(
    logged_in_client: Client, skills: Project, agent_session: AgentSession, user: User
) -> None:
    skill = Skill.objects.get(name="release-notes")
    for _ in range(3):
        SkillUse.objects.create(
            skill=skill, session=agent_session, kind=SkillUseKind.INVOKE, by_model=False, user=user
        )
    case = SkillEvalCase.objects.get(skill=skill)
    SkillEvalRun.objects.create(case=case, model_mode="smart", passed=False)
    SkillEvalRun.objects.create(case=case, model_mode="smart", passed=True)  # the last
    SkillEvalRun.objects.create(case=case, model_mode="fast", passed=False)
    html = logged_in_client.get(reverse("project-skills", args=[skills.pk])).content.decode()
    row = html.split('data-skill="release-notes"')[1].split("</tr>")[0]
    assert "<td data-uses>3</td>" in row
    smart = row.split('data-eval-mode="smart">')[1].split("</div>")[0]
    assert "pass" in smart
    assert "fail" not in smart
    assert "fail" in row.split('data-eval-mode="fast">')[1].split("</div>")[0]


def test_the_detail_shows_frontmatter_a_safe_body_files_uses_runs_and_proposals(
    logged_in_client: Client, skills: Project, agent_session: AgentSession, user: User
) -> None:
    repo = Path(skills.repo_path)
    write_skill(
        repo,
        "release-notes",
        body="# Steps\n\n- run `<b>x</b>`\n- **bold** <script>alert(1)</script>\n",
        files={"scripts/check.sh": "echo <checked>\n"},
    )
    project_skills_sync(skills)
    skill = Skill.objects.get(name="release-notes")
    SkillUse.objects.create(
        skill=skill, session=agent_session, kind=SkillUseKind.INVOKE, by_model=False, user=user
    )
    SkillEvalRun.objects.create(
        case=skill.eval_cases.get(), model_mode="smart", passed=True, model="openai/gpt"
    )
    SkillProposal.objects.create(
        project=skills, name="run-migrations", description="Run them", kind="same-fix",
        fingerprint="f" * 64, skill_md="---\n", status=ProposalStatus.PROPOSED,
    )  # fmt: skip
    url = reverse("skill-detail", args=[skills.pk, "release-notes"])
    html = logged_in_client.get(url).content.decode()
    assert "<h3>Steps</h3>" in html
    assert "<li>run <code>&lt;b&gt;x&lt;/b&gt;</code></li>" in html
    assert "<strong>bold</strong> &lt;script&gt;" in html
    assert "<script>alert" not in html
    assert 'data-file="scripts/check.sh"' in html
    assert "ada" in html.split('id="skill-uses"')[1]
    assert 'data-passed="true"' in html
    assert "openai/gpt" in html
    assert "run-migrations" in html


def test_a_supporting_file_is_shown_escaped_and_only_a_listed_one(
    logged_in_client: Client, skills: Project
) -> None:
    url = reverse("skill-file", args=[skills.pk, "release-notes", "scripts/check.sh"])
    assert "echo &lt;checked&gt;" in logged_in_client.get(url).content.decode()
    for made_up in ("SKILL.md", "../../../README.md", "scripts/nope.sh"):
        url = reverse("skill-file", args=[skills.pk, "release-notes", made_up])
        assert logged_in_client.get(url).status_code == 404


def test_a_supporting_file_linked_out_of_the_repository_is_not_shown(
    logged_in_client: Client, skills: Project, tmp_path: Path
) -> None:
    """A committed link (``scripts/check.sh`` -> a host file) had the page show the
    host file, read by SF as root."""
    secret = tmp_path / "host-secret"
    secret.write_text("HOST-SECRET-4711\n")
    script = Path(skills.repo_path) / ".agents/skills/release-notes/scripts/check.sh"
    script.unlink()
    script.symlink_to(secret)
    url = reverse("skill-file", args=[skills.pk, "release-notes", "scripts/check.sh"])
    page = logged_in_client.get(url).content.decode()
    assert "HOST-SECRET-4711" not in page
    assert "cannot be read" in page
    assert "symbolic links" in page  # ELOOP: no link in a skill folder is followed


def test_an_invalid_skill_detail_shows_its_problem(
    logged_in_client: Client, skills: Project
) -> None:
    html = logged_in_client.get(reverse("skill-detail", args=[skills.pk, "broken"])).content
    assert b"data-problem" in html
    assert b"colour" in html
    assert (
        logged_in_client.get(reverse("skill-detail", args=[skills.pk, "nope"])).status_code == 404
    )


def test_sync_now_reads_the_fixed_file(logged_in_client: Client, skills: Project) -> None:
    write_skill(Path(skills.repo_path), "broken")
    response = logged_in_client.post(reverse("project-skills-sync", args=[skills.pk]), **HTMX)
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<div id="skills-list">')
    assert 'data-skill="broken" data-valid="true"' in html
    assert "1 changed" in html
    assert Skill.objects.get(name="broken").valid


def test_sync_without_htmx_redirects_to_the_list(logged_in_client: Client, skills: Project) -> None:
    response = logged_in_client.post(reverse("project-skills-sync", args=[skills.pk]))
    assert response.status_code == 302
    assert response["Location"] == reverse("project-skills", args=[skills.pk])


def test_another_user_gets_nothing(
    client: Client, skills: Project, django_user_model: type[User]
) -> None:
    stranger = django_user_model.objects.create(username="mallory")
    client.force_login(stranger)
    for url in (
        reverse("project-skills", args=[skills.pk]),
        reverse("skill-detail", args=[skills.pk, "release-notes"]),
        reverse("skill-file", args=[skills.pk, "release-notes", "scripts/check.sh"]),
    ):
        assert client.get(url).status_code == 403, url
    assert client.post(reverse("project-skills-sync", args=[skills.pk])).status_code == 403


def test_a_viewer_reads_but_may_not_sync(
    logged_in_client: Client, skills: Project, user: User
) -> None:
    grant(user, skills, "viewer")
    html = logged_in_client.get(reverse("project-skills", args=[skills.pk])).content.decode()
    assert "release-notes" in html
    assert "skills-sync" not in html
    response = logged_in_client.post(reverse("project-skills-sync", args=[skills.pk]))
    assert response.status_code == 403


def test_the_project_and_session_pages_link_the_skills_page(
    logged_in_client: Client, agent_session: AgentSession
) -> None:
    target = reverse("project-skills", args=[agent_session.project_id])
    for url in (
        reverse("project-detail", args=[agent_session.project_id]),
        reverse("session-detail", args=[agent_session.pk]),
    ):
        assert f'href="{target}"' in logged_in_client.get(url).content.decode(), url


def test_pages_require_login(client: Client, skills: Project) -> None:
    assert client.get(reverse("project-skills", args=[skills.pk])).status_code == 302


def test_the_list_offers_accept_and_reject_of_a_proposal_to_an_approver(
    client: Client, user: User, skills: Project, django_user_model: type[User]
) -> None:
    proposal = SkillProposal.objects.create(
        project=skills, name="run-migrations", description="Run them", kind="verify-failure",
        fingerprint="f" * 64, skill_md="---\nname: run-migrations\n---\n",
        evidence=[{"unit": None, "task": "t1", "detail": "x"}],
    )  # fmt: skip
    url = reverse("project-skills", args=[skills.pk])
    accept = reverse("skill-proposal-accept", args=[proposal.pk])
    client.force_login(user)  # the project's admin
    html = client.get(url).content.decode()
    assert f'data-proposal="{proposal.pk}" data-status="proposed"' in html
    assert f'hx-post="{accept}"' in html
    viewer = django_user_model.objects.create_user("vera", password="x")
    grant(viewer, skills, "viewer")
    client.force_login(viewer)
    html = client.get(url).content.decode()
    assert "run-migrations" in html
    assert accept not in html
    reject = reverse("skill-proposal-reject", args=[proposal.pk])
    refused = client.post(reject, **HTMX)
    assert refused.status_code == 200  # htmx swaps the refusal in beside the buttons
    assert 'class="error"' in refused.content.decode()
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.PROPOSED  # a viewer decides nothing
