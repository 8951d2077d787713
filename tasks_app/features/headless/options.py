"""What a headless run was asked to do, checked before anything is written."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from django.contrib.auth.models import User

from agents_app.axes import ModelMode
from agents_app.models import AgentSession
from agents_app.runtime.llm import model_for
from agents_app.runtime.replay import Replay, replay_load
from tasks_app.features.headless.answers import Answers
from tasks_app.models import PlanSource
from tasks_app.schemas import PlanSpec


@dataclass(frozen=True)
class HeadlessOptions:
    mode: Literal["autonomous", "next"] = "autonomous"
    project: Path | None = None
    session_id: int | None = None
    intent: str = ""
    plan: PlanSpec | None = None
    plan_source: str = PlanSource.FILE
    autonomous: bool = False
    permission_profile: str | None = None
    model_mode: str | None = None
    model: str | None = None
    timeout: float | None = None
    max_autonomous_continues: int | None = None
    replay_path: Path | None = None
    replay: Replay | None = None
    answers: Answers | None = None
    via_workers: bool = False
    user: User | None = None  # the acting person (--as / SF_USER); None: SF itself

    @property
    def step(self) -> bool:
        """``next``: exactly one unit, whatever the session's run control."""
        return self.mode == "next"


def model_check(options: HeadlessOptions) -> None:
    """A live run needs its models configured: fail before anything is written.

    Stopping at plan acceptance with a plan file needs none; neither does a replay,
    nor a resumed session that answers from its trace."""
    if options.replay is not None:
        return
    if options.session_id is not None and (
        AgentSession.objects.filter(pk=options.session_id).exclude(replay_trace="").exists()
    ):
        return
    if options.intent:
        model_for(ModelMode.DEEP, options.model)
    if options.autonomous or options.session_id is not None or options.step:
        model_for(options.model_mode or ModelMode.SMART, options.model)


def replay_check(path: Path) -> Replay:
    return replay_load(path)
