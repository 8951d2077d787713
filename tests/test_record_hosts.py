"""Worker hosts without a shared disk: a project's repository of record is a git remote,
each host works in a mirror of its own (``tasks_app/engine/record.py``).

The first tests switch ``SF_DATA_DIR`` between two directories in this process (two
"hosts" with nothing on disk in common but the record) and run units inline with a
scripted model; the last starts real Celery workers for two hosts in separate mount
namespaces, each blind to the other's directory and to the registered checkout.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings

from agents_app.mirrors import project_tree
from agents_app.models import AgentSession, Project
from agents_app.services import project_create, session_create
from agents_app.tests.runtime_helpers import ScriptedModel
from conftest import make_git_repo
from sf_core.actors import Actor
from sf_core.errors import PolicyInvalid
from skills_app.loader import unit_skills
from skills_app.selectors import skill_text
from tasks_app.engine.merge_queue import merge_enqueue, merge_queue_run
from tasks_app.engine.record import base_publish, merge_sync
from tasks_app.engine.review import task_approve
from tasks_app.engine.unit import UnitOptions, unit_run
from tasks_app.engine.worktrees import merge_compute
from tasks_app.features.doctor.checks import local_host
from tasks_app.features.doctor.git_checks import project_orphans
from tasks_app.features.forge import forge_sync
from tasks_app.merge_conflicts import merge_conflicts
from tasks_app.models import (
    ForgePullRequest,
    MergeRequest,
    MergeStatus,
    Task,
    TaskRuntime,
    TaskTransition,
    Unit,
    UnitStatus,
    Worker,
)
from tasks_app.planning import plan_from_intent
from tasks_app.schemas import plan_spec_parse
from tasks_app.services import plan_accept, plan_create
from tasks_app.tests.conftest import lint_clean_plan
from tasks_app.tests.test_engine import MODEL, start
from tasks_app.tests.test_planning import ScriptedModel as PlannerModel
from tasks_app.workspaces import workspace_of
from tests.fake_forge import TOKEN, FakeForge, fake_forge_served
from tests.hosts import Hosts, ScriptedProvider, bare_record, provider_policy, task_specs
from tests.processes import wait_for

pytestmark = pytest.mark.django_db
PERSON = Actor.system("reviewer")


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture
def world(tmp_path: Path, settings: Any) -> dict[str, Path]:
    """A registered checkout, its bare record, and two hosts' data directories."""
    repo = make_git_repo(tmp_path / "repo")
    record = tmp_path / "record.git"
    git(tmp_path, "clone", "--bare", "-q", str(repo), str(record))
    settings.SF_RECORD_URL_PREFIXES = [f"file://{tmp_path}/"]
    return {"repo": repo, "record": record, "a": tmp_path / "host-a", "b": tmp_path / "host-b"}


def policy(world: dict[str, Path]) -> dict[str, Any]:
    return {"record": {"url": f"file://{world['record']}"}}


def spec(key: str, verify: str, risk: str = "high") -> dict[str, Any]:
    return {
        "key": key,
        "title": f"Task {key}",
        "acceptance_criteria": [f"{key} works"],
        "verify": [verify],
        "risk_level": risk,  # high: it waits in review for the approval the test gives
    }


def writes(path: str) -> ScriptedModel:
    return ScriptedModel(
        ("writing", [("write_file", {"path": path, "content": f"{path}\n"})]),
        ("done", [("finish", {"summary": f"wrote {path}"})]),
    )


def on(host: Path) -> Any:
    return override_settings(SF_DATA_DIR=host)


def run_on(host: Path, task: Task, model: ScriptedModel) -> Any:
    with on(host):
        options = UnitOptions(model=MODEL, completion=model)
        return unit_run(task_id=task.pk, worker=f"w@{host.name}", options=options)


def merges(repo: Path, ref: str = "main") -> list[str]:
    log = git(repo, "log", "--format=%s", ref).splitlines()
    return [line for line in log if line.startswith("sf: merge")]


