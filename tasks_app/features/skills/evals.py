"""Skill evals: each case of a skill run as a real unit, then graded (docs/skill-evals.md).

One trial of one case (``skills/<name>/evals/<case>/``):

1. A fresh git repository under ``SF_DATA_DIR/skill-evals/`` from the case's ``work/``
   tree (or empty), with the project's ``.agents/skills`` copied in *without* any
   ``evals/`` folder: the hidden answers are never in the workspace (and the gate
   denies their path to every tool anyway).
2. A throwaway project on it, a headless session (permission profile ``normal``,
   inline driver) and a one-task plan whose description is ``task.md``, accepted
   autonomously. The unit runs for real — tool calls executed through the gate,
   verification, review, merge — answering from the session's model mode or from a
   replayed trace. Unattended: ``ask_user`` is answered "decide yourself", every
   approval the gate asks for is rejected. One attempt: ``max_retries`` is 0.
3. The grader (``grading.py``) inspects the workspace, the result and the trace.

A passed trial's folder and worktree are removed; a failed one keeps both, and the
run names where. Every trial is one ``SkillEvalRun``.
"""

from __future__ import annotations

import shutil
import time
import uuid
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml
from django.conf import settings
from django.db.models import Sum

from agents_app.axes import NEW_SESSION_AXES, PermissionProfile, Surface
from agents_app.mirrors import project_tree
from agents_app.models import AgentSession, Project, SessionDriver
from agents_app.runtime.replay import TraceFileInvalid, replay_load
from agents_app.services import project_create, session_create
from sf_core.actors import Actor
from sf_core.errors import SfError
from sf_core.git import git, new_repository
from skills_app.models import Skill, SkillEvalCase, SkillEvalRun, SkillScope
from skills_app.parsing import CASE_TRACE, EVALS, PROJECT_SKILLS
from skills_app.sync import project_skills_sync
from tasks_app.engine.drain import drain
from tasks_app.engine.review import task_approve
from tasks_app.engine.worktrees import worktree_discard
from tasks_app.features.headless.answers import Answers, ApprovalAnswer, answers_apply
from tasks_app.features.skills.grading import Trial, trial_grade
from tasks_app.models import PlanSource, Task, TaskStatus, Unit
from tasks_app.replays import recorded_header, recorded_model
from tasks_app.schemas import plan_spec_parse
from tasks_app.services import plan_accept, plan_create

TRIAL_PROFILE = PermissionProfile.NORMAL.value  # writes in the worktree, asks beyond it
TASK_KEY = "eval"
DEFAULT_VERIFY = "true"  # when task.md names no verify commands
UNATTENDED = Answers(
    ask_user={"*": "Nobody is here to answer: decide yourself and go on."},
    approvals=[ApprovalAnswer(tool="*", decision="reject")],
)
MAX_ROUNDS = 10  # drain, answer, drain again: a trial that keeps asking stops here
EVALUATOR = Actor.system("skill-eval")


class EvalUsage(SfError):
    """What was asked for cannot be run (no such skill or case, a trace that is not one)."""


@dataclass(frozen=True)
class EvalOptions:
    model_mode: str = "smart"
    replay: Path | None = None  # one trace for the selected case
    replay_own: bool = False  # each case answers from its own trace.jsonl


def eval_cases(project: Project, *, skill: str = "", case: str = "") -> list[SkillEvalCase]:
    """The project's eval cases (synced from its repository first), by skill and case."""
    project_skills_sync(project)
    skills = Skill.objects.filter(scope=SkillScope.PROJECT, project=project, removed_at=None)
    if skill:
        found = skills.filter(name=skill).first()
        if found is None:
            known = ", ".join(skills.values_list("name", flat=True)) or "none"
            raise EvalUsage(f"no skill {skill!r} in project {project.name}; skills: {known}")
        if not found.valid:
            raise EvalUsage(f"skill {skill!r} is invalid: {found.problem}")
    cases = SkillEvalCase.objects.filter(skill__in=skills.filter(valid=True)).select_related(
        "skill"
    )
    if skill:
        cases = cases.filter(skill__name=skill)
    if case:
        cases = cases.filter(name=case)
    found_cases = list(cases.order_by("skill__name", "name"))
    if not found_cases:
        what = f"case {case!r} of " if case else ""
        raise EvalUsage(f"no eval {what}skill {skill or '(any)'} in project {project.name}")
    return found_cases


