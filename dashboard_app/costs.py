"""Cost roll-ups from the ledger (``agents_app.ModelCall``): by project, session, task,
model, user (who started the session) and day. Every call counts — planning, failed,
cancelled and timed-out units — and unpriced calls are counted apart."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db.models import Count, Q, QuerySet, Sum
from django.db.models.functions import Coalesce, TruncDate

from agents_app.models import ModelCall, Project

# Each roll-up: the ledger's fields it groups by (the last one labels the row).
ROLLUPS: dict[str, tuple[str, ...]] = {
    "project": ("session__project_id", "session__project__name"),
    "session": ("session_id",),
    "task": ("unit__task_id", "unit__task__key"),  # planning calls have no task
    "model": ("model",),
    "user": ("session__created_by_id", "session__created_by__username"),
    "day": ("day",),
}


@dataclass(frozen=True)
class CostRow:
    key: str
    calls: int
    tokens_in: int
    tokens_out: int
    cost: Decimal
    unpriced: int  # calls charged $0 because no price was known

    def as_json(self) -> dict[str, Any]:
        return {**self.__dict__, "cost": str(self.cost)}


def ledger(projects: QuerySet[Project], since: datetime, until: datetime) -> QuerySet[ModelCall]:
    return ModelCall.objects.filter(
        session__project__in=projects, created_at__gte=since, created_at__lt=until
    )


def cost_rollup(calls: QuerySet[ModelCall], by: str, limit: int = 50) -> list[CostRow]:
    """The ledger's calls summed by ``by`` (one of ``ROLLUPS``), costliest first."""
    fields = ROLLUPS[by]
    if by == "day":
        calls = calls.annotate(day=TruncDate("created_at"))
    rows = (
        calls.values(*fields)
        .annotate(
            calls=Count("pk"),
            tokens_in=Coalesce(Sum("tokens_in"), 0),
            tokens_out=Coalesce(Sum("tokens_out"), 0),
            total=Coalesce(Sum("cost"), Decimal(0)),
            unpriced=Count("pk", filter=Q(priced=False)),
        )
        .order_by(*(fields if by == "day" else ("-total", *fields)))
    )
    return [
        CostRow(
            key=_label(by, row[fields[-1]], row[fields[0]]),
            calls=row["calls"],
            tokens_in=row["tokens_in"],
            tokens_out=row["tokens_out"],
            cost=row["total"],
            unpriced=row["unpriced"],
        )
        for row in rows[:limit]
    ]


def _label(by: str, value: Any, key: Any) -> str:
    if value is None:
        return {"task": "(planning)", "user": "(nobody)"}.get(by, "-")
    if by == "session":
        return f"session {value}"
    return f"{value} (#{key})" if by == "task" else str(value)


def cost_rollups(calls: QuerySet[ModelCall]) -> dict[str, list[CostRow]]:
    return {by: cost_rollup(calls, by) for by in ROLLUPS}
