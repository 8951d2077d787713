"""Proposals from repeated evidence: three units needed, the cooldown, the policy, and
a person's accept or reject."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from agents_app.access import AccessDenied
from agents_app.models import AgentSession, TraceEvent, TraceKind
from agents_app.schemas import policy_parse
from agents_app.services import project_create, session_create
from conftest import grant
from sf_core.actors import Actor
from sf_core.errors import InvalidTransition, PolicyInvalid
from skills_app.models import ProposalStatus, SkillProposal
from tasks_app.engine import extensions, outcome
from tasks_app.features.skills.proposals import (
    proposal_accept,
    proposal_reject,
    skill_evidence_check,
)
from tasks_app.models import Plan, PlanStatus, Task, Unit
from tasks_app.schemas import plan_spec_parse
from tasks_app.services import plan_accept, plan_create

pytestmark = pytest.mark.django_db
FAILURE = "$ pytest -q  [exit 1, {n}.0 s]\nE   KeyError: 'user_{n}' in /srv/app/x.py:{n}\n"
PATCH = (
    "diff --git a/conf/settings.ini b/conf/settings.ini\n--- a/conf/settings.ini\n"
    "+++ b/conf/settings.ini\n@@ -{n},2 +{n},2 @@\n-debug = yes\n+debug = no\n"
)


def world(
    repo: Path, *, policy: Any = None, run_control: str = "autonomous", profile: str = "normal"
) -> Task:
    """A project, a session with those axes and one task whose units are the evidence."""
    project = project_create(name=f"p{Plan.objects.count()}", repo_path=str(repo), policy=policy)
    session = session_create(project=project, axes={"work_mode": "plan"})
    spec = plan_spec_parse({"summary": "s", "tasks": [{"key": "t", "title": "T",
                            "acceptance_criteria": ["x"], "verify": ["pytest -q"]}]})  # fmt: skip
    plan = plan_create(session=session, spec=spec, source="api")
    plan_accept(plan=plan, actor=Actor.system("t"), start=False)
    AgentSession.objects.filter(pk=session.pk).update(
        run_control=run_control, permission_profile=profile
    )
    return plan.tasks.get()


def failed_unit(task: Task, n: int) -> Unit:
    return Unit.objects.create(
        task=task,
        attempt=n,
        status="failed",
        verification_passed=False,
        verification_output=FAILURE.format(n=n),
        summary=f"attempt {n}",
    )


def fixed_unit(task: Task, n: int) -> Unit:
    return Unit.objects.create(
        task=task, attempt=n, status="succeeded", verification_passed=True,
        checkpoint_patch=PATCH.format(n=n), summary="turned debug off",
    )  # fmt: skip


def commands_unit(task: Task, n: int, commands: list[str]) -> Unit:
    unit = Unit.objects.create(task=task, attempt=n, status="failed")
    for seq, command in enumerate(commands, 1):
        TraceEvent.objects.create(
            session_id=task.plan.session_id, unit=unit, seq=seq, kind=TraceKind.TOOL_CALL,
            name="run_command", payload={"arguments": {"command": command}, "output": ""},
        )  # fmt: skip
    return unit


@pytest.fixture
def task(git_repo: Path) -> Task:
    return world(git_repo)


def test_three_repeated_verify_failures_make_a_proposal_two_do_not(task: Task) -> None:
    assert skill_evidence_check(unit_id=failed_unit(task, 1).pk) is None
    assert skill_evidence_check(unit_id=failed_unit(task, 2).pk) is None
    proposal = skill_evidence_check(unit_id=failed_unit(task, 3).pk)
    assert proposal is not None
    assert (proposal.kind, proposal.status) == ("verify-failure", ProposalStatus.PROPOSED)
    assert proposal.name.startswith("fix-pytest-q-")
    assert [e["unit"] for e in proposal.evidence] == list(
        task.units.order_by("pk").values_list("pk", flat=True)
    )
    assert {e["task"] for e in proposal.evidence} == {"t"}
    assert "KeyError" in proposal.skill_md
    assert "pytest -q" in proposal.eval_case["grader.py"]
    assert proposal.task is None, "the default policy only proposes"


def test_three_identical_fixes_make_a_proposal(task: Task) -> None:
    for n in (1, 2):
        assert skill_evidence_check(unit_id=fixed_unit(task, n).pk) is None
    proposal = skill_evidence_check(unit_id=fixed_unit(task, 3).pk)
    assert proposal is not None
    assert proposal.kind == "same-fix"
    assert "conf/settings.ini" in proposal.description
    assert "+debug = no" in proposal.skill_md


def test_three_identical_command_sequences_make_a_proposal(task: Task) -> None:
    sequence = ["ls", "make db-reset", "cat Makefile", "pytest -q -n 4"]
    other = ["make db-reset", "pytest -q -n 8"]  # the same, numbers and looking around aside
    assert skill_evidence_check(unit_id=commands_unit(task, 1, sequence).pk) is None
    assert skill_evidence_check(unit_id=commands_unit(task, 2, ["make db-reset", "ls"]).pk) is None
    assert skill_evidence_check(unit_id=commands_unit(task, 3, other).pk) is None
    proposal = skill_evidence_check(unit_id=commands_unit(task, 4, sequence).pk)
    assert proposal is not None
    assert proposal.kind == "command-sequence"
    assert proposal.name.startswith("run-make-db-reset-")
    assert len(proposal.evidence) == 3


def test_a_storm_of_failures_makes_one_proposal(task: Task) -> None:
    for n in range(1, 11):
        skill_evidence_check(unit_id=failed_unit(task, n).pk)
        if n % 2:  # another repeated failure too, which the cooldown holds back
            unit = failed_unit(task, 100 + n)
            Unit.objects.filter(pk=unit.pk).update(
                verification_output="$ ruff check .  [exit 1, 0.1 s]\nE501 Line too long\n"
            )
            skill_evidence_check(unit_id=unit.pk)
    assert SkillProposal.objects.count() == 1


def test_after_the_cooldown_other_evidence_is_proposed_but_never_the_same(
    task: Task, settings: Any
) -> None:
    for n in (1, 2, 3):
        skill_evidence_check(unit_id=failed_unit(task, n).pk)
    SkillProposal.objects.update(
        created_at=SkillProposal.objects.get().created_at - timedelta(hours=2)
    )
    assert skill_evidence_check(unit_id=failed_unit(task, 4).pk) is None, "same fingerprint"
    for n in (5, 6, 7):
        last = skill_evidence_check(unit_id=fixed_unit(task, n).pk)
    assert last is not None
    assert SkillProposal.objects.count() == 2


@pytest.mark.parametrize(
    ("run_control", "profile", "writes"),
    [("manual", "normal", False), ("autonomous", "restricted", False),
     ("autonomous", "normal", True), ("assisted", "trusted", True)],
)  # fmt: skip
def test_policy_write_writes_except_in_manual_or_restricted_sessions(
    git_repo: Path, run_control: str, profile: str, writes: bool
) -> None:
    task = world(
        git_repo, policy={"skills": {"auto_create": "write"}}, run_control=run_control,
        profile=profile,
    )  # fmt: skip
    for n in (1, 2, 3):
        proposal = skill_evidence_check(unit_id=failed_unit(task, n).pk)
    assert proposal is not None
    assert proposal.status == (ProposalStatus.ACCEPTED if writes else ProposalStatus.PROPOSED)
    assert (proposal.task is not None) == writes


def test_a_person_accepts_a_proposal_into_a_plan_that_writes_it(task: Task, user: User) -> None:
    for n in (1, 2, 3):
        proposal = skill_evidence_check(unit_id=failed_unit(task, n).pk)
    assert proposal is not None
    grant(user, proposal.project, "approver")

    accepted = proposal_accept(proposal=proposal, actor=Actor.of(user))

    assert (accepted.status, accepted.reviewer) == (ProposalStatus.ACCEPTED, user)
    written = accepted.task
    assert written is not None
    assert written.plan.status == PlanStatus.ACCEPTED
    assert written.plan.session.run_control == "autonomous"
    assert written.plan.session.permission_profile == "normal"
    assert written.plan.session_id != task.plan.session_id
    assert accepted.skill_md in written.description
    assert f".agents/skills/{accepted.name}/SKILL.md" in written.verify[0]
    with pytest.raises(InvalidTransition, match="only a proposed one"):
        proposal_reject(proposal=accepted, actor=Actor.of(user))


def test_rejecting_needs_an_approver(task: Task, user: User) -> None:
    for n in (1, 2, 3):
        proposal = skill_evidence_check(unit_id=failed_unit(task, n).pk)
    assert proposal is not None
    grant(user, proposal.project, "operator")
    with pytest.raises(AccessDenied, match="accept or reject a plan"):
        proposal_reject(proposal=proposal, actor=Actor.of(user))
    grant(user, proposal.project, "approver")
    rejected = proposal_reject(proposal=proposal, actor=Actor.of(user))
    assert rejected.status == ProposalStatus.REJECTED
    assert rejected.task is None


def test_the_policy_field_is_checked() -> None:
    assert policy_parse({}).skills.auto_create == "propose"
    assert policy_parse({"skills": {"auto_create": "write"}}).skills.auto_create == "write"
    with pytest.raises(PolicyInvalid, match=r"skills\.auto_create"):
        policy_parse({"skills": {"auto_create": "always"}})


def test_a_check_that_breaks_never_changes_how_the_unit_ended(
    task: Task, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(**_: Any) -> None:
        raise RuntimeError("bug")

    monkeypatch.setitem(extensions.unit_ended.hooks, "skill evidence", broken)
    outcome._skill_evidence(failed_unit(task, 1))  # no exception
    assert "skill evidence of unit" in caplog.text
