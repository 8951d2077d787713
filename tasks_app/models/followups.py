"""A person's follow-up message to a task's agent (docs/follow-ups.md).

Sent to a running unit, it reaches the model before the unit's next step; sent to a
task whose last attempt ended (failed, in review, paused), it starts the next attempt
with the message in that attempt's brief. ``delivered_at`` and ``delivered_unit`` say
when and to which unit's model it went; an undelivered message waits for the task's
next unit, so a message is never lost to a unit that ended just after it was sent.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.db.models.functions import Length
from django.db.models.lookups import LessThanOrEqual
from django.utils import timezone

from tasks_app.models.plan import Task
from tasks_app.models.runtime import Unit

MAX_FOLLOWUP_CHARS = 4000


class FollowUp(models.Model):
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="followups")
    # The unit it was sent to (the running-unit path); None: sent to the task.
    unit = models.ForeignKey(
        Unit, null=True, blank=True, on_delete=models.CASCADE, related_name="followups_sent"
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    author_label = models.CharField(max_length=150)  # kept when the user is deleted
    text = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)
    delivered_at = models.DateTimeField(null=True, blank=True)
    delivered_unit = models.ForeignKey(
        Unit, null=True, blank=True, on_delete=models.SET_NULL, related_name="followups_read"
    )

    class Meta:
        ordering = ["created_at", "pk"]
        indexes = [
            # A running unit asks before every model step: "anything for me?"
            models.Index(
                fields=["task"], condition=Q(delivered_at__isnull=True), name="followup_waiting"
            )
        ]
        constraints = [
            models.CheckConstraint(condition=Q(text__regex=r"\S"), name="followup_text_not_blank"),
            models.CheckConstraint(
                condition=LessThanOrEqual(Length("text"), MAX_FOLLOWUP_CHARS),
                name="followup_text_short",
            ),
            models.CheckConstraint(
                condition=Q(delivered_at__isnull=True) | Q(delivered_unit__isnull=False),
                name="followup_delivered_to_a_unit",
            ),
        ]

    def __str__(self) -> str:
        return f"follow-up {self.pk} on {self.task_id} by {self.author_label}"