def test_record_urls_need_a_listed_prefix_and_no_password(settings: Any) -> None:
    from agents_app.schemas import policy_parse

    settings.SF_RECORD_URL_PREFIXES = ["ssh://git@git.example.com/", "file:///srv/records/"]
    assert policy_parse({"record": {"url": "ssh://git@git.example.com/team/app.git"}}).record
    refused = {
        "ssh://git@elsewhere.example.com/app.git": "under no prefix",
        "https://u:secret@git.example.com/app.git": "password",
        "file:///srv/records/../other.git": "'..'",
        "--upload-pack=touch /tmp/x": "starts with '-'",
        "ext::sh -c true": "spaces",
    }
    for url, words in refused.items():
        with pytest.raises(PolicyInvalid, match=words):
            policy_parse({"record": {"url": url}})


def test_units_on_two_hosts_merge_once_on_the_record(world: dict[str, Path]) -> None:
    _, plan = start(
        world["repo"], spec("a", "test -f a.txt"), spec("b", "test -f b.txt"), policy=policy(world)
    )
    a, b = plan.tasks.get(key="a"), plan.tasks.get(key="b")
    assert run_on(world["a"], a, writes("a.txt")).task_status == "review"
    assert run_on(world["b"], b, writes("b.txt")).task_status == "review"
    # Each attempt's branch is on the record, each tree on its own host only.
    heads = git(world["record"], "for-each-ref", "--format=%(refname)", "refs/heads/sf/")
    assert heads.splitlines() == [f"refs/heads/{workspace_of(t).branch}" for t in (a, b)]
    with on(world["a"]):
        a_tree = workspace_of(a).path
    assert a_tree.is_dir()
    assert a_tree.is_relative_to(world["a"])
    with on(world["b"]):
        assert not workspace_of(a).path.exists()
    with on(world["b"]):  # b's host sees a's live tree nowhere and calls nothing orphaned
        assert not project_orphans(Project.objects.get(pk=plan.session.project_id))
        assert task_approve(task=a, actor=PERSON).status == "done"  # merged by host b
    with on(world["a"]):
        assert task_approve(task=b, actor=PERSON).status == "done"  # merged by host a
    assert merges(world["record"]) == ["sf: merge b: Task b", "sf: merge a: Task a"]
    files = git(world["record"], "ls-tree", "--name-only", "main").splitlines()
    assert {"a.txt", "b.txt"} <= set(files)
    assert not merges(world["repo"]), "the registered checkout was worked on"
    assert not git(world["record"], "for-each-ref", "refs/heads/sf/"), "branches left"
    with on(world["b"]):  # host b's tree of b, merged on host a: an orphan of host b's
        orphans = project_orphans(Project.objects.get(pk=plan.session.project_id))
    assert [p.name for p in orphans.worktrees] == [workspace_of(b).path.name]


def test_a_task_goes_on_on_the_other_host_from_its_pushed_checkpoint(
    world: dict[str, Path],
) -> None:
    both = "test -f one.txt && test -f two.txt"
    _, plan = start(world["repo"], spec("t", both, risk="low"), policy=policy(world))
    task = plan.tasks.get()
    first = run_on(world["a"], task, writes("one.txt"))
    assert first.task_status == "retrying", first
    second = run_on(world["b"], task, writes("two.txt"))  # one.txt comes from the record
    assert second.task_status == "done", second
    assert merges(world["record"]) == ["sf: merge t: Task t"]
    files = git(world["record"], "ls-tree", "--name-only", "main").splitlines()
    assert {"one.txt", "two.txt"} <= set(files)


