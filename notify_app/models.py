"""The notification outbox, its deliveries (the delivery log) and people's preferences.

An ``Notification`` row is written in the transaction of the state change it reports
(``sf_core.notices``), together with one ``Delivery`` per recipient and channel. Workers
deliver from these rows, so a worker that dies loses nothing: a claimed delivery whose
lease ran out is due again, and a sent one is never claimed again.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from sf_core.notices import LABELS, NoticeKind

KIND_CHOICES = [(kind.value, LABELS[kind]) for kind in NoticeKind]


class Channel(models.TextChoices):
    EMAIL = "email", "email"
    WEBHOOK = "webhook", "webhook"
    BROWSER = "browser", "browser"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "pending"  # due at next_attempt_at (or claimed until then)
    SENT = "sent", "sent"
    FAILED = "failed", "failed"  # attempts spent


class Notification(models.Model):
    """One event, once: ``dedupe_key`` is unique, so raising it again enqueues nothing."""

    kind = models.CharField(max_length=32, choices=KIND_CHOICES)
    dedupe_key = models.CharField(max_length=200, unique=True)
    project = models.ForeignKey(  # None only for a person's test notification
        "agents_app.Project",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="notifications",
    )
    session = models.ForeignKey(
        "agents_app.AgentSession",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="notifications",
    )
    # By name: the outbox sits above tasks_app and only refers to its rows.
    task = models.ForeignKey(
        "tasks_app.Task", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    unit = models.ForeignKey(
        "tasks_app.Unit", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    text = models.TextField()
    url = models.CharField(max_length=500, blank=True)
    payload = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=[kind.value for kind in NoticeKind]),
                name="notification_kind_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind}: {self.text[:60]}"

    @property
    def title(self) -> str:
        return f"SF · {LABELS[NoticeKind(self.kind)]}"


class Delivery(models.Model):
    """One notification to one person over one channel: the delivery log."""

    notification = models.ForeignKey(
        Notification, on_delete=models.CASCADE, related_name="deliveries"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_deliveries"
    )
    channel = models.CharField(max_length=8, choices=Channel.choices)
    status = models.CharField(
        max_length=8, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    # Due when pending and this has passed. A claim moves it one lease ahead, so a
    # delivery whose worker died becomes due again when the lease is over.
    next_attempt_at = models.DateTimeField(default=timezone.now)
    claimed_by = models.CharField(max_length=200, blank=True)
    last_error = models.TextField(blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name_plural = "deliveries"
        constraints = [
            models.UniqueConstraint(
                fields=["notification", "user", "channel"], name="delivery_once_per_channel"
            ),
            models.CheckConstraint(
                condition=Q(channel__in=Channel.values), name="delivery_channel_valid"
            ),
            models.CheckConstraint(
                condition=Q(status__in=DeliveryStatus.values), name="delivery_status_valid"
            ),
            models.CheckConstraint(
                condition=~Q(status=DeliveryStatus.SENT) | Q(sent_at__isnull=False),
                name="delivery_sent_has_time",
            ),
        ]
        indexes = [
            models.Index(
                fields=["next_attempt_at"],
                condition=Q(status="pending"),
                name="delivery_due",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.notification_id} → {self.user_id} by {self.channel}: {self.status}"


class NotificationPreference(models.Model):
    """What one person wants to hear, and where. No row: the defaults below."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_preference"
    )
    email = models.BooleanField(default=True, help_text="to the account's email address")
    browser = models.BooleanField(default=True, help_text="on open SF pages")
    webhook_url = models.URLField(blank=True, help_text="Slack-compatible incoming webhook")
    webhook_secret = models.CharField(
        max_length=200, blank=True, help_text="signs each webhook request (HMAC-SHA256)"
    )
    # Empty: every kind. Otherwise only these kinds (NoticeKind values).
    kinds = models.JSONField(default=list, blank=True)
    # Empty: every project the person is a member of. Otherwise only these (and still
    # only while a member).
    projects = models.ManyToManyField("agents_app.Project", blank=True, related_name="+")

    def __str__(self) -> str:
        return f"notification preferences of {self.user}"
