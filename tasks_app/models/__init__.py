"""Models of the tasks app: plans and tasks, their scheduler and runtime state, units,
the worker registry, and recurring schedules (``Schedule``: a saved intent or plan run
by a cron expression; not ``TaskSchedule``, one task's dispatch state)."""

from tasks_app.models import evidence  # noqa: F401  (the evidence's unit relation)
from tasks_app.models.attempts import MAX_BEST_OF, AttemptRound
from tasks_app.models.followups import MAX_FOLLOWUP_CHARS, FollowUp
from tasks_app.models.forge import ForgePullRequest, PullRequestState
from tasks_app.models.issues import ForgeIssue, IssueState
from tasks_app.models.merge import ACTIVE_MERGE_STATUSES, MergeRequest, MergeStatus
from tasks_app.models.model_review import ModelReview, ReviewMode, ReviewVerdict
from tasks_app.models.plan import (
    ENGINE_HOLDS,
    FINISHED_PLAN_STATUSES,
    HELD_STATUSES,
    DependencyCondition,
    HoldReason,
    MutationScope,
    Plan,
    PlanSource,
    PlanStatus,
    RiskLevel,
    Task,
    TaskDependency,
    TaskKind,
    TaskStatus,
    TaskTransition,
)
from tasks_app.models.request import PlanRequest, PlanRequestStatus
from tasks_app.models.review import DiffComment, DiffSide, SetupStatus, WorktreeSetup
from tasks_app.models.runtime import (
    ScheduleStatus,
    StopKind,
    TaskRuntime,
    TaskSchedule,
    Unit,
    UnitStatus,
)
from tasks_app.models.schedules import (
    STARTED_RUN_STATUSES,
    Schedule,
    ScheduleKind,
    ScheduleOwner,
    ScheduleRun,
    ScheduleRunStatus,
    ScheduleRunTrigger,
)
from tasks_app.models.worker import Worker, WorkerProbe

__all__ = [
    "ACTIVE_MERGE_STATUSES",
    "ENGINE_HOLDS",
    "FINISHED_PLAN_STATUSES",
    "HELD_STATUSES",
    "MAX_BEST_OF",
    "MAX_FOLLOWUP_CHARS",
    "STARTED_RUN_STATUSES",
    "AttemptRound",
    "DependencyCondition",
    "DiffComment",
    "DiffSide",
    "FollowUp",
    "ForgeIssue",
    "ForgePullRequest",
    "HoldReason",
    "IssueState",
    "MergeRequest",
    "MergeStatus",
    "ModelReview",
    "MutationScope",
    "Plan",
    "PlanRequest",
    "PlanRequestStatus",
    "PlanSource",
    "PlanStatus",
    "PullRequestState",
    "ReviewMode",
    "ReviewVerdict",
    "RiskLevel",
    "Schedule",
    "ScheduleKind",
    "ScheduleOwner",
    "ScheduleRun",
    "ScheduleRunStatus",
    "ScheduleRunTrigger",
    "ScheduleStatus",
    "SetupStatus",
    "StopKind",
    "Task",
    "TaskDependency",
    "TaskKind",
    "TaskRuntime",
    "TaskSchedule",
    "TaskStatus",
    "TaskTransition",
    "Unit",
    "UnitStatus",
    "Worker",
    "WorkerProbe",
    "WorktreeSetup",
]