def test_a_push_that_loses_the_race_is_merged_again_never_twice(
    world: dict[str, Path], tmp_path: Path
) -> None:
    _, plan = start(world["repo"], spec("r", "test -f r.txt"), policy=policy(world))
    task = plan.tasks.get()
    assert run_on(world["a"], task, writes("r.txt")).task_status == "review"
    with on(world["b"]):
        ws = workspace_of(task)
        merge_sync(ws)
        commit = Task.objects.get(pk=task.pk).checkpoint_ref
        candidate = merge_compute(ws, commit=commit, message="sf: merge r: Task r")
        # Someone pushes to the record's main meanwhile: the compare-and-swap refuses.
        other = make_git_repo(tmp_path / "other")
        git(other, "pull", "-q", str(world["record"]), "main")
        (other / "other.txt").write_text("x\n")
        git(other, "add", "other.txt")
        git(other, "commit", "-q", "-m", "outside SF")
        git(other, "push", "-q", str(world["record"]), "HEAD:main")
        lost = base_publish(ws, candidate, commit=commit)
        assert not lost.merged, lost
        assert lost.moved, lost
        # The queue fetches, merges onto the new head, verifies and pushes: once.
        merge_enqueue(task=task, actor=PERSON)
        assert merge_queue_run(project_id=plan.session.project_id) == 1
    assert merges(world["record"]) == ["sf: merge r: Task r"]
    assert git(world["record"], "log", "-1", "--format=%s", "main^1") == "outside SF"


def test_a_merge_pushed_before_its_row_was_written_is_not_merged_again(
    world: dict[str, Path],
) -> None:
    _, plan = start(world["repo"], spec("k", "test -f k.txt"), policy=policy(world))
    task = plan.tasks.get()
    assert run_on(world["a"], task, writes("k.txt")).task_status == "review"
    entry = merge_enqueue(task=task, actor=PERSON)
    with on(world["b"]):  # host b pushed the merge and died before its row said so
        ws = workspace_of(task)
        merge_sync(ws)
        candidate = merge_compute(ws, commit=entry.commit, message="sf: merge k: Task k")
        assert base_publish(ws, candidate, commit=entry.commit).merged
    with on(world["a"]):  # the sweep sends the queue again; host a finds it merged
        assert merge_queue_run(project_id=plan.session.project_id) == 1
    entry.refresh_from_db()
    assert entry.status == MergeStatus.MERGED
    assert entry.reason == "already merged"
    assert merges(world["record"]) == ["sf: merge k: Task k"]
    assert MergeRequest.objects.filter(task=task).count() == 1


def test_the_doctor_judges_processes_of_its_own_host_only(settings: Any) -> None:
    settings.SF_WORKER_HOST = "host-a"
    assert local_host("sf-1@host-a")
    assert not local_host("sf-1@host-b")
    assert not local_host("host-a")


# --- what a host reads of the project besides its worktrees --------------------------


def record_commit(world: dict[str, Path], tmp_path: Path, files: dict[str, str]) -> None:
    """Commit ``files`` to the record's main from a clone elsewhere (as a merge does)."""
    other = tmp_path / "pusher"
    if not other.is_dir():
        git(tmp_path, "clone", "-q", str(world["record"]), str(other))
    for path, text in files.items():
        (other / path).parent.mkdir(parents=True, exist_ok=True)
        (other / path).write_text(text)
    git(other, "add", "--all")
    git(other, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "on the record")
    git(other, "push", "-q", "origin", "HEAD:main")


SKILL = "---\nname: record-skill\ndescription: Check the record\n---\nRead it twice.\n"


def test_planning_and_skills_read_the_record_not_the_registered_checkout(
    world: dict[str, Path], tmp_path: Path
) -> None:
    session, _ = start(world["repo"], spec("s", "true"), policy=policy(world))
    AgentSession.objects.filter(pk=session.pk).update(work_mode="plan")  # to plan again
    session.refresh_from_db()
    project = Project.objects.get(pk=session.project_id)
    record_commit(
        world,
        tmp_path,
        {
            "recorded.py": "def only_on_the_record():\n    return 1\n",
            "AGENTS.md": "Run the record's own checks.\n",
            ".agents/skills/record-skill/SKILL.md": SKILL,
        },
    )
    world["repo"].rename(tmp_path / "elsewhere")  # this host has no registered checkout
    with on(world["a"]), override_settings(SF_MODEL_DEEP="openai/sf-test-deep"):
        model = PlannerModel(json.dumps(lint_clean_plan()))
        plan_from_intent(session=session, intent="add a flag", completion=model)
        system, user = (m["content"] for m in model.calls[0]["messages"][:2])
        assert "recorded.py" in system, system  # the repository map is the record's
        assert "only_on_the_record" in system
        assert "Run the record's own checks." in user  # and so is AGENTS.md
        skills = {s.name: s for s in unit_skills(project)}
        assert "record-skill" in skills, skills
        assert skill_text(project, skills["record-skill"]) == ("Read it twice.", "")
        skills_only = project_tree(project, part=".agents/skills")
        assert (skills_only / ".agents/skills/record-skill/SKILL.md").is_file()
        assert not (skills_only / "recorded.py").exists()  # a unit checks out its skills only
    record_commit(world, tmp_path, {"later.py": "def later():\n    pass\n"})
    with on(world["b"]):  # another host, and a base moved since: fetched before reading
        assert (project_tree(project) / "later.py").is_file()
    with on(world["a"]):
        assert (project_tree(project) / "later.py").is_file()


