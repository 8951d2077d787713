"""Best-of-N: N attempts at once, each verified, ranked, the best kept and merged; a
person's pick of another; a budget that cannot cover N refused (docs/best-of-n.md)."""

from __future__ import annotations

import threading
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from agents_app.models import AgentSession
from agents_app.tests.runtime_helpers import ScriptedModel
from conftest import grant
from sf_core.actors import Actor
from sf_core.errors import InvalidTransition, NotAllowed, PlanInvalid
from tasks_app.engine.attempt_choice import attempt_pick
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.engine.review import task_approve
from tasks_app.models import AttemptRound, MergeRequest, ModelReview, Unit
from tasks_app.plan_edit import plan_document
from tasks_app.ranking import Candidate, choice_reason, patch_changed_lines, rank
from tasks_app.schemas import plan_spec_parse
from tasks_app.services import plan_create
from tasks_app.tests.test_engine import git, run_next, start, task_spec, writes

pytestmark = pytest.mark.django_db
# The project's default variants: attempt 1, 2, 3 at these temperatures.
FAILS, LONG, SHORT = 0.0, 0.4, 0.8
LONG_TEXT = "hello\nand a second line\nand a third\nand a fourth\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return demo_repo_create(tmp_path / "greet")


class ByVariant:
    """One scripted model per attempt, chosen by the temperature each attempt's variant
    sends: the attempts run at once, so one shared script would be read in any order."""

    def __init__(self, cost: float = 0.01) -> None:
        self.models = {
            FAILS: ScriptedModel(*writes("goodbye\n"), cost=cost),  # verification fails
            LONG: ScriptedModel(*writes(LONG_TEXT), cost=cost * 2),
            SHORT: ScriptedModel(*writes("hello\n"), cost=cost * 3),
        }

    def __call__(self, **kwargs: Any) -> Any:
        return self.models[kwargs["temperature"]](**kwargs)


def three_attempts(repo: Path, profile: str = "trusted") -> tuple[AgentSession, Any]:
    return start(repo, task_spec(best_of=3), profile=profile)


@pytest.mark.django_db(transaction=True)  # committed rows: the attempts run in threads
def test_three_attempts_at_once_the_smaller_verified_diff_is_merged(repo: Path) -> None:
    session, plan = three_attempts(repo)
    model = ByVariant()

    report = run_next(session, model)

    task = plan.tasks.get()
    assert (report.outcome, task.status) == ("verified", "done")
    units = {u.attempt: u for u in Unit.objects.filter(task=task)}
    assert sorted(units) == [1, 2, 3]
    assert {n: units[n].variant["temperature"] for n in units} == {1: FAILS, 2: LONG, 3: SHORT}
    assert [units[n].verification_passed for n in (1, 2, 3)] == [False, True, True]
    assert all(len(m.calls) == 2 for m in model.models.values()), "each ran its own loop"
    round_ = AttemptRound.objects.get(task=task)
    assert round_.winner_id == units[3].pk
    assert [row["attempt"] for row in round_.ranking] == [3, 2, 1]
    assert round_.reason.startswith("attempt 3 kept: 2 of 3 attempts passed verification")
    assert "the smallest diff: 1 changed line against 4 changed lines of attempt 2" in round_.reason
    assert round_.reason in task.transitions.get(to_status="review").reason
    # Every attempt's cost is counted: 2 steps each at 0.01, 0.02 and 0.03.
    assert [units[n].cost for n in (1, 2, 3)] == [Decimal("0.02"), Decimal("0.04"), Decimal("0.06")]
    session.refresh_from_db()
    assert session.cost_spent == task.cost_spent == Decimal("0.1200")
    assert session.cost_reserved == 0
    # One merge, of the winner's work.
    assert MergeRequest.objects.filter(task=task).count() == 1
    assert (repo / "hello.txt").read_text() == "hello\n"
    assert git(repo, "log", "--format=%s", "-1") == "sf: merge hello: Write hello.txt"
    assert not git(repo, "branch", "--list", "sf/*"), "attempt branches go with the merge"
    assert ".r" not in git(repo, "worktree", "list"), "attempt worktrees were removed"


