"""A forge round trip against a fake forge over real HTTP: a task waiting for review is
pushed to the remote and opened as a pull request; changes requested there (with a line
comment) send it back to its agent with those words; the next round reuses the open
pull request; an approval there merges it through SF."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from agents_app.models import Project
from agents_app.tests.runtime_helpers import ScriptedModel
from tasks_app.features.forge import ForgeError, GitLabForge, forge_for, forge_sync
from tasks_app.models import ForgePullRequest
from tasks_app.tests.test_engine import git, repo, run_next, start, task_spec, writes
from tests.fake_forge import TOKEN, FakeForge, fake_forge

pytestmark = pytest.mark.django_db
__all__ = ["fake_forge", "repo"]  # fixtures


@pytest.fixture
def remote(repo: Path, tmp_path: Path) -> Path:
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    git(repo, "remote", "add", "origin", str(bare))
    return bare


def forge_policy(forge: FakeForge, kind: str = "github") -> dict[str, Any]:
    return {
        "forge": {"kind": kind, "api_url": forge.url, "repository": "acme/greet"},
    }


def test_a_review_on_the_forge_comes_back_to_sf(
    repo: Path,
    remote: Path,
    fake_forge: FakeForge,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    monkeypatch.setenv("SF_FORGE_TOKEN", TOKEN)
    session, plan = start(repo, task_spec(), profile="normal", policy=forge_policy(fake_forge))
    with django_capture_on_commit_callbacks(execute=True):
        assert run_next(session, ScriptedModel(*writes("hello"))).task_status == "review"
    task = plan.tasks.get()
    pull = ForgePullRequest.objects.get(task=task)
    opened = fake_forge.pulls[pull.number]
    assert (opened["head"], opened["base"]) == (pull.branch, "main")
    assert opened["title"] == "sf: hello: Write hello.txt"
    assert "hello.txt says hello" in opened["body"]
    pushed = git(remote, "rev-parse", f"refs/heads/{pull.branch}")
    assert pushed == task.checkpoint_ref == pull.head

    fake_forge.github_reviews[pull.number] = [
        {"id": 11, "state": "CHANGES_REQUESTED", "body": "Say it louder", "user": {"login": "rita"}}
    ]
    fake_forge.github_comments[pull.number] = [
        {"id": 5, "pull_request_review_id": 11, "path": "hello.txt", "line": 1, "body": "HELLO"}
    ]
    with django_capture_on_commit_callbacks(execute=True):
        assert forge_sync() == 1
    task.refresh_from_db()
    assert task.status == "todo"
    assert "changes requested by github:rita" in task.status_reason
    assert "hello.txt:1: HELLO" in task.status_reason
    pull.refresh_from_db()
    assert (pull.state, pull.outcome) == ("done", "changes requested by rita")

    model = ScriptedModel(*writes("hello, LOUDER"))
    with django_capture_on_commit_callbacks(execute=True):
        assert run_next(session, model).task_status == "review"
    brief = str(model.calls[0]["messages"][1]["content"])
    assert "Say it louder" in brief
    assert "hello.txt:1: HELLO" in brief
    second = ForgePullRequest.objects.filter(task=task).first()
    assert second is not None
    assert second.number == pull.number  # the forge's open request is reused
    assert git(remote, "rev-parse", f"refs/heads/{pull.branch}") == second.head != pull.head

    fake_forge.github_reviews[pull.number].append(
        {"id": 12, "state": "APPROVED", "body": "", "user": {"login": "rita"}}
    )
    with django_capture_on_commit_callbacks(execute=True):
        assert forge_sync() == 1
    task.refresh_from_db()
    assert task.status == "done"
    assert (repo / "hello.txt").read_text() == "hello, LOUDER"
    assert git(repo, "log", "--format=%s", "-1").startswith("sf: merge hello")
    assert forge_sync() == 0  # nothing new is applied twice


def test_an_auto_approved_task_opens_no_pull_request(
    repo: Path, remote: Path, fake_forge: FakeForge, monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:  # fmt: skip
    monkeypatch.setenv("SF_FORGE_TOKEN", TOKEN)
    session, _ = start(repo, task_spec(), profile="trusted", policy=forge_policy(fake_forge))
    with django_capture_on_commit_callbacks(execute=True):
        assert run_next(session, ScriptedModel(*writes("hello"))).task_status == "done"
    assert not ForgePullRequest.objects.exists()
    assert not fake_forge.requests


def test_without_its_token_the_forge_says_which_variable_and_sf_review_goes_on(
    repo: Path, remote: Path, fake_forge: FakeForge, monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:  # fmt: skip
    monkeypatch.delenv("SF_FORGE_TOKEN", raising=False)
    session, plan = start(repo, task_spec(), profile="normal", policy=forge_policy(fake_forge))
    with pytest.raises(ForgeError, match="set SF_FORGE_TOKEN"):
        forge_for(Project.objects.get(pk=session.project_id))
    with django_capture_on_commit_callbacks(execute=True):
        assert run_next(session, ScriptedModel(*writes("hello"))).task_status == "review"
    assert not ForgePullRequest.objects.exists()
    monkeypatch.setenv("SF_FORGE_TOKEN", "wrong")
    assert forge_sync() == 0  # the sweep tries again; the forge refuses (401): logged
    monkeypatch.setenv("SF_FORGE_TOKEN", TOKEN)
    forge_sync()
    assert ForgePullRequest.objects.get().task == plan.tasks.get()


def test_gitlab_merge_requests_and_reviewer_states(fake_forge: FakeForge) -> None:
    project = Project(
        name="g", repo_path="/nowhere", policy=forge_policy(fake_forge, kind="gitlab")
    )
    policy = project.parsed_policy.forge
    assert policy is not None
    forge = GitLabForge(policy, TOKEN)
    opened = forge.open(branch="sf/p1/x/1", base="main", title="t", body="b")
    assert opened.number == 1
    assert fake_forge.requests[-1][1] == "/projects/acme%2Fgreet/merge_requests"
    fake_forge.gitlab_reviewers[1] = [
        {"user": {"username": "gil"}, "state": "requested_changes", "created_at": "t1"},
        {"user": {"username": "ann"}, "state": "unreviewed"},
    ]
    fake_forge.gitlab_notes[1] = [
        {"body": "rename it", "author": {"username": "gil"}, "system": False,
         "position": {"new_path": "a.py", "new_line": 3}},
        {"body": "overall fine otherwise", "author": {"username": "gil"}, "system": False},
        {"body": "approved this merge request", "author": {"username": "gil"}, "system": True},
    ]  # fmt: skip
    (review,) = forge.reviews(1)
    assert (review.state, review.author, review.body) == (
        "changes_requested",
        "gil",
        "overall fine otherwise",
    )
    assert [(c.path, c.line, c.body) for c in review.comments] == [("a.py", 3, "rename it")]
