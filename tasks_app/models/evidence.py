"""The relations from lower apps' records to the units and tasks they are about, held up here.

agents_app (the base app: sessions, gate, runtime) records a unit's trace, model calls
and gate decisions, and skills_app a skill's uses by units and the task that writes a
proposed skill; but units and tasks are this app's, above both. Those apps store the id
only (``unit_id`` / ``task_id``, indexed), so that their models and migrations stand
alone; this module gives their models the relation back, from the app that owns units
and tasks, the way a ``GenericRelation`` is declared: as a private field, which the ORM
joins, follows in ``select_related`` and cascades on delete, and which no migration of
either app records. The database constraints that go with them (the ones the old
``ForeignKey``s had) are tasks_app's migrations 0016 (agents_app) and 0018 (skills_app).

What deleting a unit or task does is what the old foreign keys did: a unit's trace
events, model calls and skill uses are deleted with it, its risk decisions stay with
``unit_id`` set to NULL; a skill proposal stays with ``task_id`` set to NULL.
"""

from __future__ import annotations

from typing import Any

from django.db import models
from django.db.models.deletion import Collector

from agents_app.models import ModelCall, RiskDecision, TraceEvent
from skills_app.models import SkillProposal, SkillUse
from tasks_app.models.plan import Task
from tasks_app.models.runtime import Unit


def set_id_null(
    collector: Collector, field: models.ForeignObject, sub_objs: Any, using: str
) -> None:
    """``SET_NULL`` for a private relation: the update goes to the concrete ``<name>_id`` column.

    (Django's ``SET_NULL`` would update the relation itself, which has no column.)
    """
    (column,) = field.local_related_fields
    collector.add_field_update(column, None, sub_objs)


class HeldRelation(models.ForeignObject):
    """A relation to ``to`` over a lower app's model's own ``<name>_id`` column."""

    def __init__(
        self, to: type[models.Model], *, column: str, on_delete: Any, related_name: str
    ) -> None:
        super().__init__(
            to,
            on_delete=on_delete,
            from_fields=[column],
            to_fields=["id"],
            related_name=related_name,
            null=True,
            blank=True,
            editable=False,
        )

    def contribute_to_class(
        self, cls: type[models.Model], name: str, private_only: bool = False, **kwargs: Any
    ) -> None:
        # Private, like a GenericRelation: not a column, and in no migration.
        super().contribute_to_class(cls, name, private_only=True, **kwargs)


# (model, relation, its target, reverse name on the target, what deleting the target
# does): as the old foreign keys.
HELD: tuple[tuple[type[models.Model], str, type[models.Model], str, Any], ...] = (
    (TraceEvent, "unit", Unit, "trace", models.CASCADE),
    (ModelCall, "unit", Unit, "calls", models.CASCADE),
    (RiskDecision, "unit", Unit, "decisions", set_id_null),
    (SkillUse, "unit", Unit, "skill_uses", models.CASCADE),
    (SkillProposal, "task", Task, "+", set_id_null),
)

for _model, _name, _to, _related_name, _on_delete in HELD:
    _model.add_to_class(
        _name,
        HeldRelation(_to, column=f"{_name}_id", on_delete=_on_delete, related_name=_related_name),
    )


def proposal_task(proposal: SkillProposal) -> Task | None:
    """The task that writes ``proposal``, through the relation held here (typed: mypy
    cannot see a field added with ``add_to_class``). ``select_related("task")`` loads it."""
    task: Task | None = proposal.task  # type: ignore[attr-defined]
    return task