def test_merge_conflict_hints_read_the_records_branches(world: dict[str, Path]) -> None:
    _, plan = start(world["repo"], spec("x", "true"), spec("y", "true"), policy=policy(world))
    x, y = plan.tasks.get(key="x"), plan.tasks.get(key="y")
    assert run_on(world["a"], x, writes("same.txt")).task_status == "review"
    assert run_on(world["b"], y, writes("same.txt")).task_status == "review"
    waiting = list(Task.objects.filter(pk__in=(x.pk, y.pk)).order_by("pk"))
    with on(world["a"].with_name("web")):  # a host that ran neither unit
        found = merge_conflicts(waiting, set())
    assert [(c.first.key, c.second.key, c.files) for c in found] == [("x", "y", ["same.txt"])]


@pytest.fixture
def forge(tmp_path: Path, settings: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeForge]:
    settings.SF_FORGE_API_HOSTS = ["127.0.0.1"]
    settings.SF_NET_ALLOW_HOSTS = ["127.0.0.1"]
    monkeypatch.setenv("SF_FORGE_TOKEN", TOKEN)
    with fake_forge_served() as served:
        yield served


def test_a_forge_with_a_record_opens_the_pull_request_of_the_pushed_branch(
    world: dict[str, Path],
    tmp_path: Path,
    forge: FakeForge,
    django_capture_on_commit_callbacks: Any,
) -> None:
    record = tmp_path / "acme" / "greet.git"  # the forge's own repository
    git(tmp_path, "clone", "--bare", "-q", str(world["repo"]), str(record))
    both = {
        "record": {"url": f"file://{record}"},
        "forge": {"kind": "github", "api_url": forge.url, "repository": "acme/greet"},
    }
    _, plan = start(world["repo"], spec("f", "test -f f.txt"), policy=both)
    task = plan.tasks.get()
    with django_capture_on_commit_callbacks(execute=True):
        assert run_on(world["a"], task, writes("f.txt")).task_status == "review"
    task.refresh_from_db()
    pull = ForgePullRequest.objects.get(task=task)
    assert (forge.pulls[pull.number]["head"], forge.pulls[pull.number]["base"]) == (
        pull.branch,
        "main",
    )
    assert git(record, "rev-parse", f"refs/heads/{pull.branch}") == task.checkpoint_ref
    forge.github_reviews[pull.number] = [
        {"id": 1, "state": "APPROVED", "body": "", "user": {"login": "rita"}}
    ]
    with on(world["b"]), django_capture_on_commit_callbacks(execute=True):
        assert forge_sync() == 1  # approved on the forge, merged by host b
    assert Task.objects.get(pk=task.pk).status == "done"
    assert merges(record) == ["sf: merge f: Task f"]
    assert not merges(world["repo"]), "the registered checkout was worked on"


