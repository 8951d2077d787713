"""MCP tools in a real unit: the engine path, a real worktree, the test MCP server
(tests/mcp_test_server.py) started by the unit through the real bubblewrap, and the
model served by the fake provider over real HTTP (litellm converts the tool specs for
real). Allowed, asked and denied calls; the server gone after every unit; a skill's
mcp.json; secrets redacted; a recorded unit replayed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from agents_app.gate.approvals import decision_family, decision_review
from agents_app.models import RiskDecision, TraceEvent
from agents_app.runtime.recording import trace_export, trace_write
from agents_app.runtime.replay import replay_load
from agents_app.runtime.sandbox import bwrap_problem
from agents_app.tests.mcp_helpers import (
    PYTHON_PATHS,
    SERVER_FILE,
    alive,
    install_server,
    marker,
    server_policy,
)
from conftest import grant
from tasks_app.engine.unit import UnitOptions, unit_run
from tasks_app.models import Task, TaskSchedule
from tasks_app.tests.test_engine import MODEL, repo, start, task_spec
from tasks_app.tests.test_provider_outage import provider
from tasks_app.workspaces import workspace_of
from tests.fake_provider import FakeProvider, call, fake_provider, openai_calls

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        bool(bwrap_problem("/usr/bin/bwrap")), reason="bubblewrap is required (scripts/setup.sh)"
    ),
]
__all__ = ["fake_provider", "provider", "repo"]  # fixtures
TRACKER = {"lookup": "read", "create_item": "write", "credentials": "read"}  # drop_all: none
SECRET = "tracker-token-7f3a9c2e51"


def commit(repo: Path) -> None:
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "tracker"],
        cwd=repo,
        check=True,
    )


@pytest.fixture
def word(repo: Path) -> str:
    """The repository gets the tracker server and one item; ``word`` finds its processes."""
    install_server(repo)
    (repo / "items").mkdir()
    (repo / "items" / "keep.txt").write_text("kept")
    commit(repo)
    return marker()


def tracker_policy(word: str, **extra: Any) -> dict[str, Any]:
    server = server_policy(word, tools=TRACKER, env={"TRACKER_TOKEN": "${TRACKER_TOKEN}"})
    return {"mcp": {"servers": {"tracker": server}}, **extra}


def run_unit(session: Any, **options: Any) -> Any:
    task_id = TaskSchedule.objects.get(task__plan__session=session).task_id
    return unit_run(task_id=task_id, worker="test", options=UnitOptions(model=MODEL, **options))


def finish() -> Any:
    return openai_calls(call("finish", {"summary": "done"}))


def tool_results(provider: FakeProvider, request: int) -> list[str]:
    messages = provider.requests[request].body["messages"]
    return [str(m["content"]) for m in messages if m["role"] == "tool"]


def brief(provider: FakeProvider) -> str:
    return str(provider.requests[0].body["messages"][1]["content"])


@pytest.fixture(autouse=True)
def tracker_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SF_SECRET_TRACKER_TOKEN", SECRET)


def test_an_allowed_mcp_tool_runs_and_its_result_reaches_the_model_and_the_trace(
    repo: Path, word: str, provider: FakeProvider
) -> None:
    session, _plan = start(
        repo,
        task_spec(verify=["test -f items/a1.txt"]),
        profile="normal",
        policy=tracker_policy(word),
    )
    provider.answer(
        openai_calls(call("mcp__tracker__lookup", {"key": "keep"})),
        openai_calls(call("mcp__tracker__create_item", {"name": "a1", "body": "open"})),
        finish(),
    )
    report = run_unit(session)
    assert report.outcome == "verified", report.detail
    offered = {t["function"]["name"]: t["function"] for t in provider.requests[0].body["tools"]}
    assert offered["mcp__tracker__lookup"]["parameters"]["required"] == ["key"]
    assert "Look up one item" in offered["mcp__tracker__lookup"]["description"]
    assert "- mcp__tracker__lookup (mcp-read): [MCP server tracker] Look up" in brief(provider)
    assert tool_results(provider, 1)[-1] == "item keep: kept"
    assert tool_results(provider, 2)[-1] == "created item a1"
    decisions = RiskDecision.objects.filter(tool__startswith="mcp__").order_by("pk")
    assert [(d.tool, d.decision, d.risk_class, d.permission_profile) for d in decisions] == [
        ("mcp__tracker__lookup", "allow", "mcp-read", "normal"),
        ("mcp__tracker__create_item", "allow", "mcp-write", "normal"),
    ]
    assert decisions[1].input_normalized == {"name": "a1", "body": "open"}
    assert {d.work_mode for d in decisions} == {"build"}  # the five axes are recorded
    calls = TraceEvent.objects.filter(unit_id=report.unit_id, kind="tool_call").order_by("seq")
    assert [(e.name, e.payload["output"]) for e in calls][:2] == [
        ("mcp__tracker__lookup", "item keep: kept"),
        ("mcp__tracker__create_item", "created item a1"),
    ]
    assert all(len(e.input_hash) == 64 for e in calls)
    started = TraceEvent.objects.get(unit_id=report.unit_id, kind="note", name="mcp:tracker")
    assert started.payload["sandboxed"] is True
    assert started.payload["tools"]["mcp__tracker__drop_all"] == "mcp-unclassed"
    assert not alive(word)  # stopped with the unit


@pytest.mark.parametrize(("scope", "match"), [("once", "exact"), ("session", "family")])
def test_an_unclassed_tool_asks_blocks_the_task_and_runs_once_approved(
    repo: Path,
    word: str,
    provider: FakeProvider,
    staff_user: User,
    django_capture_on_commit_callbacks: Any,
    scope: str,
    match: str,
) -> None:
    session, plan = start(
        repo, task_spec(verify=["true"]), profile="trusted", policy=tracker_policy(word)
    )
    drop = openai_calls(call("mcp__tracker__drop_all", {}))
    provider.answer(drop)
    report = run_unit(session)
    assert report.task_status == "blocked"
    decision = RiskDecision.objects.get(review_status="pending")
    assert (decision.tool, decision.rule, decision.risk_class) == (
        "mcp__tracker__drop_all",
        "mcp.unclassed",
        "mcp-unclassed",
    )
    assert decision_family(decision) == "mcp__tracker__drop_all"  # "any call of" the tool
    task = Task.objects.get(plan=plan)
    assert task.status_reason.startswith(f"approval needed (decision {decision.pk})")
    items = workspace_of(task).path / "items"
    assert (items / "keep.txt").is_file()  # nothing ran
    assert not alive(word)

    grant(staff_user, session.project, "approver")
    with django_capture_on_commit_callbacks(execute=True):
        decision_review(
            decision=decision, reviewer=staff_user, approve=True, scope=scope, match=match
        )
    assert Task.objects.get(plan=plan).status == "todo"
    # The next attempt resumes at the approved call (made once, not asked again); with a
    # session-wide approval the model's own second call is allowed by it too.
    if scope == "once":
        provider.answer(finish())
    else:
        provider.answer(drop, finish())
    again = run_unit(session)
    assert again.outcome == "verified", again.detail
    assert tool_results(provider, 1)[-1] == "dropped 1 items"
    allowed = RiskDecision.objects.filter(tool="mcp__tracker__drop_all").exclude(pk=decision.pk)
    if scope == "once":
        assert RiskDecision.objects.get(pk=decision.pk).used_at is not None  # spent
    else:
        # The resumed call and the model's second one, both under the approval.
        assert [d.rule for d in allowed] == [
            "allow.approved:mcp__tracker__drop_all:mcp__tracker__drop_all …"
        ] * 2
    assert not items.exists()
    assert not alive(word)


def test_a_denied_tool_is_refused_with_the_rule_and_nothing_runs(
    repo: Path, word: str, provider: FakeProvider
) -> None:
    deny = [{"tool": "*", "pattern": "mcp__tracker__drop_all", "reason": "never empty the tracker"}]
    policy = tracker_policy(word, deny=deny)
    session, _plan = start(
        repo, task_spec(verify=["test -f items/keep.txt"]), profile="unrestricted", policy=policy
    )
    provider.answer(openai_calls(call("mcp__tracker__drop_all", {})), finish())
    report = run_unit(session)
    assert report.outcome == "verified", report.detail  # items/keep.txt is still there
    assert tool_results(provider, 1)[-1] == (
        "denied by deny.project:mcp__tracker__drop_all: never empty the tracker"
    )
    decision = RiskDecision.objects.get(tool="mcp__tracker__drop_all")
    assert (decision.decision, decision.rule) == ("deny", "deny.project:mcp__tracker__drop_all")
    assert not alive(word)


def test_secrets_in_a_tool_result_and_its_arguments_are_redacted(
    repo: Path, word: str, provider: FakeProvider
) -> None:
    session, _plan = start(
        repo, task_spec(verify=["true"]), profile="normal", policy=tracker_policy(word)
    )
    key = "sk-ant-api03-" + "Zq8" * 20
    provider.answer(
        openai_calls(call("mcp__tracker__credentials", {})),
        openai_calls(call("mcp__tracker__lookup", {"key": key})),
        finish(),
    )
    report = run_unit(session)
    assert report.outcome == "verified", report.detail
    shown = tool_results(provider, 1)[-1]
    assert shown.startswith("token: ")
    assert SECRET not in shown  # the model never sees it
    stored = json.dumps(
        list(TraceEvent.objects.filter(unit_id=report.unit_id).values_list("payload", flat=True))
    )
    assert SECRET not in stored
    assert key not in stored
    assert key not in json.dumps(
        list(RiskDecision.objects.values_list("input_normalized", flat=True))
    )
    assert "REDACTED" in stored


def test_a_skills_mcp_json_server_is_offered_and_its_load_says_so(
    repo: Path, word: str, provider: FakeProvider
) -> None:
    folder = repo / ".agents" / "skills" / "tracker-notes"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: tracker-notes\ndescription: The tracker\n---\nUse it.\n"
    )
    install_server(folder)
    args = ["${SKILL_DIR}/" + SERVER_FILE, "--marker", word]
    mcp_json = {"mcpServers": {"notes": {"command": PYTHON_PATHS[0] + "/bin/python", "args": args}}}
    (folder / "mcp.json").write_text(json.dumps(mcp_json))
    commit(repo)
    policy = {"mcp": {"expose": PYTHON_PATHS, "tools": {"mcp__notes__lookup": "read"}}}
    session, _plan = start(repo, task_spec(verify=["true"]), profile="normal", policy=policy)
    provider.answer(
        openai_calls(call("load_skill", {"name": "tracker-notes"})),
        openai_calls(call("mcp__notes__lookup", {"key": "keep"})),
        finish(),
    )
    report = run_unit(session)
    assert report.outcome == "verified", report.detail
    offered = [t["function"]["name"] for t in provider.requests[0].body["tools"]]
    assert "mcp__notes__lookup" in offered
    assert (
        "Its MCP servers (mcp.json) run for this unit; their tools: mcp__notes__"
        in (tool_results(provider, 1)[-1])
    )
    assert tool_results(provider, 2)[-1] == "item keep: kept"  # cwd: the worktree
    assert RiskDecision.objects.get(tool="mcp__notes__lookup").decision == "allow"
    assert not alive(word)


def test_a_server_that_cannot_start_is_traced_and_the_unit_goes_on(
    repo: Path, word: str, provider: FakeProvider
) -> None:
    policy = tracker_policy(word)
    policy["mcp"]["servers"]["broken"] = {"command": "/nonexistent/broken-mcp"}
    policy["mcp"]["servers"]["keyless"] = {"command": "true", "env": {"K": "${MISSING_KEY}"}}
    session, _plan = start(repo, task_spec(verify=["true"]), profile="normal", policy=policy)
    provider.answer(openai_calls(call("mcp__tracker__lookup", {"key": "keep"})), finish())
    report = run_unit(session)
    assert report.outcome == "verified", report.detail
    errors = {e.name: e.payload["error"] for e in TraceEvent.objects.filter(kind="error")}
    # prlimit, which sets the sandbox's resource limits, is what execs the server.
    assert "failed to execute /nonexistent/broken-mcp: No such file" in errors["mcp:broken"]
    assert "secret MISSING_KEY is not set on this worker" in errors["mcp:keyless"]
    assert "MCP servers that did not start" in brief(provider)
    assert "- broken: " in brief(provider)
    assert tool_results(provider, 1)[-1] == "item keep: kept"


def test_a_unit_that_fails_midway_stops_its_server(
    repo: Path, word: str, provider: FakeProvider
) -> None:
    session, _plan = start(
        repo, task_spec(verify=["true"]), profile="normal", policy=tracker_policy(word)
    )
    provider.answer(openai_calls(call("mcp__tracker__lookup", {"key": "keep"})))  # then nothing
    report = run_unit(session)
    assert report.outcome == "error"
    assert "no scripted answer left" in report.detail
    assert tool_results(provider, 1)[-1] == "item keep: kept"
    assert not alive(word)


def test_a_recorded_unit_with_mcp_calls_replays_and_runs_them_for_real(
    repo: Path, word: str, provider: FakeProvider, tmp_path: Path
) -> None:
    session, _plan = start(
        repo,
        task_spec(verify=["test -f items/a1.txt"]),
        profile="normal",
        policy=tracker_policy(word),
    )
    provider.answer(
        openai_calls(call("mcp__tracker__create_item", {"name": "a1", "body": "open"})), finish()
    )
    recorded = run_unit(session)
    assert recorded.outcome == "verified", recorded.detail
    trace = trace_write(
        tmp_path / "mcp-trace.jsonl", trace_export(unit_id=recorded.unit_id, header={"note": "t"})
    )

    again = repo.parent / "again"
    subprocess.run(["git", "clone", "-q", str(repo), str(again)], check=True)
    replayed_session, _ = start(
        again,
        task_spec(verify=["test -f items/a1.txt"]),
        profile="normal",
        policy=tracker_policy(word),
    )
    report = run_unit(replayed_session, replay=replay_load(trace))
    assert report.outcome == "verified", report.detail  # the tool ran: the file exists
    call_event = TraceEvent.objects.get(unit_id=report.unit_id, name="mcp__tracker__create_item")
    assert call_event.payload["output"] == "created item a1"
    assert len(provider.requests) == 2  # the replay never asked the provider
