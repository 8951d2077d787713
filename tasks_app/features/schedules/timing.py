"""When a schedule is due: cron expressions in a time zone, and the missed-run policy.

Pure functions over values (no database), so every DST case is testable alone.

Cron is evaluated by ``cronsim`` (the parser healthchecks.io runs on): it follows
Debian cron's rules for daylight-saving changes, which are SF's rules:

- A *fixed-time* expression (a number in both the minute and the hour field, e.g.
  ``30 2 * * *``) is wall-clock time. On the spring-forward day a local time that does
  not exist (02:30 in Berlin on the last Sunday of March) runs **once, at the first
  valid instant after the gap** (03:00 local). On the fall-back day a local time that
  happens twice (02:30 in Berlin on the last Sunday of October) runs **once, at its
  first instant** (summer time).
- An expression with ``*`` or a step in the minute or the hour field (``*/15 * * * *``,
  ``0 */2 * * *``) follows the real clock: it fires at every matching real instant, so
  nothing fires in the skipped hour and the repeated hour fires twice, as elapsed time.

``_after`` adds one guarantee cronsim leaves to its caller: every occurrence is strictly
later than the instant asked about (starting inside the repeated hour, cronsim can answer
with the first pass of a time already gone); that keeps an ambiguous time to one run.

Every instant that leaves this module is aware UTC.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

from sf_core.errors import SfError

CRON_FIELDS = ("minute", "hour", "day-of-month", "month", "day-of-week")
CRON_EXAMPLE = "'30 2 * * *' (02:30 every day) or '0 9 * * MON' (09:00 on Mondays)"
# A missed-run span of more occurrences than this is folded into one row.
MISSED_ROWS = 20
# How many due occurrences one catch-up counts one by one before it stops counting
# (a minutely schedule down for a year has 525,600; the fold says "at least").
COUNT_LIMIT = 100_000
MIN_CATCH_UP = timedelta(minutes=1)


class ScheduleInvalid(SfError, ValueError):
    """A schedule's input is wrong; the message names the field and what is wrong. A
    ``ValueError`` too, so that pydantic reports it as the field's error."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


def zone_parse(name: str) -> ZoneInfo:
    """The IANA time zone ``name`` (``Europe/Berlin``, ``UTC``), or ``ScheduleInvalid``."""
    name = name.strip()
    if not name:
        raise ScheduleInvalid("timezone", "give an IANA time zone such as Europe/Berlin or UTC")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ScheduleInvalid(
            "timezone",
            f"unknown time zone {name!r}; use an IANA name such as Europe/Berlin, "
            "America/New_York or UTC",
        ) from None


def cron_parse(expression: str) -> str:
    """The expression with single spaces, if it is a valid five-field cron expression."""
    fields = expression.split()
    if len(fields) != len(CRON_FIELDS):
        raise ScheduleInvalid(
            "cron",
            f"{expression.strip()!r} has {len(fields)} field{'s' if len(fields) != 1 else ''};"
            f" a cron expression has five ({' '.join(CRON_FIELDS)}), e.g. {CRON_EXAMPLE}",
        )
    normalized = " ".join(fields)
    try:
        CronSim(normalized, datetime(2000, 1, 1, tzinfo=UTC))
    except CronSimError as exc:  # "Bad hour": the field it could not read
        raise ScheduleInvalid(
            "cron", f"{normalized!r}: {str(exc).lower()} field; e.g. {CRON_EXAMPLE}"
        ) from None
    if _first(normalized, ZoneInfo("UTC"), datetime(2000, 1, 1, tzinfo=UTC)) is None:
        raise ScheduleInvalid("cron", f"{normalized!r} never occurs")
    return normalized


def _first(cron: str, zone: ZoneInfo, after: datetime) -> datetime | None:
    return next(_after(cron, zone, after), None)


def _after(cron: str, zone: ZoneInfo, after: datetime) -> Iterator[datetime]:
    """Occurrences strictly after ``after``, ascending, as UTC instants."""
    previous = after.astimezone(UTC)
    try:
        for local in CronSim(cron, after.astimezone(zone)):
            instant = local.astimezone(UTC)
            if instant > previous:  # see the module's note on the repeated hour
                previous = instant
                yield instant
    except StopIteration:  # cronsim gives up after 50 years without a match
        return


