"""What the skills pages read: a project's skills with their uses and last eval result
per model mode, one skill's detail, and the invalid skills a board warns about."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from django.db.models import Count, Q

from agents_app.models import Project
from skills_app.models import Skill, SkillEvalRun, SkillProposal, SkillScope, SkillUse
from skills_app.parsing import (
    MAX_FILE_BYTES,
    MAX_SKILL_BYTES,
    SkillInvalid,
    read_in_tree,
    skill_body,
)

RECENT_USES = 50
RECENT_RUNS = 50


@dataclass
class SkillRow:
    skill: Skill
    uses: int
    # model mode → its latest run (of any case of the skill)
    last_eval: dict[str, SkillEvalRun] = field(default_factory=dict)


def project_skills(project: Project) -> list[Skill]:
    """The project's skills (present or removed) and the user skills it does not
    shadow: what the skills page lists, invalid ones included."""
    rows = Skill.objects.filter(
        Q(scope=SkillScope.PROJECT, project=project)
        | Q(scope=SkillScope.USER, removed_at__isnull=True)
    ).annotate(use_count=Count("uses"))
    found: dict[str, Skill] = {}
    repo = f"{Path(project.repo_path)}/"
    for row in sorted(rows, key=lambda s: (s.scope != SkillScope.PROJECT, s.name)):
        # The problem names the file; on the page, relative to the repository.
        row.problem_shown = row.problem.replace(repo, "")  # type: ignore[attr-defined]
        found.setdefault(row.name, row)
    return sorted(found.values(), key=lambda s: (s.removed_at is not None, s.name))


def skill_rows(project: Project) -> list[SkillRow]:
    skills = project_skills(project)
    latest: dict[int, dict[str, SkillEvalRun]] = {}
    runs = SkillEvalRun.objects.filter(case__skill__in=skills).select_related("case")
    # Newest first (the model's ordering): the first run seen per mode is the last one.
    for run in runs.order_by("-created_at", "-pk"):
        latest.setdefault(run.case.skill_id, {}).setdefault(run.model_mode, run)
    return [
        SkillRow(skill=s, uses=getattr(s, "use_count", 0), last_eval=latest.get(s.pk, {}))
        for s in skills
    ]


def invalid_skills(project: Project) -> list[Skill]:
    """The present invalid skills the project's units would skip."""
    return [s for s in project_skills(project) if not s.valid and s.removed_at is None]


def skill_of(project: Project, name: str) -> Skill | None:
    """The skill ``name`` as ``project`` sees it: its own first, else the user's."""
    return next((s for s in project_skills(project) if s.name == name), None)


def skill_folder(project: Project, skill: Skill) -> Path:
    """Where the skill's files are on the server: the project's repository (the base
    checkout), or the user folder."""
    if skill.scope == SkillScope.USER:
        return Path(skill.folder)
    return Path(project.repo_path) / skill.folder


def _tree(project: Project, skill: Skill) -> Path | None:
    """The tree no read of the skill may leave by a link (``read_in_tree``)."""
    return None if skill.scope == SkillScope.USER else Path(project.repo_path)


def skill_text(project: Project, skill: Skill) -> tuple[str, str]:
    """The SKILL.md body, or why it cannot be read now: (body, problem)."""
    try:
        path = skill_folder(project, skill) / "SKILL.md"
        return skill_body(path, read_in_tree(_tree(project, skill), path, MAX_SKILL_BYTES + 1)), ""
    except (OSError, SkillInvalid) as exc:
        return "", str(exc)


def skill_file_text(project: Project, skill: Skill, file: str) -> str | None:
    """One supporting file as text; None unless it is one the sync listed (never a path
    a request makes up)."""
    if file not in {path for path, _ in skill.files}:
        return None
    path = skill_folder(project, skill) / file
    try:
        raw = read_in_tree(_tree(project, skill), path, MAX_FILE_BYTES + 1)
    except OSError as exc:
        return f"(cannot be read: {exc})"
    text = raw[:MAX_FILE_BYTES].decode("utf-8", errors="replace")
    return text + ("\n… (cut)" if len(raw) > MAX_FILE_BYTES else "")


def skill_uses(skill: Skill) -> list[SkillUse]:
    rows = SkillUse.objects.filter(skill=skill).select_related("user", "unit__task", "session")
    return list(rows[:RECENT_USES])


def skill_runs(skill: Skill) -> list[SkillEvalRun]:
    rows = SkillEvalRun.objects.filter(case__skill=skill).select_related("case")
    return list(rows[:RECENT_RUNS])


def project_proposals(project: Project) -> list[SkillProposal]:
    return list(SkillProposal.objects.filter(project=project).select_related("reviewer"))
