"""Best-of-N: rounds of attempts at one task run at once, the best kept (docs/best-of-n.md).

A task with ``best_of`` N > 1 runs each round as N units at once, each with its own
variant (model mode, model or temperature), worktree and branch. Each is verified by
the verification gate; the round ranks them (``tasks_app.ranking``) and keeps the
winner, whose commit becomes the task's checkpoint and goes on through review and the
merge queue as a single unit's would. The others stay for comparison: their patches on
their units, their commits on their branches until the task is merged. A person may pick
another verified attempt while the task waits for review.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from sf_core.actors import Actor, ActorKind
from tasks_app.models.plan import Task

MAX_BEST_OF = 8  # the schema's ceiling; a project's policy caps it lower (default 4)


class AttemptRound(models.Model):
    """One round of a best-of-N task: its attempts are the units pointing here."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="rounds")
    size = models.PositiveSmallIntegerField()
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    winner = models.ForeignKey(
        "tasks_app.Unit", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Why the winner was kept: the ranking's words, or a person's pick with theirs.
    reason = models.TextField(blank=True)
    # The ranking as it was computed: [{"unit", "attempt", "passed", "verdict",
    # "changed_lines", "cost", "eligible"}], best first.
    ranking = models.JSONField(default=list, blank=True)
    # Who chose the winner: SF's ranking (system) or the person who picked another.
    chosen_kind = models.CharField(max_length=8, default=ActorKind.SYSTEM)
    chosen_label = models.CharField(max_length=150, blank=True)
    chosen_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    chosen_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["task_id", "pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(size__gte=2) & Q(size__lte=MAX_BEST_OF), name="attempt_round_size"
            ),
            models.CheckConstraint(
                condition=Q(chosen_kind__in=ActorKind.values), name="attempt_round_chosen_kind"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.task_id}: best of {self.size}"

    @property
    def chosen_by(self) -> Actor:
        return Actor(kind=self.chosen_kind, user=self.chosen_user, label=self.chosen_label)