def test_a_persons_pick_replaces_the_winner_and_is_merged(repo: Path, user: User) -> None:
    session, plan = three_attempts(repo, profile="normal")  # a person reviews
    assert run_next(session, ByVariant()).task_status == "review"
    task = plan.tasks.get()
    units = {u.attempt: u for u in Unit.objects.filter(task=task)}
    round_ = AttemptRound.objects.get(task=task)
    assert round_.winner_id == units[3].pk
    with pytest.raises(NotAllowed, match="attempt 1 did not pass verification"):
        attempt_pick(unit=units[1], actor=Actor.of(user))

    attempt_pick(unit=units[2], actor=Actor.of(user), note="the longer text reads better")

    round_.refresh_from_db()
    task.refresh_from_db()
    assert round_.winner_id == units[2].pk
    assert (round_.chosen_kind, round_.chosen_label) == ("user", user.username)
    assert round_.reason.startswith(
        f"attempt 2 picked by {user.username} instead of attempt 3: the longer text reads better"
    )
    assert task.checkpoint_ref == units[2].checkpoint_commit
    task_approve(task=task, actor=Actor.of(user))
    task.refresh_from_db()
    assert task.status == "done"
    assert (repo / "hello.txt").read_text() == LONG_TEXT
    assert MergeRequest.objects.filter(task=task).count() == 1
    with pytest.raises(InvalidTransition, match=r"merged already as \w+ with attempt 2"):
        attempt_pick(unit=units[3], actor=Actor.of(user))


def test_a_budget_that_cannot_cover_n_attempts_is_refused_with_the_figures(repo: Path) -> None:
    session, plan = three_attempts(repo)
    AgentSession.objects.filter(pk=session.pk).update(cost_budget=Decimal("1.00"))

    assert run_next(session, ByVariant()) is None

    task = plan.tasks.get()
    assert (task.status, task.hold_reason) == ("paused", "person")  # not lifted by itself
    assert task.status_reason == (
        "best-of-3 needs $1.50 reserved up front (3 attempts x $0.50, "
        "budgets.unit_reserve_usd) but the session has $1.00 left: "
        "raise the budget or lower best_of, then resume the task"
    )
    assert not Unit.objects.filter(task=task).exists(), "not run with fewer attempts"
    session.refresh_from_db()
    assert session.cost_reserved == 0


def test_a_plan_over_the_projects_cap_is_invalid_and_the_plan_default_applies(
    repo: Path,
) -> None:
    with pytest.raises(PlanInvalid, match="over the project's cap of 2"):
        start(repo, task_spec(best_of=3), policy={"best_of": {"cap": 2}})
    with pytest.raises(PlanInvalid, match=r"tasks\[0\] \(hello\)\.best_of: 5 attempts is over"):
        start(repo, task_spec(best_of=5))
    session, _ = start(repo, task_spec())
    spec = plan_spec_parse(
        {"summary": "s", "best_of": 2, "tasks": [task_spec("one"), task_spec("two", best_of=1)]}
    )
    plan = plan_create(session=session, spec=spec, source="file")
    assert sorted(plan.tasks.values_list("key", "best_of")) == [("one", 2), ("two", 1)]
    assert "best_of: 2" in plan_document(plan)
    assert "best_of: 1" not in plan_document(plan)


def candidate(attempt: int, **values: Any) -> Candidate:
    fields: dict[str, Any] = {"passed": True, "changed_lines": 5, "cost": Decimal("0.01")}
    return Candidate(unit=100 + attempt, attempt=attempt, **(fields | values))


