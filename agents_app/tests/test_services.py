"""The operating-model services: axes, transitions, steering scopes, repair policy."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from agents_app.axes import AXIS_CHOICES, Axes, PermissionProfile, RunControl
from agents_app.models import (
    Activity,
    AgentSession,
    ModeTransition,
    Project,
    TransitionScope,
    TransitionStatus,
)
from agents_app.services import (
    DispatchPoint,
    project_create,
    repair_target,
    session_apply_due,
    session_change_mode,
    session_create,
    session_request_repair,
    session_set_paused,
    session_stop,
    transition_approve,
    transition_cancel,
)
from sf_core.actors import Actor
from sf_core.errors import CommandRejected, InvalidTransition, PolicyInvalid, SfError

pytestmark = pytest.mark.django_db

USER = Actor.system("test")
ALL_POINTS = list(DispatchPoint)


def busy(session: AgentSession, activity: str = Activity.TOOL) -> AgentSession:
    AgentSession.objects.filter(pk=session.pk).update(activity=activity)
    session.refresh_from_db()
    return session


def change(
    session: AgentSession, scope: str | None = None, **changes: str
) -> ModeTransition | None:
    return session_change_mode(
        session=session, changes=changes, reason="test", actor=USER, scope=scope
    )


# --- projects -------------------------------------------------------------------------


def test_a_project_needs_an_existing_repository_and_branch(git_repo: Path) -> None:
    with pytest.raises(SfError, match="must be absolute"):
        project_create(name="p", repo_path="relative/path")
    with pytest.raises(SfError, match="does not exist"):
        project_create(name="p", repo_path=str(git_repo / "missing"))
    with pytest.raises(SfError, match="has no branch 'develop'"):
        project_create(name="p", repo_path=str(git_repo), base_branch="develop")
    plain = git_repo.parent / "plain"
    plain.mkdir()
    with pytest.raises(SfError, match="not a git work tree"):
        project_create(name="p", repo_path=str(plain))
    assert Project.objects.count() == 0


def test_a_bad_policy_names_every_bad_field_and_writes_nothing(git_repo: Path) -> None:
    policy = {"repair_policy": "sometimes", "budgets": {"session_cost_usd": -1}, "extra": 1}
    with pytest.raises(PolicyInvalid) as caught:
        project_create(name="p", repo_path=str(git_repo), policy=policy)
    message = str(caught.value)
    assert "repair_policy: Input should be 'auto', 'ask' or 'log-only'" in message
    assert "budgets.session_cost_usd: Input should be greater than or equal to 0" in message
    assert "extra: Extra inputs are not permitted" in message
    assert Project.objects.count() == 0


def test_a_duplicate_project_name_is_refused(project: Project, git_repo: Path) -> None:
    with pytest.raises(SfError, match="already exists"):
        project_create(name="sample", repo_path=str(git_repo))


def test_sessions_take_their_budgets_from_the_project_policy(git_repo: Path) -> None:
    policy = {"budgets": {"session_cost_usd": "2.50", "max_autonomous_continues": 7}}
    project = project_create(name="budgeted", repo_path=str(git_repo), policy=policy)
    session = session_create(project=project)
    session.refresh_from_db()
    assert str(session.cost_budget) == "2.5000"
    assert session.max_autonomous_continues == 7


def test_session_create_rejects_unknown_axis_values(project: Project) -> None:
    with pytest.raises(CommandRejected, match="unknown work_mode 'dance'"):
        session_create(project=project, axes={"work_mode": "dance"})


# --- database constraints -------------------------------------------------------------


@pytest.mark.parametrize(
    "axis", ["work_mode", "run_control", "permission_profile", "model_mode", "surface"]
)
def test_the_database_refuses_an_invalid_axis_value(agent_session: AgentSession, axis: str) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        AgentSession.objects.filter(pk=agent_session.pk).update(**{axis: "bogus"})


# --- immediate changes ----------------------------------------------------------------


def test_every_applied_change_writes_one_transition(
    agent_session: AgentSession, user: User
) -> None:
    transition = session_change_mode(
        session=agent_session, changes={"work_mode": "build"}, reason="go", actor=Actor.of(user)
    )
    agent_session.refresh_from_db()
    assert agent_session.work_mode == "build"
    assert transition is not None
    assert transition.status == TransitionStatus.APPLIED
    assert transition.from_axes.work_mode == "chat"
    assert transition.to_axes == agent_session.axes
    assert transition.actor_kind == "user"
    assert transition.actor_user == user
    assert transition.applied_at is not None
    assert agent_session.mode_updated_at == transition.applied_at
    assert ModeTransition.objects.count() == 1


def test_a_change_to_the_same_values_writes_nothing(agent_session: AgentSession) -> None:
    assert change(agent_session, work_mode=agent_session.work_mode) is None
    assert ModeTransition.objects.count() == 0


@pytest.mark.parametrize(
    ("profile", "control"),
    list(itertools.product(PermissionProfile.values, RunControl.values)),
)
def test_permission_profile_and_run_control_never_move_each_other(
    agent_session: AgentSession, profile: str, control: str
) -> None:
    change(agent_session, run_control=control)
    agent_session.refresh_from_db()
    before_profile = agent_session.permission_profile
    change(agent_session, permission_profile=profile)
    agent_session.refresh_from_db()
    assert agent_session.run_control == control
    assert agent_session.permission_profile == profile
    change(agent_session, run_control=next(c for c in RunControl.values if c != control))
    agent_session.refresh_from_db()
    assert agent_session.permission_profile == profile
    assert before_profile in PermissionProfile.values


def test_every_combination_of_axes_is_valid(project: Project) -> None:
    for values in itertools.product(*(AXIS_CHOICES[a].values for a in Axes.__annotations__)):
        axes = dict(zip(Axes.__annotations__, values, strict=True))
        session = session_create(project=project, axes=axes)
        assert session.axes == Axes(**axes)


def test_unknown_axes_and_values_are_rejected_and_change_nothing(
    agent_session: AgentSession,
) -> None:
    with pytest.raises(CommandRejected, match="unknown axis 'mood'"):
        change(agent_session, mood="happy")
    with pytest.raises(CommandRejected, match="unknown run_control 'turbo'"):
        change(agent_session, work_mode="build", run_control="turbo")
    agent_session.refresh_from_db()
    assert agent_session.work_mode == "chat"
    assert ModeTransition.objects.count() == 0


@pytest.mark.parametrize("activity", [Activity.UNIT, Activity.TOOL])
def test_a_direct_change_while_the_engine_is_busy_waits_for_the_next_dispatch_point(
    agent_session: AgentSession, activity: str
) -> None:
    busy(agent_session, activity)
    transition = change(agent_session, model_mode="deep")
    agent_session.refresh_from_db()
    assert transition is not None
    assert transition.status == TransitionStatus.PENDING
    assert transition.scope == TransitionScope.NOW
    assert agent_session.model_mode == "smart", "a running tool call is never changed under it"
    session_apply_due(session=agent_session, point=DispatchPoint.AFTER_TOOL)
    agent_session.refresh_from_db()
    assert agent_session.model_mode == "deep"


# --- scoped steering ------------------------------------------------------------------

DUE = {
    "now": set(ALL_POINTS),
    "after-current-tool": set(ALL_POINTS),
    "after-current-unit": {
        DispatchPoint.BEFORE_UNIT,
        DispatchPoint.AFTER_UNIT,
        DispatchPoint.MILESTONE,
    },
    "next-milestone": {DispatchPoint.MILESTONE},
}


@pytest.mark.parametrize(
    ("scope", "point"), list(itertools.product(TransitionScope.values, ALL_POINTS))
)
def test_steering_applies_exactly_at_the_points_its_scope_names(
    agent_session: AgentSession, scope: str, point: DispatchPoint
) -> None:
    pending = change(agent_session, scope=scope, permission_profile="restricted")
    assert pending is not None
    assert pending.status == TransitionStatus.PENDING
    agent_session.refresh_from_db()
    assert agent_session.permission_profile == "normal", "steering is never applied on request"

    applied = session_apply_due(session=agent_session, point=point)

    agent_session.refresh_from_db()
    pending.refresh_from_db()
    if point in DUE[scope]:
        assert [t.pk for t in applied] == [pending.pk]
        assert pending.status == TransitionStatus.APPLIED
        assert agent_session.permission_profile == "restricted"
    else:
        assert applied == []
        assert pending.status == TransitionStatus.PENDING
        assert agent_session.permission_profile == "normal"


def test_pending_changes_apply_in_order_on_top_of_what_happened_meanwhile(
    agent_session: AgentSession,
) -> None:
    first = change(agent_session, scope="after-current-unit", work_mode="review")
    second = change(agent_session, scope="after-current-unit", work_mode="repair")
    change(agent_session, model_mode="deep")  # applied at once, in between

    applied = session_apply_due(session=agent_session, point=DispatchPoint.AFTER_UNIT)

    agent_session.refresh_from_db()
    assert [t.pk for t in applied] == [first.pk, second.pk]  # type: ignore[union-attr]
    assert agent_session.work_mode == "repair"
    assert agent_session.model_mode == "deep", "a pending change only moves its own axis"
    first.refresh_from_db()  # type: ignore[union-attr]
    assert first.from_axes.model_mode == "deep"  # type: ignore[union-attr]
    assert first.from_axes.work_mode == "chat"  # type: ignore[union-attr]
    assert first.to_axes.work_mode == "review"  # type: ignore[union-attr]


def test_steering_towards_the_current_values_is_not_stored(agent_session: AgentSession) -> None:
    assert change(agent_session, scope="after-current-unit", model_mode="smart") is None
    assert ModeTransition.objects.count() == 0


def test_an_unknown_scope_is_rejected(agent_session: AgentSession) -> None:
    with pytest.raises(CommandRejected, match="unknown scope 'for-next-unit'"):
        change(agent_session, scope="for-next-unit", model_mode="deep")


def test_cancelled_steering_never_applies(agent_session: AgentSession) -> None:
    pending = change(agent_session, scope="now", model_mode="fast")
    assert pending is not None
    transition_cancel(transition=pending, actor=USER)
    pending.refresh_from_db()
    assert pending.reason.endswith("(cancelled by test)")  # who withdrew it, not only who asked
    assert session_apply_due(session=agent_session, point=DispatchPoint.MILESTONE) == []
    agent_session.refresh_from_db()
    assert agent_session.model_mode == "smart"
    with pytest.raises(InvalidTransition):
        transition_cancel(transition=pending, actor=USER)


# --- pause and stop -------------------------------------------------------------------


def test_pause_keeps_the_axes_and_is_logged(agent_session: AgentSession) -> None:
    change(agent_session, run_control="autonomous")
    transition = session_set_paused(session=agent_session, paused=True, reason="lunch", actor=USER)
    agent_session.refresh_from_db()
    assert agent_session.paused is True
    assert agent_session.run_control == "autonomous"
    assert transition is not None
    assert (transition.from_paused, transition.to_paused) == (False, True)
    assert transition.summary == "paused"
    assert (
        session_set_paused(session=agent_session, paused=True, reason="again", actor=USER) is None
    )


def test_an_explicit_run_control_change_resumes(agent_session: AgentSession) -> None:
    session_set_paused(session=agent_session, paused=True, reason="p", actor=USER)
    session_change_mode(
        session=agent_session,
        changes={"run_control": "autonomous"},
        reason="go",
        actor=USER,
        resume=True,
    )
    agent_session.refresh_from_db()
    assert agent_session.paused is False


def test_stop_clears_autonomous_state(agent_session: AgentSession) -> None:
    change(agent_session, run_control="autonomous", permission_profile="trusted")
    AgentSession.objects.filter(pk=agent_session.pk).update(autonomous_continues=5)
    session_set_paused(session=agent_session, paused=True, reason="p", actor=USER)
    pending = change(agent_session, scope="next-milestone", model_mode="deep")

    session_stop(session=agent_session, reason="enough", actor=USER)

    agent_session.refresh_from_db()
    pending.refresh_from_db()  # type: ignore[union-attr]
    assert agent_session.run_control == "manual"
    assert agent_session.permission_profile == "trusted", "stop does not touch the profile"
    assert agent_session.paused is False
    assert agent_session.autonomous_continues == 0
    # Kept in the log as superseded by the stop (it used to be marked cancelled).
    assert pending.status == TransitionStatus.SUPERSEDED  # type: ignore[union-attr]
    assert pending.reason.endswith("(superseded by enough)")  # type: ignore[union-attr]


# --- the automatic transition to repair -----------------------------------------------


def autonomous_build(project: Project, profile: str = "trusted") -> AgentSession:
    return session_create(
        project=project,
        axes={"work_mode": "build", "run_control": "autonomous", "permission_profile": profile},
    )


def with_repair_policy(project: Project, policy: str) -> Project:
    project.policy = {**project.policy, "repair_policy": policy}
    project.save()
    return project


def test_repair_target_lowers_trust_but_never_raises_it() -> None:
    axes = Axes("build", "autonomous", "trusted", "deep", "web")
    assert repair_target(axes) == Axes("repair", "autonomous", "normal", "smart", "web")
    restricted = axes.replace(permission_profile="restricted")
    assert repair_target(restricted).permission_profile == "restricted"


def test_repair_under_auto_policy_transitions_at_once(project: Project) -> None:
    session = autonomous_build(with_repair_policy(project, "auto"))
    outcome = session_request_repair(session=session, cause="verification failed 3 times")
    session.refresh_from_db()
    assert outcome.action == "applied"
    assert session.axes == Axes("repair", "autonomous", "normal", "smart", "web")
    assert outcome.transition is not None
    assert outcome.transition.actor_kind == "system"
    assert "verification failed 3 times" in outcome.transition.reason


def test_repair_under_ask_policy_waits_for_a_person(project: Project) -> None:
    session = autonomous_build(with_repair_policy(project, "ask"))
    outcome = session_request_repair(session=session, cause="health gate failed")
    assert outcome.action == "awaiting-approval"
    assert session_apply_due(session=session, point=DispatchPoint.MILESTONE) == []
    session.refresh_from_db()
    assert session.work_mode == "build"

    assert outcome.transition is not None
    transition_approve(transition=outcome.transition, actor=USER)
    session_apply_due(session=session, point=DispatchPoint.AFTER_UNIT)
    session.refresh_from_db()
    assert session.work_mode == "repair"
    assert session.permission_profile == "normal"


def test_repair_under_log_only_policy_only_records_it(project: Project) -> None:
    session = autonomous_build(with_repair_policy(project, "log-only"))
    outcome = session_request_repair(session=session, cause="corrupt state")
    session.refresh_from_db()
    assert outcome.action == "logged"
    assert session.work_mode == "build"
    assert outcome.transition is not None
    assert outcome.transition.status == TransitionStatus.CANCELLED
    assert outcome.transition.reason.startswith("log-only policy:")


@pytest.mark.parametrize("policy", ["auto", "ask", "log-only"])
@pytest.mark.parametrize("control", ["manual", "assisted"])
def test_repair_is_never_automatic_under_manual_or_assisted(
    project: Project, policy: str, control: str
) -> None:
    session = session_create(
        project=with_repair_policy(project, policy),
        axes={"work_mode": "build", "run_control": control},
    )
    outcome = session_request_repair(session=session, cause="verification failed")
    session.refresh_from_db()
    assert outcome.action == "not-autonomous"
    assert session.work_mode == "build"
    assert ModeTransition.objects.filter(session=session).count() == 0


def test_only_a_pending_approval_can_be_approved(agent_session: AgentSession) -> None:
    transition = change(agent_session, work_mode="plan")
    assert transition is not None
    with pytest.raises(InvalidTransition):
        transition_approve(transition=transition, actor=USER)
