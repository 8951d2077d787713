"""A task's pull request on the project's forge (GitHub or GitLab), when the project's
policy names one: opened when the task waits for a person's review, read back by the
sweep (tasks_app/features/forge.py)."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from tasks_app.models.plan import Task


class PullRequestState(models.TextChoices):
    OPEN = "open"  # waiting for a review on the forge
    DONE = "done"  # a review there was applied (approved, or changes requested)


class ForgePullRequest(models.Model):
    """One pull request of one review round of a task: a task sent back and reviewed
    again gets a new row (the forge's request is reused when it is still open there)."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="pull_requests")
    kind = models.CharField(max_length=16)  # github | gitlab
    number = models.PositiveIntegerField()
    url = models.URLField(max_length=500, blank=True)
    branch = models.CharField(max_length=300)
    head = models.CharField(max_length=64)  # the commit pushed
    state = models.CharField(
        max_length=16, choices=PullRequestState.choices, default=PullRequestState.OPEN
    )
    seen_reviews = models.JSONField(default=list, blank=True)  # the forge's review ids read
    outcome = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.kind} #{self.number} of {self.task.key}"
