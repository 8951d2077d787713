"""Loading skills from ``.agents/skills/<name>/SKILL.md`` (project) and a user directory.

Only names and descriptions enter the model's context; a body is read when the
model loads the skill. Skills with ``side-effects: production-mutation`` are never
model-invoked, and a skill's ``permission-profile`` is a minimum.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import ValidationError

from agents_app.axes import profile_rank
from sf_core.errors import SfError
from skills_app.schemas import SkillFrontmatter

PROJECT_SKILLS = Path(".agents") / "skills"


class SkillInvalid(SfError):
    """A SKILL.md whose frontmatter does not match the schema."""


class SkillUnavailable(SfError):
    """A skill that does not exist or may not be used here."""


@dataclass(frozen=True)
class Skill:
    meta: SkillFrontmatter
    path: Path  # the SKILL.md file

    @property
    def name(self) -> str:
        return self.meta.name

    def body(self) -> str:
        return _split(self.path.read_text(encoding="utf-8"), self.path)[1]

    def model_may_invoke(self, profile: str) -> bool:
        meta = self.meta
        return (
            meta.model_invocable
            and meta.side_effects != "production-mutation"
            and profile_rank(profile) >= profile_rank(meta.permission_profile)
        )


def user_skill_dir() -> Path:
    return Path(os.environ.get("SF_USER_SKILLS", Path.home() / ".sf" / "skills"))


def skills_discover(repo: Path, *, user_dir: Path | None = None) -> list[Skill]:
    """Project skills first; a user skill of the same name is shadowed by the project's."""
    found: dict[str, Skill] = {}
    for root in (repo / PROJECT_SKILLS, user_dir or user_skill_dir()):
        if not root.is_dir():
            continue
        for skill_file in sorted(root.glob("*/SKILL.md")):
            skill = skill_read(skill_file)
            found.setdefault(skill.name, skill)
    return sorted(found.values(), key=lambda skill: skill.name)


def skill_read(path: Path) -> Skill:
    frontmatter, _ = _split(path.read_text(encoding="utf-8"), path)
    try:
        meta = SkillFrontmatter.model_validate(frontmatter)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise SkillInvalid(f"{path}: {problems}") from None
    if meta.name != path.parent.name:
        raise SkillInvalid(f"{path}: name {meta.name!r} must match its folder {path.parent.name!r}")
    return Skill(meta=meta, path=path)


def skill_body_for_model(skills: list[Skill], name: str, profile: str) -> str:
    """The body the model asked for, if it may load it under ``profile``."""
    skill = next((s for s in skills if s.name == name), None)
    if skill is None:
        known = ", ".join(s.name for s in skills) or "none"
        raise SkillUnavailable(f"no skill named {name!r}; available: {known}")
    if not skill.model_may_invoke(profile):
        raise SkillUnavailable(
            f"skill {name!r} cannot be loaded by the model here "
            f"(needs {skill.meta.permission_profile}, side effects {skill.meta.side_effects})"
        )
    return skill.body()


def _split(text: str, path: Path) -> tuple[dict[str, object], str]:
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise SkillInvalid(f"{path}: SKILL.md starts with a --- frontmatter block")
    try:
        end = next(i for i, line in enumerate(lines[1:], 1) if line.strip() == "---")
    except StopIteration:
        raise SkillInvalid(f"{path}: the frontmatter block is not closed with ---") from None
    try:
        data = yaml.safe_load("\n".join(lines[1:end])) or {}
    except yaml.YAMLError as exc:
        raise SkillInvalid(f"{path}: invalid YAML frontmatter: {exc}") from None
    if not isinstance(data, dict):
        raise SkillInvalid(f"{path}: the frontmatter must be a mapping")
    return data, "\n".join(lines[end + 1 :]).strip()
