"""The offline demo, from the dashboard's **Replay the demo** button.

Each press makes a fresh copy of ``examples/sample-repo`` under ``SF_DATA_DIR/demo/``,
registers it as a project and states the demo's intent in a new web session that
answers from ``examples/demo-trace.jsonl``: the plan appears on the session page as
any plan does, and the person runs it (Review plan → Run autonomously) and watches the
worker build it — the tool calls, verification, review and merge are real; only the
model's answers come from the trace, paced by ``SF_REPLAY_PACE``.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from django.conf import settings

from agents_app.models import Project
from agents_app.runtime.replay import replay_load
from agents_app.services import project_create
from sf_core.actors import Actor
from tasks_app.engine.replaying import DEMO_TRACE, demo_repo_create
from tasks_app.intake import project_intent_start
from tasks_app.models import PlanRequest

DEMO_NAME = "demo greeter"


def demo_intent(trace: Path = DEMO_TRACE) -> str:
    """What the demo asks for: the intent of the plan its trace was made for."""
    plan = yaml.safe_load(str(replay_load(trace).header.get("plan_yaml") or "")) or {}
    intent, summary = plan.get("intent"), plan.get("summary")
    return " ".join(str(part) for part in (summary, intent) if part) or "the demo's change"


def demo_start(*, actor: Actor) -> PlanRequest:
    """A fresh demo repository and project, and its intent being planned from the trace."""
    number = Project.objects.filter(name__startswith=DEMO_NAME).count() + 1
    while Project.objects.filter(name=f"{DEMO_NAME} {number}").exists():
        number += 1
    folder = Path(settings.SF_DATA_DIR) / "demo" / f"greeter-{number}"
    repo = demo_repo_create(folder)
    # The person who asked for the demo becomes the admin of its project, and of
    # nothing else: a demo's role counts nowhere outside it (access.role_of).
    project = project_create(
        name=f"{DEMO_NAME} {number}",
        repo_path=str(repo),
        created_by=actor.user,
        path_chosen_by_sf=True,
        demo=True,
    )
    return project_intent_start(
        project=project, intent=demo_intent(), actor=actor, trace=str(DEMO_TRACE)
    )
