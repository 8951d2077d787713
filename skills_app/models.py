"""Skills as rows (DESIGN §7): what was found in ``.agents/skills``, who used it, how
its eval cases did, and the skills SF proposes from repeated evidence.

The files stay the source of truth: a ``Skill`` row is a synced index of one
``SKILL.md`` (its frontmatter, where it is, the hash of what was read, and whether it
is valid), never the body, which is read from the unit's worktree when loaded.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from agents_app.models import AgentSession, Project


class SkillScope(models.TextChoices):
    PROJECT = "project"  # committed in the project's repository
    USER = "user"  # a user-level folder on the workers (SF_USER_SKILLS)


class SideEffects(models.TextChoices):
    NONE = "none"
    CODE_EDITS = "code-edits"
    REPO_AUTOMATION = "repo-automation"
    HOST_MUTATION = "host-mutation"
    PRODUCTION_MUTATION = "production-mutation"


class Skill(models.Model):
    """One skill folder as last synced. An invalid one keeps its folder name and the
    validation message, and is never offered or loaded."""

    scope = models.CharField(max_length=16, choices=SkillScope.choices)
    project = models.ForeignKey(
        Project, null=True, blank=True, on_delete=models.CASCADE, related_name="skills"
    )
    name = models.CharField(max_length=100)  # the folder's name
    description = models.TextField(blank=True)
    user_invocable = models.BooleanField(default=True)
    model_invocable = models.BooleanField(default=True)
    side_effects = models.CharField(
        max_length=32, choices=SideEffects.choices, default=SideEffects.NONE
    )
    permission_profile = models.CharField(max_length=16, default="restricted")
    # Project scope: relative to the repository (".agents/skills/x/SKILL.md");
    # user scope: absolute.
    source_path = models.CharField(max_length=1000)
    content_hash = models.CharField(max_length=64)  # sha256 of the skill folder's files
    files = models.JSONField(default=list, blank=True)  # supporting files: [path, size]
    valid = models.BooleanField(default=True)
    problem = models.TextField(blank=True)  # why it is invalid, naming the file
    synced_at = models.DateTimeField(default=timezone.now)
    removed_at = models.DateTimeField(null=True, blank=True)  # its folder is gone

    class Meta:
        ordering = ["scope", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "name"],
                condition=Q(scope="project"),
                name="skill_unique_per_project",
            ),
            models.UniqueConstraint(
                fields=["name"], condition=Q(scope="user"), name="skill_unique_user"
            ),
            models.CheckConstraint(
                condition=(Q(scope="project") & Q(project__isnull=False))
                | (Q(scope="user") & Q(project__isnull=True)),
                name="skill_scope_matches_project",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.scope})"

    @property
    def folder(self) -> str:
        """The skill's folder, as ``source_path`` names it."""
        return self.source_path.rsplit("/", 1)[0]


class SkillUseKind(models.TextChoices):
    LOAD = "load"  # the body was loaded (by the model through load_skill)
    FILE = "file"  # a supporting file was read through the skill
    INVOKE = "invoke"  # a person ran /skill NAME
    SCRIPT = "script"  # one of its scripts ran


class SkillUse(models.Model):
    """A skill loaded or invoked: by which unit (or person), when, and how it went."""

    skill = models.ForeignKey(Skill, on_delete=models.CASCADE, related_name="uses")
    session = models.ForeignKey(
        AgentSession, null=True, blank=True, on_delete=models.CASCADE, related_name="skill_uses"
    )
    # The unit that made it, by id: units belong to tasks_app, above this app, which holds
    # the relation (``unit``, ``Unit.skill_uses``) and its database constraint
    # (tasks_app.models.evidence), as for agents_app's evidence.
    unit_id = models.BigIntegerField(null=True, blank=True, db_index=True)
    kind = models.CharField(max_length=16, choices=SkillUseKind.choices)
    by_model = models.BooleanField(default=True)  # False: a person invoked it
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    detail = models.CharField(max_length=500, blank=True)  # file name, arguments
    allowed = models.BooleanField(default=True)
    outcome = models.CharField(max_length=500, blank=True)  # why it was refused, if it was
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["skill", "-created_at"])]

    def __str__(self) -> str:
        who = "model" if self.by_model else "person"
        return f"{self.skill.name} {self.kind} by {who}"


class SkillEvalCase(models.Model):
    """``evals/<case>/`` of a skill: its prompt, grader and whether it ships a trace."""

    skill = models.ForeignKey(Skill, on_delete=models.CASCADE, related_name="eval_cases")
    name = models.CharField(max_length=100)
    path = models.CharField(max_length=1000)  # the case folder, like Skill.source_path
    task_prompt = models.TextField(blank=True)
    has_work = models.BooleanField(default=False)
    has_hidden = models.BooleanField(default=False)
    has_trace = models.BooleanField(default=False)  # a recorded trace to replay
    valid = models.BooleanField(default=True)
    problem = models.TextField(blank=True)

    class Meta:
        ordering = ["skill", "name"]
        constraints = [
            models.UniqueConstraint(fields=["skill", "name"], name="eval_case_unique_per_skill")
        ]

    def __str__(self) -> str:
        return f"{self.skill.name}/{self.name}"


class SkillEvalRun(models.Model):
    """One trial of one case: a real unit in a fresh worktree, then its grader."""

    case = models.ForeignKey(SkillEvalCase, on_delete=models.CASCADE, related_name="runs")
    model_mode = models.CharField(max_length=16)
    model = models.CharField(max_length=200, blank=True)  # provider/model, or the replay's
    replay = models.CharField(max_length=1000, blank=True)  # the trace replayed, if any
    passed = models.BooleanField(default=False)
    grades = models.JSONField(default=list, blank=True)  # [{name, passed, detail}]
    error = models.TextField(blank=True)  # the trial could not be graded
    duration_s = models.FloatField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    workspace_path = models.CharField(max_length=1000, blank=True)  # kept when it failed
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.case} {'pass' if self.passed else 'fail'} ({self.model_mode})"


class ProposalStatus(models.TextChoices):
    PROPOSED = "proposed"
    ACCEPTED = "accepted"  # a person (or the policy) accepted it; a task writes it
    REJECTED = "rejected"
    MERGED = "merged"  # its SKILL.md reached the base branch


class SkillProposal(models.Model):
    """A narrow skill SF proposes after seeing the same evidence at least three times."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="skill_proposals")
    name = models.CharField(max_length=100)
    description = models.TextField()
    kind = models.CharField(max_length=32)  # verify-failure | same-fix | command-sequence
    fingerprint = models.CharField(max_length=64)  # the repeated evidence, hashed
    evidence = models.JSONField(default=list)  # [{unit, task, detail}]
    skill_md = models.TextField()  # the SKILL.md it would write
    eval_case = models.JSONField(default=dict)  # {"task.md": …, "grader.py": …}
    status = models.CharField(
        max_length=16, choices=ProposalStatus.choices, default=ProposalStatus.PROPOSED
    )
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    # The task that writes it through gate → verify → review → merge, by id; the relation
    # (``task``) is tasks_app's, like ``SkillUse.unit``.
    task_id = models.BigIntegerField(null=True, blank=True, db_index=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "fingerprint"], name="proposal_unique_evidence"
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.status})"
