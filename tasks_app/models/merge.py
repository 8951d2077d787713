"""The merge queue: approved tasks waiting to be merged into their project's base branch.

One entry per approval. Entries of one project and base branch are merged one at a time,
in order of approval (their primary key), each verified on the merged tree before the base ref moves
(``tasks_app.engine.merge_queue``).
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from sf_core.actors import Actor
from tasks_app.models.plan import Task


class MergeStatus(models.TextChoices):
    QUEUED = "queued"  # approved, waiting for its turn
    VERIFYING = "verifying"  # merged in a scratch worktree; its commands are running
    MERGED = "merged"  # the base branch holds it
    SENT_BACK = "sent_back"  # the merged tree failed: the task went back to its agent
    REFUSED = "refused"  # a conflict, an empty result or a git error: the task is blocked


ACTIVE_MERGE_STATUSES = (MergeStatus.QUEUED, MergeStatus.VERIFYING)


class MergeRequest(models.Model):
    """One approved task in its base branch's merge queue, and how its turn ended."""

    project = models.ForeignKey(
        "agents_app.Project", on_delete=models.CASCADE, related_name="merge_requests"
    )
    base_branch = models.CharField(max_length=255)
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="merge_requests")
    status = models.CharField(
        max_length=12, choices=MergeStatus.choices, default=MergeStatus.QUEUED
    )
    # Who approved it: the merge's transitions are theirs (``sf_core.actors.Actor``).
    actor_kind = models.CharField(max_length=8, default="system")
    actor_user = models.ForeignKey(
        "auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    actor_label = models.CharField(max_length=255, blank=True)
    commit = models.CharField(max_length=64, blank=True)  # the task commit it merges
    base_head = models.CharField(max_length=64, blank=True)  # the base it was verified on
    merge_commit = models.CharField(max_length=64, blank=True)  # the base's new head
    attempts = models.PositiveIntegerField(default=0)  # merged-tree runs (a moved base: redo)
    output = models.TextField(blank=True)  # the merged tree's verification report
    reason = models.TextField(blank=True)  # why it ended as it did, for people
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["pk"]  # the queue's order: first approved, first merged
        indexes = [
            models.Index(fields=["project", "base_branch", "status"], name="merge_queue_lane")
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=MergeStatus.values), name="merge_status_valid"
            ),
            models.UniqueConstraint(
                fields=["task"],
                condition=Q(status__in=ACTIVE_MERGE_STATUSES),
                name="merge_one_active_per_task",
            ),
        ]

    def __str__(self) -> str:
        return f"merge {self.task_id} into {self.base_branch}: {self.status}"

    @property
    def actor(self) -> Actor:
        return Actor(kind=self.actor_kind, user=self.actor_user, label=self.actor_label)
