"""The per-worktree environment: a setup run once per worktree through the gate and
the sandbox, secret files kept out of every trace, per-unit resources as variables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from agents_app.gate.approvals import decision_review
from agents_app.models import RiskDecision, TraceEvent
from agents_app.tests.runtime_helpers import ScriptedModel
from conftest import grant
from sf_core.actors import Actor
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.engine.review import task_request_changes
from tasks_app.models import HoldReason, Unit, WorktreeSetup
from tasks_app.tests.test_engine import git, run_next, start, task_spec, writes
from tasks_app.workspaces import workspace_of

pytestmark = pytest.mark.django_db
INSTALL = "mkdir -p vendor && cp deps/greetlib.py vendor/ && echo installed greetlib"
CHECK = "import sys\nsys.path.insert(0, 'vendor')\nimport greetlib\nprint(greetlib.greet())\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The sample project with a dependency that only the setup puts on the path."""
    repo = demo_repo_create(tmp_path / "greet")
    (repo / "deps").mkdir()
    (repo / "deps/greetlib.py").write_text("def greet():\n    return 'hello from greetlib'\n")
    (repo / "check_greet.py").write_text(CHECK)
    (repo / ".gitignore").write_text("vendor/\n")  # .env is not ignored: SF keeps it out
    git(repo, "add", "--all")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "deps")
    return repo


def high_risk_task(**extra: Any) -> dict[str, Any]:
    """A trusted session still waits for a person on high risk: the task stays in
    review, so "Request changes" can send it to a second unit in the same worktree."""
    return task_spec(verify=["python3 check_greet.py"], risk_level="high", **extra)


def policy(**worktree: Any) -> dict[str, Any]:
    return {"worktree": worktree}


def test_verify_fails_without_the_setup(repo: Path) -> None:
    session, _plan = start(repo, high_risk_task())
    report = run_next(session, ScriptedModel(*writes("hello\n")))
    unit = Unit.objects.get(pk=report.unit_id)
    assert unit.verification_passed is False
    assert "ModuleNotFoundError" in unit.verification_output


def test_a_setup_script_that_installs_a_dependency_before_verify(
    repo: Path, user: User, logged_in_client: Client
) -> None:
    session, plan = start(repo, high_risk_task(), policy=policy(setup=INSTALL, resources=["port"]))
    grant(user, session.project, "viewer")
    first = run_next(session, ScriptedModel(*writes("hello\n")))
    assert first.task_status == "review"
    unit = Unit.objects.get(pk=first.unit_id)
    assert unit.verification_passed is True
    assert "hello from greetlib" in unit.verification_output
    task = plan.tasks.get()
    task_request_changes(task=task, actor=Actor.system("reviewer"), reason="say hello twice")
    second = run_next(session, ScriptedModel(*writes("hello\nhello\n")))
    assert second.task_status == "review"
    assert Unit.objects.get(pk=second.unit_id).verification_passed is True
    setup = WorktreeSetup.objects.get(task=task)  # once across the two units
    assert (setup.status, setup.exit_code, setup.unit_id) == ("passed", 0, unit.pk)
    assert "installed greetlib" in setup.output
    # The setup's products are the project's to ignore; they are not in the diff.
    assert "vendor/" not in Unit.objects.get(pk=second.unit_id).checkpoint_patch
    page = logged_in_client.get(reverse("unit-detail", args=[second.unit_id])).content.decode()
    assert 'data-setup-status="passed"' in page
    assert "exit 0" in page
    assert "installed greetlib" in page
    assert 'data-resource="SF_PORT"' in page


def test_the_gate_decides_the_setup_and_an_ask_blocks_the_task(
    repo: Path, staff_user: User, django_capture_on_commit_callbacks: Any
) -> None:
    (repo / "setup.sh").write_text(INSTALL + "\n")
    git(repo, "add", "--all")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "setup")
    session, plan = start(
        repo, high_risk_task(), profile="normal", policy=policy(setup="sh setup.sh")
    )
    model = ScriptedModel(*writes("hello\n"))
    report = run_next(session, model)
    assert report.task_status == "blocked"
    assert model.calls == []  # the agent never started
    task = plan.tasks.get()
    assert task.hold_reason == HoldReason.APPROVAL_NEEDED
    decision = RiskDecision.objects.get(review_status="pending")
    assert decision.unit_id == report.unit_id
    assert decision.input_normalized["command"] == "sh setup.sh"
    assert WorktreeSetup.objects.get(task=task).status == "refused"

    grant(staff_user, session.project, "approver")
    with django_capture_on_commit_callbacks(execute=True):
        decision_review(decision=decision, reviewer=staff_user, approve=True, scope="once")
    assert plan.tasks.get().status == "todo"
    # python3 check_greet.py asks under normal too: the plan was accepted by nobody.
    run_next(session, ScriptedModel(*writes("hello\n")))
    assert WorktreeSetup.objects.filter(task=task, status="passed").count() == 1


