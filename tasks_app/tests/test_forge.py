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
from agents_app.schemas import policy_parse
from agents_app.tests.runtime_helpers import ScriptedModel
from sf_core.errors import PolicyInvalid
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.features.forge import ForgeError, GitLabForge, forge_for, forge_sync
from tasks_app.models import ForgePullRequest
from tasks_app.tests.test_engine import git, repo, run_next, start, task_spec, writes
from tests.fake_forge import TOKEN, FakeForge, fake_forge, fake_forge_served

pytestmark = pytest.mark.django_db
__all__ = ["fake_forge", "repo"]  # fixtures


@pytest.fixture(autouse=True)
def _fake_forge_allowed(settings: Any) -> None:
    """The fake forge listens on loopback: allowed the way an operator allows a
    self-hosted forge, by server settings (a project's policy cannot)."""
    settings.SF_FORGE_API_HOSTS = ["127.0.0.1"]
    settings.SF_NET_ALLOW_HOSTS = ["127.0.0.1"]


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


# --- what a project's forge policy may not do (issue 27, finding 5) -----------------------


def test_a_forge_token_from_another_variable_is_refused_at_validation_and_at_use(
    fake_forge: FakeForge, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgres://postgres@127.0.0.1/sf")
    policy = {"forge": {**forge_policy(fake_forge)["forge"], "token_env": "DATABASE_URL"}}
    with pytest.raises(PolicyInvalid, match="token_env must be SF_FORGE_TOKEN or start with"):
        policy_parse(policy)
    stored = Project(name="old", repo_path="/nowhere", policy=policy)  # saved before the rule
    with pytest.raises(ForgeError, match="token_env must be SF_FORGE_TOKEN"):
        forge_for(stored)
    assert fake_forge.requests == []


def test_a_forge_api_url_off_the_public_apis_is_refused_unless_the_server_lists_it(
    fake_forge: FakeForge, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SF_FORGE_TOKEN", TOKEN)
    settings.SF_FORGE_API_HOSTS = []
    with pytest.raises(PolicyInvalid, match="neither the forge's public API"):
        policy_parse(forge_policy(fake_forge))
    public = {"kind": "github", "api_url": "https://api.github.com/", "repository": "a/b"}
    assert policy_parse({"forge": public}).forge is not None
    settings.SF_FORGE_API_HOSTS = ["127.0.0.1"]
    settings.SF_NET_ALLOW_HOSTS = []  # listed as a forge, but the guard still refuses loopback
    forge = forge_for(Project(name="g", repo_path="/x", policy=forge_policy(fake_forge)))
    assert forge is not None
    with pytest.raises(ForgeError, match="loopback address"):
        forge.reviews(1)
    assert fake_forge.requests == []


@pytest.mark.parametrize(
    ("body", "kind"),
    [(b"<html>502 Bad Gateway</html>", "text/html"), (b'{"message": "moved"}', "application/json")],
)
def test_a_forge_answering_garbage_fails_its_project_only_and_the_sweep_goes_on(
    repo: Path, remote: Path, monkeypatch: pytest.MonkeyPatch, body: bytes, kind: str,
    django_capture_on_commit_callbacks: Any, tmp_path: Path,
) -> None:  # fmt: skip
    monkeypatch.setenv("SF_FORGE_TOKEN", TOKEN)
    other = demo_repo_create(tmp_path / "other" / "greet")  # a repository is one project
    git(other, "remote", "add", "origin", str(remote))
    with fake_forge_served() as broken, fake_forge_served() as good:
        pulls = []
        for path, forge in ((repo, broken), (other, good)):  # the broken one is read first
            session, plan = start(path, task_spec(), profile="normal", policy=forge_policy(forge))
            with django_capture_on_commit_callbacks(execute=True):
                assert run_next(session, ScriptedModel(*writes("hello"))).task_status == "review"
            pulls.append(ForgePullRequest.objects.get(task=plan.tasks.get()))
        broken.broken, broken.broken_type = body, kind
        good.github_reviews[pulls[1].number] = [
            {"id": 3, "state": "CHANGES_REQUESTED", "body": "again", "user": {"login": "rita"}}
        ]
        with django_capture_on_commit_callbacks(execute=True):
            assert forge_sync() == 1  # the good forge's review is applied
    for pull in pulls:
        pull.refresh_from_db()
    assert (pulls[0].state, pulls[0].seen_reviews) == ("open", [])  # tried again next sweep
    assert pulls[1].state == "done"
