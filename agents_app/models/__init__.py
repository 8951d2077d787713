"""Models of the agents app: projects and sessions with their axes and transitions,
risk decisions with approvals, and the trace."""

from agents_app.models.audit import ApprovalRule, Decision, ReviewScope, ReviewStatus, RiskDecision
from agents_app.models.costs import CallStage, ModelCall
from agents_app.models.membership import MembershipSource, ProjectMembership, Role, role_rank
from agents_app.models.repairs import RepairRecord
from agents_app.models.sessions import (
    Activity,
    ActorKind,
    AgentSession,
    ModeTransition,
    PauseCause,
    Project,
    RepositoryMoved,
    SessionDriver,
    SessionStatus,
    TransitionScope,
    TransitionStatus,
)
from agents_app.models.sso import SsoGroupRole, SsoIdentity
from agents_app.models.trace import TraceEvent, TraceKind

__all__ = [
    "Activity",
    "ActorKind",
    "AgentSession",
    "ApprovalRule",
    "CallStage",
    "Decision",
    "MembershipSource",
    "ModeTransition",
    "ModelCall",
    "PauseCause",
    "Project",
    "ProjectMembership",
    "RepairRecord",
    "RepositoryMoved",
    "ReviewScope",
    "ReviewStatus",
    "RiskDecision",
    "Role",
    "SessionDriver",
    "SessionStatus",
    "SsoGroupRole",
    "SsoIdentity",
    "TraceEvent",
    "TraceKind",
    "TransitionScope",
    "TransitionStatus",
    "role_rank",
]
