"""What a unit sees of skills: the list in its prompt and the ``load_skill`` tool.

Only names and descriptions enter the prompt, and only of skills the model may invoke
(valid, ``model-invocable``, not ``production-mutation``): at most ``LIST_SHARE`` of the
model's context window, the ones closest to the task first; the rest are found by
words (``load_skill`` with ``search``). A body, or one named supporting file, is read
from the unit's worktree when the model loads it, and every load is a ``SkillUse``.
Whether a skill above the session's permission profile may load is the gate's
decision (it asks), made before the tool runs.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from django.db.models import Q

from agents_app.models import Project
from sf_core.errors import SfError
from skills_app.models import SideEffects, Skill, SkillScope, SkillUse, SkillUseKind
from skills_app.parsing import (
    MAX_FILE_BYTES,
    MAX_SKILL_BYTES,
    MCP_FILE,
    SkillInvalid,
    read_in_tree,
    skill_body,
)
from skills_app.sync import skills_sync

LIST_SHARE = 0.02  # of the context window, for the skills list
CHARS_PER_TOKEN = 4  # what the list budget assumes; the benchmark counts real tokens
LIST_ALL = 8  # this many skills on offer or fewer: all listed, whatever the task
LIST_MAX = 8  # more on offer: at most this many, the ones the task's words point at
DESCRIPTION_SHOWN = 160  # characters of a description in the list
SEARCH_SHOWN = 10
MCP_NOT_RUNNING = (
    "This skill declares MCP servers (mcp.json); they are not running in this unit, so "
    "their tools are not available."
)


class SkillUnavailable(SfError):
    """A skill that does not exist, is invalid, or may not be used here."""


def skills_available(project: Project) -> list[Skill]:
    """The project's present skills and the user skills it does not shadow, valid or not."""
    rows = Skill.objects.filter(removed_at__isnull=True).filter(
        Q(scope=SkillScope.PROJECT, project=project) | Q(scope=SkillScope.USER)
    )
    found: dict[str, Skill] = {}
    for row in sorted(rows, key=lambda s: (s.scope != SkillScope.PROJECT, s.name)):
        found.setdefault(row.name, row)
    return sorted(found.values(), key=lambda s: s.name)


def model_may_see(skill: Skill) -> bool:
    """Offered to the model at all: never an invalid, a not model-invocable or a
    production-mutation skill."""
    return (
        skill.valid
        and skill.model_invocable
        and skill.side_effects != SideEffects.PRODUCTION_MUTATION
    )


def skills_listing(skills: list[Skill], task_text: str, window_tokens: int) -> str:
    """The prompt's skills section. Up to ``LIST_ALL`` skills on offer are all listed;
    beyond that only those that share a telling word with the task (weighted by how
    rare the word is among the skills), at most ``LIST_MAX``, best first. Either way
    within ``LIST_SHARE`` of the window; the rest are found with ``search``."""
    offered = [skill for skill in skills if model_may_see(skill)]
    if not offered:
        return ""
    heading = "## Skills (load one with load_skill when it is relevant)"
    more = f'({len(offered)} more skills: load_skill search="words" finds them)'
    # The heading and the "more" line count too (the benchmark found the list 2.04 %
    # of an 8k window without them).
    budget = int(window_tokens * LIST_SHARE * CHARS_PER_TOKEN) - len(heading) - len(more) - 2
    chosen = (
        offered
        if len(offered) <= LIST_ALL
        else _relevant(offered, task_text, telling=True)[:LIST_MAX]
    )
    lines: list[str] = []
    used = 0
    for skill in chosen:
        line = f"- {skill.name}: {_short(skill.description)}"
        if used + len(line) > budget and lines:
            break
        lines.append(line)
        used += len(line) + 1
    rest = len(offered) - len(lines)
    if rest:
        lines.append(more.replace(str(len(offered)), str(rest), 1))
    return heading + "\n" + "\n".join(lines)


