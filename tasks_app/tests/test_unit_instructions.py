"""The repository's instruction files in a running unit and in the planner: what the
provider received over HTTP, the trace event, the unit page, a replay that gives the
model the recorded section again, and the doctor's note."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User
from django.test import Client, override_settings
from django.urls import reverse

from agents_app.doctor_checks import instructions_check
from agents_app.models import AgentSession, TraceEvent
from agents_app.runtime.llm import complete
from agents_app.runtime.recording import trace_export, trace_write
from agents_app.runtime.replay import replay_load
from agents_app.tests.runtime_helpers import ScriptedModel
from conftest import grant
from tasks_app.engine.drain import drain
from tasks_app.engine.replaying import replay_start
from tasks_app.engine.unit import UnitOptions
from tasks_app.models import Unit
from tasks_app.planning import plan_from_intent
from tasks_app.tests.test_engine import repo, run_next, start, task_spec, writes
from tasks_app.tests.test_planning import DEEP, GOOD
from tasks_app.tests.test_planning import ScriptedModel as PlannerModel
from tasks_app.tests.test_provider_outage import provider, run_unit
from tests.fake_provider import FakeProvider, call, fake_provider, openai_calls

pytestmark = pytest.mark.django_db
__all__ = ["fake_provider", "provider", "repo"]  # fixtures
ROOT_RULE = "Greetings end with a full stop. ROOT-MARKER"
SUB_RULE = "Files in sub/ are lower case. SUB-MARKER"
OTHER_RULE = "OTHER-MARKER"
SUB_TASK = task_spec(intent_claim=["sub/hello.txt"], verify=["grep -q hello sub/hello.txt"])


def commit_files(repo: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = repo / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "instructions"],
        cwd=repo,
        check=True,
    )


def with_instructions(repo: Path) -> None:
    commit_files(
        repo,
        {
            "AGENTS.md": ROOT_RULE + "\n",
            "sub/AGENTS.md": SUB_RULE + "\n",
            "other/AGENTS.md": OTHER_RULE + "\n",
        },
    )


def noted(unit_id: int) -> dict[str, Any]:
    event = TraceEvent.objects.get(unit_id=unit_id, kind="note", name="instructions")
    return dict(event.payload)


def test_the_model_receives_the_instructions_for_the_files_it_will_touch(
    repo: Path, provider: FakeProvider, client: Client, user: User
) -> None:
    with_instructions(repo)
    session, _ = start(repo, SUB_TASK)
    provider.answer(
        openai_calls(call("write_file", {"path": "sub/hello.txt", "content": "hello"})),
        openai_calls(call("finish", {"summary": "wrote sub/hello.txt"})),
    )
    run_unit(session)

    sent = provider.requests[0].body["messages"]
    brief = sent[1]["content"]  # the user's message, as the provider got it over HTTP
    assert sent[0]["role"] == "system"
    assert "ROOT-MARKER" not in sent[0]["content"]
    assert "## The repository's instructions" in brief
    assert "not the words of the person who gave you this task" in brief
    assert brief.index("ROOT-MARKER") < brief.index("SUB-MARKER")  # closest last
    assert "OTHER-MARKER" not in brief
    assert "other/AGENTS.md" in brief  # named only
    unit = Unit.objects.get(task__plan__session=session)
    payload = noted(unit.pk)
    assert [f["path"] for f in payload["files"]] == ["AGENTS.md", "sub/AGENTS.md"]
    assert payload["section"] in brief  # the trace holds what the model got
    assert unit.task.status == "done", unit.summary

    grant(user, session.project, "viewer")
    client.force_login(user)
    page = client.get(reverse("unit-detail", args=[unit.pk])).content.decode()
    assert 'id="unit-instructions"' in page
    assert 'data-instruction-file="sub/AGENTS.md" data-cut="no"' in page
    assert f"{len(SUB_RULE) + 1} bytes" in page


def test_a_replay_gives_the_model_the_recorded_instructions(repo: Path, tmp_path: Path) -> None:
    with_instructions(repo)
    session, _ = start(repo, SUB_TASK)
    model = ScriptedModel(*writes("hello", "sub/hello.txt"))
    assert run_next(session, model).task_status == "done"
    recorded = Unit.objects.get(task__plan__session=session)
    plan_yaml = yaml.safe_dump({"summary": "s", "tasks": [SUB_TASK]})
    header = {"plan_yaml": plan_yaml, "permission_profile": "trusted"}
    trace = trace_write(tmp_path / "t.jsonl", trace_export(unit_id=recorded.pk, header=header))
    # The repository's instructions change after the recording.
    commit_files(repo, {"AGENTS.md": "NEW-RULE-MARKER\n", "sub/hello.txt": ""})
    subprocess.run(["git", "rm", "-q", "sub/hello.txt"], cwd=repo, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "rm"],
        cwd=repo,
        check=True,
    )

    seen: list[list[dict[str, Any]]] = []

    def completion(**kwargs: Any) -> Any:
        seen.append([dict(m) for m in kwargs["messages"]])
        return complete(max_retries=0, **kwargs)

    replay = replay_load(trace)
    replayed_session, plan = replay_start(replay, project=session.project)
    drain(
        session_id=replayed_session.pk,
        worker="replay",
        options=UnitOptions(replay=replay, completion=completion),
    )
    assert seen[0][1]["content"] == model.calls[0]["messages"][1]["content"]
    assert "NEW-RULE-MARKER" not in seen[0][1]["content"]
    replayed = Unit.objects.get(task__plan=plan)
    assert noted(replayed.pk)["replayed"] is True
    assert plan.tasks.get().status == "done"


@override_settings(SF_MODEL_DEEP=DEEP)
def test_the_planner_gets_the_root_instructions_in_the_users_message(
    plan_session: AgentSession,
) -> None:
    root = Path(plan_session.project.repo_path)
    (root / "AGENTS.md").write_text(ROOT_RULE + "\n")
    (root / "sub").mkdir()
    (root / "sub" / "AGENTS.md").write_text(SUB_RULE + "\n")
    model = PlannerModel(GOOD)
    plan_from_intent(session=plan_session, intent="add a flag", completion=model)
    system, user = model.calls[0]["messages"][:2]
    assert "ROOT-MARKER" not in system["content"]  # never the system prompt
    assert "ROOT-MARKER" in user["content"]
    assert "SUB-MARKER" not in user["content"]
    assert "sub/AGENTS.md" in user["content"]  # named for the tasks that go there
    assert user["content"].endswith("## The person's intent\nadd a flag")
    event = TraceEvent.objects.get(session=plan_session, unit_id=None, name="instructions")
    assert event.payload["stage"] == "plan"
    assert [f["path"] for f in event.payload["files"]] == ["AGENTS.md"]


def test_the_doctor_notes_a_repository_without_instructions(repo: Path) -> None:
    session, _ = start(repo, task_spec())
    [finding] = [f for f in instructions_check() if f.project_id == session.project_id]
    assert finding.severity == "info"
    assert "has no instruction file (AGENTS.md, CLAUDE.md" in finding.message
    with_instructions(repo)
    assert not [f for f in instructions_check() if f.project_id == session.project_id]
