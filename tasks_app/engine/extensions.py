"""Where the features built on the engine plug into it, so the engine imports none of
them (docs/architecture.md, "Inside tasks_app").

A feature registers its hook under a name in ``TasksAppConfig.ready``; registering a
name again replaces the hook (a second ``ready`` adds nothing). The engine calls every
hook of a point, in registration order, at the moment the point describes:

- ``checkpointed(unit, ws)``: inside the transaction that stores a unit's checkpoint
  (line comments: which commented lines the new attempt changed).
- ``unit_ended(unit_id)``: after a unit's outcome, each in its own savepoint; a hook
  that raises is logged and rolled back, never a change to how the unit ended (skill
  evidence: propose a skill when the unit's evidence repeats).
- ``verified(task, unit, ws, options)``: in the unit's run, once its work passed
  verification and the task entered review, before auto-approval or a person's review
  (model review: a model reviews the diff, and may send the task back). A hook returns
  True when a person must decide even where the profile would approve by itself (the
  model asked for changes). Outside any transaction (a hook may ask a model for
  minutes); a hook that raises is logged and the review goes on as if it were not there.
- ``review_waiting(task_id)``: on commit, once a task waits for a person's review
  (forge: open its pull request).
- ``merged(task)``: inside the transaction that marks a task merged (skill proposals:
  the proposal the task wrote is merged).
- ``attempt_verdicts(task, unit, ws, options)``: in a best-of-N attempt's own run (its
  thread), once its work passed verification and its unit ended: a verdict on it
  (``approve``, ``request_changes``, ``no_verdict``, or None: no opinion), which the
  round's ranking reads (``tasks_app.ranking``). The model review reviews each attempt
  here, in the attempt's worktree, without acting on its verdict (the round's winner
  then goes through ``verified`` as a single unit does, and the verdict acts there).
  The first verdict given wins; a hook that raises is logged and, unless another gives
  one, is ``no_verdict`` (a failed review is a verdict of its own, never a crash).
- ``swept()``: at the end of every engine sweep; its number is reported under the
  hook's name (forge: the reviews read back from the projects' forges).

One point is the engine's own: ``inline_drain(session_id)`` starts the units of a
session in a thread of this process when there is no broker (``engine.drain``, which
runs the unit, which comes back to ``dispatch``: so ``receivers`` plugs it in).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Generic, TypeVar

from django.db import transaction

if TYPE_CHECKING:
    from tasks_app.engine.values import UnitOptions
    from tasks_app.models import Task, Unit
    from tasks_app.workspaces import Workspace

logger = logging.getLogger("sf.engine")

Hook = TypeVar("Hook", bound=Callable[..., object])


class ExtensionPoint(Generic[Hook]):
    """The hooks of one point of the engine, by name, in registration order."""

    def __init__(self, point: str) -> None:
        self.point = point
        self.hooks: dict[str, Hook] = {}

    def register(self, name: str, hook: Hook) -> None:
        if not name or not callable(hook):
            raise ValueError(f"engine extension {self.point}: a hook needs a name and a callable")
        self.hooks[name] = hook

    def unregister(self, name: str) -> None:
        self.hooks.pop(name, None)

    def items(self) -> Iterator[tuple[str, Hook]]:
        return iter(list(self.hooks.items()))

    def __iter__(self) -> Iterator[Hook]:
        return iter(list(self.hooks.values()))


checkpointed: ExtensionPoint[Callable[[Unit, Workspace], None]] = ExtensionPoint("checkpointed")
unit_ended: ExtensionPoint[Callable[[int], object]] = ExtensionPoint("unit_ended")
verified: ExtensionPoint[Callable[[Task, Unit, Workspace, UnitOptions], bool]] = ExtensionPoint(
    "verified"
)
review_waiting: ExtensionPoint[Callable[[int], object]] = ExtensionPoint("review_waiting")
merged: ExtensionPoint[Callable[[Task], None]] = ExtensionPoint("merged")
swept: ExtensionPoint[Callable[[], int]] = ExtensionPoint("swept")
attempt_verdicts: ExtensionPoint[Callable[[Task, Unit, Workspace, UnitOptions], str | None]] = (
    ExtensionPoint("attempt_verdicts")
)
inline_drain: ExtensionPoint[Callable[[int], None]] = ExtensionPoint("inline_drain")


def unit_ended_run(unit_id: int) -> None:
    """Every ``unit_ended`` hook, each in a savepoint: a by-product of the unit, whatever
    goes wrong in one is logged and rolled back, and the others still run."""
    for name, hook in unit_ended.items():
        try:
            with transaction.atomic():
                hook(unit_id)
        except Exception:
            logger.exception("%s of unit %s not checked", name, unit_id)


def verified_run(task: Task, unit: Unit, ws: Workspace, options: UnitOptions) -> bool:
    """Every ``verified`` hook in turn; whether one wants a person to decide. A hook
    that raises is logged, never a change to how the unit ended."""
    person = False
    for name, hook in verified.items():
        try:
            person = bool(hook(task, unit, ws, options)) or person
        except Exception:
            logger.exception("%s of unit %s did not run", name, unit.pk)
    return person


NO_VERDICT = "no_verdict"  # a review that failed: ranked as no opinion, named in the reason


def attempt_verdict_run(task: Task, unit: Unit, ws: Workspace, options: UnitOptions) -> str | None:
    """The verdict on a verified attempt: the first ``attempt_verdicts`` hook's that gives
    one. A hook that raises is logged; if no other gives a verdict, the attempt's is
    ``no_verdict``, and the round goes on."""
    failed = False
    for name, hook in attempt_verdicts.items():
        try:
            verdict = hook(task, unit, ws, options)
        except Exception:
            logger.exception("%s of attempt unit %s did not run", name, unit.pk)
            failed = True
            continue
        if verdict is not None:
            return verdict
    return NO_VERDICT if failed else None
