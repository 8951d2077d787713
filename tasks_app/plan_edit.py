"""A person edits a proposed plan: its document (YAML, the same schema and checks as a
plan file: ``plan_files``, ``schemas``), its tasks replaced in place, its lint renewed.

``plan_document`` is the plan as that document, for the editor; ``plan_edit`` stores
an edited one; ``plan_lint_of`` is the lint of the plan as it is stored, at a profile.
"""

from __future__ import annotations

from typing import Any

import yaml
from django.db import transaction

from agents_app.gate.session import gate_rules
from agents_app.mirrors import project_tree
from sf_core.actors import Actor
from sf_core.errors import InvalidTransition, PlanInvalid
from tasks_app.models import Plan, PlanStatus
from tasks_app.plan_files import MAX_PLAN_BYTES, DocumentInvalid, document_check, yaml_parse
from tasks_app.plan_lint import Finding, plan_lint
from tasks_app.schemas import PlanSpec, plan_spec_parse
from tasks_app.services import (
    plan_best_of_check,
    plan_tasks_create,
    plan_verify_required,
    plans_changed,
)


def plan_spec_of(plan: Plan) -> PlanSpec:
    """The stored plan as a ``PlanSpec`` (what a plan file would say)."""
    tasks = []
    for task in plan.tasks.prefetch_related("dependencies__depends_on").order_by("position"):
        tasks.append(
            {
                "key": task.key,
                "title": task.title,
                "description": task.description,
                "acceptance_criteria": task.acceptance_criteria,
                "verify": task.verify,
                "depends_on": [
                    {"task": dep.depends_on.key, "condition": dep.condition}
                    for dep in task.dependencies.all()
                ],
                "risk_level": task.risk_level,
                "mutation_scope": task.mutation_scope,
                "task_kind": task.task_kind,
                "max_retries": task.max_retries,
                "cost_budget": task.cost_budget,
                "intent_claim": task.intent_claim,
                "best_of": task.best_of if task.best_of > 1 else None,
            }
        )
    return plan_spec_parse({"intent": plan.intent, "summary": plan.summary or "-", "tasks": tasks})


def plan_document(plan: Plan) -> str:
    """The plan as YAML for the editor: summary and tasks (dependencies by key)."""
    data = plan_spec_of(plan).model_dump(mode="json", exclude={"intent", "best_of"})
    for task in data["tasks"]:
        task["depends_on"] = [
            dep["task"] if dep["condition"] == "success" else dep for dep in task["depends_on"]
        ]
        if not task["description"]:
            del task["description"]
        if task["cost_budget"] is None:
            del task["cost_budget"]
        if task["best_of"] is None:
            del task["best_of"]
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def plan_edit(*, plan: Plan, text: str, actor: Actor) -> Plan:
    """Replace a proposed plan's summary and tasks with the edited document's.
    ``PlanInvalid`` (every error, by location) leaves the plan as it was."""
    spec = _parsed(text, plan.intent)
    plan_verify_required(spec, plan.session.project.parsed_policy.default_verify)
    plan_best_of_check(spec, plan.session.project.parsed_policy.best_of.cap)
    with transaction.atomic():
        locked = Plan.objects.select_for_update().get(pk=plan.pk)
        if locked.status != PlanStatus.PROPOSED:
            raise InvalidTransition(
                f"plan {plan.pk} is {locked.status}; only a proposed plan can be edited"
            )
        locked.tasks.all().delete()
        plan_tasks_create(
            plan=locked,
            spec=spec,
            default_verify=plan.session.project.parsed_policy.default_verify,
        )
        locked.summary = spec.summary
        locked.status_reason = f"edited by {actor.label}"
        locked.save(update_fields=["summary", "status_reason"])
        locked.lint = plan_lint_of(locked, profile=locked.session.permission_profile)
        locked.save(update_fields=["lint"])
        plans_changed(session_id=plan.session_id)
    return locked


def _parsed(text: str, intent: str) -> PlanSpec:
    if len(text.encode()) > MAX_PLAN_BYTES:
        raise PlanInvalid(f"the plan is larger than {MAX_PLAN_BYTES // 1024} KiB")
    try:
        data: Any = yaml_parse(text)
        document_check(data)
    except DocumentInvalid as exc:
        raise PlanInvalid(str(exc)) from None
    if not isinstance(data, dict):
        raise PlanInvalid(f"a plan is a mapping with summary and tasks, got {type(data).__name__}")
    data.setdefault("intent", intent)
    return plan_spec_parse(data)


def plan_lint_of(plan: Plan, *, profile: str, unattended: bool = False) -> list[Finding]:
    """The lint of the stored plan at ``profile``."""
    project = plan.session.project
    return plan_lint(
        plan_spec_of(plan),
        root=project_tree(project),
        profile=profile,
        rules=gate_rules(project),
        unattended=unattended,
        default_verify=project.parsed_policy.default_verify,
    )
