"""What a watcher of a session has been told so far, and its compact text form.

The ``Observer`` reads the rows the engine writes and reports what is new relative to
an ``ObserverState``: the last row it reported of each log table (mode transitions,
task transitions, trace events, risk decisions), the status it last reported of each
unit and plan, and the decisions it reported as pending. Headless keeps the state in
memory; the API's event stream sends it with every event as the SSE ``id``, so a
client that reconnects with ``Last-Event-ID`` resumes exactly after the last event it
received, on any server process, with nothing kept per client on the server.

The text form is versioned (``1.``) and opaque to clients: JSON, deflated, base64url.
A state is a few hundred bytes for a session of a few dozen units.
"""

from __future__ import annotations

import base64
import binascii
import zlib
from dataclasses import dataclass, field, replace
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

VERSION = "1."
MAX_TOKEN = 64 * 1024  # characters of a token we are willing to read
MAX_STATE = 1024 * 1024  # bytes it may inflate to (a deflate bomb stops here)

MarkKind = Literal["transition", "task", "trace", "decision", "review", "unit", "plan"]


@dataclass(frozen=True)
class Mark:
    """Which part of the state one event moves: the row it reports and, for rows
    whose status is reported (units, plans, decisions), the status it reported."""

    kind: MarkKind
    pk: int
    status: str = ""


@dataclass
class ObserverState:
    session: int
    transition: int = 0  # the last ModeTransition reported
    task_transition: int = 0  # the last TaskTransition reported
    trace: int = 0  # the last TraceEvent looked at
    decision: int = 0  # the last RiskDecision looked at
    units: dict[int, str] = field(default_factory=dict)  # unit -> status reported
    plans: dict[int, str] = field(default_factory=dict)  # plan -> status reported
    pending: set[int] = field(default_factory=set)  # decisions reported as pending
    ended: bool = False  # the session's end (the result event) was reported

    def copy(self) -> ObserverState:
        return replace(
            self, units=dict(self.units), plans=dict(self.plans), pending=set(self.pending)
        )

    def apply(self, mark: Mark) -> None:
        """Record that the event carrying ``mark`` was reported."""
        self.ended = False
        if mark.kind == "transition":
            self.transition = max(self.transition, mark.pk)
        elif mark.kind == "task":
            self.task_transition = max(self.task_transition, mark.pk)
        elif mark.kind == "trace":
            self.trace = max(self.trace, mark.pk)
        elif mark.kind == "unit":
            self.units[mark.pk] = mark.status
        elif mark.kind == "plan":
            self.plans[mark.pk] = mark.status
        else:  # a decision seen first ("decision") or its review ("review")
            if mark.kind == "decision":
                self.decision = max(self.decision, mark.pk)
            self.review_seen(mark.pk, mark.status)

    def review_seen(self, pk: int, review_status: str) -> None:
        if review_status == "pending":
            self.pending.add(pk)
        else:
            self.pending.discard(pk)

    def token(self) -> str:
        """The state as text for an SSE ``id`` (no newline, no colon-space issues)."""
        body = _Wire(
            s=self.session,
            t=self.transition,
            k=self.task_transition,
            c=self.trace,
            d=self.decision,
            u=dict(sorted(self.units.items())),
            p=dict(sorted(self.plans.items())),
            q=sorted(self.pending),
            e=self.ended,
        ).model_dump_json(exclude_defaults=True)
        packed = zlib.compress(body.encode(), level=9)
        return VERSION + base64.urlsafe_b64encode(packed).decode().rstrip("=")

    @classmethod
    def from_token(cls, text: str) -> ObserverState:
        """The state a token names. ``ValueError`` says what is wrong with it."""
        text = text.strip()
        if len(text) > MAX_TOKEN:
            raise ValueError(f"longer than {MAX_TOKEN} characters")
        if not text.startswith(VERSION):
            raise ValueError(f"not an event id of this server (it starts with {VERSION!r})")
        try:
            body = text[len(VERSION) :]
            packed = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
            inflater = zlib.decompressobj()
            raw = inflater.decompress(packed, MAX_STATE)
            if inflater.unconsumed_tail:
                raise ValueError("too large")
            wire = _Wire.model_validate_json(raw)
        except (binascii.Error, zlib.error, ValidationError, UnicodeDecodeError) as exc:
            raise ValueError("not an event id of this server (it does not decode)") from exc
        return cls(
            session=wire.s,
            transition=wire.t,
            task_transition=wire.k,
            trace=wire.c,
            decision=wire.d,
            units=dict(wire.u),
            plans=dict(wire.p),
            pending=set(wire.q),
            ended=wire.e,
        )


class _Wire(BaseModel):
    """The token's JSON: short keys, checked on the way in."""

    model_config = ConfigDict(extra="forbid")

    s: int = Field(ge=1)
    t: int = Field(0, ge=0)
    k: int = Field(0, ge=0)
    c: int = Field(0, ge=0)
    d: int = Field(0, ge=0)
    u: dict[int, str] = Field(default_factory=dict)
    p: dict[int, str] = Field(default_factory=dict)
    q: list[int] = Field(default_factory=list)
    e: bool = False
