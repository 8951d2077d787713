"""Sending a follow-up: one service for the web, the CLI, the API and MCP.

- To a running unit (``unit``): stored, and its model reads it before its next step
  (``tasks_app.engine.followups``). A unit that has ended is refused with the reason.
- To a task (``task``), by the task's status:
  - a unit running (in progress, verifying): as to that unit;
  - failed: a retry starts the next attempt, the message in its brief;
  - in review (its last attempt finished and passed verification): the task is sent
    back as a reviewer's "request changes" is, the message in the next brief (this one
    needs the approver role, as requesting changes does);
  - paused: resumed, the message in the next brief;
  - todo, retrying or blocked: stored for the next attempt's brief;
  - done, cancelled or skipped (final): refused, no attempt follows.

Steering roles: an operator may send one (a viewer may not).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from agents_app.access import Action, require_actor
from sf_core.actors import Actor
from sf_core.errors import InvalidTransition, SfError
from sf_core.live import broadcast
from tasks_app.engine.recovery import task_resume, task_retry
from tasks_app.engine.review import task_request_changes
from tasks_app.lifecycle import FINAL, task_groups
from tasks_app.models import MAX_FOLLOWUP_CHARS, FollowUp, Task, TaskStatus, Unit, UnitStatus

S = TaskStatus
RUNNING = (S.IN_PROGRESS, S.VERIFYING)
NEXT_ATTEMPT = (S.TODO, S.RETRYING, S.BLOCKED)
SHOWN_IN_REASON = 120  # characters of the message in the task's status reason


class FollowUpInvalid(SfError):
    """A follow-up that cannot be sent as it is (empty, too long, the wrong target)."""


@dataclass(frozen=True)
class FollowUpSent:
    followup: FollowUp
    task: Task
    delivery: str  # what happens to it, in words


@dataclass(frozen=True)
class FollowUpOffer:
    """What the unit page's follow-up box offers now, the same for every viewer: it is
    re-rendered live as the unit and its task move, so a page left open never offers to
    send to an agent that has stopped. ``to_unit``: the form names the running unit."""

    kind: str  # running, verifying, retry, changes, resume, next, final
    button: str  # the send button's words; "" when nothing can be sent
    hint: str  # what a message does now, in words
    to_unit: bool = False


NEXT_BRIEF = "the next attempt starts with it in its brief"


def followup_offer(task: Task, unit: Unit | None) -> FollowUpOffer:
    """What a message sent from ``unit``'s page does now (``_to_task`` decides the
    same; ``unit``: the attempt the page shows, None on a page of the task alone)."""
    status = task.status
    if status in FINAL:
        return FollowUpOffer(
            "final",
            "",
            f"task {task.key} is {status}, which is final: no attempt follows "
            "it; state a new intent for more work",
        )
    if unit is not None and unit.status == UnitStatus.RUNNING and status in RUNNING:
        if status == S.VERIFYING:  # its model is done: stored for the next attempt
            hint = "its model is done (being verified): the next attempt reads it"
            return FollowUpOffer("verifying", "Send for the next attempt", hint, to_unit=True)
        hint = "tell the running agent something: it reads it before its next step"
        return FollowUpOffer("running", "Send to the running agent", hint, to_unit=True)
    if status in RUNNING:  # another attempt runs (or no page's unit): it goes to that one
        return FollowUpOffer(
            "running",
            "Send to the running agent",
            "the unit running the task reads it before its next step",
        )
    return _offer_after(status)


def _offer_after(status: str) -> FollowUpOffer:
    """No unit of the task runs: what a message starts, as the board's buttons do."""
    if status == S.FAILED:
        return FollowUpOffer("retry", "Retry with this message", f"retries the task: {NEXT_BRIEF}")
    if status == S.REVIEW:
        hint = f"sends the task back as Request changes does (the approver role): {NEXT_BRIEF}"
        return FollowUpOffer("changes", "Request changes with this message", hint)
    if status == S.PAUSED:
        hint = f"resumes the task, its work so far kept: {NEXT_BRIEF}"
        return FollowUpOffer("resume", "Resume with this message", hint)
    return FollowUpOffer("next", "Send for the next attempt", f"it waits: {NEXT_BRIEF}")


