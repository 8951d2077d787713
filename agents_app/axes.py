"""The five orthogonal axes of an agent session (DESIGN §2) and their values.

Each axis answers one question and never implies another: a permission profile
does not choose a run control, and a run control does not choose a profile.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from django.db import models


class WorkMode(models.TextChoices):
    """What kind of work?"""

    CHAT = "chat"
    PLAN = "plan"
    BUILD = "build"
    REVIEW = "review"
    REPAIR = "repair"
    RESEARCH = "research"


class RunControl(models.TextChoices):
    """Who advances the loop?"""

    MANUAL = "manual"
    ASSISTED = "assisted"
    AUTONOMOUS = "autonomous"


class PermissionProfile(models.TextChoices):
    """What may proceed without approval? Ordered from least to most trust."""

    RESTRICTED = "restricted"
    NORMAL = "normal"
    TRUSTED = "trusted"
    UNRESTRICTED = "unrestricted"


class ModelMode(models.TextChoices):
    """Speed, cost and reasoning posture."""

    FAST = "fast"
    SMART = "smart"
    DEEP = "deep"


class Surface(models.TextChoices):
    """How is the user connected?"""

    TUI = "tui"
    WEB = "web"
    HEADLESS = "headless"
    RPC = "rpc"


PROFILE_ORDER: tuple[str, ...] = tuple(PermissionProfile.values)


def profile_rank(profile: str) -> int:
    """0 for restricted … 3 for unrestricted."""
    return PROFILE_ORDER.index(profile)


AXIS_NAMES = ("work_mode", "run_control", "permission_profile", "model_mode", "surface")
AXIS_CHOICES: dict[str, type[models.TextChoices]] = {
    "work_mode": WorkMode,
    "run_control": RunControl,
    "permission_profile": PermissionProfile,
    "model_mode": ModelMode,
    "surface": Surface,
}


@dataclass(frozen=True)
class Axes:
    """A value of all five axes together (what a transition moves between)."""

    work_mode: str
    run_control: str
    permission_profile: str
    model_mode: str
    surface: str

    def as_dict(self) -> dict[str, str]:
        return asdict(self)

    def replace(self, **changes: str) -> Axes:
        return Axes(**{**self.as_dict(), **changes})


# Every new session starts here, whoever creates it (the web form, ``sf session create``,
# the intent box, headless, a replay): plans are made in plan mode with the deep model,
# under manual control and the normal profile (DESIGN §3). The surface is the creator's
# own (web, headless, ...), so it is not part of the default.
NEW_SESSION_AXES: dict[str, str] = {
    "work_mode": WorkMode.PLAN.value,
    "run_control": RunControl.MANUAL.value,
    "permission_profile": PermissionProfile.NORMAL.value,
    "model_mode": ModelMode.DEEP.value,
}
