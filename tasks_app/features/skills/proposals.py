"""Skills SF proposes from repeated evidence (DESIGN §7), and what becomes of them.

After each unit's outcome, ``skill_evidence_check`` reads that unit's evidence
(``skill_evidence``) and counts the project's recent units that showed the same. At
``MIN_OCCURRENCES`` distinct units it stores a ``SkillProposal`` with the evidence, a
narrow SKILL.md and one eval case (``skill_drafts``), validated as sync would read them.

The database holds the storm back: a project gets no proposal within
``SF_SKILL_PROPOSAL_COOLDOWN`` of its last one (checked under a lock of the project's
row, so two workers cannot both pass), and never two for one fingerprint (a unique
constraint).

A proposal is written — a one-task plan in a session of its own, whose agent writes the
files through the gate, then verify, review and merge as any task — when a person
accepts it, or at once when the project's policy says ``skills.auto_create: write`` and
the session that showed the evidence is neither manual nor restricted. When that task's
work merges, the proposal is *merged*.
"""

from __future__ import annotations

import logging
import zlib

from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.utils import timezone

from agents_app.access import Action, require_actor
from agents_app.axes import PermissionProfile, RunControl
from agents_app.models import AgentSession, Project, TraceEvent, TraceKind
from agents_app.schemas import SkillAutoCreate
from agents_app.services import session_create
from sf_core.actors import Actor
from sf_core.errors import InvalidTransition
from skills_app.models import ProposalStatus, SkillProposal
from tasks_app.features.skills.drafts import Occurrence, SkillDraft, draft_validate, skill_draft
from tasks_app.features.skills.evidence import Evidence, EvidenceKind, unit_evidence
from tasks_app.models import PlanSource, Task, Unit
from tasks_app.schemas import plan_spec_parse
from tasks_app.services import plan_accept, plan_create

PROPOSAL_LOCK = zlib.crc32(b"sf.skills.proposal") - 2**31  # an int4 key, per project

logger = logging.getLogger("sf.skills")
MIN_OCCURRENCES = 3
POLICY_ACTOR = Actor.system("skills policy")


def skill_evidence_check(unit_id: int) -> SkillProposal | None:
    """Propose a skill if ``unit_id``'s evidence is now seen in enough units."""
    unit = Unit.objects.select_related("task__plan__session__project").get(pk=unit_id)
    session = unit.task.plan.session
    project = session.project
    if _cooling_down(project):  # the cheap check first: no reading units in a storm
        return None
    commands = _commands_of([unit.pk]).get(unit.pk, [])
    found = unit_evidence(
        verification_passed=unit.verification_passed,
        verification_output=unit.verification_output,
        patch=unit.checkpoint_patch,
        commands=commands,
    )
    for evidence in found:
        if SkillProposal.objects.filter(project=project, fingerprint=evidence.fingerprint).exists():
            continue
        seen = _occurrences(project, evidence)
        if len(seen) >= MIN_OCCURRENCES:
            return _propose(session, evidence, seen)
    return None


def _cooling_down(project: Project) -> bool:
    since = timezone.now() - settings.SF_SKILL_PROPOSAL_COOLDOWN
    return SkillProposal.objects.filter(project=project, created_at__gt=since).exists()


def _commands_of(unit_ids: list[int]) -> dict[int, list[str]]:
    """The ``run_command`` commands of each unit, in the order they ran (only the
    command is read from the payload, never the output stored beside it)."""
    commands: dict[int, list[str]] = {}
    events = TraceEvent.objects.filter(
        unit_id__in=unit_ids, kind=TraceKind.TOOL_CALL, name="run_command"
    ).order_by("unit_id", "seq")
    for unit_id, command in events.values_list("unit_id", "payload__arguments__command"):
        if isinstance(command, str) and unit_id is not None:
            commands.setdefault(unit_id, []).append(command)
    return commands