def test_a_forge_with_a_record_elsewhere_is_refused_naming_why(
    world: dict[str, Path], forge: FakeForge
) -> None:
    from agents_app.schemas import policy_parse

    both = {
        "record": {"url": f"file://{world['record']}"},  # .../record.git: not acme/greet
        "forge": {"kind": "github", "api_url": forge.url, "repository": "acme/greet"},
    }
    with pytest.raises(PolicyInvalid, match="is not the forge's repository acme/greet"):
        policy_parse(both)
    scp = "git@git.example.com:acme/greet.git"
    with override_settings(SF_RECORD_URL_PREFIXES=["git@git.example.com:"]):
        assert policy_parse({**both, "record": {"url": scp}}).record


# --- real workers on two hosts that share no disk -----------------------------------

FAST = {
    "SF_WORKER_HEARTBEAT": "1s",
    "SF_WORKER_STALE_AFTER": "4s",
    "SF_SWEEP_INTERVAL": "1s",
    "SF_REDISPATCH_AFTER": "3s",
}
TASKS = 6


def _hosts_plan(provider: ScriptedProvider, repo: Path, url: str, queue: str) -> Any:
    with override_settings(CELERY_TASK_DEFAULT_QUEUE=queue):
        policy = provider_policy(provider, url, TASKS)
        project = project_create(name="two-hosts", repo_path=str(repo), policy=policy)
        session = session_create(project=project, axes={"work_mode": "plan"})
        spec = plan_spec_parse({"summary": "files", "tasks": task_specs(TASKS)})
        plan = plan_create(session=session, spec=spec, source="api")
        plan_accept(plan=plan, actor=PERSON, autonomous=True, permission_profile="trusted")
    return plan


def _unit_running_on(host: str) -> bool:
    return TaskRuntime.objects.filter(
        worker__endswith=f"@{host}", task__units__status=UnitStatus.RUNNING
    ).exists()


def _registered(workers: list[Any]) -> bool:
    names = [worker.hostname for worker in workers]
    alive = Worker.objects.filter(hostname__in=names, stopped_at__isnull=True)
    return alive.count() == len(workers)


def _hosts_that_started_units(plan: Any) -> set[str]:
    started = TaskTransition.objects.filter(task__plan=plan, reason="unit started")
    return {label.rpartition("@")[2] for label in started.values_list("actor_label", flat=True)}


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_two_hosts_share_no_disk_lose_nothing_and_merge_once(tmp_path: Path, settings: Any) -> None:
    repo = make_git_repo(tmp_path / "repo")
    record = tmp_path / "record.git"
    url = bare_record(repo, record)
    prefixes = f"file://{tmp_path}/"
    settings.SF_RECORD_URL_PREFIXES = [prefixes]
    provider = ScriptedProvider(delay=1.0)
    provider.start()
    hosts = Hosts(root=tmp_path, hidden=[repo], env={**FAST, "SF_RECORD_URL_PREFIXES": prefixes})
    try:
        workers = [hosts.start("host-a"), hosts.start("host-b")]
        wait_for(lambda: _registered(workers), timeout=180, what="both hosts' workers")
        plan = _hosts_plan(provider, repo, url, hosts.queue)
        wait_for(lambda: _unit_running_on("host-a"), timeout=180, what="a unit on host a")
        hosts.kill("host-a")  # mid-unit: its task must be finished by host b

        def ended() -> bool:
            return not plan.tasks.exclude(status__in=("done", "failed", "blocked")).exists()

        try:
            wait_for(ended, timeout=300, what="every task to end")
        except AssertionError as exc:
            logs = "\n".join(worker.log()[-3000:] for worker in workers)
            raise AssertionError(f"{exc}\n{logs}") from None
    finally:
        hosts.stop_all()
        provider.stop()
    statuses = dict(plan.tasks.values_list("key", "status"))
    assert set(statuses.values()) == {"done"}, statuses
    assert Unit.objects.filter(task__plan=plan, status=UnitStatus.CRASHED).exists()
    assert _hosts_that_started_units(plan) == {"host-a", "host-b"}
    landed = merges(record)
    assert sorted(landed) == sorted(f"sf: merge {k}: write {k}.txt" for k in statuses)
    files = set(git(record, "ls-tree", "--name-only", "main").splitlines())
    assert {f"{key}.txt" for key in statuses} <= files
    assert not merges(repo), "a worker wrote to the registered checkout"