def test_the_ranking_orders_verification_verdict_size_cost_then_attempt() -> None:
    ranked = rank(
        [
            candidate(1, passed=False, changed_lines=1),
            candidate(2, changed_lines=9, verdict="approve"),
            candidate(3, changed_lines=2),
            candidate(4, changed_lines=2, cost=Decimal("0.001")),
            candidate(5, changed_lines=2, cost=Decimal("0.001")),
            candidate(6, changed_lines=0),  # passed, but changed nothing
            candidate(7, changed_lines=1, verdict="request_changes"),
        ]
    )
    assert [each.attempt for each in ranked] == [2, 4, 5, 3, 7, 6, 1]
    assert "the review preferred it to attempt 4 (no verdict)" in choice_reason(ranked)
    tie = rank([candidate(2, changed_lines=3), candidate(1, changed_lines=3)])
    assert choice_reason(tie).endswith("the lower attempt number is kept")
    cheaper = rank([candidate(1, cost=Decimal("0.02")), candidate(2)])
    assert "and cheaper: $0.0100 against $0.0200" in choice_reason(cheaper)
    none = rank([candidate(1, passed=False), candidate(2, passed=False)])
    assert choice_reason(none) == "0 of 2 attempts passed verification: no attempt kept"


def test_changed_lines_count_hunks_not_headers() -> None:
    patch = (
        "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-old\n+new\n context\n"
        "diff --git a/y b/y\nnew file mode 100644\n--- /dev/null\n+++ b/y\n@@ -0,0 +1 @@\n+--y\n"
    )
    assert patch_changed_lines(patch) == 3


def test_the_pick_is_for_approvers_and_a_refusal_says_why(
    repo: Path, user: User, client: Any
) -> None:
    session, plan = three_attempts(repo, profile="normal")
    run_next(session, ByVariant())
    task = plan.tasks.get()
    units = {u.attempt: u for u in Unit.objects.filter(task=task)}
    client.force_login(user)
    pick = f"/tasks/{task.pk}/attempts/{units[2].pk}/pick"
    grant(user, session.project, "viewer")
    page = client.get(f"/tasks/{task.pk}/attempts")
    assert page.status_code == 200
    assert b"data-pick=" not in page.content, "a viewer is offered no pick"
    assert client.post(pick).status_code == 403
    grant(user, session.project, "approver")
    refused = client.post(f"/tasks/{task.pk}/attempts/{units[1].pk}/pick")
    assert refused.status_code == 403
    assert b"attempt 1 did not pass verification" in refused.content
    assert client.post(pick, {"note": "longer"}).status_code == 302
    assert AttemptRound.objects.get(task=task).winner_id == units[2].pk


class Reviewed:
    """Each attempt's scripted model answers its unit's steps, then its review's: a
    review's calls (``review_verdict`` offered) go to the model that last answered in
    the same thread (each attempt runs its unit, then its review, in a thread)."""

    def __init__(self, **by_temperature: ScriptedModel) -> None:
        self.models = {float(key.split("_")[1]) / 10: m for key, m in by_temperature.items()}
        self.by_thread: dict[int, ScriptedModel] = {}

    def __call__(self, **kwargs: Any) -> Any:
        offered = {tool["function"]["name"] for tool in kwargs.get("tools") or []}
        if "review_verdict" in offered:
            return self.by_thread[threading.get_ident()](**kwargs)
        model = self.models[kwargs["temperature"]]
        self.by_thread[threading.get_ident()] = model
        return model(**kwargs)


class DownForReviews(ScriptedModel):
    """Answers its unit's steps; its review's provider fails."""

    def __call__(self, **kwargs: Any) -> Any:
        if not self.steps:
            raise RuntimeError("the review's provider is down")
        return super().__call__(**kwargs)


def review_says(kind: str, reasons: str) -> tuple[str, list[Any]]:
    return ("verdict", [("review_verdict", {"verdict": kind, "reasons": reasons})])