def _occurrences(project: Project, evidence: Evidence) -> list[Unit]:
    """The project's recent units (newest first) that showed ``evidence``.

    A cheap database filter finds candidates (the failing command in the report, the
    first file in the patch, the first word of the first command in the trace); the
    fingerprint decides."""
    window = settings.SF_SKILL_EVIDENCE_WINDOW
    units = Unit.objects.filter(task__plan__session__project=project).select_related("task")
    if evidence.kind == EvidenceKind.COMMAND_SEQUENCE:
        ids = list(
            TraceEvent.objects.filter(
                session__project=project,
                kind=TraceKind.TOOL_CALL,
                name="run_command",
                payload__arguments__command__startswith=evidence.commands[0].split()[0],
            )
            .order_by("-unit_id")
            .values_list("unit_id", flat=True)
            .distinct()[:window]
        )
        commands = _commands_of([i for i in ids if i is not None])
        candidates = list(units.filter(pk__in=list(commands)).order_by("-pk"))
        return [u for u in candidates if _shows(u, evidence, commands.get(u.pk, []))]
    if evidence.kind == EvidenceKind.VERIFY_FAILURE:
        units = units.filter(
            verification_passed=False, verification_output__contains=f"$ {evidence.command}  ["
        )
    else:
        first_file = f"diff --git a/{evidence.files[0]} "
        units = units.filter(verification_passed=True, checkpoint_patch__contains=first_file)
    return [u for u in units.order_by("-pk")[:window] if _shows(u, evidence, [])]


def _shows(unit: Unit, evidence: Evidence, commands: list[str]) -> bool:
    found = unit_evidence(
        verification_passed=unit.verification_passed,
        verification_output=unit.verification_output,
        patch=unit.checkpoint_patch,
        commands=commands,
    )
    return any(e.fingerprint == evidence.fingerprint for e in found)


def _propose(session: AgentSession, evidence: Evidence, seen: list[Unit]) -> SkillProposal | None:
    project = session.project
    occurrences = [
        Occurrence(u.pk, u.task.key, (u.summary or evidence.key)[:500]) for u in reversed(seen)
    ]
    draft = skill_draft(evidence, occurrences, fix=_fix_after(evidence, seen))
    draft_validate(draft)  # a bug here must not store a skill sync would refuse
    with transaction.atomic():
        # One proposer at a time per project: the cooldown is read under this lock. An
        # advisory lock, not the project's row: FOR UPDATE on the row would also wait for
        # (and block) every transaction inserting a row that references the project.
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [PROPOSAL_LOCK, project.pk])
        taken = SkillProposal.objects.filter(project=project, fingerprint=evidence.fingerprint)
        if _cooling_down(project) or taken.exists():
            return None
        proposal = SkillProposal.objects.create(
            project=project,
            name=draft.name,
            description=draft.description,
            kind=str(evidence.kind),
            fingerprint=evidence.fingerprint,
            evidence=[o.as_dict() for o in occurrences],
            skill_md=draft.skill_md,
            eval_case=draft.eval_case,
        )
        logger.info("skill %s proposed for %s", draft.name, project.name)
        if policy_writes(session):
            _accepted(proposal, POLICY_ACTOR)
            proposal.refresh_from_db()
    return proposal


def _fix_after(evidence: Evidence, seen: list[Unit]) -> str:
    """For a repeated verify failure: the summary of a later unit of one of those tasks
    whose verification passed, if there is one."""
    if evidence.kind != EvidenceKind.VERIFY_FAILURE:
        return ""
    passed = (
        Unit.objects.filter(task_id__in={u.task_id for u in seen}, verification_passed=True)
        .order_by("-pk")
        .first()
    )
    return f"{passed.summary} (unit {passed.pk})" if passed and passed.summary else ""


def policy_writes(session: AgentSession) -> bool:
    """Whether a proposal from ``session``'s evidence is written at once: the project's
    policy says so, and the session is neither manual nor restricted."""
    if session.run_control == RunControl.MANUAL:
        return False
    if session.permission_profile == PermissionProfile.RESTRICTED:
        return False
    return session.project.parsed_policy.skills.auto_create == SkillAutoCreate.WRITE


# --- a person's decision ------------------------------------------------------------


def proposal_accept(*, proposal: SkillProposal, actor: Actor) -> SkillProposal:
    """Accept a proposed skill: a task writes it (gate → verify → review → merge)."""
    require_actor(actor, proposal.project, Action.ACCEPT_PLAN)
    with transaction.atomic():
        _accepted(proposal, actor)
    proposal.refresh_from_db()
    return proposal