def followup_clean(text: str) -> str:
    """The message as stored; bad input raises ``FollowUpInvalid`` naming the problem."""
    text = (text or "").strip()
    if not text:
        raise FollowUpInvalid("the follow-up message is empty: say what the agent should do")
    if len(text) > MAX_FOLLOWUP_CHARS:
        raise FollowUpInvalid(
            f"the follow-up message is {len(text)} characters; at most {MAX_FOLLOWUP_CHARS}"
        )
    return text


def followup_send(
    *,
    text: str,
    actor: Actor,
    task: Task | None = None,
    unit: Unit | None = None,
    project_id: int | None = None,
) -> FollowUpSent:
    """Send ``text`` to ``unit`` (running) or to ``task``; see the module docstring.
    ``project_id``: the project the caller means; a task of another one is refused."""
    text = followup_clean(text)
    if unit is not None:
        task = _task_of(unit, task)
    if task is None:
        raise FollowUpInvalid("a follow-up needs a task or a unit to go to")
    task = Task.objects.select_related("plan__session__project").get(pk=task.pk)
    project = task.plan.session.project
    if project_id is not None and project.pk != project_id:
        raise FollowUpInvalid(
            f"task {task.key} (id {task.pk}) belongs to project {project.name!r} "
            f"(id {project.pk}), not to project {project_id}"
        )
    require_actor(actor, project, Action.REVIEW_TASK if task.status == S.REVIEW else Action.STEER)
    if unit is not None:
        return _to_running_unit(task, unit, text, actor)
    return _to_task(task, text, actor)


def _task_of(unit: Unit, task: Task | None) -> Task:
    if task is not None and unit.task_id != task.pk:
        raise FollowUpInvalid(f"unit {unit.pk} is an attempt of task {unit.task_id}, not {task.pk}")
    return unit.task


def _to_running_unit(task: Task, unit: Unit, text: str, actor: Actor) -> FollowUpSent:
    unit.refresh_from_db(fields=["status"])
    if unit.status != UnitStatus.RUNNING:
        raise InvalidTransition(
            f"unit {unit.pk} (attempt {unit.attempt} of task {task.key}) has already ended "
            f"({unit.status}); send the follow-up to task {task.key} instead: it goes into "
            "the next attempt's brief"
        )
    followup = _store(task, unit, text, actor)
    if task.status == S.VERIFYING:  # its model is done; the verify commands run
        return FollowUpSent(followup, task, "unit is being verified: the next attempt reads it")
    return FollowUpSent(followup, task, f"unit {unit.attempt} reads it before its next step")


def _to_task(task: Task, text: str, actor: Actor) -> FollowUpSent:
    if task.status in FINAL:
        raise InvalidTransition(
            f"task {task.key} is {task.status}, which is final: no attempt follows it; "
            "state a new intent for more work"
        )
    running = task.units.filter(status=UnitStatus.RUNNING).order_by("-attempt").first()
    if task.status in RUNNING and running is not None:
        return _to_running_unit(task, running, text, actor)
    short = text if len(text) <= SHOWN_IN_REASON else text[:SHOWN_IN_REASON] + "…"
    with transaction.atomic():
        followup = _store(task, None, text, actor)
        if task.status == S.FAILED:
            task = task_retry(task=task, actor=actor, reason=f"follow-up: {short}")
        elif task.status == S.REVIEW:
            task = task_request_changes(task=task, actor=actor, reason=text)
        elif task.status == S.PAUSED:
            task = task_resume(task=task, actor=actor, reason=f"follow-up: {short}")
        elif task.status not in (*NEXT_ATTEMPT, *RUNNING):
            raise InvalidTransition(f"task {task.key} is {task.status}: no attempt to send it to")
    task.refresh_from_db()
    attempt = task.units.count() + 1
    return FollowUpSent(followup, task, f"attempt {attempt} starts with it in its brief")


def _store(task: Task, unit: Unit | None, text: str, actor: Actor) -> FollowUp:
    """Stored, and announced: every page of the task lists it (the unit pages' live
    follow-ups), not only the one that sent it."""
    followup = FollowUp.objects.create(
        task=task, unit=unit, author=actor.user, author_label=str(actor), text=text
    )
    for group in task_groups(task):
        broadcast(group, "tasks.changed", task_id=task.pk)
    return followup