def eval_run(case: SkillEvalCase, *, options: EvalOptions) -> SkillEvalRun:
    """One trial of ``case``: a real unit, graded, stored; its folder kept if it failed."""
    started = time.monotonic()
    project = case.skill.project
    assert project is not None  # eval cases are of project skills
    tree = project_tree(project, part=str(PROJECT_SKILLS))  # record mode: the record's base
    case_dir = tree / case.skill.folder / case.path
    trace = _trace_for(case, case_dir, options)
    header = recorded_header(trace) if trace else {}
    folder = Path(settings.SF_DATA_DIR) / "skill-evals" / _folder_name(case)
    repo = trial_repo_create(folder / "repo", case_dir / "work", tree)
    task = _trial_unit(case, repo, trace=trace, model_mode=options.model_mode)
    trial = Trial(task=task, repo=repo, folder=folder, case_dir=case_dir)
    grades, error = trial_grade(trial)
    passed = not error and bool(grades) and all(grade["passed"] for grade in grades)
    workspace = trial.workspace()
    if passed:
        trial_remove(trial)
    units = Unit.objects.filter(task=task)
    model = (recorded_model(header) or "replay") if trace else _model_of(units)
    return SkillEvalRun.objects.create(
        case=case,
        model_mode=options.model_mode,
        model=model[:200],
        replay=str(trace or ""),
        passed=passed,
        grades=grades,
        error=error,
        duration_s=round(time.monotonic() - started, 3),
        cost=units.aggregate(total=Sum("cost"))["total"] or Decimal(0),
        workspace_path="" if passed else str(workspace),
    )


def _trace_for(case: SkillEvalCase, case_dir: Path, options: EvalOptions) -> Path | None:
    trace = options.replay
    if trace is None and options.replay_own:
        if not case.has_trace:
            raise EvalUsage(f"{case}: --replay without a path needs the case's {CASE_TRACE}")
        trace = case_dir / CASE_TRACE
    if trace is None:
        return None
    try:
        replay_load(trace)
    except TraceFileInvalid as exc:
        raise EvalUsage(str(exc)) from None
    return trace.resolve()


def _folder_name(case: SkillEvalCase) -> str:
    return f"{case.skill.name}-{case.name}-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"


def _model_of(units: Any) -> str:
    unit = units.order_by("-attempt").first()
    return unit.model if unit is not None else ""


# --- the workspace --------------------------------------------------------------------


def trial_repo_create(repo: Path, work: Path, source: Path) -> Path:
    """A git repository on ``main``: the case's ``work/`` tree (if any) and the source
    project's skills, every ``evals/`` folder left out. Links are copied as links: a
    committed link to a host file (``/etc/shadow``) was copied as that file's content,
    read by SF as root, into a repository the trial's model reads."""
    if work.is_dir():
        shutil.copytree(work, repo, symlinks=True)
    else:
        repo.mkdir(parents=True)
    skills = source / PROJECT_SKILLS
    if skills.is_dir():
        target = repo / PROJECT_SKILLS
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(skills, target, symlinks=True, ignore=_without_evals(skills))
    identity = ["-c", "user.name=SF skill eval", "-c", "user.email=skill-eval@localhost"]
    git("init", "-q", "-b", "main", cwd=new_repository(repo))
    git("add", "--all", cwd=repo)  # a new repository: it tracks no nested one yet
    git(*identity, "commit", "-q", "--allow-empty", "-m", "eval start", cwd=repo)
    return repo


