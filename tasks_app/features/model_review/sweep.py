"""Model reviews whose run was lost: the worker died while the model reviewed. The unit
had ended (its work verified, its task in review), so nothing recovers it but this:
the review ends with no verdict, and the task's review goes on as it would have
without one (auto-approval where the profile allows, else a person). Registered on the
engine's ``swept`` point."""

from __future__ import annotations

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from tasks_app.engine.review import review_start
from tasks_app.models import ModelReview, ReviewVerdict, Task, TaskStatus

LOST = "no verdict: the review's run was lost (its worker stopped) before it answered"


def model_reviews_recover() -> int:
    """End the lost reviews; how many. Each is claimed by a conditional update, so two
    sweeps never end one twice."""
    cutoff = timezone.now() - settings.SF_WORKER_STALE_AFTER
    stale = Q(unit__task__runtime__last_heartbeat_at__lt=cutoff)
    gone = Q(unit__task__runtime__isnull=True)
    lost = ModelReview.objects.filter(stale | gone, verdict=ReviewVerdict.PENDING)
    ended = 0
    for review in lost.filter(started_at__lt=cutoff).select_related("unit"):
        claimed = ModelReview.objects.filter(pk=review.pk, verdict=ReviewVerdict.PENDING).update(
            verdict=ReviewVerdict.NO_VERDICT, notes=[LOST], finished_at=timezone.now()
        )
        if not claimed:
            continue
        ended += 1
        task = Task.objects.select_related("plan").get(pk=review.unit.task_id)
        if task.status == TaskStatus.REVIEW:
            review_start(task=task)
    return ended
