"""Plans and their schema-backed tasks, dependencies and the task transition log."""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from agents_app.axes import PermissionProfile, RunControl
from agents_app.models import AgentSession
from sf_core.actors import ActorKind


def _in(field: str, choices: type[models.TextChoices]) -> Q:
    return Q(**{f"{field}__in": choices.values})


class PlanStatus(models.TextChoices):
    DRAFT = "draft"
    PROPOSED = "proposed"
    ACCEPTED = "accepted"
    REJECTED = "rejected"
    SUPERSEDED = "superseded"
    # Finished: an accepted plan whose work ended (tasks_app.completion decides which).
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


# An accepted plan whose work has ended; a person's retry re-opens it (back to accepted).
FINISHED_PLAN_STATUSES = (PlanStatus.DONE, PlanStatus.FAILED, PlanStatus.CANCELLED)


class PlanSource(models.TextChoices):
    FILE = "file"
    MODEL = "model"
    API = "api"


class Plan(models.Model):
    """A plan for one session: tasks derived from an intent, accepted explicitly."""

    session = models.ForeignKey(AgentSession, on_delete=models.CASCADE, related_name="plans")
    intent = models.TextField(blank=True)
    summary = models.TextField(blank=True)
    status = models.CharField(
        max_length=12, choices=PlanStatus.choices, default=PlanStatus.PROPOSED
    )
    status_reason = models.TextField(blank=True)
    source = models.CharField(max_length=8, choices=PlanSource.choices, default=PlanSource.FILE)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_run_control = models.CharField(max_length=16, choices=RunControl.choices, blank=True)
    accepted_permission_profile = models.CharField(
        max_length=16, choices=PermissionProfile.choices, blank=True
    )
    created_at = models.DateTimeField(default=timezone.now)
    # When its work ended (done, failed, cancelled: ``completion.plan_settle``); None
    # while it runs, and again once a retry re-opens it. The plan's event is timed by it.
    finished_at = models.DateTimeField(null=True, blank=True)
    # The plan lint's findings (``tasks_app.plan_lint``) when it was proposed or edited:
    # [{"task", "command", "level", "message"}].
    lint = models.JSONField(default=list, blank=True)
    # Who rejected it (a person; None when the planner's answer was invalid): the reason
    # is ``status_reason``, and the planner is told it when asked to plan again.
    rejected_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(condition=_in("status", PlanStatus), name="plan_status_valid"),
            models.CheckConstraint(condition=_in("source", PlanSource), name="plan_source_valid"),
            models.CheckConstraint(
                condition=~Q(status=PlanStatus.ACCEPTED) | Q(accepted_at__isnull=False),
                name="plan_accepted_has_time",
            ),
        ]

    def __str__(self) -> str:
        return f"plan {self.pk}: {self.summary[:60] or self.intent[:60]}"


class TaskStatus(models.TextChoices):
    """The task lifecycle (DESIGN §3); the allowed moves are tasks_app.lifecycle.ALLOWED."""

    TODO = "todo"
    IN_PROGRESS = "in_progress"
    VERIFYING = "verifying"
    RETRYING = "retrying"
    REVIEW = "review"
    DONE = "done"
    FAILED = "failed"
    BLOCKED = "blocked"
    PAUSED = "paused"
    CANCELLED = "cancelled"
    # A person chose to go on without this task: final, nothing merged. Dependents
    # waiting for its success may run; those waiting for its failure never will.
    SKIPPED = "skipped"


HELD_STATUSES = (TaskStatus.PAUSED, TaskStatus.BLOCKED)


class HoldReason(models.TextChoices):
    """Why a paused or blocked task is held: the code the engine decides on.

    ``Task.status_reason`` keeps the words for people; nothing matches on them.
    """

    NONE = "", "not held"
    SESSION_PAUSED = "session_paused"  # the session paused while the unit ran
    STOPPED = "stopped"  # /stop interrupted the unit
    SESSION_ENDED = "session_ended"  # the session stopped, completed or failed
    BUDGET = "budget"  # the task's or the session's budget ran out
    APPROVAL_NEEDED = "approval_needed"  # a risk decision waits for a reviewer
    DECISION_REJECTED = "decision_rejected"  # the reviewer said no
    QUESTION = "question"  # the agent asked the person (ask_user)
    STUCK = "stuck"  # a repeating loop or the same verification failure
    DEPENDENCY = "dependency"  # a dependency ended the wrong way
    MERGE_REFUSED = "merge_refused"  # conflict, empty result or a git error at merge
    PERSON = "person"  # a person (or a caller that did not say why)


# What the engine itself held and lifts once the session runs again; a task held by a
# person, a reviewer or a dependency stays where it is.
ENGINE_HOLDS = (
    HoldReason.SESSION_PAUSED,
    HoldReason.STOPPED,
    HoldReason.SESSION_ENDED,
    HoldReason.BUDGET,
)


class RiskLevel(models.TextChoices):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"


class MutationScope(models.TextChoices):
    NONE = "none"
    PLANNING = "planning"
    WORKSPACE = "workspace"
    REPO = "repo"
    HOST = "host"
    PRODUCTION = "production"


class TaskKind(models.TextChoices):
    IMPLEMENT = "implement"
    TEST = "test"
    REFACTOR = "refactor"
    DOCS = "docs"
    RESEARCH = "research"
    REVIEW = "review"
    CHORE = "chore"