@pytest.mark.django_db(transaction=True)  # committed rows: the attempts run in threads
def test_each_attempt_is_reviewed_and_the_better_verdict_wins_the_tie(
    repo: Path, settings: Any, user: User, client: Any
) -> None:
    """All three pass verification; the smallest diff would win on size, but its review
    asks for changes; a failed review is ``no_verdict``; the approved one is kept."""
    settings.SF_MODEL_DEEP = "openai/gpt-4o"
    review = {"model_review": {"mode": "advisory"}}
    session, plan = start(repo, task_spec(best_of=3), profile="trusted", policy=review)
    smallest = ScriptedModel(*writes("hello\n"), review_says("request_changes", "terse"), cost=0.01)
    failing = DownForReviews(*writes("hello\nthere\n"), cost=0.01)
    approved = ScriptedModel(*writes(LONG_TEXT), review_says("approve", "meets R1"), cost=0.01)
    model = Reviewed(t_0=smallest, t_4=failing, t_8=approved)

    report = run_next(session, model)

    task = plan.tasks.get()
    assert (report.outcome, task.status) == ("verified", "done")
    units = {u.attempt: u for u in Unit.objects.filter(task=task)}
    verdicts = {n: ModelReview.objects.get(unit=units[n]).verdict for n in units}
    assert verdicts == {1: "request_changes", 2: "no_verdict", 3: "approve"}
    assert (
        "RuntimeError: the review's provider is down"
        in (ModelReview.objects.get(unit=units[2]).notes[0])
    )
    round_ = AttemptRound.objects.get(task=task)
    assert round_.winner_id == units[3].pk
    assert [row["attempt"] for row in round_.ranking] == [3, 2, 1]
    assert [row["verdict"] for row in round_.ranking] == [
        "approve",
        "no_verdict",
        "request_changes",
    ]
    assert "the model review's verdicts: attempt 3 approve, attempt 2 no_verdict, " in round_.reason
    assert "attempt 1 request_changes" in round_.reason
    assert "the review preferred it to attempt 2 (no_verdict)" in round_.reason
    # Each review's steps are its attempt's cost (the ranking's cost), counted once.
    assert [units[n].cost for n in (1, 2, 3)] == [Decimal("0.03"), Decimal("0.02"), Decimal("0.03")]
    session.refresh_from_db()
    assert session.cost_spent == task.cost_spent == Decimal("0.0800")
    assert session.cost_reserved == 0
    assert (repo / "hello.txt").read_text() == LONG_TEXT
    # Side by side, each attempt says what its review said.
    grant(user, session.project, "viewer")
    client.force_login(user)
    page = client.get(f"/tasks/{task.pk}/attempts").content.decode()
    for verdict in ("approve", "no_verdict", "request_changes"):
        assert f'data-attempt-verdict="{verdict}"' in page


@pytest.mark.django_db(transaction=True)
def test_a_required_review_of_the_kept_attempt_sends_the_round_back(
    repo: Path, settings: Any
) -> None:
    """Every attempt's review asks for changes: the kept one's verdict acts as a single
    unit's would (required: the task goes back for another round); the others' do not."""
    settings.SF_MODEL_DEEP = "openai/gpt-4o"
    review = {"model_review": {"mode": "required"}}
    session, plan = start(repo, task_spec(best_of=2), profile="trusted", policy=review)
    first = ScriptedModel(*writes("hello\n"), review_says("request_changes", "one"))
    second = ScriptedModel(*writes(LONG_TEXT), review_says("request_changes", "two"))

    run_next(session, Reviewed(t_0=first, t_4=second))

    task = plan.tasks.get()
    assert task.status == "todo"
    assert task.status_reason == "changes requested by model review: one"
    units = {u.attempt: u for u in Unit.objects.filter(task=task)}
    assert AttemptRound.objects.get(task=task).winner_id == units[1].pk
    sent = {n: ModelReview.objects.get(unit=units[n]).sent_back for n in units}
    assert sent == {1: True, 2: False}
