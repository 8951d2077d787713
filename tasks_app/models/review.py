"""What a worktree's setup did, and a reviewer's comments on lines of a unit's diff."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from tasks_app.models.plan import Task
from tasks_app.models.runtime import Unit


class SetupStatus(models.TextChoices):
    PASSED = "passed"  # exit 0: the worktree is ready, later units skip the setup
    FAILED = "failed"  # non-zero exit or timed out: the next unit runs it again
    REFUSED = "refused"  # the gate denied it, or it waits for a person's approval


class WorktreeSetup(models.Model):
    """One run (or refusal) of the project's setup command in one worktree: a task's
    attempt (``Task.branch_attempt``). A passed row means the worktree is set up."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="setups")
    branch_attempt = models.PositiveSmallIntegerField()
    unit = models.ForeignKey(Unit, on_delete=models.CASCADE, related_name="setups")
    command = models.TextField()  # redacted
    status = models.CharField(max_length=8, choices=SetupStatus.choices)
    exit_code = models.IntegerField(null=True, blank=True)  # None: timed out or not run
    output = models.TextField(blank=True)  # capped and redacted
    seconds = models.FloatField(default=0)
    decision_id = models.PositiveIntegerField(null=True, blank=True)  # the RiskDecision
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=SetupStatus.values), name="worktree_setup_status_valid"
            ),
            # Once per worktree: a second passed setup of the same tree is a bug.
            models.UniqueConstraint(
                fields=["task", "branch_attempt"],
                condition=Q(status="passed"),
                name="worktree_setup_passed_once",
            ),
        ]

    def __str__(self) -> str:
        return f"setup of {self.task_id}/{self.branch_attempt}: {self.status}"


class DiffSide(models.TextChoices):
    NEW = "new"  # a line of the changed file (added or context)
    OLD = "old"  # a removed line, numbered in the file before the change


class DiffComment(models.Model):
    """A reviewer's comment on one line of a unit's diff. Open comments travel with
    "Request changes" into the next unit's brief; the next unit's checkpoint records
    whether it changed the line, and a person may mark the comment addressed."""

    unit = models.ForeignKey(Unit, on_delete=models.CASCADE, related_name="diff_comments")
    path = models.CharField(max_length=1000)
    line = models.PositiveIntegerField()
    side = models.CharField(max_length=3, choices=DiffSide.choices, default=DiffSide.NEW)
    line_text = models.TextField(blank=True)  # the line as the reviewer saw it
    text = models.TextField()
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    author_label = models.CharField(max_length=200, blank=True)
    by_model = models.BooleanField(default=False)  # written by a model review (``ModelReview``)
    created_at = models.DateTimeField(default=timezone.now)
    # Computed when the next unit checkpoints: did its changes touch this line?
    line_changed = models.BooleanField(null=True, blank=True)
    addressed = models.BooleanField(default=False)
    addressed_by = models.CharField(max_length=200, blank=True)
    addressed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["path", "line", "created_at", "pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(side__in=DiffSide.values), name="diff_comment_side_valid"
            ),
            models.CheckConstraint(condition=Q(line__gte=1), name="diff_comment_line_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.path}:{self.line} on unit {self.unit_id}"