def _without_evals(skills: Path) -> Any:
    def ignore(directory: str, names: list[str]) -> list[str]:
        # Only a skill folder's own evals/ (skills/<name>/evals): the hidden answers.
        return [EVALS] if Path(directory).parent == skills and EVALS in names else []

    return ignore


def trial_remove(trial: Trial) -> None:
    """A passed trial leaves nothing on disk: its worktree (if the task kept one) and
    its folder."""
    worktree = trial.worktree()
    if worktree is not None:
        worktree_discard(trial.repo, worktree)
    shutil.rmtree(trial.folder, ignore_errors=True)


# --- the unit ---------------------------------------------------------------------------


def _trial_unit(case: SkillEvalCase, repo: Path, *, trace: Path | None, model_mode: str) -> Task:
    number = SkillEvalRun.objects.filter(case=case).count() + 1
    project = project_create(
        name=f"eval {case.skill.name}/{case.name} {number} {uuid.uuid4().hex[:4]}",
        repo_path=str(repo),
        path_chosen_by_sf=True,
    )
    session = session_create(
        project=project,
        title=f"skill eval: {case}",
        axes={
            **NEW_SESSION_AXES,
            "surface": Surface.HEADLESS,
            "permission_profile": TRIAL_PROFILE,
            "model_mode": model_mode,
        },
    )
    AgentSession.objects.filter(pk=session.pk).update(
        driver=SessionDriver.INLINE, replay_trace=str(trace or "")
    )
    plan = plan_create(session=session, spec=case_plan(case), source=PlanSource.FILE)
    plan_accept(
        plan=plan, actor=EVALUATOR, autonomous=True, permission_profile=TRIAL_PROFILE, start=False
    )
    _run_unattended(session.pk)
    task = Task.objects.select_related("plan__session").get(plan=plan, key=TASK_KEY)
    if task.status == TaskStatus.REVIEW:
        # The evaluator is the reviewer (the grader judges the work): a verified task
        # merges, so the grader sees the tree a person's approval would have made.
        task_approve(task=task, actor=EVALUATOR)
        task.refresh_from_db()
    return task


def _run_unattended(session_id: int) -> None:
    """Units inline until nothing runs; what waits for a person is answered as nobody
    is there (``UNATTENDED``), then the engine goes on."""
    for _ in range(MAX_ROUNDS):
        ran = drain(session_id=session_id, worker="skill-eval")
        if not ran and not answers_apply(UNATTENDED, session_id=session_id):
            return


def case_plan(case: SkillEvalCase) -> Any:
    """The one-task plan of a case: ``task.md`` is the description. An optional YAML
    frontmatter in ``task.md`` may give ``title``, ``acceptance_criteria`` and ``verify``."""
    meta, body = _task_md(case.task_prompt)
    title = str(meta.get("title") or _first_line(body) or f"{case.skill.name}: {case.name}")
    criteria = meta.get("acceptance_criteria") or ["R1: do what the description asks"]
    task = {
        "key": TASK_KEY,
        "title": title[:200],
        "description": body,
        "acceptance_criteria": [str(item) for item in criteria],
        # The grader is the real check; a plan needs a verify command all the same.
        "verify": [str(item) for item in meta.get("verify") or [DEFAULT_VERIFY]],
        "max_retries": 0,
    }
    return plan_spec_parse({"summary": f"skill eval {case}", "tasks": [task]})


def _task_md(text: str) -> tuple[dict[str, Any], str]:
    lines = text.splitlines()
    if lines and lines[0].strip() == "---":
        end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), None)
        if end is not None:
            meta = yaml.safe_load("\n".join(lines[1:end])) or {}
            if isinstance(meta, dict):
                return meta, "\n".join(lines[end + 1 :]).strip()
    return {}, text.strip()


def _first_line(body: str) -> str:
    return next((line.lstrip("# ").strip() for line in body.splitlines() if line.strip()), "")
