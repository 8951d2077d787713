"""The skills a unit is offered: loaded from its worktree (or the tree this host reads
of the project) and listed in its first prompt within a share of the model's window."""

from __future__ import annotations

import logging

from agents_app.mirrors import project_tree
from agents_app.models import AgentSession
from agents_app.runtime.context import context_window
from agents_app.runtime.llm import ModelRouter
from sf_core.git import GitError
from skills_app.loader import SkillLoader, invocations_claim, skills_listing, unit_skills
from skills_app.parsing import PROJECT_SKILLS
from tasks_app.models import Task, Unit
from tasks_app.workspaces import Workspace

logger = logging.getLogger("sf.engine")


def skill_loader(session: AgentSession, ws: Workspace, unit: Unit) -> SkillLoader:
    """The skills on offer to the unit, loaded from its worktree as it reads them (or,
    one added to the base since the worktree was made, from the tree this host reads
    of the project: in record mode the record's base, not a registered checkout)."""
    try:
        tree = project_tree(session.project, part=str(PROJECT_SKILLS))
    except GitError as exc:  # the record out of reach: the skills synced last stay
        logger.warning("skills of %s read from the worktree only: %s", session.project, exc)
        tree = ws.path
    return SkillLoader(
        skills=unit_skills(session.project, root=tree),
        worktree=ws.path,
        repo=tree,
        session_id=session.pk,
        unit_id=unit.pk,
    )


def skills_section(skills: SkillLoader, task: Task, router: ModelRouter) -> str:
    """The skills list (a share of the model's window, as the router knows it), then
    what people invoked."""
    task_text = f"{task.title}\n{task.description}\n{' '.join(t for _, t in task.criteria)}"
    window = context_window(router.model, router.context_window)
    listing = skills_listing(skills.skills, task_text, window)
    return "\n\n".join(part for part in (listing, invocations_claim(skills)) if part)
