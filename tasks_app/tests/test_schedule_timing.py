"""Cron in a time zone across DST changes, occurrence by occurrence, and the missed-run
policy (pure: no database)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from tasks_app.features.schedules.timing import (
    MISSED_ROWS,
    ScheduleInvalid,
    catch_up,
    cron_parse,
    local_text,
    occurrence_after,
    occurrences,
    zone_parse,
)

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def test_a_daily_berlin_time_in_the_spring_gap_runs_once_at_the_first_valid_instant() -> None:
    # 2026-03-29: Berlin's clocks go 02:00 CET -> 03:00 CEST; 02:30 does not exist.
    found = occurrences(cron="30 2 * * *", zone=BERLIN, after=utc(2026, 3, 26, 12), count=5)
    assert found == [
        utc(2026, 3, 27, 1, 30),  # 02:30 CET
        utc(2026, 3, 28, 1, 30),  # 02:30 CET
        utc(2026, 3, 29, 1, 0),  # 03:00 CEST: the first valid instant after the gap
        utc(2026, 3, 30, 0, 30),  # 02:30 CEST
        utc(2026, 3, 31, 0, 30),
    ]
    assert [local_text(at, BERLIN) for at in found[1:4]] == [
        "2026-03-28 02:30 CET",
        "2026-03-29 03:00 CEST",
        "2026-03-30 02:30 CEST",
    ]


def test_a_daily_berlin_time_in_the_repeated_hour_runs_exactly_once() -> None:
    # 2026-10-25: 03:00 CEST -> 02:00 CET; 02:30 happens twice (00:30 and 01:30 UTC).
    found = occurrences(cron="30 2 * * *", zone=BERLIN, after=utc(2026, 10, 23, 12), count=4)
    assert found == [
        utc(2026, 10, 24, 0, 30),  # 02:30 CEST
        utc(2026, 10, 25, 0, 30),  # 02:30 CEST, the first of the two; not again at 01:30 UTC
        utc(2026, 10, 26, 1, 30),  # 02:30 CET
        utc(2026, 10, 27, 1, 30),
    ]


def test_a_berlin_time_before_the_october_change_keeps_its_wall_clock_time() -> None:
    found = occurrences(cron="30 1 * * *", zone=BERLIN, after=utc(2026, 10, 23, 12), count=3)
    assert [at.astimezone(BERLIN).strftime("%d %H:%M %Z") for at in found] == [
        "24 01:30 CEST",
        "25 01:30 CEST",
        "26 01:30 CET",
    ]
    assert found[2] - found[1] == timedelta(hours=25)  # the day with the extra hour


def test_asking_from_inside_the_repeated_hour_never_answers_a_past_instant() -> None:
    # 01:10 UTC on 2026-10-25 is 02:10 CET, the second pass; 02:30 CEST (00:30 UTC) is
    # gone and must not come back; the next run is the next day's.
    after = utc(2026, 10, 25, 1, 10)
    assert occurrence_after(cron="30 2 * * *", zone=BERLIN, after=after) == utc(2026, 10, 26, 1, 30)


def test_new_york_spring_gap_and_fall_back() -> None:
    # 2026-03-08: 02:00 EST -> 03:00 EDT; 2026-11-01: 02:00 EDT -> 01:00 EST.
    spring = occurrences(cron="30 2 * * *", zone=NEW_YORK, after=utc(2026, 3, 7), count=3)
    assert spring == [utc(2026, 3, 7, 7, 30), utc(2026, 3, 8, 7, 0), utc(2026, 3, 9, 6, 30)]
    fall = occurrences(cron="30 1 * * *", zone=NEW_YORK, after=utc(2026, 10, 31), count=3)
    assert fall == [utc(2026, 10, 31, 5, 30), utc(2026, 11, 1, 5, 30), utc(2026, 11, 2, 6, 30)]


def test_an_interval_schedule_follows_the_real_clock_through_both_changes() -> None:
    spring = occurrences(cron="*/30 * * * *", zone=BERLIN, after=utc(2026, 3, 29, 0), count=3)
    assert spring == [utc(2026, 3, 29, 0, 30), utc(2026, 3, 29, 1, 0), utc(2026, 3, 29, 1, 30)]
    fall = occurrences(cron="0 * * * *", zone=BERLIN, after=utc(2026, 10, 24, 23, 30), count=4)
    # Local 01:00 CEST, 02:00 CEST, 02:00 CET, 03:00 CET: every real hour, none lost.
    assert fall == [utc(2026, 10, 25, h) for h in range(4)]


def test_a_sweep_on_time_starts_the_occurrence() -> None:
    due = utc(2026, 3, 29, 1, 0)
    plan = catch_up(
        cron="30 2 * * *",
        zone=BERLIN,
        due_at=due,
        now=due + timedelta(seconds=9),
        window=timedelta(hours=1),
    )
    assert plan.start == due
    assert plan.missed == ()
    assert plan.next_run_at == utc(2026, 3, 30, 0, 30)


def test_after_an_outage_the_latest_occurrence_in_the_window_runs_and_older_ones_are_missed() -> (
    None
):
    # Down from before 2026-03-28 02:30 until 2026-03-30 03:10 (Berlin), across the change.
    plan = catch_up(
        cron="30 2 * * *",
        zone=BERLIN,
        due_at=utc(2026, 3, 28, 1, 30),
        now=utc(2026, 3, 30, 1, 10),
        window=timedelta(hours=1),
    )
    assert plan.start == utc(2026, 3, 30, 0, 30)  # 40 minutes late: within the window
    assert [(s.first, s.count) for s in plan.missed] == [
        (utc(2026, 3, 28, 1, 30), 1),
        (utc(2026, 3, 29, 1, 0), 1),  # the DST-shifted 03:00 CEST
    ]
    assert plan.next_run_at == utc(2026, 3, 31, 0, 30)


def test_an_occurrence_older_than_the_window_is_missed_too() -> None:
    plan = catch_up(
        cron="30 2 * * *",
        zone=BERLIN,
        due_at=utc(2026, 3, 30, 0, 30),
        now=utc(2026, 3, 30, 9),
        window=timedelta(hours=6),
    )
    assert plan.start is None
    assert [(s.first, s.count) for s in plan.missed] == [(utc(2026, 3, 30, 0, 30), 1)]


def test_a_long_outage_of_a_frequent_schedule_is_folded_into_one_row_plus_the_latest() -> None:
    due = utc(2026, 5, 1)
    plan = catch_up(
        cron="* * * * *",
        zone=BERLIN,
        due_at=due,
        now=due + timedelta(hours=3, seconds=5),
        window=timedelta(minutes=5),
    )
    assert plan.start == due + timedelta(hours=3)
    assert len(plan.missed) == MISSED_ROWS + 1
    fold = plan.missed[0]
    assert (fold.first, fold.count) == (due, 180 - MISSED_ROWS)
    assert fold.last == due + timedelta(minutes=180 - MISSED_ROWS - 1)
    assert plan.missed[1].first == fold.last + timedelta(minutes=1)
    assert sum(span.count for span in plan.missed) == 180


@pytest.mark.parametrize(
    ("expression", "words"),
    [
        ("61 2 * * *", "bad minute field"),
        ("30 25 * * *", "bad hour field"),
        ("0 0 31 2 *", "bad day-of-month field"),
        ("30 2 * *", "has 4 fields; a cron expression has five"),
        ("0 30 2 * * *", "has 6 fields"),
        ("every day", "has 2 fields"),
        ("", "has 0 fields"),
    ],
)
def test_a_bad_cron_expression_is_refused_naming_what_is_wrong(expression: str, words: str) -> None:
    with pytest.raises(ScheduleInvalid) as refused:
        cron_parse(expression)
    assert refused.value.field == "cron"
    assert words in refused.value.message


def test_a_cron_expression_is_normalized() -> None:
    assert cron_parse("  30   2 * *  MON-FRI ") == "30 2 * * MON-FRI"


@pytest.mark.parametrize("name", ["Mars/Olympus", "CEST", "../../etc/passwd", " "])
def test_an_unknown_time_zone_is_refused(name: str) -> None:
    with pytest.raises(ScheduleInvalid) as refused:
        zone_parse(name)
    assert refused.value.field == "timezone"


def test_known_zones_parse() -> None:
    assert zone_parse("Europe/Berlin").key == "Europe/Berlin"
    assert zone_parse("UTC").key == "UTC"
