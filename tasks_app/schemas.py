"""PlanSpec and TaskSpec: the one schema for plans from a file, from the model and the API."""

from __future__ import annotations

import re
from collections import Counter
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from sf_core.errors import PlanInvalid
from tasks_app.scheduler import Edge, find_cycle

TASK_KEY_PATTERN = r"^[a-z0-9][a-z0-9-]{0,62}$"
MAX_COST_BUDGET = Decimal(99_999_999)
MAX_BEST_OF = 8  # as tasks_app.models.MAX_BEST_OF (a check constraint); a policy caps it lower


class DependencySpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    task: str = Field(pattern=TASK_KEY_PATTERN, description="key of the task depended on")
    condition: Literal["success", "failure", "always"] = "success"


class TaskSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str = Field(
        pattern=TASK_KEY_PATTERN,
        description="lower-case slug, unique in the plan; the branch is sf/<key>",
    )
    title: str = Field(min_length=1, max_length=200)
    description: str = Field(default="", max_length=20_000)
    acceptance_criteria: list[str] = Field(
        min_length=1, description="numbered R1…Rn in order; each one checkable"
    )
    verify: list[str] = Field(
        default_factory=list, description="shell commands run in the worktree; all must pass"
    )
    depends_on: list[DependencySpec] = Field(default_factory=list)
    risk_level: Literal["low", "medium", "high", "critical"] = "medium"
    mutation_scope: Literal["none", "planning", "workspace", "repo", "host", "production"] = (
        "workspace"
    )
    task_kind: Literal["implement", "test", "refactor", "docs", "research", "review", "chore"] = (
        "implement"
    )
    max_retries: int = Field(default=3, ge=0, le=10)
    # Task.cost_budget is a numeric(12, 4): anything larger overflows it on save.
    cost_budget: Decimal | None = Field(default=None, ge=0, le=MAX_COST_BUDGET)
    intent_claim: list[str] = Field(default_factory=list, description="files the task will touch")
    best_of: int | None = Field(
        default=None,
        ge=1,
        le=MAX_BEST_OF,
        description="run N attempts at once and keep the best (docs/best-of-n.md); "
        "unset: the plan's best_of, else 1",
    )

    @field_validator("depends_on", mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        # `depends_on: [a, b]` is shorthand for success dependencies.
        if isinstance(value, list):
            return [{"task": item} if isinstance(item, str) else item for item in value]
        return value

    @field_validator("acceptance_criteria", "verify", "intent_claim")
    @classmethod
    def _no_blank_items(cls, items: list[str]) -> list[str]:
        if any(not item.strip() for item in items):
            raise ValueError("items must not be blank")
        return [item.strip() for item in items]


class PlanSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    intent: str = Field(default="", max_length=20_000)
    summary: str = Field(min_length=1, max_length=2_000)
    tasks: list[TaskSpec] = Field(min_length=1, max_length=5_000)
    best_of: int | None = Field(
        default=None,
        ge=1,
        le=MAX_BEST_OF,
        description="the default best_of of the plan's tasks that set none",
    )

    @model_validator(mode="after")
    def _graph_is_sound(self) -> PlanSpec:
        keys = [task.key for task in self.tasks]
        duplicates = sorted(key for key, count in Counter(keys).items() if count > 1)
        if duplicates:
            raise ValueError(f"task keys must be unique; repeated: {', '.join(duplicates)}")
        known = set(keys)
        for task in self.tasks:
            for dependency in task.depends_on:
                if dependency.task == task.key:
                    raise ValueError(f"task {task.key} depends on itself")
                if dependency.task not in known:
                    raise ValueError(f"task {task.key} depends on unknown task {dependency.task}")
        cycle = find_cycle(keys, self.edges())
        if cycle:
            raise ValueError("dependency cycle: " + " → ".join(cycle))
        return self

    def edges(self) -> list[Edge]:
        return [
            Edge(task.key, dependency.task, dependency.condition)
            for task in self.tasks
            for dependency in task.depends_on
        ]


def plan_spec_parse(data: Any) -> PlanSpec:
    """Validate a plan document, raising ``PlanInvalid`` with every error and its location."""
    try:
        return PlanSpec.model_validate(data)
    except ValidationError as exc:
        raise PlanInvalid(plan_errors(exc, data)) from None


def plan_errors(exc: ValidationError, data: Any) -> str:
    """One error per line: ``tasks[2] (api).acceptance_criteria: List should have …``."""
    lines = []
    for error in exc.errors():
        message = error["msg"].removeprefix("Value error, ")
        lines.append(f"{_location(error['loc'], data)}: {message}")
    return "\n".join(dict.fromkeys(lines))  # unknown keys that are not names read alike


def _location(loc: tuple[int | str, ...], data: Any) -> str:
    text = ""
    for index, part in enumerate(loc):
        if isinstance(part, int):
            text += f"[{part}]"
            if index == 1 and loc[0] == "tasks":
                text += _task_key_hint(data, part)
        else:
            # A key from the document: a name as it is, anything else not at all (a
            # file named by mistake is not printed back: key_shown).
            text += ("." if text else "") + key_shown(part)
    return text or "(plan)"


_NAME_LIKE = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,39}")


def key_shown(key: object) -> str:
    """A key of a document as an error may show it: a name (a typo of a field, say
    ``colour``) as it is; anything else — a line of ``/etc/shadow`` read as YAML — as
    "(a key)": an error never prints a file's content to whoever named the file."""
    text = str(key)
    return text if _NAME_LIKE.fullmatch(text) else "(a key)"


def _task_key_hint(data: Any, index: int) -> str:
    try:
        key = data["tasks"][index]["key"]
    except (KeyError, IndexError, TypeError):
        return ""
    return f" ({key})" if isinstance(key, str) else ""
