"""Skill evals on replay: a passing case, a failing one that tries every tool on the
hidden answers (its workspace kept), and a negative case (an irrelevant skill not loaded).

The traces are hand-written here (labeled so in their headers); their tool calls run
for real in each trial's worktree, through the gate.
"""

from __future__ import annotations

import json
import subprocess
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from agents_app.models import TraceEvent, TraceKind
from agents_app.runtime.recording import trace_from_steps, trace_write
from agents_app.services import project_create
from skills_app.models import SkillEvalRun
from tasks_app.features.skills.evals import EvalOptions, eval_cases, eval_run, trial_repo_create

pytestmark = pytest.mark.django_db
SECRET = "the answer is 4217"
HANDWRITTEN = {"note": "Hand-written test fixture, not a recording of a live model."}

SKILL_MD = """---
name: facts
description: Where the project's facts live and how to answer a question about them.
---
The facts are in facts.txt, one per line. Answer in answer.txt, one line.
"""
ANSWER_GRADER = """
from skills_app.grader_kit import Grader

g = Grader()
g.task_done()
g.skill_loaded("facts")
g.check("answer matches", g.file_text("answer.txt").strip() == g.hidden_text("answer.txt").strip(),
        g.file_text("answer.txt"))
g.report()
"""
NEGATIVE_GRADER = """
from skills_app.grader_kit import Grader

g = Grader()
g.task_done()
g.skill_not_loaded("facts")
g.report()
"""


def _case(skills: Path, name: str, *, grader: str, steps: Any, task: str) -> None:
    case = skills / "facts" / "evals" / name
    (case / "hidden").mkdir(parents=True)
    (case / "work").mkdir()
    (case / "task.md").write_text(task)
    (case / "grader.py").write_text(grader)
    (case / "hidden" / "answer.txt").write_text(SECRET + "\n")
    (case / "work" / "facts.txt").write_text("sky: blue\nanswer: 4217\n")
    trace_write(
        case / "trace.jsonl", trace_from_steps(steps, header=HANDWRITTEN, worktree=case / "work")
    )


def _finish(summary: str) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    return ("Done.", [("finish", {"summary": summary})])


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "proj"
    skills = repo / ".agents" / "skills"
    (skills / "facts").mkdir(parents=True)
    (skills / "facts" / "SKILL.md").write_text(SKILL_MD)
    hidden = skills / "facts" / "evals" / "peeks" / "hidden"
    _case(
        skills,
        "answers",
        grader=ANSWER_GRADER,
        task="What is the answer? Write it to answer.txt.",
        steps=[
            ("Loading the skill.", [("load_skill", {"name": "facts"})]),
            ("Reading.", [("read_file", {"path": "facts.txt"})]),
            ("Writing.", [("write_file", {"path": "answer.txt", "content": SECRET + "\n"})]),
            _finish("answer.txt says the answer is 4217"),
        ],
    )
    _case(
        skills,
        "peeks",
        grader=ANSWER_GRADER,
        task="What is the answer? Write it to answer.txt.",
        steps=[
            (
                "Peeking.",
                [("read_file", {"path": ".agents/skills/facts/evals/peeks/hidden/answer.txt"})],
            ),
            ("Again.", [("read_file", {"path": str(hidden / "answer.txt")})]),
            ("Grep.", [("grep", {"pattern": "4217", "path": str(hidden)})]),
            ("Glob.", [("glob", {"pattern": "*.txt", "path": str(hidden)})]),
            ("List.", [("list_dir", {"path": str(hidden)})]),
            ("Shell.", [("run_command", {"command": f"cat {hidden / 'answer.txt'}"})]),
            ("Guess.", [("write_file", {"path": "answer.txt", "content": "7\n"})]),
            _finish("guessed 7"),
        ],
    )
    _case(
        skills,
        "unrelated",
        grader=NEGATIVE_GRADER,
        task="Write hello to hello.txt.",
        steps=[
            ("Writing.", [("write_file", {"path": "hello.txt", "content": "hello\n"})]),
            _finish("wrote hello.txt"),
        ],
    )
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@x"]
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "skills"]):
        subprocess.run([*git, *args], cwd=repo, check=True)
    return repo


