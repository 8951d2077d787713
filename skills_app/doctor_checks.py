"""The doctor's check of skills: folders that fail validation (as last synced).

A skill is validated when its folder is synced (``skills_app.sync``, before every unit
and by Sync now); an invalid one is never offered to an agent, so the doctor names
each with the validation's own message. Repairing a skill means editing its folder:
no deterministic fix."""

from __future__ import annotations

from sf_core.doctor import Check, Finding, Severity, register
from skills_app.models import Skill


def skills_check() -> list[Finding]:
    invalid = (
        Skill.objects.filter(valid=False, removed_at__isnull=True)
        .select_related("project")
        .order_by("pk")
    )
    return [
        Finding(
            severity=Severity.WARNING,
            message=f"skill {skill.name} ({_where(skill)}) fails validation: {skill.problem}",
            evidence=[skill.source_path],
            project_id=skill.project_id,
        )
        for skill in invalid
    ]


def _where(skill: Skill) -> str:
    return f"project {skill.project.name}" if skill.project is not None else "user scope"


def register_checks() -> None:
    register(Check(id="skills.invalid", title="Skills that fail validation", run=skills_check))
