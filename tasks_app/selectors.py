"""Read-side queries of the tasks app."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agents_app.models import AgentSession


def task_summary_line(session: AgentSession) -> str:
    """One line for /tasks; the task board (issue 3) replaces this with real counts."""
    return "no plan yet"