def test_an_eval_on_replay_grades_keeps_failed_workspaces_and_hides_answers(repo: Path) -> None:
    project = project_create(name="facts project", repo_path=str(repo))
    cases = {case.name: case for case in eval_cases(project, skill="facts")}
    assert set(cases) == {"answers", "peeks", "unrelated"}

    runs = {
        name: eval_run(case, options=EvalOptions(replay_own=True)) for name, case in cases.items()
    }

    assert runs["answers"].passed, runs["answers"].grades
    assert runs["answers"].workspace_path == ""
    assert runs["unrelated"].passed, runs["unrelated"].grades
    assert {g["name"] for g in runs["unrelated"].grades} >= {"skill facts not loaded"}
    failed = runs["peeks"]
    assert not failed.passed
    assert not failed.error
    failing = [g["name"] for g in failed.grades if not g["passed"]]
    assert failing == ["skill facts loaded", "answer matches", "grader exit code"]
    kept = Path(failed.workspace_path)
    assert (kept / "answer.txt").read_text() == "7\n"
    assert not (kept / ".agents" / "skills" / "facts" / "evals").exists()
    assert SkillEvalRun.objects.count() == 3
    assert all(not Path(p).exists() for p in _trial_folders(runs["answers"]))

    # Every tool was refused the hidden answers by the gate, and none saw them.
    peeks = TraceEvent.objects.filter(
        kind=TraceKind.TOOL_CALL, session__title__contains="facts/peeks"
    ).order_by("seq")
    outputs = {e.name: str(e.payload.get("output", "")) for e in peeks}
    for tool in ("read_file", "grep", "glob", "list_dir", "run_command"):
        assert outputs[tool].startswith("denied by builtin.eval-hidden"), (tool, outputs[tool])
    assert all("4217" not in str(e.payload.get("output", "")) for e in peeks)


def _trial_folders(run: SkillEvalRun) -> list[str]:
    return [p for p in [run.workspace_path] if p]


def test_the_command_prints_json_and_fails_when_a_case_fails(repo: Path) -> None:
    project_create(name="facts cli", repo_path=str(repo))
    out = StringIO()
    with pytest.raises(SystemExit) as exit_:
        call_command(
            "sf",
            "skills",
            "eval",
            "facts",
            "--project",
            "facts cli",
            "--replay",
            "--output-format",
            "json",
            stdout=out,
        )
    assert exit_.value.code == 1
    result = json.loads(out.getvalue().splitlines()[-1])
    assert {(r["case"], r["passed"]) for r in result["runs"]} == {
        ("answers", True),
        ("peeks", False),
        ("unrelated", True),
    }


def test_an_unknown_skill_is_a_usage_error(repo: Path) -> None:
    project_create(name="facts usage", repo_path=str(repo))
    err = StringIO()
    with pytest.raises(SystemExit) as exit_:
        call_command(
            "sf", "skills", "eval", "nope", "--project", "facts usage", "--replay", stderr=err
        )
    assert exit_.value.code == 2
    assert "no skill 'nope'" in err.getvalue()


def test_a_trial_repository_copies_links_as_links(tmp_path: Path) -> None:
    """A link committed in a case's ``work/`` or a skill folder was copied as the host
    file it named (read by SF, as root) into the repository the trial's model reads."""
    secret = tmp_path / "host-secret"
    secret.write_text("HOST-SECRET-4711\n")
    source = tmp_path / "source"
    work = source / ".agents/skills/s/evals/c/work"
    work.mkdir(parents=True)
    (work / "leak.txt").symlink_to(secret)
    (source / ".agents/skills/s/notes.md").symlink_to(secret)
    repo = trial_repo_create(tmp_path / "trial", work, source)
    for path in (repo / "leak.txt", repo / ".agents/skills/s/notes.md"):
        assert path.is_symlink(), path
    shown = subprocess.run(
        ["git", "grep", "-c", "HOST-SECRET", "HEAD"], cwd=repo, capture_output=True, text=True
    )
    assert shown.stdout == ""
