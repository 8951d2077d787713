"""Shapes of the lists and details beside the core calls: sessions and plans a page at a
time, a unit's trace a page at a time and its diff, and the typed form of ``/steer``."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from ninja import Schema
from pydantic import Field

from agents_app.models import TraceEvent, TransitionScope
from api_app.schemas import In, PlanOut, SessionOut
from tasks_app.diffs import FileDiff
from tasks_app.models import Unit


class SessionPage(Schema):
    count: int
    limit: int
    offset: int
    items: list[SessionOut]


class PlanPage(Schema):
    count: int
    limit: int
    offset: int
    items: list[PlanOut]


class TraceItemOut(Schema):
    seq: int
    kind: str
    name: str
    payload: dict[str, Any]
    input_hash: str
    tokens_in: int
    tokens_out: int
    cost: str
    started_at: datetime
    finished_at: datetime | None


class TracePage(Schema):
    count: int
    limit: int
    offset: int
    items: list[TraceItemOut]


class DiffFileOut(Schema):
    path: str
    old_path: str
    status: str = Field(description="added, deleted, renamed or modified")
    binary: bool
    added: int
    removed: int


class DiffOut(Schema):
    unit_id: int
    files: list[DiffFileOut]
    added: int
    removed: int
    patch: str = Field(description="the unit's checkpoint as a unified diff")


class SteerIn(In):
    """``/steer AXIS VALUE SCOPE``: a change the engine applies when its scope is due."""

    axis: Literal["mode", "control", "permission-profile", "model-mode"]
    value: str = Field(max_length=32, pattern=r"^[a-z][a-z-]*$", examples=["build"])
    scope: TransitionScope = TransitionScope.NOW
    confirm: bool = Field(False, description="needed to raise the profile to unrestricted")

    def command(self) -> str:
        return f"/steer {self.axis} {self.value} {self.scope}" + (
            " --confirm" if self.confirm else ""
        )


def trace_item_out(event: TraceEvent) -> TraceItemOut:
    return TraceItemOut(
        seq=event.seq,
        kind=event.kind,
        name=event.name,
        payload=event.payload,
        input_hash=event.input_hash,
        tokens_in=event.tokens_in,
        tokens_out=event.tokens_out,
        cost=str(event.cost),
        started_at=event.started_at,
        finished_at=event.finished_at,
    )


def diff_out(unit: Unit, files: list[FileDiff]) -> DiffOut:
    return DiffOut(
        unit_id=unit.pk,
        files=[
            DiffFileOut(
                path=f.path,
                old_path=f.old_path,
                status=f.status,
                binary=f.binary,
                added=f.added,
                removed=f.removed,
            )
            for f in files
        ],
        added=sum(f.added for f in files),
        removed=sum(f.removed for f in files),
        patch=unit.checkpoint_patch,
    )
