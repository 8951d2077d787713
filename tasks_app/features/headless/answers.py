"""Pre-supplied answers for unattended runs: ``sf headless --answers FILE``.

A YAML or JSON file::

    ask_user:                       # question -> answer; "*" answers any question
      "Which Python version?": "3.11"
    approvals:                      # first matching entry settles a pending decision
      - tool: run_command           # a tool name or a glob ("*")
        match: "pip install *"      # glob over the command or path (default "*")
        decision: approve           # approve (once) or reject

An approval or ask_user the file does not answer still blocks the run (exit 10).
"""

from __future__ import annotations

import fnmatch
import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agents_app.gate.approvals import decision_answer
from agents_app.models import ReviewStatus, RiskDecision
from sf_core.actors import Actor
from sf_core.errors import SfError
from tasks_app.lifecycle import task_transition
from tasks_app.models import HoldReason, Task, TaskStatus, Unit, UnitStatus
from tasks_app.plan_files import (
    DocumentInvalid,
    document_check,
    text_file_read,
    yaml_parse,
)
from tasks_app.schemas import key_shown
from tasks_app.services import schedule_ready

MAX_ANSWERS_BYTES = 1024 * 1024


class AnswersInvalid(SfError):
    """An answers file that cannot be read or does not match its schema."""


class ApprovalAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool: str = Field(min_length=1)
    match: str = Field(default="*", min_length=1)
    decision: Literal["approve", "reject"]

    def matches(self, decision: RiskDecision) -> bool:
        subject = _subject(decision.input_normalized)
        return fnmatch.fnmatchcase(decision.tool, self.tool) and fnmatch.fnmatchcase(
            subject, self.match
        )


class Answers(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ask_user: dict[str, str] = Field(default_factory=dict)
    approvals: list[ApprovalAnswer] = Field(default_factory=list)
    source: str = Field(default="", exclude=True)


def answers_load(path: str | Path) -> Answers:
    """Read and validate an answers file; every problem names the file, the field SF
    expected and what is wrong — never a line of the file: ``--answers /etc/shadow``
    must not print the file to whoever runs it (a key or a question that is not a plain
    name shows as "(a key)")."""
    path = Path(path)
    try:
        text = text_file_read(path, limit=MAX_ANSWERS_BYTES)
        data = yaml_parse(text) if text.strip() else {}
    except DocumentInvalid as exc:
        problem = _without_content(str(exc))
        if problem.startswith("invalid "):
            problem = f"not YAML or JSON: {problem}"
        raise AnswersInvalid(f"--answers {path}: {problem}") from None
    try:
        document_check(data)
    except DocumentInvalid as exc:
        kind = next((k for k in _DOCUMENT_PROBLEMS if k in str(exc)), "a value SF cannot store")
        raise AnswersInvalid(f"--answers {path}: {kind}") from None
    if not isinstance(data, dict):
        raise AnswersInvalid(f"--answers {path}: expected a mapping with ask_user and/or approvals")
    try:
        answers = Answers.model_validate(data)
    except ValidationError as exc:
        problems = dict.fromkeys(_problem(error) for error in exc.errors())
        raise AnswersInvalid(f"--answers {path}: {'; '.join(problems)}") from None
    answers.source = str(path)
    return answers


_KNOWN_KEYS = {"ask_user", "approvals", *ApprovalAnswer.model_fields}
_DOCUMENT_PROBLEMS = ("NUL character", "lone surrogate", "nested deeper", "more than", "not text")
# What a parser quotes from the file has no blank in it (an alias, a tag, an anchor);
# its own words between quotes do ("expected ',' or ']'").
_QUOTED = re.compile(r"'[^'\s]{2,}'|\"[^\"\s]{2,}\"")


def _problem(error: Any) -> str:
    """One validation error, by the schema's own names only."""
    loc = error["loc"]
    if error["type"] == "extra_forbidden":
        at = _path(loc[:-1]) or "the top level"
        name = key_shown(loc[-1])
        unknown = "an unknown key" if name == "(a key)" else f"an unknown key {name!r}"
        accepted = (
            "ask_user, approvals" if len(loc) == 1 else ", ".join(ApprovalAnswer.model_fields)
        )
        return f"{unknown} at {at} (accepted: {accepted})"
    return f"{_path(loc)}: {error['msg']}"


def _path(parts: tuple[Any, ...]) -> str:
    return ".".join(_key(part) for part in parts)


def _key(part: Any) -> str:
    if isinstance(part, int) or part in _KNOWN_KEYS:
        return str(part)
    return key_shown(part)  # a question or a stray key: a name as it is, else "(a key)"


def _without_content(message: str) -> str:
    """A parser's message without the file's words it quotes (an alias, a tag)."""
    return _QUOTED.sub("(text from the file)", message)


def answers_apply(answers: Answers, *, session_id: int) -> int:
    """Settle what the file answers: pending decisions of the session, and tasks
    blocked on a question it answers. Returns how many things it unblocked."""
    settled = 0
    pending = RiskDecision.objects.filter(session_id=session_id, review_status=ReviewStatus.PENDING)
    for decision in pending.order_by("pk"):
        rule = next((r for r in answers.approvals if r.matches(decision)), None)
        if rule is None:
            continue
        decision_answer(
            decision=decision, approve=rule.decision == "approve", source=answers.source
        )
        settled += rule.decision == "approve"
    if answers.ask_user:
        blocked = Task.objects.filter(plan__session_id=session_id, status=TaskStatus.BLOCKED)
        for task in blocked.select_related("plan"):
            question = asked_question(task)
            if question is None:
                continue
            if question in answers.ask_user or "*" in answers.ask_user:
                task_transition(
                    task=task,
                    to=TaskStatus.TODO,
                    reason="answered from --answers",
                    actor=Actor.system("headless"),
                )
                schedule_ready(plan=task.plan)
                settled += 1
    return settled


def asked_question(task: Task) -> str | None:
    """The question a blocked task waits on (its last unit asked it), if any."""
    if task.hold_reason != HoldReason.QUESTION:
        return None
    last = Unit.objects.filter(task=task).order_by("-attempt").first()
    if last is None or last.status != UnitStatus.BLOCKED:
        return None
    return task.status_reason


def _subject(normalized: dict[str, Any]) -> str:
    for key in ("command", "path", "url"):
        value = normalized.get(key)
        if isinstance(value, str):
            return value
    return json.dumps(normalized, sort_keys=True)
