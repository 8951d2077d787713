"""/skills and /skill NAME [args]: the answers to the one command grammar's skill
commands (``agents_app.commands.SkillCommand``), on every surface.

/skills syncs the project's folders first, so what it lists is what a unit would see.
/skill queues the skill for the session's next unit (its body and the arguments go into
that unit's brief), honouring ``user-invocable``; a skill above the session's
permission profile is refused with the command that would raise it.
"""

from __future__ import annotations

from typing import Any

from django.dispatch import receiver

from agents_app.axes import profile_rank
from agents_app.models import AgentSession
from sf_core.actors import Actor
from sf_core.errors import CommandRejected
from sf_core.signals import skill_command_requested
from skills_app.loader import model_may_see, skills_available, unit_skills
from skills_app.models import Skill, SkillUse, SkillUseKind


@receiver(skill_command_requested, dispatch_uid="skills_app.skill_command")
def skill_command(
    sender: Any, session: AgentSession, name: str, args: str, actor: Actor, **kwargs: Any
) -> dict[str, Any]:
    if not name:
        return skills_list(session)
    return skill_invoke(session, name, args, actor)


def skills_list(session: AgentSession) -> dict[str, Any]:
    skills = unit_skills(session.project)
    if not skills:
        return {
            "message": f"no skills in {session.project.name} (add .agents/skills/NAME/SKILL.md)",
            "data": {"skills": []},
        }
    rows = [_row(skill) for skill in skills]
    lines = [f"{len(rows)} skills in {session.project.name}:"]
    lines += [f"- {r['name']} [{r['status']}] {r['who']}; {r['detail']}" for r in rows]
    return {"message": "\n".join(lines), "data": {"skills": rows}}


def skill_invoke(session: AgentSession, name: str, args: str, actor: Actor) -> dict[str, Any]:
    skills = {skill.name: skill for skill in skills_available(session.project)}
    skill = skills.get(name)
    if skill is None:
        known = ", ".join(n for n, s in skills.items() if s.valid and s.user_invocable) or "none"
        raise CommandRejected(f"no skill named {name!r}; you can invoke: {known}")
    if not skill.valid:
        raise CommandRejected(f"skill {name!r} is invalid: {skill.problem}")
    if not skill.user_invocable:
        raise CommandRejected(
            f"skill {name!r} is not user-invocable (its SKILL.md says user-invocable: false)"
        )
    needed = skill.permission_profile
    if profile_rank(needed) > profile_rank(session.permission_profile):
        raise CommandRejected(
            f"skill {name!r} needs the {needed} profile; this session is "
            f"{session.permission_profile}: raise it first (/permission-profile {needed})"
        )
    SkillUse.objects.create(
        skill=skill,
        session=session,
        kind=SkillUseKind.INVOKE,
        by_model=False,
        user=actor.user,
        detail=args[:500],
    )
    shown = f" with {args}" if args else ""
    return {
        "message": f"skill {name}{shown} will be used by the next unit of this session",
        "data": {"skill": name, "args": args},
    }


def _row(skill: Skill) -> dict[str, Any]:
    who = [w for w, ok in (("person", skill.user_invocable), ("model", model_may_see(skill))) if ok]
    status = "valid" if skill.valid else "invalid"
    detail = skill.problem if not skill.valid else skill.description
    return {
        "name": skill.name,
        "scope": skill.scope,
        "status": status,
        "who": "invocable by " + (" and ".join(who) if who else "no one"),
        "permission_profile": skill.permission_profile,
        "side_effects": skill.side_effects,
        "uses": skill.uses.count(),
        "detail": " ".join(detail.split())[:200],
    }