def _relevant(skills: list[Skill], text: str, *, telling: bool = False) -> list[Skill]:
    """The skills sharing a word with ``text``, by the summed rarity (log (N+1)/df) of
    the shared words. ``telling``: only skills sharing a word at most half the skills
    use (a word every skill uses says nothing about which one the task needs)."""
    words = _words(text)
    about = {skill.pk: _words(_about(skill)) & words for skill in skills}
    frequency: dict[str, int] = {}
    for shared in about.values():
        for word in shared:
            frequency[word] = frequency.get(word, 0) + 1
    total = len(skills)
    scored = [
        (sum(math.log((total + 1) / frequency[w]) for w in about[s.pk]), s)
        for s in skills
        if about[s.pk] and (not telling or any(frequency[w] * 2 <= total for w in about[s.pk]))
    ]
    return [s for _, s in sorted(scored, key=lambda pair: (-pair[0], pair[1].name))]


@dataclass
class SkillLoader:
    """``load_skill`` for one unit: reads from its worktree, records every use."""

    skills: list[Skill]
    worktree: Path
    repo: Path  # the project's repository: a skill not yet in the worktree is read there
    session_id: int
    unit_id: int | None
    # What load_skill says of a skill's MCP servers (skill → note): the engine sets it
    # once they are started (``skills_app.mcp``, ``agents_app.runtime.mcp_unit``).
    mcp_notes: dict[str, str] = field(default_factory=dict)

    def offered(self) -> list[Skill]:
        return [skill for skill in self.skills if model_may_see(skill)]

    def profiles(self) -> dict[str, str]:
        """Each offered skill's minimum profile, for the gate."""
        return {skill.name: skill.permission_profile for skill in self.offered()}

    def search(self, text: str) -> str:
        hits = _relevant(self.offered(), text)
        if not hits:
            return f"no skill matches {text!r}; {len(self.offered())} skills are offered"
        return "\n".join(f"- {s.name}: {_short(s.description)}" for s in hits[:SEARCH_SHOWN])

    def command_ran(self, command: str, exit_code: int | None) -> None:
        """A command that ran one of a skill's ``scripts/`` is a use of that skill."""
        for skill in self.skills:
            if skill.valid and f"{skill.folder}/scripts/" in command:
                SkillUse.objects.create(
                    skill=skill,
                    session_id=self.session_id,
                    unit_id=self.unit_id,
                    kind=SkillUseKind.SCRIPT,
                    detail=command[:500],
                    outcome="timed out" if exit_code is None else f"exit code {exit_code}",
                )

    def load(self, name: str, file: str = "") -> str:
        skill = next((s for s in self.skills if s.name == name), None)
        if skill is not None and names_the_body(skill, file):
            file = ""  # a small model fills in every parameter: the body it asked for
        try:
            text = self.read(skill, name, file)
        except SfError as exc:
            if skill is not None:
                self._use(skill, file, allowed=False, outcome=str(exc))
            raise
        assert skill is not None
        self._use(skill, file, allowed=True, outcome="")
        return text

    def read(self, skill: Skill | None, name: str, file: str) -> str:
        if skill is None or not model_may_see(skill):
            if skill is not None and not skill.valid:
                raise SkillUnavailable(f"skill {name!r} is invalid: {skill.problem}")
            if skill is not None:
                raise SkillUnavailable(
                    f"skill {name!r} cannot be loaded by the model "
                    f"(model-invocable: {str(skill.model_invocable).lower()}, "
                    f"side-effects: {skill.side_effects})"
                )
            known = ", ".join(s.name for s in self.offered()) or "none"
            raise SkillUnavailable(f"no skill named {name!r}; available: {known}")
        return self.text(skill, file)

    def text(self, skill: Skill, file: str = "") -> str:
        """The body (with its supporting files named), or one supporting file."""
        name = skill.name
        root, folder = self._folder(skill)
        if file:
            return _supporting_file(skill, root, folder, file)
        try:
            raw = read_in_tree(root, folder / "SKILL.md", MAX_SKILL_BYTES + 1)
            body = skill_body(folder / "SKILL.md", raw)
        except (OSError, SkillInvalid) as exc:
            raise SkillUnavailable(f"skill {name!r} cannot be read: {exc}") from None
        listed = [path for path, _ in skill.files]
        if listed:
            body += "\n\nSupporting files (load_skill with file=…): " + ", ".join(listed)
        if any(path == MCP_FILE for path in listed):
            body += "\n\n" + self.mcp_notes.get(name, MCP_NOT_RUNNING)
        return body

    def _folder(self, skill: Skill) -> tuple[Path | None, Path]:
        """The tree the skill is read from (none: a user skill) and its folder there."""
        if skill.scope == SkillScope.USER:
            return None, Path(skill.folder)
        for root in (self.worktree, self.repo):
            if (root / skill.source_path).is_file():
                return root, (root / skill.source_path).parent
        raise SkillUnavailable(f"skill {skill.name!r}: {skill.source_path} is not in the worktree")

    def _use(self, skill: Skill, file: str, *, allowed: bool, outcome: str) -> None:
        SkillUse.objects.create(
            skill=skill,
            session_id=self.session_id,
            unit_id=self.unit_id,
            kind=SkillUseKind.FILE if file else SkillUseKind.LOAD,
            by_model=True,
            detail=file[:500],
            allowed=allowed,
            outcome=outcome[:500],
        )


