"""Re-running a recorded unit: ``manage.py sf replay TRACE --project PATH``.

The trace's header carries the plan it was recorded for. The project at PATH (a
git repository; registered on first use) gets a headless session in
``build | autonomous | <profile> | smart``; the plan is accepted and its units run
inline, answering from the trace — never a live model.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import yaml
from django.conf import settings
from django.contrib.auth.models import User

from agents_app.axes import NEW_SESSION_AXES, PermissionProfile, Surface
from agents_app.models import AgentSession, Project, SessionDriver
from agents_app.runtime.replay import Replay, replay_load
from agents_app.services import project_create, session_create
from sf_core.actors import Actor
from sf_core.errors import SfError
from sf_core.git import git, new_repository
from tasks_app.engine.drain import drain
from tasks_app.engine.values import UnitOptions
from tasks_app.models import Plan, PlanSource, Task
from tasks_app.schemas import plan_spec_parse
from tasks_app.services import plan_accept, plan_create

SAMPLE_REPO = Path(settings.BASE_DIR) / "examples" / "sample-repo"
DEMO_TRACE = Path(settings.BASE_DIR) / "examples" / "demo-trace.jsonl"


@dataclass
class ReplayRun:
    session: AgentSession
    plan: Plan
    units: int

    def tasks(self) -> list[Task]:
        return list(self.plan.tasks.order_by("position"))


def project_for_path(path: Path, created_by: User | None = None) -> Project:
    """The project registered at ``path``, or a new one on its current branch (whose
    admin ``created_by`` becomes)."""
    repo = str(path.resolve())
    existing = Project.objects.filter(repo_path=repo).first()
    if existing is not None:
        return existing
    branch = git("symbolic-ref", "--short", "HEAD", cwd=repo, check=False) or "main"
    name = f"{path.name}-{Project.objects.filter(name__startswith=path.name).count() + 1}"
    return project_create(name=name, repo_path=repo, base_branch=branch, created_by=created_by)


def replay_start(replay: Replay, *, project: Project, title: str = "") -> tuple[AgentSession, Plan]:
    """A headless session with the trace's plan accepted and ready to run inline."""
    plan_yaml = replay.header.get("plan_yaml")
    if not isinstance(plan_yaml, str):
        raise SfError("the trace header has no plan_yaml to replay")
    spec = plan_spec_parse(yaml.safe_load(plan_yaml))
    session = session_create(
        project=project,
        title=title or f"replay: {spec.summary}",
        axes={**NEW_SESSION_AXES, "surface": Surface.HEADLESS},
    )
    AgentSession.objects.filter(pk=session.pk).update(driver=SessionDriver.INLINE)
    plan = plan_create(session=session, spec=spec, source=PlanSource.FILE)
    profile = str(replay.header.get("permission_profile") or PermissionProfile.NORMAL)
    plan_accept(
        plan=plan,
        actor=Actor.system("replay"),
        autonomous=True,
        permission_profile=profile,
        start=False,
    )
    return session, plan


def replay_run(trace: Path, *, project_path: Path) -> ReplayRun:
    replay = replay_load(trace)
    project = project_for_path(project_path)
    session, plan = replay_start(replay, project=project)
    units = drain(session_id=session.pk, worker="replay", options=UnitOptions(replay=replay))
    plan.refresh_from_db()
    return ReplayRun(session=session, plan=plan, units=units)


def demo_repo_create(path: Path) -> Path:
    """A fresh git repository with the sample project, for the offline demo."""
    if path.exists():
        shutil.rmtree(path)
    shutil.copytree(SAMPLE_REPO, path)
    for args in (
        ["init", "-q", "-b", "main"],
        ["add", "--all"],
        [
            "-c",
            "user.name=SF demo",
            "-c",
            "user.email=demo@localhost",
            "commit",
            "-q",
            "-m",
            "The greeter",
        ],
    ):
        git(*args, cwd=new_repository(path))
    return path
