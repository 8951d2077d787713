"""The relation from agents_app's evidence to the units it is about, held up here.

agents_app (the base app: sessions, gate, runtime) records a unit's trace, model calls
and gate decisions, but units are the engine's, one app above it. agents_app stores the
unit's id only (``unit_id``, indexed), so that its models and migrations stand alone;
this module gives the three evidence models their ``unit`` relation back, from the app
that owns units, the way a ``GenericRelation`` is declared: as a private field, which
the ORM joins, follows in ``select_related`` and cascades on delete, and which no
migration of either app records. The database constraint that goes with it (the one the
old ``ForeignKey`` had) is tasks_app's migration 0016.

What deleting a unit does is what the old foreign keys did: its trace events and model
calls are deleted with it, its risk decisions stay with ``unit_id`` set to NULL.
"""

from __future__ import annotations

from typing import Any

from django.db import models
from django.db.models.deletion import Collector

from agents_app.models import ModelCall, RiskDecision, TraceEvent
from tasks_app.models.runtime import Unit


def forget_unit(
    collector: Collector, field: models.ForeignObject, sub_objs: Any, using: str
) -> None:
    """``SET_NULL`` for a private relation: the update goes to the concrete ``unit_id``.

    (Django's ``SET_NULL`` would update the relation itself, which has no column.)
    """
    (column,) = field.local_related_fields
    collector.add_field_update(column, None, sub_objs)


class EvidenceUnit(models.ForeignObject):
    """A unit relation over an evidence model's own ``unit_id`` column."""

    def __init__(self, *, on_delete: Any, related_name: str) -> None:
        super().__init__(
            Unit,
            on_delete=on_delete,
            from_fields=["unit_id"],
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


# (model, reverse name on Unit, what deleting the unit does): as the old foreign keys.
EVIDENCE: tuple[tuple[type[models.Model], str, Any], ...] = (
    (TraceEvent, "trace", models.CASCADE),
    (ModelCall, "calls", models.CASCADE),
    (RiskDecision, "decisions", forget_unit),
)

for _model, _related_name, _on_delete in EVIDENCE:
    _model.add_to_class("unit", EvidenceUnit(on_delete=_on_delete, related_name=_related_name))
