"""Sync skill folders into ``Skill`` rows: on project registration, before each unit and
on demand (``sf skills sync``).

A folder whose content hash is unchanged is not read again, so a sync of an unchanged
tree costs one directory walk and one query. An invalid skill is stored with its
problem and skipped by everything that offers skills; nothing here raises for a bad
skill. A folder that went away keeps its row (its uses and eval history) with
``removed_at`` set.
"""

from __future__ import annotations

import logging
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from django.db import connection, transaction
from django.utils import timezone

from agents_app.mirrors import project_tree
from agents_app.models import Project
from sf_core.git import GitError
from skills_app.models import Skill, SkillEvalCase, SkillScope
from skills_app.parsing import (
    PROJECT_SKILLS,
    SKILL_FILE,
    SkillFiles,
    folder_digest,
    skill_folders,
    skill_parse,
)

logger = logging.getLogger("sf.skills")
USER_LOCK = zlib.crc32(b"sf.skills.user")  # one advisory lock for the user folder
PROJECT_LOCK = zlib.crc32(b"sf.skills.project") - 2**31  # and one per project (an int4 key)


@dataclass
class SyncReport:
    root: str
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    unchanged: int = 0
    removed: list[str] = field(default_factory=list)
    invalid: dict[str, str] = field(default_factory=dict)  # name → problem

    @property
    def summary(self) -> str:
        return (
            f"{self.root}: {len(self.added)} added, {len(self.changed)} changed, "
            f"{self.unchanged} unchanged, {len(self.removed)} removed"
        )

    def as_dict(self) -> dict[str, object]:
        return {
            "root": self.root,
            "added": self.added,
            "changed": self.changed,
            "unchanged": self.unchanged,
            "removed": self.removed,
            "invalid": self.invalid,
        }


def user_skill_dir() -> Path:
    return Path(os.environ.get("SF_USER_SKILLS") or Path.home() / ".sf" / "skills")


def project_skills_sync(project: Project, *, root: Path | None = None) -> SyncReport:
    """Sync ``project``'s ``.agents/skills`` (from the tree this host reads of it,
    ``agents_app.mirrors.project_tree``, unless ``root`` names another checkout of it):
    in record mode the record's base branch, not a registered checkout this host may
    not have or may have stale."""
    folder = Path(root or project_tree(project, part=str(PROJECT_SKILLS))) / PROJECT_SKILLS
    with transaction.atomic():
        # One sync of a project at a time, by an advisory lock like the user folder's: not
        # the project's row, which units lock for other work (a proposal's cooldown) while
        # holding key-share locks on it; two units deadlocked on it in CI.
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [PROJECT_LOCK, project.pk])
        return _sync(SkillScope.PROJECT, project, folder)


def user_skills_sync(*, root: Path | None = None) -> SyncReport:
    """Sync the user-level skill folder (``SF_USER_SKILLS``, default ``~/.sf/skills``)."""
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [USER_LOCK])
        return _sync(SkillScope.USER, None, root or user_skill_dir())


def skills_sync(
    project: Project, *, root: Path | None = None
) -> tuple[list[SyncReport], list[str]]:
    """Sync ``project``'s folder (at ``root`` if given) and the user folder, as every
    unit does first. A folder that cannot be read (or a repository of record that
    cannot be fetched) is named in the errors; the rows synced last stay."""
    reports: list[SyncReport] = []
    errors: list[str] = []
    for sync in (lambda: project_skills_sync(project, root=root), user_skills_sync):
        try:
            reports.append(sync())
        except (OSError, GitError) as exc:
            logger.warning("skills of %s not synced: %s", project.name, exc)
            errors.append(f"not synced: {exc}")
    return reports, errors


def _sync(scope: str, project: Project | None, root: Path) -> SyncReport:
    report = SyncReport(root=str(root))
    existing = {row.name: row for row in Skill.objects.filter(scope=scope, project=project)}
    now = timezone.now()
    for folder in skill_folders(root):
        digest, raw = folder_digest(folder)
        row = existing.pop(folder.name, None)
        if row is not None and row.content_hash == digest and row.removed_at is None:
            report.unchanged += 1
            if not row.valid:
                report.invalid[row.name] = row.problem
            continue
        parsed = skill_parse(folder, digest=digest, raw=raw)
        (report.added if row is None else report.changed).append(parsed.name)
        _store(row, parsed, scope=scope, project=project, source=_source(scope, folder), now=now)
        if parsed.problem:
            report.invalid[parsed.name] = parsed.problem
    gone = [row for row in existing.values() if row.removed_at is None]
    for row in gone:
        report.removed.append(row.name)
    Skill.objects.filter(pk__in=[row.pk for row in gone]).update(removed_at=now)
    return report


def _source(scope: str, folder: Path) -> str:
    """Where the SKILL.md is: relative to the repository for a project skill (a unit
    reads it from its own worktree), absolute for a user skill."""
    if scope == SkillScope.PROJECT:
        return (PROJECT_SKILLS / folder.name / SKILL_FILE).as_posix()
    return str(folder.resolve() / SKILL_FILE)


def _store(
    row: Skill | None,
    parsed: SkillFiles,
    *,
    scope: str,
    project: Project | None,
    source: str,
    now: object,
) -> Skill:
    meta = parsed.meta
    values: dict[str, object] = {
        "source_path": source,
        "content_hash": parsed.digest,
        "valid": meta is not None,
        "problem": parsed.problem,
        "files": [list(item) for item in parsed.files],
        "synced_at": now,
        "removed_at": None,
    }
    if meta is not None:
        values |= {
            "description": meta.description,
            "user_invocable": meta.user_invocable,
            "model_invocable": meta.model_invocable,
            "side_effects": meta.side_effects,
            "permission_profile": meta.permission_profile,
        }
    if row is None:
        row = Skill.objects.create(scope=scope, project=project, name=parsed.name, **values)
    else:
        for key, value in values.items():
            setattr(row, key, value)
        row.save()
    _store_cases(row, parsed)
    return row


def _store_cases(skill: Skill, parsed: SkillFiles) -> None:
    """The skill's eval cases as found; a case folder that went away goes with its runs."""
    names = []
    for case in parsed.cases:
        names.append(case.name)
        SkillEvalCase.objects.update_or_create(
            skill=skill,
            name=case.name,
            defaults={
                "path": f"evals/{case.name}",
                "task_prompt": case.prompt,
                "has_work": case.has_work,
                "has_hidden": case.has_hidden,
                "has_trace": case.has_trace,
                "valid": not case.problem,
                "problem": case.problem,
            },
        )
    SkillEvalCase.objects.filter(skill=skill).exclude(name__in=names).delete()