def test_a_secret_file_is_written_but_never_shown(
    repo: Path, user: User, logged_in_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "s3cr3t-Value-4711"
    monkeypatch.setenv("SF_SECRET_GREET_ENV", f"GREET_TOKEN={secret}\n")
    files = [{"path": ".env", "secret": "GREET_ENV"}]
    spec = task_spec(verify=["cat .env", "grep -q hello hello.txt"], risk_level="high")
    session, _plan = start(repo, spec, policy=policy(files=files))
    grant(user, session.project, "viewer")
    reading = ("reading", [("run_command", {"command": "cat .env"})])
    report = run_next(session, ScriptedModel(reading, *writes("hello\n")))
    unit = Unit.objects.get(pk=report.unit_id)
    worktree = Path(str(unit.task.plan.session.project.repo_path))
    checkout = Path(str(worktree_of(unit)))
    assert (checkout / ".env").read_text() == f"GREET_TOKEN={secret}\n"
    assert unit.verification_passed is True
    traced = " ".join(str(e.payload) for e in TraceEvent.objects.filter(unit=unit))
    assert "GREET_TOKEN" in traced or "REDACTED" in traced
    page = logged_in_client.get(reverse("unit-detail", args=[unit.pk])).content.decode()
    for shown in (traced, unit.verification_output, unit.checkpoint_patch, page):
        assert secret not in shown
    assert "[REDACTED:project_secret]" in unit.verification_output
    branch = git(worktree, "for-each-ref", "--format=%(refname:short)", "refs/heads/sf/")
    assert ".env" not in git(worktree, "show", "--name-only", "--format=", branch).split()


def worktree_of(unit: Unit) -> Path:
    return workspace_of(unit.task).path


def test_resources_are_passed_as_variables_and_differ_per_unit(repo: Path) -> None:
    echo = ("env", [("run_command", {"command": "echo port=$SF_PORT db=$SF_DATABASE_NAME"})])
    verify = ['test -n "$SF_PORT" && test -n "$SF_DATABASE_NAME"']
    session, _plan = start(
        repo,
        task_spec("one", verify=verify),
        task_spec("two", verify=verify),
        policy=policy(resources=["port", "database"]),
    )
    reports = [run_next(session, ScriptedModel(echo, *writes("hello\n", f"{k}.txt"))) for k in "ab"]
    units = [Unit.objects.get(pk=r.unit_id) for r in reports]
    ports = {u.resources["SF_PORT"] for u in units}
    names = {u.resources["SF_DATABASE_NAME"] for u in units}
    assert len(ports) == 2
    assert len(names) == 2
    for unit in units:
        assert unit.verification_passed is True
        traced = " ".join(str(e.payload) for e in TraceEvent.objects.filter(unit=unit))
        assert f"port={unit.resources['SF_PORT']} db={unit.resources['SF_DATABASE_NAME']}" in traced
        assert unit.resources["SF_DATABASE_NAME"] == (
            f"sf_{session.project_id}_{unit.task_id}_{unit.attempt}"
        )


# The setup runs project code in the sandbox with the worktree's admin directory
# writable; in record mode SF then marks that directory "set up here", as root.
PLANT = 'admin=$(sed "s/^gitdir: //" .git) && ln -s "$VICTIM" "$admin/sf-set-up"\n'


def test_the_set_up_mark_follows_no_link_the_setup_planted(
    repo: Path, tmp_path: Path, settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Record mode (a repository of record): the setup's link in the admin directory
    had SF (root) truncate the host file it named; now the link is found and removed."""
    victim = tmp_path / "victim"  # a host file no sandboxed command can see
    victim.write_text("precious\n")
    (repo / "plant.sh").write_text(PLANT.replace("$VICTIM", str(victim)))
    git(repo, "add", "plant.sh")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "plant")
    record = tmp_path / "record.git"
    git(tmp_path, "clone", "--bare", "-q", str(repo), str(record))
    settings.SF_RECORD_URL_PREFIXES = [f"file://{tmp_path}/"]
    worktree = {"setup": "sh plant.sh"}
    spec = task_spec(verify=["grep -q hello hello.txt"], risk_level="high")
    record_policy = {"worktree": worktree, "record": {"url": f"file://{record}"}}
    session, _plan = start(repo, spec, policy=record_policy)
    report = run_next(session, ScriptedModel(*writes("hello\n")))
    setup = WorktreeSetup.objects.get(unit_id=report.unit_id)
    assert (setup.status, setup.exit_code) == ("passed", 0), setup.output
    assert victim.read_text() == "precious\n"
    assert "holds a link or special file git did not make: sf-set-up" in caplog.text
