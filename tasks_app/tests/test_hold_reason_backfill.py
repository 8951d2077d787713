"""Tasks held before hold_reason existed get the code their words meant (migration 0005)."""

from __future__ import annotations

import importlib
from types import SimpleNamespace

import pytest

backfill = importlib.import_module("tasks_app.migrations.0005_task_hold_reason")


@pytest.mark.parametrize(
    ("status", "reason", "last_unit_blocked", "code"),
    [
        ("paused", "session paused: headless: cancelled by SIGINT", False, "session_paused"),
        ("paused", "stopped by /stop", False, "stopped"),
        ("paused", "budget: spent $1 of $1", False, "budget"),
        ("paused", "session stopped", False, "session_ended"),
        ("paused", "a person wanted a break", False, "person"),
        ("blocked", "approval needed (decision 3): git push", True, "approval_needed"),
        ("blocked", "stuck: the same verification failure repeated", False, "stuck"),
        ("blocked", "dependency: a failed", False, "dependency"),
        ("blocked", "merge refused: merge conflict in a.txt", False, "merge_refused"),
        ("blocked", "decision 3 rejected: no pushing", True, "decision_rejected"),
        ("blocked", "Which greeting?", True, "question"),
        ("blocked", "someone blocked it", False, "person"),
    ],
)
def test_the_words_map_to_their_code(
    status: str, reason: str, last_unit_blocked: bool, code: str
) -> None:
    task = SimpleNamespace(status=status, status_reason=reason)
    assert backfill.hold_reason_of(task, last_unit_blocked) == code
