"""An issue on the project's forge that SF took as an intent (docs/forge.md, "Work from
issues"): one row per issue and project, ever (``UniqueConstraint``), so a second poll,
or two workers polling at once, never start a second session for it."""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils import timezone

from agents_app.models import AgentSession, Project
from tasks_app.models.plan import Plan
from tasks_app.models.request import PlanRequest


class IssueState(models.TextChoices):
    PLANNING = "planning"  # the intent is being planned
    PROPOSED = "proposed"  # the plan is on the issue; it waits for a person in SF
    RUNNING = "running"  # the plan was accepted (by a person, or autonomous by policy)
    DONE = "done"  # the plan's work is merged; the outcome is on the issue
    FAILED = "failed"  # planning, the plan or a task failed; the reason is on the issue


class ForgeIssue(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="forge_issues")
    kind = models.CharField(max_length=16)  # github | gitlab
    issue_id = models.CharField(max_length=64)  # the forge's own id of the issue
    number = models.PositiveIntegerField()  # #12 (GitHub's number, GitLab's iid)
    url = models.URLField(max_length=500, blank=True)
    title = models.CharField(max_length=300)
    author = models.CharField(max_length=150)  # the forge's login; no SF role
    session = models.ForeignKey(AgentSession, on_delete=models.CASCADE, related_name="forge_issues")
    plan_request = models.ForeignKey(
        PlanRequest, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    state = models.CharField(max_length=12, choices=IssueState.choices, default=IssueState.PLANNING)
    reason = models.TextField(blank=True)  # the last outcome, for people
    # What SF already did on the issue, so a sweep that comes again does nothing twice:
    # the comments read (the forge's ids, SF's own among them), the pull requests
    # announced (ForgePullRequest ids), the plan and the outcome posted.
    seen_comments = models.JSONField(default=list, blank=True)
    announced_pulls = models.JSONField(default=list, blank=True)
    plan_posted = models.ForeignKey(
        Plan, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    outcome_posted = models.CharField(max_length=100, blank=True)  # "<plan>:<status>:<when>"
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "kind", "issue_id"], name="forge_issue_taken_once"
            ),
            models.CheckConstraint(
                condition=Q(state__in=IssueState.values), name="forge_issue_state_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} issue #{self.number} of {self.project_id}"
