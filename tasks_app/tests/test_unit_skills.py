"""Skills in a running unit: listed by description only, loaded lazily through the tool
(the trace shows the load), never offered when they may not be model-invoked, asked
through the gate when above the session's profile, invalid ones skipped, and a skill a
person invoked with /skill handed to the next unit."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from agents_app.gate.approvals import decision_review
from agents_app.models import RiskDecision, TraceEvent
from agents_app.services import command_run
from agents_app.tests.runtime_helpers import ScriptedModel
from conftest import grant
from sf_core.actors import Actor
from sf_core.errors import CommandRejected
from skills_app.models import Skill, SkillUse
from tasks_app.tests.test_engine import repo, run_next, start, task_spec, writes
from tasks_app.tests.test_provider_outage import provider, run_unit
from tests.fake_provider import FakeProvider, call, fake_provider, openai_calls

pytestmark = pytest.mark.django_db
__all__ = ["fake_provider", "provider", "repo"]  # fixtures shared with other test modules

BODY = "Always end a greeting with a full stop. UNIQUE-BODY-MARKER"


def add_skill(repo: Path, name: str, *, description: str = "", extra: str = "", body: str = BODY):
    folder = repo / ".agents" / "skills" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description or 'About ' + name}\n{extra}---\n{body}\n"
    )
    return folder


def commit(repo: Path) -> None:
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "skills"],
        cwd=repo,
        check=True,
    )


def brief(model: ScriptedModel) -> str:
    return str(model.calls[0]["messages"][1]["content"])


def tool_answers(model: ScriptedModel, call: int) -> list[str]:
    return [str(m["content"]) for m in model.calls[call]["messages"] if m["role"] == "tool"]


def test_a_skill_loads_lazily_and_its_load_is_traced(repo: Path) -> None:
    folder = add_skill(repo, "greeting-style", description="How greetings are worded")
    (folder / "checklists").mkdir()
    (folder / "checklists" / "review.md").write_text("- [ ] full stop\n")
    commit(repo)
    session, _ = start(repo, task_spec())
    model = ScriptedModel(
        ("style", [("load_skill", {"name": "greeting-style"})]),
        ("list", [("load_skill", {"name": "greeting-style", "file": "checklists/review.md"})]),
        *writes("hello"),
    )
    report = run_next(session, model)
    assert report.outcome == "verified", report.detail
    assert "- greeting-style: How greetings are worded" in brief(model)
    assert "UNIQUE-BODY-MARKER" not in brief(model)  # only the description
    assert "UNIQUE-BODY-MARKER" in tool_answers(model, 1)[-1]
    assert "checklists/review.md" in tool_answers(model, 1)[-1]
    assert tool_answers(model, 2)[-1] == "- [ ] full stop\n"
    loads = TraceEvent.objects.filter(kind="tool_call", name="load_skill")
    assert loads.count() == 2
    uses = SkillUse.objects.filter(skill__name="greeting-style").order_by("pk")
    assert [(u.kind, u.by_model, u.detail, u.unit_id) for u in uses] == [
        ("load", True, "", report.unit_id),
        ("file", True, "checklists/review.md", report.unit_id),
    ]


def test_a_file_naming_the_skill_itself_loads_its_body(repo: Path) -> None:
    """Seen with Qwen2.5-Coder-1.5B: ``load_skill(name=X, file=X)`` (it fills in every
    parameter of the compact spec). The body it asked for, not a refusal; a supporting
    file that does not exist is still refused, naming it."""
    add_skill(repo, "greeting-style", description="How greetings are worded")
    commit(repo)
    session, _ = start(repo, task_spec())
    model = ScriptedModel(
        ("own", [("load_skill", {"name": "greeting-style", "file": "greeting-style"})]),
        ("md", [("load_skill", {"name": "greeting-style", "file": "./SKILL.md"})]),
        ("other", [("load_skill", {"name": "greeting-style", "file": "notes.md"})]),
        *writes("hello"),
    )
    report = run_next(session, model)
    assert report.outcome == "verified", report.detail
    assert "UNIQUE-BODY-MARKER" in tool_answers(model, 1)[-1]
    assert "UNIQUE-BODY-MARKER" in tool_answers(model, 2)[-1]
    assert "notes.md" in tool_answers(model, 3)[-1]
    assert "UNIQUE-BODY-MARKER" not in tool_answers(model, 3)[-1]
    uses = SkillUse.objects.filter(skill__name="greeting-style").order_by("pk")
    assert [(u.kind, u.detail, u.allowed) for u in uses][:2] == [
        ("load", "", True),
        ("load", "", True),
    ]
    assert not uses[2].allowed


def test_skills_the_model_may_not_invoke_are_never_offered(repo: Path) -> None:
    add_skill(repo, "style")
    add_skill(repo, "prod-deploy", extra="side-effects: production-mutation\n")
    add_skill(repo, "person-only", extra="model-invocable: false\n")
    broken = repo / ".agents" / "skills" / "broken"
    broken.mkdir()
    (broken / "SKILL.md").write_text("---\nname: [broken\n---\n")
    commit(repo)
    session, _ = start(repo, task_spec())
    model = ScriptedModel(
        ("deploy", [("load_skill", {"name": "prod-deploy"})]),
        ("broken", [("load_skill", {"name": "broken"})]),
        *writes("hello"),
    )
    report = run_next(session, model)
    assert report.outcome == "verified", report.detail  # an invalid skill is not fatal
    listing = brief(model)
    assert "- style:" in listing
    for hidden in ("prod-deploy", "person-only", "broken"):
        assert hidden not in listing
    assert "cannot be loaded by the model" in tool_answers(model, 1)[-1]
    assert "invalid YAML frontmatter" in tool_answers(model, 2)[-1]
    assert not Skill.objects.get(name="broken").valid
    refused = SkillUse.objects.get(skill__name="prod-deploy")
    assert not refused.allowed
    assert "production-mutation" in refused.outcome


def test_a_skill_above_the_sessions_profile_asks_before_it_loads(
    repo: Path, staff_user: User, django_capture_on_commit_callbacks: Any
) -> None:
    add_skill(repo, "release", extra="permission-profile: trusted\n")
    commit(repo)
    session, _plan = start(repo, task_spec(), profile="normal")
    load = ("release", [("load_skill", {"name": "release"})])
    report = run_next(session, ScriptedModel(load))
    assert report.task_status == "blocked"
    decision = RiskDecision.objects.get(review_status="pending")
    assert (decision.tool, decision.rule) == ("load_skill", "skill.profile-above")
    assert "needs the trusted profile" in decision.reason
    assert not SkillUse.objects.exists()  # nothing was read

    grant(staff_user, session.project, "approver")
    with django_capture_on_commit_callbacks(execute=True):
        decision_review(decision=decision, reviewer=staff_user, approve=True, scope="once")
    # The next attempt resumes at the approved load (made once, not asked for again):
    # the model's first request already holds the body.
    model = ScriptedModel(*writes("hello"))
    assert run_next(session, model).outcome == "verified"
    assert "UNIQUE-BODY-MARKER" in tool_answers(model, 0)[-1]
    assert SkillUse.objects.filter(skill__name="release", allowed=True).count() == 1


def test_many_skills_are_listed_within_budget_and_found_by_search(
    repo: Path, settings: Any
) -> None:
    """An 8,192-token window: 2 % of it (about 650 characters) for the list."""
    settings.SF_MODEL_SMART = "openai/gpt-4o"
    settings.SF_MODEL_ENDPOINTS = {"smart": {"context_window": "8192"}}
    for index in range(120):
        add_skill(repo, f"topic-{index:03d}", description=f"Use for subject number {index:03d}")
    add_skill(repo, "greeting-words", description="Use when writing hello greetings")
    commit(repo)
    session, _ = start(repo, task_spec())
    model = ScriptedModel(
        ("find", [("load_skill", {"search": "subject 077"})]),
        *writes("hello"),
    )
    assert run_next(session, model).outcome == "verified"
    listing = brief(model).split("## Skills", 1)[1]
    assert "- greeting-words:" in listing  # the task is about greetings
    assert "- topic-" not in listing  # none of those is
    assert '(120 more skills: load_skill search="words" finds them)' in listing
    assert len(listing) < 8192 * 4 * 0.02 + 200
    assert "topic-077" in tool_answers(model, 1)[-1]


def test_a_person_invokes_a_skill_for_the_next_unit(repo: Path, staff_user: User) -> None:
    add_skill(repo, "style")
    add_skill(repo, "background", extra="user-invocable: false\n")
    add_skill(repo, "big-release", extra="permission-profile: unrestricted\n")
    commit(repo)
    session, _ = start(repo, task_spec())
    person = Actor.of(staff_user)
    grant(staff_user, session.project, "admin")
    listed = command_run(session=session, text="/skills", actor=person)
    assert "3 skills in" in listed.message
    assert "- background [valid] invocable by model" in listed.message
    with pytest.raises(CommandRejected, match="not user-invocable"):
        command_run(session=session, text="/skill background", actor=person)
    with pytest.raises(CommandRejected, match="needs the unrestricted profile"):
        command_run(session=session, text="/skill big-release", actor=person)
    with pytest.raises(CommandRejected, match="no skill named 'nope'; you can invoke"):
        command_run(session=session, text="/skill nope", actor=person)
    outcome = command_run(session=session, text="/skill style --tone 'very formal'", actor=person)
    assert "next unit" in outcome.message

    model = ScriptedModel(*writes("hello"))
    report = run_next(session, model)
    assert "## Skills a person asked you to use" in brief(model)
    assert "### style with: --tone 'very formal'" in brief(model)
    assert "UNIQUE-BODY-MARKER" in brief(model)
    use = SkillUse.objects.get(kind="invoke")
    assert (use.by_model, use.user, use.unit_id) == (False, staff_user, report.unit_id)
    second = ScriptedModel(*writes("hello"))
    start_again, _ = start(repo, task_spec(key="again"))
    run_next(start_again, second)
    assert "asked you to use" not in brief(second)  # claimed once


def test_a_skill_loads_through_a_real_provider(
    repo: Path,
    provider: FakeProvider,
) -> None:
    """Over HTTP, in OpenAI's wire format: the tool's schema as the provider receives it
    (name, file and search, none required), the call, and the body in the next request."""
    add_skill(repo, "greeting-style", description="How greetings are worded")
    commit(repo)
    session, _ = start(repo, task_spec())
    provider.answer(
        openai_calls(call("load_skill", {"name": "greeting-style"})),
        openai_calls(call("write_file", {"path": "hello.txt", "content": "hello"})),
        openai_calls(call("finish", {"summary": "wrote hello.txt"})),
    )
    run_unit(session)
    tools = {t["function"]["name"]: t["function"] for t in provider.requests[0].body["tools"]}
    schema = tools["load_skill"]["parameters"]
    assert set(schema["properties"]) == {"name", "file", "search"}
    assert not schema.get("required")
    second = provider.requests[1].body["messages"]
    assert "UNIQUE-BODY-MARKER" in second[-1]["content"]
    assert second[-1]["role"] == "tool"
    assert SkillUse.objects.get().kind == "load"


def test_running_a_skills_script_is_a_use_of_it(repo: Path) -> None:
    folder = add_skill(repo, "checks")
    (folder / "scripts").mkdir()
    (folder / "scripts" / "check.sh").write_text("echo checked\n")
    commit(repo)
    session, _ = start(repo, task_spec())
    script = (
        "check",
        [("run_command", {"command": "sh ./.agents/skills/checks/scripts/check.sh"})],
    )
    report = run_next(session, ScriptedModel(script, *writes("hello")))
    assert report.outcome == "verified", report.detail
    use = SkillUse.objects.get(kind="script")
    assert (use.skill.name, use.outcome, use.unit_id) == ("checks", "exit code 0", report.unit_id)


def test_a_skill_file_a_command_replaced_by_a_link_out_is_not_read(
    repo: Path, tmp_path: Path
) -> None:
    """load_skill read the skill's files in the unit's worktree by path: a command of
    the unit that made one a link to a host file had SF (root) hand that file to the
    model. A link inside the worktree still reads."""
    secret = tmp_path / "host-secret"
    secret.write_text("HOST-SECRET-4711\n")
    folder = add_skill(repo, "greeting-style", description="How greetings are worded")
    (folder / "checklists").mkdir()
    (folder / "checklists" / "review.md").write_text("- [ ] full stop\n")
    (folder / "checklists" / "inner.md").write_text("placeholder\n")
    shown = ".agents/skills/greeting-style/checklists"
    (repo / "plant.sh").write_text(
        f"ln -sf {secret} {shown}/review.md && ln -sf ../SKILL.md {shown}/inner.md\n"
    )
    commit(repo)
    session, _ = start(repo, task_spec())
    model = ScriptedModel(
        ("plant", [("run_command", {"command": "sh plant.sh"})]),
        ("out", [("load_skill", {"name": "greeting-style", "file": "checklists/review.md"})]),
        ("in", [("load_skill", {"name": "greeting-style", "file": "checklists/inner.md"})]),
        *writes("hello"),
    )
    run_next(session, model)
    assert "exit code 0" in tool_answers(model, 1)[-1], tool_answers(model, 1)[-1]
    assert "HOST-SECRET-4711" not in tool_answers(model, 2)[-1]
    assert "a link out of" in tool_answers(model, 2)[-1]
    assert "UNIQUE-BODY-MARKER" in tool_answers(model, 3)[-1]
