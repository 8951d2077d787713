"""Projects, agent sessions with their five axes, and the mode transition log."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from agents_app.axes import Axes, ModelMode, PermissionProfile, RunControl, Surface, WorkMode
from agents_app.schemas import ProjectPolicy, policy_parse
from sf_core.actors import ActorKind
from sf_core.errors import SfError


def _in(field: str, choices: type[models.TextChoices]) -> Q:
    return Q(**{f"{field}__in": choices.values})


class RepositoryMoved(SfError):
    """A project's stored path no longer resolves to itself (a symlink was swapped in)."""


class Project(models.Model):
    """A git repository SF works on, as seen from the workers' filesystem.

    ``repo_path`` is stored resolved (symlinks followed, ``..`` and ``.`` gone) when the
    repository is registered, and is unique: one project per repository. Every use goes
    through ``repository()``, which resolves it again and refuses a path that moved."""

    name = models.CharField(max_length=200, unique=True)
    repo_path = models.CharField(max_length=1000)
    base_branch = models.CharField(max_length=200, default="main")
    policy = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    demo = models.BooleanField(
        default=False, help_text="made by Replay the demo: its roles count nowhere else"
    )

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["repo_path"], name="project_repo_path_unique"),
        ]
        permissions = [
            ("register_repository", "Can register a repository as a new project"),
        ]

    def __str__(self) -> str:
        return self.name

    def repository(self) -> Path:
        """The repository's path, resolved now; ``RepositoryMoved`` when it no longer
        resolves to the path registered (a component was replaced by a symlink, so SF
        would work on another directory than the one its registrant was allowed)."""
        stored = Path(self.repo_path)
        resolved = stored.resolve()
        if resolved != stored:
            raise RepositoryMoved(
                f"project {self.name!r}: its repository {stored} now resolves to {resolved} "
                "(a symlink was swapped in); SF refuses to work there until the "
                "directory is back where it was registered"
            )
        return stored

    @property
    def parsed_policy(self) -> ProjectPolicy:
        return policy_parse(self.policy)


class SessionStatus(models.TextChoices):
    ACTIVE = "active"
    STOPPED = "stopped"
    COMPLETED = "completed"
    FAILED = "failed"


class Activity(models.TextChoices):
    """What the engine is doing right now; decides when steering may apply."""

    IDLE = "idle"
    UNIT = "unit"  # a unit is running, between tool calls
    TOOL = "tool"  # a tool call is in flight


class SessionDriver(models.TextChoices):
    """Who runs the session's units."""

    WORKERS = "workers"  # Celery workers, dispatched by the engine and its sweeps
    INLINE = "inline"  # one process that owns the session (headless, replay)


class PauseCause(models.TextChoices):
    """Why a paused session is paused (``pause_reason`` says it for people)."""

    NONE = "", "not paused"
    PERSON = "person"  # /pause, or the session page
    ASSISTED = "assisted"  # assisted run control: one unit ran; /next runs another
    LIMIT = "limit"  # the continuation limit of an autonomous run
    BUDGET = "budget"  # the budget is spent
    PROVIDER = "provider"  # the model provider refused (credentials, billing, no model)
    HEADLESS = "headless"  # an interrupted or timed-out headless run; it lifts on resume


