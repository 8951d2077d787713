"""The issue's test: a proposal created from three repeated failures, accepted, merged as
a commit containing ``SKILL.md`` and an eval case — every step a real unit of the engine
(worktree, gate, verify, review, merge); only the model is scripted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from agents_app.models import AgentSession, RiskDecision
from agents_app.services import project_create, session_create
from agents_app.tests.runtime_helpers import ScriptedModel
from conftest import grant
from sf_core.actors import Actor
from skills_app.models import ProposalStatus, SkillProposal
from skills_app.parsing import folder_digest, skill_parse
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.engine.review import task_approve
from tasks_app.engine.unit import UnitOptions, unit_run
from tasks_app.features.skills.proposals import proposal_accept
from tasks_app.models import Task
from tasks_app.schemas import plan_spec_parse
from tasks_app.services import plan_accept, plan_create
from tasks_app.tests.test_engine import git

pytestmark = pytest.mark.django_db
MODEL = "openai/gpt-4o"


def run(task: Task, *steps: Any) -> Any:
    return unit_run(
        task_id=task.pk,
        worker="test",
        options=UnitOptions(model=MODEL, completion=ScriptedModel(*steps)),
    )


def writes(files: dict[str, str]) -> list[Any]:
    calls = [("write_file", {"path": path, "content": text}) for path, text in files.items()]
    return [("writing", calls), ("done", [("finish", {"summary": "wrote it"})])]


def failing_task(repo: Path, user: User) -> Task:
    """A task whose verify command fails the same way whatever the agent writes."""
    project = project_create(name="greet", repo_path=str(repo))
    grant(user, project, "approver")
    session = session_create(project=project, axes={"work_mode": "plan"})
    AgentSession.objects.filter(pk=session.pk).update(driver="inline")
    task = {
        "key": "hello",
        "title": "Write hello.txt",
        "acceptance_criteria": ["hello.txt says hello"],
        "verify": ["grep -q hello hello.txt"],
        "risk_level": "low",
    }
    spec = plan_spec_parse({"summary": "s", "tasks": [task]})
    plan = plan_create(session=session, spec=spec, source="api")
    plan_accept(plan=plan, actor=Actor.of(user), autonomous=True, start=False)
    return plan.tasks.get()


def test_three_failures_a_proposal_accepted_and_merged_with_skill_md_and_an_eval_case(
    tmp_path: Path, user: User
) -> None:
    repo = demo_repo_create(tmp_path / "greet")
    failing = failing_task(repo, user)

    # Given: the same verification failure in three units.
    for attempt in (1, 2, 3):
        report = run(failing, *writes({"hello.txt": f"goodbye {attempt}"}))
        assert report.outcome == "verification_failed"
        assert SkillProposal.objects.count() == (1 if attempt == 3 else 0)
    proposal = SkillProposal.objects.get()
    assert (proposal.kind, proposal.status) == ("verify-failure", ProposalStatus.PROPOSED)
    assert len(proposal.evidence) == 3
    assert proposal.name.startswith("fix-grep-q-hello-hello-txt")

    # When: a person accepts it, and its task runs as a unit, is verified and approved.
    proposal = proposal_accept(proposal=proposal, actor=Actor.of(user))
    written = proposal.task
    assert written is not None
    folder = f".agents/skills/{proposal.name}"
    files = {
        f"{folder}/SKILL.md": proposal.skill_md,
        f"{folder}/evals/{proposal.eval_case['case']}/task.md": proposal.eval_case["task.md"],
        f"{folder}/evals/{proposal.eval_case['case']}/grader.py": proposal.eval_case["grader.py"],
    }
    report = run(written, *writes(files))
    assert (report.outcome, report.task_status) == ("verified", "review")  # normal: a person
    verdicts = RiskDecision.objects.filter(unit__task=written, reason__startswith="verify")
    assert set(verdicts.values_list("decision", flat=True)) == {"allow"}, "no person needed"
    task_approve(task=written, actor=Actor.of(user))

    # Then: the base branch has a commit with SKILL.md and the eval case; it is merged.
    written.refresh_from_db()
    proposal.refresh_from_db()
    assert written.status == "done"
    assert proposal.status == ProposalStatus.MERGED
    changed = git(repo, "log", "main", "--name-only", "--format=", "-1", "--first-parent", "-m")
    assert set(changed.splitlines()) >= set(files)
    for path, text in files.items():
        assert git(repo, "show", f"main:{path}") == text.strip()
    digest, raw = folder_digest(repo / folder)
    parsed = skill_parse(repo / folder, digest=digest, raw=raw)
    assert parsed.meta is not None
    assert [case.name for case in parsed.cases] == ["repeated-failure"]
