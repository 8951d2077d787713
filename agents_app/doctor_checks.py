"""The doctor's checks of what the agents app owns: pending transitions that can never
apply, projects whose repository moved or is dirty on the base branch, models
without a price, repositories without instruction files. Registered in
``AgentsAppConfig.ready``; docs/doctor.md lists them."""

from __future__ import annotations

import os

from django.db import transaction

from agents_app.costs import configured_unpriced
from agents_app.models import (
    ModeTransition,
    Project,
    RepositoryMoved,
    SessionStatus,
    TransitionStatus,
)
from agents_app.runtime.instructions import ROOT_FILES, root_instruction_files
from sf_core.actors import Actor
from sf_core.doctor import Check, Finding, RepairDone, Severity, register
from sf_core.git import git

# A finished or stopped session has no dispatch point left: its pending steering waits
# for nothing. (A stopped session is run again only by a person, who steers anew.)
ENDED = (SessionStatus.COMPLETED, SessionStatus.FAILED, SessionStatus.STOPPED)


def _unappliable() -> list[ModeTransition]:
    pending = ModeTransition.objects.filter(
        status=TransitionStatus.PENDING, session__status__in=ENDED
    )
    return list(pending.select_related("session").order_by("pk"))


def transitions_check() -> list[Finding]:
    return [
        Finding(
            severity=Severity.WARNING,
            message=f"pending transition {t.pk} of session {t.session_id} can never apply: "
            f"the session is {t.session.status}",
            evidence=[f"{t.summary} ({t.scope}), requested {t.requested_at:%Y-%m-%d %H:%M}"],
            fixable=True,
            target=f"transition {t.pk}",
            project_id=t.session.project_id,
        )
        for t in _unappliable()
    ]


def transitions_fix(actor: Actor) -> list[RepairDone]:
    """Cancel them: the transition row is its own log (status and reason)."""
    done: list[RepairDone] = []
    for t in _unappliable():
        with transaction.atomic():
            changed = ModeTransition.objects.filter(
                pk=t.pk, status=TransitionStatus.PENDING
            ).update(
                status=TransitionStatus.CANCELLED,
                reason=f"{t.reason} (cancelled by the doctor: the session is {t.session.status})"[
                    :500
                ],
            )
        if changed == 1:
            done.append(RepairDone(target=f"transition {t.pk}", action="cancelled"))
    return done


def projects_check() -> list[Finding]:
    findings: list[Finding] = []
    for project in Project.objects.order_by("name"):
        problem = _repository_problem(project)
        if problem is not None:
            findings.append(problem.model_copy(update={"project_id": project.pk}))
    return findings


def _repository_problem(project: Project) -> Finding | None:
    path, base = project.repo_path, project.base_branch
    evidence = [f"project {project.name}: {path} (base {base})"]
    if project.parsed_policy.record is not None and not os.path.isdir(os.path.join(path, ".git")):
        return None  # record mode: a host without the checkout works in its mirror
    try:
        project.repository()
    except RepositoryMoved as exc:
        return Finding(severity=Severity.ERROR, message=str(exc), evidence=evidence)
    if not os.path.isdir(path):
        return Finding(
            severity=Severity.ERROR,
            message=f"project {project.name}: the repository is gone (moved or deleted)",
            evidence=evidence,
        )
    if git("rev-parse", "--is-inside-work-tree", cwd=path, check=False) != "true":
        return Finding(
            severity=Severity.ERROR,
            message=f"project {project.name}: {path} is no longer a git work tree",
            evidence=evidence,
        )
    if not git("rev-parse", "--verify", "--quiet", f"refs/heads/{base}", cwd=path, check=False):
        return Finding(
            severity=Severity.ERROR,
            message=f"project {project.name}: the base branch {base!r} is gone",
            evidence=evidence,
        )
    return _dirty_base(project, evidence)


def _dirty_base(project: Project, evidence: list[str]) -> Finding | None:
    """Merges catch up a checked-out base branch only when its tree is clean."""
    path, base = project.repo_path, project.base_branch
    if git("symbolic-ref", "--quiet", "--short", "HEAD", cwd=path, check=False) != base:
        return None
    changes = git("status", "--porcelain", "--untracked-files=no", cwd=path, check=False)
    if not changes:
        return None
    lines = changes.splitlines()
    return Finding(
        severity=Severity.WARNING,
        message=f"project {project.name}: the checked-out base branch {base!r} has "
        f"{len(lines)} uncommitted changes (merges cannot update its tree)",
        evidence=evidence + lines[:10],
    )


def instructions_check() -> list[Finding]:
    """A repository without an instruction file: its agents get no conventions of its
    own (docs/repository-instructions.md). A note, not a problem."""
    return [
        Finding(
            severity=Severity.INFO,
            message=f"project {project.name}: its repository has no instruction file "
            f"({', '.join(ROOT_FILES)}): units and the planner get none of its conventions",
            evidence=[f"{project.repo_path}; see docs/repository-instructions.md"],
            project_id=project.pk,
        )
        for project in Project.objects.order_by("name")
        if os.path.isdir(project.repo_path) and not root_instruction_files(project.repo_path)
    ]


def prices_check() -> list[Finding]:
    return [
        Finding(
            severity=Severity.WARNING,
            message=f"model {found.model} has no price: its calls are charged $0",
            evidence=[f"configured in {found.where}; set prices in the project's policy"],
        )
        for found in configured_unpriced(list(Project.objects.all()))
    ]


def register_checks() -> None:
    register(
        Check(
            id="transitions.unappliable",
            title="Pending transitions that can never apply",
            run=transitions_check,
            fix=transitions_fix,
            cheap=True,
        ),
        Check(id="projects.repository", title="Project repositories", run=projects_check),
        Check(id="models.unpriced", title="Models without a price", run=prices_check),
        Check(
            id="projects.instructions",
            title="Repositories without instruction files",
            run=instructions_check,
        ),
    )