def occurrence_after(*, cron: str, zone: ZoneInfo, after: datetime) -> datetime:
    """The first occurrence strictly after ``after`` (UTC)."""
    found = _first(cron, zone, after)
    if found is None:
        raise ScheduleInvalid("cron", f"{cron!r} does not occur again")
    return found


def occurrences(*, cron: str, zone: ZoneInfo, after: datetime, count: int) -> list[datetime]:
    """The next ``count`` occurrences after ``after`` (for pages and tests)."""
    found: list[datetime] = []
    for instant in _after(cron, zone, after):
        found.append(instant)
        if len(found) == count:
            break
    return found


@dataclass(frozen=True)
class MissedSpan:
    """Occurrences in a row that did not run: ``count`` of them, ``first`` to ``last``
    (``at_least``: a long outage, counted up to ``COUNT_LIMIT`` and then skipped over)."""

    first: datetime
    last: datetime
    count: int
    at_least: bool = False


@dataclass(frozen=True)
class CatchUp:
    """What a sweep does with a schedule whose next occurrence has come."""

    start: datetime | None  # the occurrence to start now, if any
    missed: tuple[MissedSpan, ...]  # oldest first
    next_run_at: datetime  # the first occurrence after now


@dataclass
class _Tally:
    first: datetime | None = None
    count: int = 0
    at_least: bool = False
    recent: deque[datetime] = field(default_factory=lambda: deque(maxlen=MISSED_ROWS + 2))

    def add(self, instant: datetime) -> None:
        self.first = self.first or instant
        self.count += 1
        self.recent.append(instant)


def catch_up(
    *, cron: str, zone: ZoneInfo, due_at: datetime, now: datetime, window: timedelta
) -> CatchUp:
    """The missed-run policy. Of the occurrences from ``due_at`` (the schedule's first
    unclaimed one) up to ``now``, only the latest may start, and only if it is at most
    ``window`` old; every other one is missed. A sweep on time sees one occurrence a few
    seconds old, and starts it."""
    tally = _Tally()
    after: datetime | None = due_at - timedelta(seconds=1)
    while after is not None:
        after = _count(tally, _after(cron, zone, after), now=now, old=now - window)
    latest = tally.recent[-1] if tally.count else None
    start = latest if latest is not None and now - latest <= window else None
    if start is not None:
        tally.recent.pop()
        tally.count -= 1
    return CatchUp(
        start=start,
        missed=_spans(tally),
        next_run_at=occurrence_after(cron=cron, zone=zone, after=now),
    )


def _count(
    tally: _Tally, instants: Iterator[datetime], *, now: datetime, old: datetime
) -> datetime | None:
    """Count the occurrences up to ``now``. After ``COUNT_LIMIT`` that are older than
    the window, answer where to go on from (the window's start: everything before it is
    missed whatever it is); None when done."""
    for instant in instants:
        if instant > now:
            return None
        tally.add(instant)
        if tally.count % COUNT_LIMIT == 0 and instant < old:
            tally.at_least = True
            return max(instant, old)
    return None


def _spans(tally: _Tally) -> tuple[MissedSpan, ...]:
    """The most recent misses one row each; anything older folded into one row."""
    if tally.count == 0 or tally.first is None:
        return ()
    singles = list(tally.recent)[-min(tally.count, MISSED_ROWS) :]
    spans = [MissedSpan(first=at, last=at, count=1) for at in singles]
    folded = tally.count - len(singles)
    if folded > 0:
        last = tally.recent[-(len(singles) + 1)]
        fold = MissedSpan(first=tally.first, last=last, count=folded, at_least=tally.at_least)
        spans.insert(0, fold)
    return tuple(spans)


def local_text(instant: datetime, zone: ZoneInfo) -> str:
    """``2026-03-29 03:00 CEST``: an instant as the schedule's people read it."""
    return instant.astimezone(zone).strftime("%Y-%m-%d %H:%M %Z")


def duration_text(value: timedelta) -> str:
    """``90s``, ``30m``, ``6h``, ``1d``: a duration as SF's settings write them."""
    seconds = int(value.total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds and seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