def proposal_reject(*, proposal: SkillProposal, actor: Actor) -> SkillProposal:
    """Reject a proposed skill; its fingerprint is never proposed again."""
    require_actor(actor, proposal.project, Action.ACCEPT_PLAN)
    _decide(proposal, actor, ProposalStatus.REJECTED)
    proposal.refresh_from_db()
    return proposal


def _decide(proposal: SkillProposal, actor: Actor, status: str) -> None:
    """The conditional update that makes a decision happen once."""
    updated = SkillProposal.objects.filter(pk=proposal.pk, status=ProposalStatus.PROPOSED).update(
        status=status,
        reviewer=actor.user if isinstance(actor.user, User) else None,
        reviewed_at=timezone.now(),
    )
    if updated != 1:
        proposal.refresh_from_db()
        raise InvalidTransition(
            f"skill proposal {proposal.pk} is {proposal.status}; only a proposed one can be "
            f"{status}"
        )


def _accepted(proposal: SkillProposal, actor: Actor) -> None:
    _decide(proposal, actor, ProposalStatus.ACCEPTED)
    task = _writing_task(proposal, actor)
    SkillProposal.objects.filter(pk=proposal.pk).update(task_id=task.pk)


def _writing_task(proposal: SkillProposal, actor: Actor) -> Task:
    """A session of the project with one accepted plan of one task: write the files."""
    draft = SkillDraft(
        name=proposal.name,
        description=proposal.description,
        skill_md=proposal.skill_md,
        case=proposal.eval_case["case"],
        eval_case=proposal.eval_case,
    )
    user = actor.user if isinstance(actor.user, User) else None
    session = session_create(
        project=proposal.project, created_by=user, title=f"Skill {proposal.name}"
    )
    spec = plan_spec_parse(
        {
            "intent": f"Add the skill {proposal.name} SF proposed (proposal {proposal.pk})",
            "summary": f"Write .agents/skills/{proposal.name} with one eval case.",
            "tasks": [_task_spec(proposal, draft)],
        }
    )
    plan = plan_create(session=session, spec=spec, source=PlanSource.API)
    plan_accept(
        plan=plan, actor=actor, autonomous=True, permission_profile=PermissionProfile.NORMAL
    )
    return plan.tasks.get()


def _task_spec(proposal: SkillProposal, draft: SkillDraft) -> dict[str, object]:
    files = draft.contents()
    blocks = "\n\n".join(f"### `{path}`\n\n````\n{text}\n````" for path, text in files.items())
    skill_path, prompt_path, grader_path = draft.paths()
    return {
        "key": f"skill-{proposal.name}"[:63].strip("-"),
        "title": f"Add the skill {proposal.name}"[:200],
        "description": (
            f"SF saw the same evidence ({proposal.kind}) in {len(proposal.evidence)} units "
            f"and proposed a skill for it. Create exactly these {len(files)} files with "
            f"exactly this content (each between the four-backtick fences), and change "
            f"nothing else.\n\n{blocks}"
        ),
        "acceptance_criteria": [
            f"`{skill_path}` has the given content",
            f"`{prompt_path}` and `{grader_path}` have the given content",
        ],
        "verify": [
            f"grep -q '^name: {proposal.name}$' {skill_path}",
            f"grep -q . {prompt_path}",
            f"grep -q . {grader_path}",
        ],
        "risk_level": "low",
        "task_kind": "docs",
        "intent_claim": list(files),
    }


def skill_proposal_merged(task: Task) -> None:
    """``task``'s work reached the base branch: the proposal it wrote is merged."""
    SkillProposal.objects.filter(task=task, status=ProposalStatus.ACCEPTED).update(
        status=ProposalStatus.MERGED
    )


def skill_proposals(*, project: Project | None = None) -> list[SkillProposal]:
    """The proposals, newest first (of one project, or all)."""
    rows = SkillProposal.objects.select_related("project", "reviewer", "task")
    if project is not None:
        rows = rows.filter(project=project)
    return list(rows)
