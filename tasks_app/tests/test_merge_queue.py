"""The merge queue: every approved task is verified on the merged tree before the base
branch moves; a merged tree that fails sends the task back, and nothing unverified
reaches the base branch."""

from __future__ import annotations

import re
import subprocess
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connections
from django.test import Client, override_settings
from django.urls import reverse
from django.utils import timezone

from agents_app.models import AgentSession
from agents_app.services import project_create
from agents_app.tests.runtime_helpers import ScriptedModel
from conftest import grant
from sf_core.actors import Actor
from tasks_app.engine import broker, merge_queue
from tasks_app.engine.merge_queue import lane_key, merge_enqueue, merge_queue_run
from tasks_app.engine.review import task_approve
from tasks_app.engine.sweep import engine_sweep
from tasks_app.engine.unit import UnitOptions, unit_run
from tasks_app.engine.worktrees import checkpoint_commit, worktree_ensure
from tasks_app.merge_conflicts import changed_symbols
from tasks_app.models import MergeRequest, MergeStatus, Plan, Task, Unit, Worker
from tasks_app.selectors import task_board
from tasks_app.tests.test_engine import MODEL, git, start
from tasks_app.workspaces import workspace_of

pytestmark = pytest.mark.django_db
PERSON = Actor.system("reviewer")
LIB = 'def greet(name):\n    return "hello " + name\n'
USES_SALUTE = "python3 check.py"
CHECK = "import lib\nassert lib.salute('a') == 'hello a'\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "lib"
    path.mkdir()
    (path / "lib.py").write_text(LIB)
    (path / "check.py").write_text(CHECK)  # what the rename must make pass
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "lib.py", "check.py")
    git(path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "lib")
    return path


def spec(key: str, verify: str, **extra: Any) -> dict[str, Any]:
    # High risk: even a trusted session waits for a person's approval, so both units
    # finish (each on its own branch off the same base) before either merges.
    return {
        "key": key,
        "title": f"Task {key}",
        "acceptance_criteria": [f"{key} works"],
        "verify": [verify],
        "risk_level": "high",
        **extra,
    }


RENAME = spec("rename", USES_SALUTE)
CALLER = spec("caller", "python3 app.py")


def writes(path: str, content: str) -> ScriptedModel:
    return ScriptedModel(
        ("writing", [("write_file", {"path": path, "content": content})]),
        ("done", [("finish", {"summary": f"wrote {path}"})]),
    )


def run(task: Task, model: ScriptedModel) -> Any:
    return unit_run(
        task_id=task.pk, worker="test", options=UnitOptions(model=MODEL, completion=model)
    )


def both_in_review(repo: Path, *extra: dict[str, Any], policy: Any = None) -> Plan:
    _, plan = start(repo, RENAME, CALLER, *extra, policy=policy)
    renamed = LIB.replace("def greet", "def salute")
    assert run(plan.tasks.get(key="rename"), writes("lib.py", renamed)).task_status == "review"
    caller = "import lib\nprint(lib.greet('x'))\n"
    assert run(plan.tasks.get(key="caller"), writes("app.py", caller)).task_status == "review"
    return plan


def passes_on(repo: Path, ref: str, command: str, tmp: Path) -> bool:
    tree = tmp / f"check-{ref[:12]}"
    git(repo, "worktree", "add", "--detach", "-q", str(tree), ref)
    try:
        return subprocess.run(command, shell=True, cwd=tree, capture_output=True).returncode == 0
    finally:
        git(repo, "worktree", "remove", "--force", str(tree))


def test_two_units_that_break_together_send_the_second_back(
    repo: Path, tmp_path: Path, logged_in_client: Client, user: User
) -> None:
    plan = both_in_review(repo)
    grant(user, plan.session.project, "viewer")
    rename, caller = plan.tasks.get(key="rename"), plan.tasks.get(key="caller")

    assert task_approve(task=rename, actor=PERSON).status == "done"
    merged_rename = git(repo, "rev-parse", "main")
    caller = task_approve(task=caller, actor=PERSON)

    assert caller.status == "retrying"
    assert "the merged tree failed verification" in caller.status_reason
    entry = MergeRequest.objects.get(task=caller)
    assert entry.status == MergeStatus.SENT_BACK
    assert "$ python3 app.py  [exit 1" in entry.output
    assert "has no attribute 'greet'" in entry.output
    # The base branch never held the caller's work, and every head it had passes.
    assert git(repo, "rev-parse", "main") == merged_rename
    assert not git(repo, "log", "--format=%H", "main", "--", "app.py")
    assert not (repo / "app.py").exists()
    assert passes_on(repo, "main", USES_SALUTE, tmp_path)
    # The caller's worktree now holds the merged tree that failed.
    ws = workspace_of(caller)
    assert (ws.path / "app.py").exists()
    assert "def salute" in (ws.path / "lib.py").read_text()

    unit = Unit.objects.filter(task=caller).get()
    html = logged_in_client.get(reverse("unit-detail", args=[unit.pk])).content.decode()
    assert 'data-merge-status="sent_back"' in html
    assert "the merged tree failed verification" in html
    assert "has no attribute" in html

    fixed = writes("app.py", "import lib\nprint(lib.salute('x'))\n")
    assert run(caller, fixed).task_status == "review"
    prompt = fixed.calls[0]["messages"][1]["content"]
    assert "## Attempt 1 passed on its own, but failed merged with main" in prompt
    assert "has no attribute 'greet'" in prompt

    assert task_approve(task=caller, actor=PERSON).status == "done"
    assert passes_on(repo, "main", "python3 app.py && " + USES_SALUTE, tmp_path)
    statuses = list(MergeRequest.objects.order_by("pk").values_list("task__key", "status"))
    assert statuses == [("rename", "merged"), ("caller", "sent_back"), ("caller", "merged")]


