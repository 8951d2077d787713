from __future__ import annotations

from typing import Any

import pytest

from agents_app.models import AgentSession
from tasks_app.models import Plan, PlanSource
from tasks_app.schemas import plan_spec_parse
from tasks_app.services import plan_create


def task_data(key: str, *, depends_on: list[Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "key": key,
        "title": f"Task {key}",
        "acceptance_criteria": [f"{key} works", f"{key} is tested"],
        "verify": ["true"],
        "depends_on": depends_on or [],
        **extra,
    }


def plan_data(*tasks: dict[str, Any], summary: str = "a plan") -> dict[str, Any]:
    return {"summary": summary, "intent": "do the thing", "tasks": list(tasks)}


def lint_clean_plan() -> dict[str, Any]:
    """A model's plan that passes the plan lint (real checks of the files it claims)."""
    return plan_data(
        task_data("flag", verify=["test -f flag.py"], intent_claim=["flag.py"]),
        task_data(
            "docs",
            depends_on=["flag"],
            verify=["grep -q flag README.md"],
            intent_claim=["README.md"],
        ),
    )


def make_plan(session: AgentSession, *tasks: dict[str, Any]) -> Plan:
    return plan_create(
        session=session, spec=plan_spec_parse(plan_data(*tasks)), source=PlanSource.API
    )


@pytest.fixture
def plan_session(agent_session: AgentSession) -> AgentSession:
    """A session in plan mode: plan | manual | normal | deep."""
    AgentSession.objects.filter(pk=agent_session.pk).update(work_mode="plan", model_mode="deep")
    agent_session.refresh_from_db()
    return agent_session


@pytest.fixture
def diamond_plan(plan_session: AgentSession) -> Plan:
    """a → (b, c) → d"""
    return make_plan(
        plan_session,
        task_data("a"),
        task_data("b", depends_on=["a"]),
        task_data("c", depends_on=["a"], intent_claim=["src/shared.py"]),
        task_data("d", depends_on=["b", "c"], intent_claim=["src/shared.py"]),
    )