class Task(models.Model):
    """One task of a plan, stored from a ``TaskSpec``."""

    plan = models.ForeignKey(Plan, on_delete=models.CASCADE, related_name="tasks")
    position = models.PositiveIntegerField()
    key = models.SlugField(max_length=63)
    title = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    acceptance_criteria = models.JSONField(default=list)  # R1…Rn by position
    verify = models.JSONField(default=list)  # shell commands run in the worktree
    risk_level = models.CharField(max_length=8, choices=RiskLevel.choices, default=RiskLevel.MEDIUM)
    mutation_scope = models.CharField(
        max_length=12, choices=MutationScope.choices, default=MutationScope.WORKSPACE
    )
    task_kind = models.CharField(
        max_length=12, choices=TaskKind.choices, default=TaskKind.IMPLEMENT
    )
    max_retries = models.PositiveSmallIntegerField(default=3)
    retry_count = models.PositiveSmallIntegerField(default=0)
    stuck_count = models.PositiveSmallIntegerField(default=0)  # stuck-loop detections
    cost_budget = models.DecimalField(max_digits=12, decimal_places=4, null=True, blank=True)
    cost_spent = models.DecimalField(max_digits=12, decimal_places=4, default=Decimal("0"))
    intent_claim = models.JSONField(default=list, blank=True)  # files the task means to touch
    checkpoint_ref = models.CharField(max_length=255, blank=True)
    # Which attempt the task's branch and worktree belong to: 1, then one more for each
    # retry a person asks for, so every attempt starts from a fresh branch off the base.
    branch_attempt = models.PositiveSmallIntegerField(default=1)
    # Best-of-N: how many attempts each round runs at once (1: one unit, as always).
    best_of = models.PositiveSmallIntegerField(default=1)
    next_action_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=12, choices=TaskStatus.choices, default=TaskStatus.TODO)
    status_reason = models.TextField(blank=True)  # for people
    hold_reason = models.CharField(  # for the engine: why a paused/blocked task is held
        max_length=20, choices=HoldReason.choices, default=HoldReason.NONE, blank=True
    )
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["plan_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["plan", "key"], name="task_key_unique_in_plan"),
            models.CheckConstraint(condition=_in("status", TaskStatus), name="task_status_valid"),
            models.CheckConstraint(
                condition=_in("hold_reason", HoldReason), name="task_hold_reason_valid"
            ),
            models.CheckConstraint(
                condition=Q(status__in=HELD_STATUSES) | Q(hold_reason=HoldReason.NONE),
                name="task_hold_reason_only_when_held",
            ),
            models.CheckConstraint(condition=_in("risk_level", RiskLevel), name="task_risk_valid"),
            models.CheckConstraint(
                condition=_in("mutation_scope", MutationScope), name="task_mutation_scope_valid"
            ),
            models.CheckConstraint(condition=_in("task_kind", TaskKind), name="task_kind_valid"),
            models.CheckConstraint(
                condition=Q(retry_count__lte=F("max_retries")), name="task_retries_within_max"
            ),
            models.CheckConstraint(
                condition=Q(best_of__gte=1) & Q(best_of__lte=8), name="task_best_of_range"
            ),
            models.CheckConstraint(
                condition=Q(cost_spent__gte=0)
                & (Q(cost_budget__isnull=True) | Q(cost_budget__gte=0)),
                name="task_cost_non_negative",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.key}: {self.title}"

    @property
    def criteria(self) -> list[tuple[str, str]]:
        """Acceptance criteria with their ids: [("R1", "…"), ("R2", "…")]."""
        return [(f"R{index}", text) for index, text in enumerate(self.acceptance_criteria, 1)]

    @property
    def branch(self) -> str:
        """The branch of this task's current attempt: unique per plan, key and attempt."""
        return f"sf/p{self.plan_id}/{self.key}/{self.branch_attempt}"


class DependencyCondition(models.TextChoices):
    SUCCESS = "success"  # run after the dependency is done
    FAILURE = "failure"  # run only if the dependency failed
    ALWAYS = "always"  # run once the dependency has finished either way


class TaskDependency(models.Model):
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="dependencies")
    depends_on = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="dependents")
    condition = models.CharField(
        max_length=8, choices=DependencyCondition.choices, default=DependencyCondition.SUCCESS
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["task", "depends_on"], name="dependency_unique"),
            models.CheckConstraint(condition=~Q(task=F("depends_on")), name="dependency_not_self"),
            models.CheckConstraint(
                condition=_in("condition", DependencyCondition), name="dependency_condition_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.task_id} needs {self.depends_on_id} ({self.condition})"


class TaskTransition(models.Model):
    """One lifecycle move of a task, written with the move itself."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="transitions")
    from_status = models.CharField(max_length=12, choices=TaskStatus.choices)
    to_status = models.CharField(max_length=12, choices=TaskStatus.choices)
    reason = models.TextField(blank=True)
    actor_kind = models.CharField(max_length=8, choices=ActorKind.choices, default=ActorKind.SYSTEM)
    actor_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    actor_label = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "pk"]
        indexes = [models.Index(fields=["task", "created_at"], name="task_transition_time")]
        constraints = [
            models.CheckConstraint(
                condition=_in("actor_kind", ActorKind), name="task_transition_actor_kind_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.task_id}: {self.from_status} → {self.to_status}"
