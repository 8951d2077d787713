"""The mode badge: full, compact, critical labels, paused, pulsing, colours, title."""

from __future__ import annotations

import pytest

from agents_app.axes import Axes
from agents_app.badge import COLOURS, badge


def axes(
    work: str = "build", control: str = "autonomous", profile: str = "trusted", model: str = "smart"
) -> Axes:
    return Axes(work, control, profile, model, "web")


def test_the_full_form() -> None:
    assert badge(axes()).full_text == "SF build | autonomous | trusted | smart"


def test_the_compact_form() -> None:
    assert badge(axes()).compact_text == "[B][A][T][S]"
    assert badge(axes("plan", "manual", "normal", "deep")).compact_text == "[P][M][N][D]"
    assert badge(axes("research", "assisted", "restricted", "fast")).compact_text == "[R][S][R][F]"


@pytest.mark.parametrize("work_mode", ["repair", "review"])
def test_repair_and_review_always_show_full_labels(work_mode: str) -> None:
    shown = badge(axes(work_mode, profile="normal"))
    assert shown.critical
    assert shown.compact_text == f"SF {work_mode} | autonomous | normal | smart"


def test_paused_prefixes_both_forms_and_stops_the_pulse() -> None:
    shown = badge(axes(), paused=True)
    assert shown.full_text == "SF paused · build | autonomous | trusted | smart"
    assert shown.compact_text == "P![B][A][T][S]"
    assert not any(part.pulsing for part in shown.parts)


def test_a_finished_session_says_so_and_stops_the_pulse() -> None:
    shown = badge(axes(), finished="completed")
    assert shown.full_text == "SF completed · build | autonomous | trusted | smart"
    assert not any(part.pulsing for part in shown.parts)


def test_only_autonomous_run_control_pulses() -> None:
    assert [p.pulsing for p in badge(axes()).parts] == [False, True, False, False]
    assert not any(p.pulsing for p in badge(axes(control="assisted")).parts)


@pytest.mark.parametrize(
    ("axis", "value", "colour"),
    [
        ("work_mode", "chat", "dim"),
        ("work_mode", "plan", "accent"),
        ("work_mode", "build", "success"),
        ("work_mode", "review", "warning"),
        ("work_mode", "repair", "error"),
        ("work_mode", "research", "info"),
        ("run_control", "manual", "dim"),
        ("run_control", "assisted", "warning"),
        ("run_control", "autonomous", "success"),
        ("permission_profile", "restricted", "success"),
        ("permission_profile", "normal", "dim"),
        ("permission_profile", "trusted", "warning"),
        ("permission_profile", "unrestricted", "error"),
    ],
)
def test_the_colour_table(axis: str, value: str, colour: str) -> None:
    assert COLOURS[axis][value] == colour
    values = {
        "work_mode": "build",
        "run_control": "manual",
        "permission_profile": "normal",
        "model_mode": "smart",
    }
    values[axis] = value
    shown = badge(Axes(**values, surface="web"))
    assert next(p for p in shown.parts if p.axis == axis).colour == colour


def test_the_terminal_title() -> None:
    assert badge(axes()).terminal_title == "SF[build|autonomous|trusted|smart]"
    assert badge(axes(), paused=True).terminal_title == "SF[paused|build|autonomous|trusted|smart]"