def test_the_projects_check_command_runs_on_the_merged_tree(repo: Path) -> None:
    plan = both_in_review(repo, policy={"check_command": "test ! -f app.py"})
    rename = task_approve(task=plan.tasks.get(key="rename"), actor=PERSON)
    assert rename.status == "done"
    caller = task_approve(task=plan.tasks.get(key="caller"), actor=PERSON)
    assert caller.status == "retrying"
    assert "$ test ! -f app.py  [exit 1" in MergeRequest.objects.get(task=caller).output


def test_a_base_that_moved_during_verification_is_merged_and_verified_again(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, plan = start(repo, RENAME)
    task = plan.tasks.get()
    run(task, writes("lib.py", LIB.replace("def greet", "def salute")))
    real_verify, calls = merge_queue.verify, []

    def verify_while_someone_pushes(*args: Any, **kwargs: Any) -> Any:
        calls.append(git(repo, "rev-parse", "main"))
        if len(calls) == 1:  # someone commits to the base branch meanwhile
            (repo / "NOTES").write_text("outside\n")
            git(repo, "add", "NOTES")
            git(repo, "-c", "user.name=o", "-c", "user.email=o@o", "commit", "-q", "-m", "out")
        return real_verify(*args, **kwargs)

    monkeypatch.setattr(merge_queue, "verify", verify_while_someone_pushes)
    task = task_approve(task=task, actor=PERSON)

    assert task.status == "done"
    entry = MergeRequest.objects.get(task=task)
    assert (entry.status, entry.attempts) == (MergeStatus.MERGED, 2)
    outside = git(repo, "rev-parse", "main^1")
    assert git(repo, "log", "-1", "--format=%s", outside) == "out"
    assert calls == [calls[0], outside]  # the second run verified the moved base
    assert entry.base_head == outside
    assert (repo / "NOTES").exists()
    assert "def salute" in (repo / "lib.py").read_text()


def test_the_queue_merges_in_the_order_of_approval(repo: Path) -> None:
    _, plan = start(
        repo,
        spec("first", "test -f one.txt"),
        spec("second", "test -f two.txt"),
    )
    first, second = plan.tasks.get(key="first"), plan.tasks.get(key="second")
    run(second, writes("two.txt", "2\n"))
    run(first, writes("one.txt", "1\n"))
    merge_enqueue(task=second, actor=PERSON)
    merge_enqueue(task=first, actor=PERSON)
    assert merge_enqueue(task=second, actor=PERSON) == MergeRequest.objects.get(task=second)

    assert merge_queue_run(project_id=plan.session.project_id) == 2
    subjects = git(repo, "log", "--first-parent", "--format=%s", "main").splitlines()
    assert subjects[:2] == ["sf: merge first: Task first", "sf: merge second: Task second"]
    assert merge_queue_run(project_id=plan.session.project_id) == 0


def test_a_conflict_is_refused_and_blocks_the_task(repo: Path) -> None:
    _, plan = start(repo, spec("a", "test -f lib.py"), spec("b", "test -f lib.py"))
    a, b = plan.tasks.get(key="a"), plan.tasks.get(key="b")
    run(a, writes("lib.py", "A = 1\n"))
    run(b, writes("lib.py", "B = 2\n"))
    assert task_approve(task=a, actor=PERSON).status == "done"
    b = task_approve(task=b, actor=PERSON)
    assert (b.status, b.hold_reason) == ("blocked", "merge_refused")
    assert "merge conflict in lib.py" in b.status_reason
    assert MergeRequest.objects.get(task=b).status == MergeStatus.REFUSED
    assert worktree_ensure(workspace_of(b)).exists()  # its work is kept


def test_a_project_without_a_check_command_parses(repo: Path) -> None:
    project = project_create(name="plain", repo_path=str(repo))
    assert project.parsed_policy.check_command == ""


def test_the_board_warns_of_branches_that_change_the_same_files_and_symbols(
    repo: Path, logged_in_client: Client, user: User
) -> None:
    session, plan = start(
        repo,
        spec("edit", "true"),
        spec("also-edit", "true"),
        spec("add", "true"),
        spec("after", "true", depends_on=["edit"]),
    )
    grant(user, session.project, "viewer")
    tasks = {task.key: task for task in plan.tasks.all()}
    run(tasks["edit"], writes("lib.py", LIB.replace("hello", "hi")))
    run(tasks["also-edit"], writes("lib.py", LIB.replace("hello", "hey")))
    run(tasks["add"], writes("lib.py", LIB + "\n\ndef wave():\n    return 1\n"))
    # "after" runs only once "edit" is done: give it a branch of its own by hand.
    after = tasks["after"]
    ws = workspace_of(after)
    worktree_ensure(ws)
    (ws.path / "lib.py").write_text(LIB.replace("hello", "yo"))
    Task.objects.filter(pk=after.pk).update(checkpoint_ref=checkpoint_commit(ws, "after"))
    Task.objects.filter(pk=after.pk).update(status="review")

    html = logged_in_client.get(f"/tasks/?session={session.pk}").content.decode()
    warnings = re.findall(r"data-merge-conflict>May conflict when merged: ([^<]*)</p>", html)
    # "edit" and "after" are ordered by depends_on: one merges before the other.
    assert sorted(warnings) == [
        "add and after: lib.py",
        "also-edit and add: lib.py",
        "also-edit and after: lib.py (both change lib.py:greet)",
        "edit and add: lib.py",
        "edit and also-edit: lib.py (both change lib.py:greet)",
    ]
    assert "overlaps also-edit: lib.py (both change lib.py:greet)" in html


def test_changed_symbols_are_definitions_that_differ() -> None:
    old = "def a():\n    return 1\n\nclass C:\n    def m(self):\n        return 2\n"
    new = "def a():\n\n    return 1\n\nclass C:\n    def m(self):\n        return 3\n\ndef b(): pass\n"
    assert changed_symbols(old, new) == {"C", "C.m", "b"}
    assert changed_symbols("def broken(:", "x = 1") == set()


@override_settings(CELERY_TASK_ALWAYS_EAGER=False)
def test_on_workers_the_queue_runs_there_and_the_sweep_resends_a_lost_one(
    repo: Path, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    session, plan = start(repo, RENAME)
    task = plan.tasks.get()
    run(task, writes("lib.py", LIB.replace("def greet", "def salute")))
    AgentSession.objects.filter(pk=session.pk).update(driver="workers")
    sent: list[tuple[str, list[int]]] = []
    monkeypatch.setattr(
        broker.current_app, "send_task", lambda name, args, **_: sent.append((name, args))
    )
    now = timezone.now()
    Worker.objects.create(hostname="w@h", pid=1, started_at=now, last_heartbeat_at=now)
    with django_capture_on_commit_callbacks(execute=True):
        assert task_approve(task=task, actor=PERSON).status == "review"  # queued, not merged
    assert sent == [("tasks_app.merge_queue_run", [session.project_id])]
    row = next(row for row in task_board(session_id=session.pk).rows if row.task.pk == task.pk)
    assert row.next_action.startswith("approved: in the merge queue")

    MergeRequest.objects.update(created_at=timezone.now() - timedelta(hours=1))  # lost
    with django_capture_on_commit_callbacks(execute=True):
        assert engine_sweep()["merge_queues"] == 1
    assert len(sent) == 2
    assert merge_queue_run(project_id=session.project_id) == 1  # what the worker does
    assert Task.objects.get(pk=task.pk).status == "done"


def test_a_held_lane_leaves_the_entry_to_its_holder_and_a_dead_holders_entry_is_redone(
    repo: Path,
) -> None:
    _, plan = start(repo, spec("one", "test -f one.txt"))
    task = plan.tasks.get()
    run(task, writes("one.txt", "1\n"))
    project = plan.session.project
    entry = merge_enqueue(task=task, actor=PERSON)
    holder = connections.create_connection("default")  # another process's connection
    try:
        with holder.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s, %s)", lane_key(project))
        assert merge_queue_run(project_id=project.pk) == 0
        assert MergeRequest.objects.get(pk=entry.pk).status == MergeStatus.QUEUED
        # The holder dies mid-verification: its connection goes, and the lock with it.
        MergeRequest.objects.filter(pk=entry.pk).update(status=MergeStatus.VERIFYING)
    finally:
        holder.close()
    assert merge_queue_run(project_id=project.pk) == 1
    assert MergeRequest.objects.get(pk=entry.pk).status == MergeStatus.MERGED
    assert Task.objects.get(pk=task.pk).status == "done"