def _supporting_file(skill: Skill, root: Path | None, folder: Path, file: str) -> str:
    listed = {path for path, _ in skill.files}
    if file not in listed:
        shown = ", ".join(sorted(listed)) or "none"
        raise SkillUnavailable(
            f"skill {skill.name!r} has no supporting file {file!r}; its files: {shown}"
        )
    try:
        raw = read_in_tree(root, folder / file, MAX_FILE_BYTES)
    except OSError as exc:
        raise SkillUnavailable(f"skill {skill.name!r}: cannot read {file}: {exc}") from None
    return raw.decode("utf-8", errors="replace")


def _about(skill: Skill) -> str:
    return f"{skill.name.replace('-', ' ')} {skill.description}"


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]{3,}", text.lower())}


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= DESCRIPTION_SHOWN else flat[: DESCRIPTION_SHOWN - 1] + "…"


def unit_skills(project: Project, *, root: Path | None = None) -> list[Skill]:
    """Sync the project's (at ``root``: the tree this host reads of it) and the user's
    skill folders, then what this unit may use. A folder that cannot be read leaves the
    last synced rows: never fatal to a unit."""
    skills_sync(project, root=root)
    return skills_available(project)


def invocations_claim(loader: SkillLoader) -> str:
    """The skills people invoked with /skill since the last unit, for this unit's brief
    (each use now names this unit)."""
    pending = list(
        SkillUse.objects.select_related("skill")
        .filter(
            session_id=loader.session_id,
            kind=SkillUseKind.INVOKE,
            unit_id__isnull=True,
            allowed=True,
        )
        .order_by("created_at", "pk")
    )
    if not pending:
        return ""
    SkillUse.objects.filter(pk__in=[use.pk for use in pending]).update(unit_id=loader.unit_id)
    parts = ["## Skills a person asked you to use"]
    for use in pending:
        try:
            body = loader.text(use.skill)
        except SfError as exc:
            body = f"(cannot be read now: {exc})"
        args = f" with: {use.detail}" if use.detail else ""
        parts.append(f"### {use.skill.name}{args}\n{body}")
    return "\n\n".join(parts)


def names_the_body(skill: Skill, file: str) -> bool:
    """Whether ``file`` names the skill's own SKILL.md rather than a supporting file: its
    name, ``SKILL.md`` or the path to it (small models pass ``file=<the skill's name>``
    with the name; refusing that left them without the body they asked for)."""
    plain = file.strip().removeprefix("./")
    return plain in {
        "SKILL.md",
        skill.name,
        f"{skill.name}/SKILL.md",
        f".agents/skills/{skill.name}/SKILL.md",
    }