class AgentSession(models.Model):
    """One agent session on a project: five durable axes, budget and limits."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="sessions")
    title = models.CharField(max_length=300, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    work_mode = models.CharField(max_length=16, choices=WorkMode.choices, default=WorkMode.CHAT)
    run_control = models.CharField(
        max_length=16, choices=RunControl.choices, default=RunControl.MANUAL
    )
    permission_profile = models.CharField(
        max_length=16, choices=PermissionProfile.choices, default=PermissionProfile.NORMAL
    )
    model_mode = models.CharField(max_length=16, choices=ModelMode.choices, default=ModelMode.SMART)
    surface = models.CharField(max_length=16, choices=Surface.choices, default=Surface.WEB)
    paused = models.BooleanField(default=False)
    pause_reason = models.CharField(max_length=500, blank=True)
    pause_cause = models.CharField(
        max_length=8, choices=PauseCause.choices, default=PauseCause.NONE, blank=True
    )
    status = models.CharField(
        max_length=16, choices=SessionStatus.choices, default=SessionStatus.ACTIVE
    )
    activity = models.CharField(max_length=8, choices=Activity.choices, default=Activity.IDLE)
    interrupt_requested = models.BooleanField(default=False)  # /stop while a unit runs
    # /next: run exactly one unit, then pause, whatever the run control (which stays).
    step_requested = models.BooleanField(default=False)
    # Who runs the units: Celery workers, or one inline process (headless) that owns
    # the session; workers and their sweeps leave an inline session alone.
    driver = models.CharField(
        max_length=8, choices=SessionDriver.choices, default=SessionDriver.WORKERS
    )
    replay_trace = models.CharField(max_length=1000, blank=True)  # units answer from this trace
    mode_updated_at = models.DateTimeField(default=timezone.now)
    max_autonomous_continues = models.PositiveIntegerField(default=50)
    autonomous_continues = models.PositiveIntegerField(default=0)
    cost_budget = models.DecimalField(max_digits=12, decimal_places=4, null=True, blank=True)
    cost_spent = models.DecimalField(max_digits=12, decimal_places=4, default=Decimal("0"))
    # Held by running units until they settle (``agents_app.services.budget.session_reserve``).
    cost_reserved = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal("0"))
    budget_alerts = models.JSONField(default=list, blank=True)  # thresholds already fired
    created_at = models.DateTimeField(default=timezone.now)
    # When the session last became completed or failed (``session_finish``); None while
    # it is active, and again once a retry re-opens it.
    finished_at = models.DateTimeField(null=True, blank=True)
    # A provider outage paused the session (cause provider): the sweep resumes it at
    # this time (None: a pause a person must lift). ``provider_outages`` counts the
    # outages in a row, for the backoff (30 s, 60 s, … 10 min); a unit that reached
    # the model resets it.
    provider_retry_at = models.DateTimeField(null=True, blank=True)
    provider_outages = models.PositiveSmallIntegerField(default=0)
    # Raised by PostgreSQL triggers whenever anything a tool call's dispatch point and
    # gate decide on changes (migration 0016 says what): a running unit reuses one
    # reading of the session while this still holds the value it read.
    dispatch_version = models.PositiveBigIntegerField(default=0, editable=False)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=_in("work_mode", WorkMode), name="session_work_mode_valid"
            ),
            models.CheckConstraint(
                condition=_in("run_control", RunControl), name="session_run_control_valid"
            ),
            models.CheckConstraint(
                condition=_in("permission_profile", PermissionProfile),
                name="session_permission_profile_valid",
            ),
            models.CheckConstraint(
                condition=_in("model_mode", ModelMode), name="session_model_mode_valid"
            ),
            models.CheckConstraint(condition=_in("surface", Surface), name="session_surface_valid"),
            models.CheckConstraint(
                condition=_in("status", SessionStatus), name="session_status_valid"
            ),
            models.CheckConstraint(
                condition=_in("activity", Activity), name="session_activity_valid"
            ),
            models.CheckConstraint(
                condition=_in("driver", SessionDriver), name="session_driver_valid"
            ),
            models.CheckConstraint(
                condition=_in("pause_cause", PauseCause), name="session_pause_cause_valid"
            ),
            models.CheckConstraint(
                condition=Q(cost_spent__gte=0)
                & (Q(cost_budget__isnull=True) | Q(cost_budget__gte=0)),
                name="session_cost_non_negative",
            ),
        ]

    def __str__(self) -> str:
        return self.title or f"session {self.pk}"

    @property
    def axes(self) -> Axes:
        return Axes(
            work_mode=self.work_mode,
            run_control=self.run_control,
            permission_profile=self.permission_profile,
            model_mode=self.model_mode,
            surface=self.surface,
        )


class TransitionScope(models.TextChoices):
    NOW = "now"
    AFTER_CURRENT_TOOL = "after-current-tool"
    AFTER_CURRENT_UNIT = "after-current-unit"
    NEXT_MILESTONE = "next-milestone"


class TransitionStatus(models.TextChoices):
    PENDING = "pending"
    APPLIED = "applied"
    CANCELLED = "cancelled"
    SUPERSEDED = "superseded"  # a later direct command changed the same axes first


class ModeTransition(models.Model):
    """One change of a session's axes (or its paused flag), applied or pending.

    ``from_*`` and ``to_*`` hold all five axes. A pending transition records the axes
    at request time; when it is applied both sides are rewritten to the axes it
    really moved between.
    """

    session = models.ForeignKey(AgentSession, on_delete=models.CASCADE, related_name="transitions")
    from_work_mode = models.CharField(max_length=16, choices=WorkMode.choices)
    from_run_control = models.CharField(max_length=16, choices=RunControl.choices)
    from_permission_profile = models.CharField(max_length=16, choices=PermissionProfile.choices)
    from_model_mode = models.CharField(max_length=16, choices=ModelMode.choices)
    from_surface = models.CharField(max_length=16, choices=Surface.choices)
    to_work_mode = models.CharField(max_length=16, choices=WorkMode.choices)
    to_run_control = models.CharField(max_length=16, choices=RunControl.choices)
    to_permission_profile = models.CharField(max_length=16, choices=PermissionProfile.choices)
    to_model_mode = models.CharField(max_length=16, choices=ModelMode.choices)
    to_surface = models.CharField(max_length=16, choices=Surface.choices)
    from_paused = models.BooleanField(default=False)
    to_paused = models.BooleanField(default=False)
    reason = models.CharField(max_length=500)
    scope = models.CharField(
        max_length=24, choices=TransitionScope.choices, default=TransitionScope.NOW
    )
    actor_kind = models.CharField(max_length=8, choices=ActorKind.choices)
    actor_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    actor_label = models.CharField(max_length=150, blank=True)
    requires_approval = models.BooleanField(default=False)
    requested_at = models.DateTimeField(default=timezone.now)
    applied_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(
        max_length=12, choices=TransitionStatus.choices, default=TransitionStatus.PENDING
    )

    class Meta:
        ordering = ["requested_at", "pk"]
        indexes = [models.Index(fields=["session", "status"], name="transition_session_status")]
        constraints = [
            *[
                models.CheckConstraint(
                    condition=_in(f"{side}_{axis}", choices),
                    name=f"transition_{side}_{axis}_valid",
                )
                for side in ("from", "to")
                for axis, choices in (
                    ("work_mode", WorkMode),
                    ("run_control", RunControl),
                    ("permission_profile", PermissionProfile),
                    ("model_mode", ModelMode),
                    ("surface", Surface),
                )
            ],
            models.CheckConstraint(
                condition=_in("scope", TransitionScope), name="transition_scope_valid"
            ),
            models.CheckConstraint(
                condition=_in("status", TransitionStatus), name="transition_status_valid"
            ),
            models.CheckConstraint(
                condition=_in("actor_kind", ActorKind), name="transition_actor_kind_valid"
            ),
            models.CheckConstraint(
                condition=~Q(status=TransitionStatus.APPLIED) | Q(applied_at__isnull=False),
                name="transition_applied_has_time",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.session_id}: {self.summary}"

    @property
    def from_axes(self) -> Axes:
        return Axes(**{axis: getattr(self, f"from_{axis}") for axis in Axes.__annotations__})

    @property
    def to_axes(self) -> Axes:
        return Axes(**{axis: getattr(self, f"to_{axis}") for axis in Axes.__annotations__})

    @property
    def changed_axes(self) -> dict[str, str]:
        before, after = self.from_axes.as_dict(), self.to_axes.as_dict()
        return {axis: value for axis, value in after.items() if before[axis] != value}

    @property
    def summary(self) -> str:
        parts = [
            f"{axis} {self.from_axes.as_dict()[axis]} → {v}"
            for axis, v in self.changed_axes.items()
        ]
        if self.from_paused != self.to_paused:
            parts.append("paused" if self.to_paused else "resumed")
        return ", ".join(parts) or "no change"

    @property
    def actor_display(self) -> str:
        return self.actor_label or self.actor_kind


def reading_current(session_id: int, version: int) -> tuple[str, list[Any]]:
    """SQL, and its parameters, true while the session still reads as a reading of
    ``dispatch_version`` ``version`` did: a condition for the dispatch point's write.

    The version is raised by PostgreSQL triggers whenever anything a tool call's
    dispatch point and gate decide on changes (migration 0016): the axes, the pause,
    the /stop, the status, the project's policy, steering pending or applied, approvals
    given or used. Not the activity, the costs or the counters the engine itself
    writes as it goes."""
    sessions = AgentSession._meta.db_table
    return f"(SELECT dispatch_version FROM {sessions} WHERE id = %s) = %s", [session_id, version]
